"""The Python snippets of the README (the inference API) and of docs/architecture.md (the tx package) work as
written: pasted into a script, run from another directory."""
from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from app_fixtures import app_models_root
from shipped_fixtures import MODELS, shipped_models_root

pytestmark = pytest.mark.exports

REPO = Path(__file__).resolve().parents[1]


def python_blocks(page: str) -> list[str]:
    """The ```python blocks of one page of the docs (a path from the repository root)."""
    return re.findall(r"```python\n(.*?)```", (REPO / page).read_text(encoding="utf-8"), flags=re.S)


# Runs a script with the packages a runtime-only install lacks made unimportable, then names any of them that
# got imported anyway: the proof that serving the ONNX files needs no PyTorch (nor the training or export code).
WITHOUT_TRAINING = """
import runpy, sys

BLOCKED = {"torch", "tx", "export", "onnx", "onnxscript", "sacrebleu", "streamlit"}

class Blocked:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"{name} is not installed (blocked by the test: the runtime must not need it)")

sys.meta_path.insert(0, Blocked())
runpy.run_path(sys.argv[1], run_name="__main__")
leaked = sorted({m.split(".")[0] for m in sys.modules} & BLOCKED)
print("imported:", leaked)
"""


def run_inference_snippet(folder: Path, models_root: Path | None) -> list[str]:
    """The README's inference snippet as a script in `folder` (not the repo), run with torch, tx and export
    unimportable; its printed lines."""
    [snippet] = [b for b in python_blocks("README.md") if "OnnxTranslator(" in b]
    script, runner = folder / "snippet.py", folder / "without_training.py"
    script.write_text(snippet, encoding="utf-8")
    runner.write_text(WITHOUT_TRAINING, encoding="utf-8")
    # PYTHONPATH empty: `import runtime` must work through the install (`pip install -e .`), not the cwd
    env = {k: v for k, v in os.environ.items() if k != "TX_MODELS_DIR"} | {"PYTHONPATH": ""}
    if models_root:
        env["TX_MODELS_DIR"] = str(models_root)
    proc = subprocess.run([sys.executable, str(runner), str(script)], cwd=folder, env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 4 and lines[0].startswith("runs on ") and "ExecutionProvider" in lines[0]
    assert "(confidence " in lines[1] and lines[2].startswith("{'negative': ")
    assert lines[3] == "imported: []"
    return lines[:3]


def test_the_inference_snippet_runs_as_a_script_from_another_directory(tmp_path):
    # tiny exported models instead of the shipped ones (those are exported by `make run`, not by the tests)
    run_inference_snippet(tmp_path, app_models_root())


@pytest.mark.slow
def test_the_inference_snippet_runs_on_the_shipped_models(tmp_path):
    """As a reader runs it after `make run`: the shipped models, found through runtime's location (no TX_MODELS_DIR)
    where models/ is exported; on a fresh clone (CI) the same models exported once into the test cache
    (tests/shipped_fixtures.py), since tests do not write into models/."""
    root = shipped_models_root()
    lines = run_inference_snippet(tmp_path, None if root == MODELS else root)
    probs = ast.literal_eval(lines[2])  # the snippet prints the probabilities dict
    assert probs["positive"] > 0.5, lines  # "a gem of a film" is praise, and the shipped model says so


def test_the_tx_snippet_runs_as_a_script(tmp_path):
    [snippet] = [b for b in python_blocks("docs/architecture.md") if "tx.Seq2SeqTransformer(" in b]
    script = tmp_path / "tx_snippet.py"
    script.write_text(snippet, encoding="utf-8")
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env={**os.environ, "PYTHONPATH": ""},
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "torch.Size([2, 1, 10000])"
