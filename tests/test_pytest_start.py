"""However pytest is started, the test folders (tests/tx/, tests/runtime/, ...) never shadow the packages they test:
tests/conftest.py puts the checkout on sys.path."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.slow  # a pytest that collects a page test file: ~4 s of CPU
def test_one_file_collects_through_the_console_script_in_one_process():
    """`pytest -n0 FILE`: no xdist worker and no `python -m` puts the working directory on sys.path here."""
    console_script = Path(sys.executable).with_name("pytest")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PYTHONPATH"))}
    proc = subprocess.run([str(console_script), "--collect-only", "-q", "-m", "", "-n0", "-p", "no:cacheprovider",
                           "tests/app/test_pages.py"], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "tests collected" in proc.stdout
