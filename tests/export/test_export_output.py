"""Issue 25, finding 9: what `python -m export MODEL_DIR` (and so `make run`) prints. The libraries' INFO logs
(onnxscript's optimiser, onnx_ir's passes: 331 of ~440 lines for the shipped models) stay out of the console, and
each graph gets one line."""
from __future__ import annotations

import re

import pytest
from export_fixtures import console, exported

from export.pipeline import shown_graphs
from runtime.spec import ModelShape, graphs_for
from tx import read_model_config

pytestmark = pytest.mark.exports


def test_export_prints_one_line_per_graph_and_no_library_info_logs():
    # what the command printed while it exported the tiny classifier the other tests share (export_fixtures._build
    # runs `python -m export`'s main with the process's stdout and stderr in a file, the libraries' own included)
    lines = console("sentiment")
    model_dir = exported("sentiment")
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
    # the model was exported where it was built, then its folder moved into the cache
    assert re.match(r"export of \S+/model passed", lines[-1]), lines[-1]
    assert len(lines) <= len(graphs) + len(shown) + 6, lines  # the graphs, the agreement summary, the verdict
