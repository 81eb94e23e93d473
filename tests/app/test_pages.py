"""The Streamlit playground under streamlit.testing.v1.AppTest, every page, on tiny exported models.

The models (tests/app_fixtures.py) have random weights: outputs are gibberish but every shape is
real, so these tests check the wiring (inputs -> wrapper calls -> text, tables, plotly figures)
and that no input or missing file ever ends in an exception. The one-off export of the tiny
models (~1-2 min) is shared with every other test module of the process.
"""
from __future__ import annotations

import ast
import gc
import importlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import weakref
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from app_fixtures import (
    APP,
    PAGES,
    clean,
    empty_models_root,
    plotly_figures,
    strings,
    values,
)
from export_fixtures import GERMAN

import tx
from playground import figures, inputs, models
from runtime import OnnxTranslator, providers, tsv
from tx.tokenizer import train_tokenizer

pytestmark = pytest.mark.exports

ROOT = Path(__file__).resolve().parents[2]


# ---------------------------------------------------------------- Home


# ---------------------------------------------------------------- Latency


def test_replacing_the_model_files_keeps_one_live_model_and_frees_the_old_ones(model_root, tmp_path, monkeypatch):
    """Models are cached by the files' mtimes: each replacement loads a new session, and the old ones must be
    freed (not kept in the cache, nor frozen out of the collector's reach by gc.freeze) or memory grows per copy."""
    root = tmp_path / "models"
    shutil.copytree(model_root / "sentiment", root / "sentiment")
    monkeypatch.setenv("TX_MODELS_DIR", str(root))
    config = root / "sentiment" / "config.json"
    loaded = []
    for copy in range(6):
        os.utime(config, ns=(10**18 + copy, 10**18 + copy))  # as if new model files had been copied in
        model = models.onnx_model("sentiment", "cpu", quiet=True)
        assert all(model is not ref() for ref in loaded)  # new files, a new session
        loaded.append(weakref.ref(model))
    del model
    gc.collect()
    alive = [ref() for ref in loaded if ref() is not None]
    assert len(alive) == 1 and alive[0] is loaded[-1]()  # the cache holds the newest, every older one is freed


# ---------------------------------------------------------------- Model card


# ---------------------------------------------------------------- missing and broken models

@pytest.mark.parametrize("page", [None, *PAGES])
def test_missing_models_name_the_command_that_creates_them(open_page, page):
    at = open_page(page, root=empty_models_root())
    assert not at.exception
    messages = " ".join(values(at.error) + values(at.warning) + values(at.info))
    assert "python -m tx train" in messages and "make run" in messages
    if page == "attention":
        assert len(plotly_figures(at)) == 2  # the positional encoding needs no model


def test_model_not_exported_names_the_export_command(open_page, model_root, tmp_path):
    root = tmp_path / "models"
    shutil.copytree(model_root / "translate", root / "translate", ignore=shutil.ignore_patterns("onnx"))
    for page in ("translate", "attention", "latency"):
        at = open_page(page, root=root)
        assert not at.exception
        assert any(f"python -m export {root / 'translate'}" in m for m in values(at.error))


def test_corrupt_onnx_file_is_a_message_not_a_traceback(open_page, model_root, tmp_path):
    root = tmp_path / "models"
    shutil.copytree(model_root / "translate", root / "translate")
    (root / "translate" / "onnx" / "decoder.fp32.onnx").write_bytes(b"not an onnx file")
    at = open_page("translate", root=root)
    assert not at.exception
    (error,) = values(at.error)
    assert "decoder.fp32.onnx" in error and "python -m export" in error


@pytest.mark.parametrize("damage", ["truncated", "another tokenizer"])
def test_damaged_tokenizer_says_restore_it_not_re_export(open_page, model_root, tmp_path, damage):
    root = tmp_path / "models"
    shutil.copytree(model_root / "sentiment", root / "sentiment")
    path = root / "sentiment" / "tokenizer.json"
    if damage == "truncated":
        path.write_text(path.read_text(encoding="utf-8")[:200], encoding="utf-8")
    else:
        train_tokenizer(["zzz yyy xxx www"] * 5, vocab_size=60, min_frequency=1).save(path)
    at = open_page("sentiment", root=root)  # the page loads the model first: the message comes at once
    assert not at.exception
    error = " ".join(values(at.error))
    assert "tokenizer.json" in error and "restore the model's own tokenizer.json" in error, error
    assert "tx train" not in error  # the fix is putting the file back, not training a new model


# ---------------------------------------------------------------- the playground package

