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
    array,
    clean,
    empty_models_root,
    plotly_figures,
    strings,
    values,
)
from export_fixtures import ENGLISH, GERMAN
from streamlit.testing.v1 import AppTest

import tx
from playground import figures, inputs, models
from runtime import OnnxSentimentClassifier, OnnxTranslator, providers
from tx import data as tx_data
from tx.tokenizer import train_tokenizer

pytestmark = pytest.mark.exports

ROOT = Path(__file__).resolve().parents[2]

LONG_GERMAN = "Das Wetter ist heute schön und wir gehen spazieren. " * 40
EMOJI = "Das ist 🙂 super 🚀🇩🇪 — ∑ 漢字"
BAD_INPUTS = {"empty": "", "whitespace": "  \n\t  \n", "over-long": LONG_GERMAN, "emoji": EMOJI}


def labels(tokens: list[str]) -> list[str]:
    """Tokens as the figures label them (`</s>` escaped, or plotly would drop it as an HTML tag)."""
    return [figures.plotly_text(t) for t in tokens]


# ---------------------------------------------------------------- Translate

def test_translate_one_sentence_gives_the_wrappers_output_and_a_cross_attention_heatmap(open_page, model_root):
    at = open_page("translate")
    text = at.text_area(key="translate_text_de").value
    assert text == GERMAN[2]  # pre-filled with the first hand-judged example the model gets right
    at.button(key="translate_go").click().run()
    clean(at)
    expected = OnnxTranslator(model_root / "translate").translate([text], "de", "en", method="beam", beam=4,
                                                              length_penalty=0.6)[0]
    assert values(at.code) == [expected.text or "(empty output)"]
    assert at.get("download_button")
    (fig,) = plotly_figures(at)
    heat = fig["data"][0]
    assert heat["type"] == "heatmap"
    z = array(heat["z"])
    assert z.shape == (len(expected.tokens), len(expected.src_tokens))
    np.testing.assert_allclose(z.sum(axis=1), 1.0, atol=1e-4)  # each target step's weights over the source
    assert fig["layout"]["xaxis"]["ticktext"] == labels(expected.src_tokens)

    # Another layer/head: another map. The grid shows every head of the layer.
    at.selectbox(key="translate_head").select(2).run()
    assert not np.allclose(array(plotly_figures(at)[0]["data"][0]["z"]), z)
    at.toggle(key="translate_all_heads").set_value(True).run()
    clean(at)
    assert [t["type"] for t in plotly_figures(at)[0]["data"]] == ["heatmap"] * 4


def test_translate_batch_gives_a_table_and_csv_and_a_line_picker(open_page, model_root):
    at = open_page("translate")
    lines = ["Guten Morgen!", "Wo ist der Bahnhof?", "Danke."]
    at.text_area(key="translate_text_de").input(f"{lines[0]}\n\n  {lines[1]}\n{lines[2]}\n").run()
    at.button(key="translate_go").click().run()
    clean(at)
    expected = OnnxTranslator(model_root / "translate").translate(lines, "de", "en", method="beam", beam=4)
    table = at.dataframe[0].value
    assert list(table.columns) == ["source", "translation", "verdict", "confidence", "score", "truncated"]
    assert list(table["source"]) == lines  # blank lines skipped, spaces stripped
    assert list(table["translation"]) == [t.text for t in expected]
    assert at.get("download_button")
    assert plotly_figures(at)[0]["layout"]["xaxis"]["ticktext"] == labels(expected[0].src_tokens)
    at.selectbox(key="translate_line").select(2).run()
    clean(at)
    assert plotly_figures(at)[0]["layout"]["xaxis"]["ticktext"] == labels(expected[2].src_tokens)


def test_translate_en_de_with_an_example_greedy_int8(open_page, model_root):
    at = open_page("translate")
    at.radio(key="translate_direction").set_value(("en", "de")).run()
    assert at.text_area(key="translate_text_en").value == ENGLISH[2]  # English in the box labelled English
    assert "translate_text_de" not in [t.key for t in at.text_area]
    example = at.selectbox(key="translate_example_en")
    assert example.options == [f"✓ {ENGLISH[2]}", f"✗ {ENGLISH[1]} (missing verb)"]  # right first, then failures
    sentence = ENGLISH[1]
    example.select(sentence).run()
    assert at.text_area(key="translate_text_en").value == sentence
    at.selectbox(key="translate_method").select("greedy").run()
    at.radio(key="translate_precision").set_value("int8").run()
    at.button(key="translate_go").click().run()
    clean(at)
    expected = OnnxTranslator(model_root / "translate", precision="int8").translate([sentence], "en", "de",
                                                                              method="greedy")[0]
    assert values(at.code) == [expected.text or "(empty output)"]
    assert any("known failure" in w and "missing verb" in w for w in values(at.warning))
    assert any("int8" in c for c in values(at.caption))


