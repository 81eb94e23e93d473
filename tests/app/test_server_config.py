"""The app's .streamlit/config.toml as Streamlit itself reads it (`streamlit run app.py` from the repository root:
make run, the browser tests, bench clicks)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

READ = """
import streamlit.config as config
from streamlit.web import bootstrap
bootstrap.load_config_options({})
for name in ("runner.postScriptGC", "runner.magicEnabled", "server.fileWatcherType", "client.showErrorDetails"):
    print(name, config.get_option(name))
"""


def test_no_full_garbage_collection_after_each_run_and_no_tracebacks_shown():
    """A full gc.collect() after every rerun cost 110-170 ms of CPU with the GIL held (bench clicks: the Decoding
    step's server CPU 160-170 -> 30 ms without it; docs/performance.md). Read in a fresh process from the repository
    root, as `streamlit run` reads it; STREAMLIT_* variables would override the file, so none is passed."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("STREAMLIT_")}
    out = subprocess.run([sys.executable, "-c", READ], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=120, check=True).stdout
    options = dict(line.split(" ", 1) for line in out.splitlines())
    assert options == {"runner.postScriptGC": "False", "runner.magicEnabled": "False",
                       "server.fileWatcherType": "none", "client.showErrorDetails": "type"}, out
