"""export_report.json: what it records (versions, opset, diffs, sizes, hashes, agreement) and when it makes an
export stale (`stale_reason`, what `python -m export --if-stale` acts on)."""
from __future__ import annotations

import hashlib
import json
import os
import time

import onnx
import onnxruntime as ort
import pytest
import torch
from export_fixtures import (
    GERMAN,
    fresh_copy,
)
from export_graph_fixtures import ATOL, loaded

from export import __main__ as export_cli
from export.onnx_export import DEFAULT_OPSET, EXPORTER
from export.report import stale_reason
from runtime.spec import (
    BATCH,
    REPORT_FILE,
    SPEC_VERSION,
    experiment_graphs,
    graphs_for,
    patching_graphs,
    walkthrough_graphs,
)

pytestmark = pytest.mark.exports


KIND_OF_TASK = {"translate": "seq2seq", "sentiment": "classifier"}


@pytest.mark.parametrize("task", ["translate", "sentiment"])
def test_export_report_records_versions_opset_diffs_sizes_and_hashes(task):
    model_dir, _, shape = loaded(task)
    report = json.loads((model_dir / "onnx" / REPORT_FILE).read_text(encoding="utf-8"))
    assert report["ok"] is True and report["failures"] == []
    assert report["kind"] == KIND_OF_TASK[task]
    assert report["opset"] == DEFAULT_OPSET and report["exporter"] == EXPORTER
    assert report["spec_version"] == SPEC_VERSION and report["precisions"] == ["fp32", "int8"]
    versions = report["versions"]
    assert versions["torch"] == torch.__version__ and versions["onnx"] == onnx.__version__
    assert versions["onnxruntime"] == ort.__version__ and versions["python"] and versions["cpu"]
    shown = walkthrough_graphs(shape) + experiment_graphs(shape) + patching_graphs(shape)
    specs = graphs_for(shape) + shown
    assert sorted((g["graph"], g["precision"]) for g in report["graphs"]) == sorted(
        [(s.name, p) for s in graphs_for(shape) for p in ("fp32", "int8")]
        + [(s.name, "fp32") for s in shown])  # shown, not served: fp32 only
    for entry in report["graphs"]:
        spec = next(s for s in specs if s.name == entry["graph"])
        assert entry["ok"] and entry["problems"] == []
        assert set(entry["max_diff"]) == set(spec.output_names)
        assert entry["bytes"] == (model_dir / "onnx" / entry["file"]).stat().st_size
        assert {c[BATCH] for c in entry["cases"]} == {3}
        if entry["precision"] == "fp32":
            assert entry["atol"] == ATOL and max(entry["max_diff"].values()) <= ATOL
        else:
            assert entry["atol"] is None and 0 < max(entry["max_diff"].values()) < 1.0
    on_disk = {p.name for p in (model_dir / "onnx").iterdir() if p.name != REPORT_FILE}
    assert set(report["files"]) == on_disk
    for name, entry in report["files"].items():
        data = (model_dir / "onnx" / name).read_bytes()
        assert entry == {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    section = report["quality"]["translation" if task == "translate" else "sentiment"]
    systems = section["systems"]
    assert systems["fp32"]["agreement"] == 1.0
    # The share itself is a property of these random weights, not of the code (tests/runtime/test_runtime.py checks
    # int8 against fp32 by properties that must hold); here: it is a share, and it was measured.
    assert 0.0 <= systems["int8"]["agreement"] <= 1.0
    if task == "translate":
        assert section["sentences"] == len(GERMAN)
        assert set(systems["int8"]["bleu_delta"]) == {"de-en", "en-de"}


def test_if_stale_reasons(monkeypatch):
    model_dir = fresh_copy("sentiment", "stale-reasons")
    files = ["classifier.fp32.onnx", "classifier.int8.onnx", "classifier_explain.fp32.onnx",
             "classifier_explain.int8.onnx"]
    assert stale_reason(model_dir, ["fp32", "int8"], files) is None
    weights = model_dir / "model.pt"
    later = time.time() + 60
    os.utime(weights, (later, later))
    assert "newer than the export" in stale_reason(model_dir, ["fp32"], files)
    calls = []
    monkeypatch.setattr(export_cli, "export_model_dir", lambda d, options: calls.append(d) or FakeReport())
    assert export_cli.main([str(model_dir), "--if-stale", "--precision", "fp32"]) == 0
    assert calls == [model_dir]  # stale: exported again
    (model_dir / "onnx" / "classifier.int8.onnx").unlink()
    os.utime(weights, (0, 0))
    assert stale_reason(model_dir, ["fp32", "int8"], files) == "missing classifier.int8.onnx"
    report_path = model_dir / "onnx" / REPORT_FILE
    report = json.loads(report_path.read_text())
    report_path.write_text(json.dumps(report | {"ok": False}))
    assert "failed validation" in stale_reason(model_dir, ["fp32"], files)
    report_path.write_text(json.dumps(report | {"precisions": ["fp32"]}))
    assert "lacks precision" in stale_reason(model_dir, ["fp32", "int8"], files)
    report_path.write_text(json.dumps(report | {"spec_version": "0"}))
    assert "interface version" in stale_reason(model_dir, ["fp32"], files)
    report_path.write_text(json.dumps({k: v for k, v in report.items() if k != "graph_layout"}))  # before fusing
    assert "graph layout 'traced attention'" in stale_reason(model_dir, ["fp32"], files)
    report_path.write_text("{not json")
    assert stale_reason(model_dir, ["fp32"], files) == "no readable export report"


class FakeReport:
    ok, warnings, failures, quality = True, [], [], {}