def test_translate_sampling_is_reproducible_with_a_seed(open_page):
    at = open_page("translate")
    at.selectbox(key="translate_method").select("sample").run()
    at.number_input(key="translate_seed").set_value(7).run()
    at.slider(key="translate_top_k").set_value(5).run()
    at.button(key="translate_go").click().run()
    clean(at)
    first = values(at.code)
    at.button(key="translate_go").click().run()
    assert values(at.code) == first


@pytest.mark.parametrize("case", list(BAD_INPUTS))
def test_translate_bad_input(open_page, case):
    at = open_page("translate")
    at.text_area(key="translate_text_de").input(BAD_INPUTS[case]).run()
    at.button(key="translate_go").click().run()
    clean(at)
    if case in ("empty", "whitespace"):
        assert any("Type a sentence" in m for m in values(at.info))
        assert not at.code and not at.success and not at.get("plotly_chart")
    elif case == "emoji":  # mostly unknown to the tokenizer: warned, and not shown as a success
        assert not at.code and not at.success and plotly_figures(at)
        assert any("outside what the model was trained on" in w for w in values(at.warning))
        assert any(m.startswith("Model output: ") for m in values(at.info))
    else:
        assert at.code and not at.success and plotly_figures(at)
    notices = " ".join(values(at.warning))
    assert ("truncated" in notices) == (case == "over-long")


def test_translate_cuda_asked_for_warns_and_still_translates(open_page):
    at = open_page("translate")
    at.selectbox(key="translate_provider").select("cuda").run()
    at.button(key="translate_go").click().run()
    clean(at)
    assert at.code
    captions = " ".join(values(at.caption))
    if "CUDAExecutionProvider" not in captions:  # no usable CUDA here: a warning with the reason, CPU instead
        assert any("CUDA was asked for" in w and "CPU instead" in w for w in values(at.warning))


def test_translate_marks_low_confidence_and_never_shows_a_green_success(open_page, model_root, tmp_path):
    """The fixture's confidence.json puts the cut at 0.9 (random weights are far less sure): a warning, the
    output in a plain box; with the cut at 0 the same output gets no warning and says what its confidence meant."""
    at = open_page("translate")
    at.button(key="translate_go").click().run()
    clean(at)
    assert not at.success and len(values(at.code)) == 1
    assert any(w.startswith("Low confidence: probably wrong. Confidence ") for w in values(at.warning))
    assert any("This model knows English and German only" in c for c in values(at.caption))

    root = tmp_path / "models"
    shutil.copytree(model_root, root)
    report = json.loads((root / "translate" / "confidence.json").read_text(encoding="utf-8"))
    report["methods"]["beam"]["probably_wrong_below"] = 0.0
    (root / "translate" / "confidence.json").write_text(json.dumps(report), encoding="utf-8")
    at = open_page("translate", root=root)
    at.button(key="translate_go").click().run()
    clean(at)
    assert not any("Low confidence" in w for w in values(at.warning))
    assert any(c.startswith("Confidence ") and "hand-judged" in c for c in values(at.caption))


def test_translate_batch_flags_low_confidence_lines(open_page):
    at = open_page("translate")
    at.text_area(key="translate_text_de").input("\n".join(GERMAN[:3])).run()
    at.button(key="translate_go").click().run()
    clean(at)
    table = at.dataframe[0].value
    assert list(table["verdict"]) == ["probably wrong"] * 3 and (table["confidence"] < 0.9).all()
    assert any(w.startswith("Low confidence (probably wrong): line(s) 1, 2, 3") for w in values(at.warning))


# ---------------------------------------------------------------- Sentiment

def test_sentiment_one_review_label_probabilities_and_attended_tokens(open_page, model_root):
    at = open_page("sentiment")
    text = at.text_area(key="sentiment_text").value
    at.button(key="sentiment_go").click().run()
    clean(at)
    expected = OnnxSentimentClassifier(model_root / "sentiment").classify([text])[0]
    assert not at.success  # a model output is no success (issue 25, finding 2)
    assert f"The model says **{expected.label}**, probability **{expected.probs[expected.label]:.1%}**." in values(
        at.markdown)
    probs, tokens = plotly_figures(at)
    p = array(probs["data"][0]["y"])
    assert probs["layout"]["xaxis"]["ticktext"] == ["negative", "positive"]
    np.testing.assert_allclose(p, [expected.probs["negative"], expected.probs["positive"]], atol=1e-6)
    assert tokens["layout"]["xaxis"]["ticktext"] == labels(expected.tokens)
    assert array(tokens["data"][0]["y"]).shape == (len(expected.tokens),)
    at.selectbox(key="sentiment_layer").select(figures.MEAN).run()
    clean(at)


