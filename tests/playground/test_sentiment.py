"""playground/sentiment's pure modules without Streamlit: what a probability means (calibration.json), the negation
warning, and the words over a classified batch."""
from __future__ import annotations

import pandas as pd

from playground.sentiment import batch, negation, notes
from runtime.text import Prediction

RELIABILITY = {"edges": [0.5, 0.6, 0.7, 0.8, 0.9, 1.0], "counts": [10, 20, 0, 40, 50],
               "accuracy": [0.5, 0.55, None, 0.75, 0.9]}
REPORT = {"splits": {"valid": {}, "test": {"reviews": 1270, "calibrated": {"ece": 2.345, "reliability": RELIABILITY}}}}


def test_the_probability_is_said_to_be_calibrated_with_its_band():
    note = notes.calibration_note(REPORT, 0.8)
    assert "calibrated (temperature scaling)" in note and "Measured on the 1,270 test reviews" in note
    assert "differed by 2.3 points" in note
    assert note.endswith(" 30 of the 40 test reviews given 80%–90% had the label the model gave them (75%).")
    assert notes.calibration_note(REPORT, 0.7996).endswith("(75%).")  # shown as 80.0%: the 80–90% band
    assert notes.calibration_note(REPORT, 0.75).endswith("(expected calibration error).")  # an empty band


def test_without_a_calibration_report_the_probability_is_a_score():
    unreadable = {"splits": {"test": {"reviews": "many", "calibrated": REPORT["splits"]["test"]["calibrated"]}}}
    for report in (None, {}, unreadable):
        assert notes.calibration_note(report, 0.8).startswith("This probability is not known to be calibrated")


def test_truncation_and_details():
    assert notes.truncation_warning([], 64) is None
    assert notes.truncation_warning([2, 5], 64).startswith("Input too long: text(s) 2, 5 exceeded the model's 64")
    prediction = Prediction("positive", {"negative": 0.2, "positive": 0.8}, ["▁a", "▁gem"], False)
    assert notes.details(prediction, 3.4, ("int8", "CPUExecutionProvider")) == (
        "2 tokens · 3 ms · int8 on CPUExecutionProvider")


def test_a_negation_gets_the_measured_probe_accuracy_or_the_cards_word():
    scores = {"reviews": 40, "accuracy": 55.0, "confusion": {"rows_gold_cols_predicted": [[20, 5], [8, 7]]}}
    said = negation.negation_warning("I never laughed, not once.", scores)
    assert said.startswith("This review has a negation (“never”, “not”).")
    assert "right on 27 of the 40 (55.0%; always giving the commoner label would get 62%)" in said
    assert f"holds no `{negation.NEGATION_EVAL_FILE}`" in negation.negation_warning("Not bad.", None)
    assert negation.negation_warning("a gem of a film", scores) is None


def classified_batch(file_id: str | None) -> dict:
    table = pd.DataFrame({"line": [1, 2, 4], "text": ["great", "", "漢字"], "label": ["positive", "", "negative"],
                          "truncated": [True, None, False], "warning": ["", "", "outside"],
                          "note": ["", "blank row: not classified", ""]})
    table.attrs["model_columns"] = {name: name for name in ("label", "truncated", "warning", "note")}
    return {"table": table, "source": "reviews.csv", "file_id": file_id, "ms": 12.0, "runtime": ("fp32", "CPU")}


def test_the_batch_words():
    typed, uploaded = classified_batch(None), classified_batch("f1")
    assert len(batch.classified(typed["table"])) == 2
    assert batch.truncated(typed) == [1] and batch.truncated(uploaded) == [1]
    assert batch.summary(typed) == "**2 reviews** in 12 ms: positive 1, negative 1"
    assert batch.source_caption(typed).startswith("From the text box (`line`")
    assert batch.source_caption(uploaded) == ("From reviews.csv: all 3 rows and every column of the file, in order; "
                                              "1 blank row kept and marked in `note`, not classified · fp32 on CPU")
    assert batch.outside_warning(typed["table"]).startswith("1 of them are mostly outside")


def test_one_review_is_not_reviews():
    one = classified_batch(None)
    one["table"] = one["table"].iloc[:1]
    assert batch.summary(one).startswith("**1 review** in") and batch.outside_warning(one["table"]) is None
