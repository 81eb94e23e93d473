"""`python -m export`: --if-stale from Python and from a fresh interpreter, refused arguments, and the dispatch
to its other commands (`python -m export triton|ct2|ops`)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from export_fixtures import fresh_copy

from export import __main__ as export_cli

pytestmark = pytest.mark.exports


ROOT = Path(__file__).resolve().parents[2]


# --- python -m export ----------------------------------------------------------------------------------------------


def test_if_stale_skips_an_up_to_date_export(capsys, monkeypatch, tmp_path):
    model_dir = fresh_copy("sentiment", "if-stale")
    before = {p.name: p.stat().st_mtime_ns for p in (model_dir / "onnx").iterdir()}
    monkeypatch.setattr(export_cli, "export_model_dir", lambda *a, **k: pytest.fail("exported again"))
    assert export_cli.main([str(model_dir), "--if-stale", "--data-dir", str(tmp_path)]) == 0
    assert "is up to date" in capsys.readouterr().out
    assert {p.name: p.stat().st_mtime_ns for p in (model_dir / "onnx").iterdir()} == before


@pytest.mark.slow  # a fresh interpreter importing torch and onnx: 3 s idle, 7 s on a busy machine
def test_if_stale_from_the_command_line():
    model_dir = fresh_copy("translate", "if-stale-cli")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "export", str(model_dir), "--if-stale"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"{model_dir}/onnx is up to date"


def test_cli_rejects_a_missing_model_dir_and_bad_precisions(tmp_path, capsys):
    assert export_cli.main([str(tmp_path / "nowhere")]) == 2
    assert "config.json" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        export_cli.main([str(tmp_path), "--precision", "fp16"])
    assert "comma-separated subset of fp32,int8" in capsys.readouterr().err


# --- python -m export COMMAND ---------------------------------------------------------------------------------------


def test_python_m_export_lists_its_commands_and_dispatches_to_them(tmp_path, capsys):
    from export import ops

    with pytest.raises(SystemExit) as done:
        export_cli.main(["--help"])
    assert done.value.code == 0
    listed = capsys.readouterr().out
    assert all(f"  {name}" in listed for name in export_cli.COMMANDS) and "python -m export MODEL_DIR" in listed
    assert export_cli.main(["ops", "--out", str(tmp_path)]) == 0  # export/ops.py's main, through the dispatch
    assert capsys.readouterr().out.count("wrote ") == len(ops.BUILDERS)
    written = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert written == {name: build() for name, build in ops.BUILDERS.items()}
    with pytest.raises(SystemExit):
        export_cli.main(["triton", "--help"])
    assert capsys.readouterr().out.startswith("usage: python -m export triton")