def said(at: AppTest) -> bool:
    """Whether the Sentiment page shows a label (plainly: a model output is no success box)."""
    return any(m.startswith("The model says **") for m in values(at.markdown))


@pytest.mark.parametrize("case", list(BAD_INPUTS))
def test_sentiment_bad_input(open_page, case):
    at = open_page("sentiment")
    at.text_area(key="sentiment_text").input(BAD_INPUTS[case]).run()
    at.button(key="sentiment_go").click().run()
    clean(at)
    if case in ("empty", "whitespace"):
        assert any("Type a review" in m for m in values(at.info))
        assert not at.success
    elif case == "emoji":  # half of it unknown to the tokenizer: a warning, and the label not shown as a success
        assert not at.success and any("outside what the model was trained on" in w for w in values(at.warning))
        assert any(m.startswith("The model says") for m in values(at.info)) and len(plotly_figures(at)) == 2
    else:
        assert not at.success and said(at) and len(plotly_figures(at)) == 2
        assert not any("outside what the model" in w for w in values(at.warning))
    assert any("truncated" in w for w in values(at.warning)) == (case == "over-long")


def test_sentiment_result_is_dropped_when_the_precision_changes(open_page):
    at = open_page("sentiment")
    at.button(key="sentiment_go").click().run()
    assert said(at) and any("fp32 on CPUExecutionProvider" in c for c in values(at.caption))
    at.radio(key="sentiment_precision").set_value("int8").run()
    clean(at)
    assert not said(at) and any("runtime changed to int8" in m for m in values(at.info))
    at.button(key="sentiment_go").click().run()
    assert said(at) and any("int8 on CPUExecutionProvider" in c for c in values(at.caption))


def test_sentiment_batch_from_lines_and_from_a_csv_upload(open_page):
    at = open_page("sentiment")
    at.text_area(key="sentiment_batch_text").input("great fun\n\nawful\n" + LONG_GERMAN).run()
    at.button(key="sentiment_batch_go").click().run()
    clean(at)
    table = at.dataframe[0].value
    assert list(table["text"])[:2] == ["great fun", "awful"] and len(table) == 3
    assert {"label", "p_negative", "p_positive", "truncated"} <= set(table.columns)
    assert list(table["truncated"]) == [False, False, True]
    assert any("truncated" in w for w in values(at.warning))
    assert at.get("download_button")

    at.file_uploader(key="sentiment_upload").set_value(  # classified on arrival, every row kept (issue 25, finding 5)
        ("reviews.csv", b"id,text\n1,a gem of a film\n2,dull and slow\n3,\n", "text/csv")).run()
    clean(at)
    table = at.dataframe[0].value
    assert list(table["text"]) == ["a gem of a film", "dull and slow", ""]
    assert list(table["note"]) == ["", "", inputs.BLANK_NOTE]


def test_sentiment_batch_empty_and_unreadable_upload(open_page):
    at = open_page("sentiment")
    at.button(key="sentiment_batch_go").click().run()
    clean(at)
    assert any("Paste some reviews" in m for m in values(at.info))
    at.file_uploader(key="sentiment_upload").set_value(("bad.csv", b"\xff\xfe\x00garbage\x00", "text/csv")).run()
    at.button(key="sentiment_batch_go").click().run()
    assert not at.exception and not at.dataframe
    assert any("not UTF-8" in w for w in values(at.warning)), values(at.warning)


def test_sentiment_batch_of_one_and_out_of_domain_rows(open_page):
    at = open_page("sentiment")
    at.text_area(key="sentiment_batch_text").input("a gem of a film").run()
    at.button(key="sentiment_batch_go").click().run()
    clean(at)
    assert any(m.startswith("**1 review** in") for m in values(at.markdown))  # not "1 reviews"
    at.text_area(key="sentiment_batch_text").input("a gem of a film\n😀🎉🔥👍🏽\n这部电影很好看").run()
    at.button(key="sentiment_batch_go").click().run()
    clean(at)
    table = at.dataframe[0].value
    assert [bool(w) for w in table["warning"]] == [False, True, True]
    assert any(w.startswith("2 of them are mostly outside") for w in values(at.warning))


# ---------------------------------------------------------------- Attention explorer

