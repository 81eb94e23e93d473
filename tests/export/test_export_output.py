"""Issue 25, finding 9: what `python -m export MODEL_DIR` (and so `make run`) prints. The libraries' INFO logs
(onnxscript's optimiser, onnx_ir's passes: 331 of ~440 lines for the shipped models) stay out of the console, and
each graph gets one line."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from export_fixtures import build_sentiment_dir

from export.pipeline import shown_graphs
from runtime.spec import ModelShape, graphs_for
from tx import read_model_config

pytestmark = pytest.mark.exports

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_export_prints_one_line_per_graph_and_no_library_info_logs(tmp_path):
    model_dir = build_sentiment_dir(tmp_path / "sentiment")
    done = subprocess.run([sys.executable, "-m", "export", str(model_dir), "--data-dir", str(tmp_path / "no-data")],
                          cwd=REPO, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    lines = (done.stdout + done.stderr).splitlines()
    assert not [line for line in lines if "[INFO]" in line or " INFO " in line], lines[:5]
    stored = read_model_config(model_dir)
    graphs = [spec.name for spec in graphs_for(ModelShape.from_config(stored["kind"], stored["config"]))]
    assert graphs == ["classifier", "classifier_explain"]
    for graph in graphs:  # \bclassifier\b does not match classifier_explain
        mentions = [line for line in lines if re.search(rf"\b{graph}\b", line)]
        assert len(mentions) == 1, mentions
        assert "fp32" in mentions[0] and "int8" in mentions[0] and "MB" in mentions[0]
    shown = [spec.name for spec in shown_graphs(ModelShape.from_config(stored["kind"], stored["config"]))]
    assert shown, "the classifier's walkthrough and experiment graphs"
    for graph in shown:  # fp32 only: they are shown, not served
        mentions = [line for line in lines if re.search(rf"\b{graph}\b", line)]
        assert len(mentions) == 1 and "fp32" in mentions[0] and "int8" not in mentions[0], mentions
    assert lines[-1].startswith(f"export of {model_dir} passed")
    assert len(lines) <= len(graphs) + len(shown) + 6, lines  # the graphs, the agreement summary, the verdict