SCRIPTS = [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py"))]
TORCH_SIDE = ("torch", "tx", "export")  # tx and export import torch (tx/__init__.py does)


def top_level_names(path: Path) -> set[str]:
    """The names a module's own source defines at its top level (def, class, assignment), not those it imports."""
    names = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


def imports(tree: ast.AST) -> list[tuple[ast.stmt, str]]:
    """(statement, module) for every import in a tree, `from X import y` giving X (and X.y)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            found += [(node, node.module or "")] + [(node, f"{node.module}.{alias.name}") for alias in node.names]
    return found


def test_pages_call_each_helper_through_the_module_that_defines_it():
    """No star-import front (`import playground as pg`): a script imports playground's and runtime's modules
    (`from playground import models`) and every `models.x` it calls is defined in that module itself."""
    init = ast.parse((ROOT / "playground" / "__init__.py").read_text(encoding="utf-8"))
    assert not imports(init), "playground/__init__.py re-exports names again"
    for path in SCRIPTS:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        owners = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                assert not any(a.name.split(".")[0] in ("playground", "runtime") for a in node.names), path.name
            elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in ("playground", "runtime"):
                # `from playground import models`, `from playground.translate import verdicts`: a package's modules
                assert hasattr(importlib.import_module(node.module), "__path__"), \
                    f"{path.name}: import the module, not its names"
                for alias in node.names:
                    module = importlib.import_module(f"{node.module}.{alias.name}")  # a module, not a name
                    owners[alias.asname or alias.name] = Path(module.__file__)
        used = {(n.value.id, n.attr) for n in ast.walk(tree)
                if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id in owners}
        assert used, path.name
        for module, name in sorted(used):
            assert name in top_level_names(owners[module]), f"{path.name}: {module}.{name} is not defined there"
    for module in sorted((ROOT / "playground").rglob("*.py")):
        lines = module.read_text(encoding="utf-8").count("\n")
        assert lines <= 250, f"{module.relative_to(ROOT)} has {lines} lines: split it by job"


def test_the_app_imports_no_torch_tx_or_export():
    """Static half of the check below: the app serves through runtime/ alone. Only the Latency page's PyTorch column
    (playground/latency/pytorch.py) and the Experiments page's gradient attribution
    (playground/experiments/attribution_torch.py) import tx (and so torch), and only inside a function."""
    for path in [*SCRIPTS, *sorted((ROOT / "playground").rglob("*.py"))]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        lazy = {id(n) for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) for n in ast.walk(f)}
        for node, module in imports(tree):
            if module.split(".")[0] in TORCH_SIDE:
                assert path.relative_to(ROOT).as_posix() in ("playground/latency/pytorch.py",
                                                             "playground/experiments/attribution_torch.py") \
                    and id(node) in lazy, \
                    f"{path.name}: imports {module}"


def test_the_commands_the_app_names_are_real_tools():
    """Every fix the app suggests runs: `python -m tx TOOL` with a tool tx has (no old `python -m tx.train`)."""
    from tx.tools import TOOLS

    for path in [*SCRIPTS, *sorted((ROOT / "playground").rglob("*.py"))]:
        text = path.read_text(encoding="utf-8")
        assert not re.findall(r"-m tx\.\w", text), path.name
        assert set(re.findall(r"-m tx (\w+)", text)) <= set(TOOLS), path.name


# Runs in a fresh interpreter where torch cannot be imported, as after `pip install .` without the [train] extra.
WITHOUT_TORCH = r"""
import importlib.abc, json, sys


class NoTorch(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "torch":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, NoTorch())
from streamlit.testing.v1 import AppTest


def run(at):
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


at = run(AppTest.from_file(sys.argv[1], default_timeout=120))
seen = {"home": [m.value for m in at.markdown]}
at.switch_page("pages/1_Translate.py")
at = run(at)
at.button(key="translate_go").click()
seen["translation"] = [c.value for c in run(at).code]
for page in ("pages/2_Sentiment.py", "pages/3_Attention_explorer.py", "pages/5_Model_card.py"):
    at.switch_page(page)
    run(at)
at.switch_page("pages/4_Latency.py")
run(at).radio(key="latency_task").set_value("sentiment")
run(at).slider(key="latency_runs").set_value(5)
at.slider(key="latency_warmup").set_value(0)
at.button(key="latency_go").click()
seen["latency"] = [i.value for i in run(at).info]
seen["timed"] = list(at.dataframe[0].value["system"])
seen["imported"] = sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "tx", "export"))
print(json.dumps(seen))
"""


def test_the_app_serves_without_torch(model_root):
    """Every page runs in an interpreter where `import torch` fails: Translate translates, the Latency page times
    onnxruntime fp32 and int8 and says how to add the PyTorch column; nothing of torch, tx or export was imported."""
    done = subprocess.run([sys.executable, "-c", WITHOUT_TORCH, APP], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "TX_MODELS_DIR": str(model_root)}, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    expected = OnnxTranslator(model_root / "translate").translate([GERMAN[2]], "de", "en", method="beam")[0]
    assert seen["translation"] == [expected.text or "(empty output)"]
    home = " ".join(seen["home"])
    assert "test BLEU 12.30 (de-en)" in home and "k parameters" in home  # metrics.json and model.pt, without torch
    assert ("PyTorch is not installed here: the PyTorch column needs the training extra: pip install '.[train]'"
            in seen["latency"])
    assert seen["timed"] == ["onnxruntime fp32", "onnxruntime int8"]
    assert seen["imported"] == []


def test_positional_encoding_is_tx_positional_encodings_table():
    """The app's numpy table against the model's own (tx computes in float32: differences ~1e-5 at 512 positions)."""
    for d_model, positions in ((16, 10), (64, 30), (256, 100), (512, 512)):
        table = figures.positional_encoding(d_model, positions)
        np.testing.assert_allclose(table, tx.PositionalEncoding(d_model, positions).pe.numpy(), atol=1e-4)


def test_example_files_read_as_tx_data_writes_them(model_root, tmp_path):
    for path in (model_root / "translate" / "examples.tsv", model_root / "translate" / "samples.tsv",
                 model_root / "sentiment" / "samples.tsv"):
        assert inputs.read_tsv(path) == tsv.read_tsv(path)
    broken = tmp_path / "samples.tsv"
    broken.write_text("de\ten\nHallo\tHello\textra field\n", encoding="utf-8")
    with pytest.raises(tsv.DataError):
        tsv.read_tsv(broken)
    assert inputs.read_tsv(broken) == [] and inputs.read_tsv(tmp_path / "missing.tsv") == []


# ---------------------------------------------------------------- helpers (no models)


def test_texts_from_csv():
    assert inputs.texts_from_csv(b"label,Text\npos,good\nneg, bad \n") == ["good", "bad"]
    assert inputs.texts_from_csv(b"review\nfine\n") == ["fine"]
    assert inputs.texts_from_csv(b"id,comment\n1,only column used is the last\n") == ["only column used is the last"]
    with pytest.raises(ValueError, match="no rows"):
        inputs.texts_from_csv(b"text\n")
    # a one-column list keeps its commas (the browser pass lost "boring" and split the first row)
    assert inputs.texts_from_csv(b"text\nwarm, funny and smart\nboring\n") == ["warm, funny and smart", "boring"]
    assert inputs.texts_from_csv(b'id,text\n1,"warm, funny"\n2,boring\n') == ["warm, funny", "boring"]
    assert inputs.texts_from_csv("text\nfine\n\u200b\n".encode()) == ["fine"]
    with pytest.raises(ValueError, match="not UTF-8"):
        inputs.texts_from_csv(b"text\n\xff\xfe bad\n")


def test_csv_download_never_runs_a_formula():
    frame = pd.DataFrame({"source": ["=1+1", "+49 30", "-2", "@SUM(A1)", "fine", "\tx"], "score": [1, 2, 3, 4, 5, -6]})
    back = pd.read_csv(io.BytesIO(inputs.csv_bytes(frame)), dtype=str, keep_default_na=False)
    assert list(back["source"]) == ["'=1+1", "'+49 30", "'-2", "'@SUM(A1)", "fine", "'\tx"]
    assert list(back["score"]) == ["1", "2", "3", "4", "5", "-6"]  # numbers stay numbers


def test_lines_of_invisible_characters_are_empty():
    assert inputs.split_lines("Hallo\n\u200b\n \ufeff\u2060 \n\u200d\nWelt") == (["Hallo", "Welt"], None)
    assert not inputs.visible("\u200b\u200c\ufeff ") and inputs.visible("a\u200b")


def test_lines_over_the_limit_are_cut_with_a_notice_the_page_shows():
    typed = "\n".join(f"Satz {i}" for i in range(inputs.MAX_LINES + 2))
    lines, notice = inputs.split_lines(typed)
    assert len(lines) == inputs.MAX_LINES and lines[-1] == f"Satz {inputs.MAX_LINES - 1}"
    assert notice == f"{inputs.MAX_LINES + 2} lines given: only the first {inputs.MAX_LINES} are processed."
    rows, notice = inputs.numbered_lines("\n\n" + typed)
    assert list(rows["line"])[:2] == [3, 4] and len(rows) == inputs.MAX_LINES and notice.startswith(
        f"{inputs.MAX_LINES + 2} lines given")
    assert inputs.split_lines("a\nb")[1] is None and inputs.numbered_lines("a")[1] is None


PLAIN_CUDA = "Running on the CPU: CUDA is not available on this machine."


@pytest.mark.parametrize("page", [None, "translate", "sentiment", "attention", "latency"])
def test_every_page_says_cuda_is_unavailable_in_one_plain_sentence(open_page, page):
    at = open_page(page)
    clean(at)
    reason = providers.cuda_unavailable_reason()
    found = list(strings(at._tree))
    if reason is None:  # CUDA runs here: nothing to say
        assert not any(PLAIN_CUDA in text for text, _ in found)
        return
    plain = [text for text, inside in found if PLAIN_CUDA in text and not inside]
    assert len(plain) == 1 and "pip install -r requirements-gpu.txt" in plain[0], plain
    raw = [inside for text, inside in found if reason in text]
    assert raw and all(raw), "the loader's own words only on demand (in an expander)"


def test_translate_asked_for_cuda_says_so_plainly(open_page):
    reason = providers.cuda_unavailable_reason()
    if reason is None:
        pytest.skip("CUDA runs on this machine")
    at = open_page("translate")
    at.selectbox(key="translate_provider").select("cuda").run()
    clean(at)
    (warning,) = values(at.warning)
    assert warning.startswith("CUDA was asked for, but it is not available on this machine") and "CPU instead" in \
        warning and "requirements-gpu.txt" in warning and reason not in warning
    assert all(inside for text, inside in strings(at._tree) if reason in text)