def test_attention_explorer_kinds_layers_heads_and_positional_encoding(open_page):
    at = open_page("attention")
    clean(at)
    assert any(m.startswith("Greedy translation: ") for m in values(at.info)) and not at.success
    charts = plotly_figures(at)
    assert len(charts) == 3  # the attention map, PE, PE similarity
    enc = array(charts[0]["data"][0]["z"])
    assert enc.shape[0] == enc.shape[1]  # encoder self-attention: source × source

    at.selectbox(key="attention_kind_translate").select("cross").run()
    cross = array(plotly_figures(at)[0]["data"][0]["z"])
    at.selectbox(key="attention_kind_translate").select("self").run()
    self_map = array(plotly_figures(at)[0]["data"][0]["z"])
    assert self_map.shape[0] == self_map.shape[1] == cross.shape[0]
    assert np.allclose(np.triu(self_map, 1), 0.0)  # causal: no weight on later target positions

    at.radio(key="attention_view").set_value("all heads (grid)").run()
    clean(at)
    assert [t["type"] for t in plotly_figures(at)[0]["data"]] == ["heatmap"] * 4

    # The positional encoding is tx.PositionalEncoding's table (computed by the app in numpy, tx in float32).
    at.select_slider(key="attention_pe_d_model").set_value(64).run()
    at.slider(key="attention_pe_positions").set_value(30).run()
    pe, similarity = plotly_figures(at)[-2:]
    np.testing.assert_allclose(array(pe["data"][0]["z"]), tx.PositionalEncoding(64, 30).pe.numpy(), atol=1e-5)
    sim = array(similarity["data"][0]["z"])
    assert sim.shape == (30, 30)
    np.testing.assert_allclose(np.diag(sim), 1.0, atol=1e-5)

    at.radio(key="attention_model").set_value("sentiment").run()
    clean(at)
    assert any(m.startswith("Predicted: ") for m in values(at.info)) and len(plotly_figures(at)) == 3


@pytest.mark.parametrize("case", list(BAD_INPUTS))
def test_attention_explorer_bad_input(open_page, case):
    at = open_page("attention")
    at.text_input(key="attention_text_translate").input(BAD_INPUTS[case]).run()
    clean(at)
    if case in ("empty", "whitespace"):
        assert any("Type a sentence" in m for m in values(at.info))
        assert len(plotly_figures(at)) == 2  # positional encoding only
    else:
        assert len(plotly_figures(at)) == 3
    assert any("truncated" in w for w in values(at.warning)) == (case == "over-long")


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
                assert node.module in ("playground", "runtime") or hasattr(importlib.import_module(node.module),
                                                                           "__path__"), \
                    f"{path.name}: import the module, not its names"  # from a package: playground.decoding, ...
                for alias in node.names:
                    module = importlib.import_module(f"{node.module}.{alias.name}")  # a module, not a name
                    owners[alias.asname or alias.name] = Path(module.__file__)
        used = {(n.value.id, n.attr) for n in ast.walk(tree)
                if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id in owners}
        assert used, path.name
        for module, name in sorted(used):
            assert name in top_level_names(owners[module]), f"{path.name}: {module}.{name} is not defined there"
    for module in sorted((ROOT / "playground").glob("*.py")):
        lines = module.read_text(encoding="utf-8").count("\n")
        assert lines <= 250, f"playground/{module.name} has {lines} lines: split it by job"


def test_the_app_imports_no_torch_tx_or_export():
    """Static half of the check below: the app serves through runtime/ alone. Only the Latency page's PyTorch column
    (playground/latency/pytorch.py) imports tx (and so torch), and only inside a function."""
    for path in [*SCRIPTS, *sorted((ROOT / "playground").rglob("*.py"))]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        lazy = {id(n) for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) for n in ast.walk(f)}
        for node, module in imports(tree):
            if module.split(".")[0] in TORCH_SIDE:
                assert path.relative_to(ROOT).as_posix() == "playground/latency/pytorch.py" and id(node) in lazy, \
                    f"{path.name}: imports {module}"


def test_the_commands_the_app_names_are_real_tools():
    """Every fix the app suggests runs: `python -m tx TOOL` with a tool tx has (no old `python -m tx.train`)."""
    from tx.tools import TOOLS

    for path in [*SCRIPTS, *sorted((ROOT / "playground").glob("*.py"))]:
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
        assert inputs.read_tsv(path) == tx_data.read_tsv(path)
    broken = tmp_path / "samples.tsv"
    broken.write_text("de\ten\nHallo\tHello\textra field\n", encoding="utf-8")
    with pytest.raises(tx_data.DataError):
        tx_data.read_tsv(broken)
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
    assert inputs.split_lines("Hallo\n\u200b\n \ufeff\u2060 \n\u200d\nWelt") == ["Hallo", "Welt"]
    assert not inputs.visible("\u200b\u200c\ufeff ") and inputs.visible("a\u200b")


# ---------------------------------------------------------------- the CUDA sentence on every page (issue 25, finding 8)

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
