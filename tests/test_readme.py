"""The README's Python snippets work as written: pasted into a script, run from another directory."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from app_fixtures import app_models_root

REPO = Path(__file__).resolve().parents[1]


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", (REPO / "README.md").read_text(encoding="utf-8"), flags=re.S)


def test_the_inference_snippet_runs_as_a_script_from_another_directory(tmp_path):
    [snippet] = [b for b in python_blocks() if "OnnxTranslator(" in b]
    script = tmp_path / "snippet.py"
    script.write_text(snippet, encoding="utf-8")
    # tiny exported models instead of the shipped ones (those are exported by `make run`, not by the tests);
    # PYTHONPATH empty: `import tx` must work through the editable install (`pip install -e .`), not the cwd
    env = {**os.environ, "TX_MODELS_DIR": str(app_models_root()), "PYTHONPATH": ""}
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 3 and lines[0].startswith("runs on ") and "ExecutionProvider" in lines[0]
    assert "(confidence " in lines[1] and lines[2].startswith("{'negative': ")


def test_the_tx_snippet_runs_as_a_script(tmp_path):
    [snippet] = [b for b in python_blocks() if "tx.Seq2SeqTransformer(" in b]
    script = tmp_path / "tx_snippet.py"
    script.write_text(snippet, encoding="utf-8")
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env={**os.environ, "PYTHONPATH": ""},
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "torch.Size([2, 1, 10000])"
