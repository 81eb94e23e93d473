"""The Model card's sections that take more than a line of Streamlit: the README's parts, the training curves, the
test metrics, the classifier's baselines and calibration, the translator's confidence verdicts, and the export
report."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from runtime import confidence, metrics_file

from .. import figures
from ..translate import calibration_tables
from . import card_text, sentiment_files
from .export_report import ExportReport


def table(rows: list[dict[str, Any]] | pd.DataFrame, **options: Any) -> None:
    """A table with no empty cell (card_text.filled)."""
    st.dataframe(card_text.filled(pd.DataFrame(rows)), hide_index=True, **options)


def show_parts(parts: list[tuple[str, str]]) -> None:
    for heading, body in parts:
        st.markdown(f"**{heading}**")
        st.markdown(body or "_(empty)_")


def show_curves(task: str, d: Path) -> None:
    """metrics.csv: the losses and the validation score, side by side, and the file itself on demand."""
    try:
        curve = pd.read_csv(d / "metrics.csv")
    except (OSError, ValueError):
        curve = None
    if curve is None or curve.empty:
        st.info(f"No training curve (`{d}/metrics.csv`): `python -m tx train {task}` writes one per evaluation.")
        return
    x, losses, scores, names = card_text.curve_columns(curve)
    left, right = st.columns(2)
    if losses:
        fig = figures.curves(curve, losses, "Loss (cross-entropy, lower is better)", x)
        fig.update_layout(yaxis_title="loss")
        left.plotly_chart(fig, width="stretch", key=f"card_{task}_loss")
    if scores:
        fig = figures.curves(curve, scores, f"Validation {names} (on the valid split, higher is better)", x)
        fig.update_layout(yaxis_title=names)
        right.plotly_chart(fig, width="stretch", key=f"card_{task}_score")
    with st.expander(f"metrics.csv ({len(curve)} rows)"):
        st.dataframe(curve, hide_index=True, width="stretch")


def show_test_metrics(task: str, d: Path, metrics: metrics_file.ModelMetrics | None, problem: str | None) -> None:
    if problem:
        st.warning(f"metrics.json does not fit its schema, so no test metrics are shown: {problem}")
        return
    if not metrics:
        st.info(f"No `{d}/metrics.json` yet: it is written when the model is evaluated and shipped "
                f"(`python -m tx evaluate {task}`, then `python -m tx ship {task} {d}`).")
        return
    st.dataframe(pd.DataFrame(card_text.test_rows(metrics)), hide_index=True, width="stretch")
    signature = card_text.bleu_signature(metrics)
    if signature:
        st.caption(f"sacrebleu signature: `{signature}`")
    test = metrics.test
    if isinstance(test, metrics_file.ClassificationScores) and test.confusion:
        fig = figures.heatmap(np.asarray(test.confusion, dtype=float), test.labels, test.labels,
                              "Confusion matrix (test)", "predicted", "true")
        fig["data"][0]["texttemplate"] = "%{z:.0f}"
        st.plotly_chart(fig, width="stretch", key=f"card_{task}_confusion")


def show_baselines(baselines: Any, metrics: metrics_file.ModelMetrics | None, calibration: Any) -> None:
    if not isinstance(baselines, dict):
        return
    st.header("Against n-gram baselines")
    st.markdown("This model beside two word 1–2-gram classifiers trained on the same train split, their C tuned on "
                "the valid split (`python -m tx evaluate sentiment --baselines`). Accuracy, macro-F1 and ECE are "
                "percentages on the test split; the negation probes are hand-written sentences whose label turns on "
                "a negation. — : not recorded in the model's files.")
    table(sentiment_files.baseline_rows(baselines, metrics, calibration), width="stretch")


def show_calibration(d: Path, calibration: Any, config: dict[str, Any]) -> None:
    st.header("Calibration")
    if not sentiment_files.calibration_splits(calibration):
        st.info(f"No `{d}/calibration.json`: `python -m tx calibration {d}` fits the temperature on the valid "
                "split and reports how well the percentages match the accuracy.")
        return
    st.markdown(f"The logits are divided by **T = {sentiment_files.temperature(calibration, config):.3f}**, fitted "
                "on the valid split by minimising the log-loss (temperature scaling). This changes how sure the model "
                "says it is, never a label. ECE = the average gap between confidence and accuracy over 10 confidence "
                "bins.")
    table(sentiment_files.calibration_rows(calibration), width="stretch")
    shown = sentiment_files.shown_split(calibration)
    st.plotly_chart(figures.reliability_figure(sentiment_files.calibration_splits(calibration)[shown], shown),
                    width="stretch", key="card_sentiment_reliability")


def show_confidence(d: Path) -> None:
    """The translator's confidence.json: per calibrated method, the verdict bands as measured and each verdict on
    outputs its cuts were not chosen on (the Translate page's "What the verdicts rest on")."""
    st.header("Confidence verdicts")
    measured = {m: c for m, c in confidence.read_calibration(d).items() if c.calibrated}
    if not measured:
        st.info(f"No `{d}/{confidence.CONFIDENCE_FILE}`: `python -m tx confidence {d}` measures what an output's "
                "confidence says about it being right, on hand-judged outputs.")
        return
    for method, cal in measured.items():
        st.markdown(f"**{confidence.method_title(method)}**: {cal.right} of {cal.outputs} hand-judged outputs "
                    "right.")
        st.markdown(calibration_tables.bands_table(cal))
        checked = calibration_tables.held_out_table(cal)
        if checked:
            st.markdown(checked)
        else:
            st.info("These verdicts were not checked on outputs their cuts were not chosen on: `python -m tx "
                    f"confidence {d}` measures them again with that check.")
    cal = next(iter(measured.values()))
    tables = calibration_tables
    st.caption(tables.rule_note(cal) + (" " + tables.held_out_note(cal) if cal.held_out else ""))
    st.subheader("The verdict score", anchor="the-verdict-score")
    st.markdown(tables.score_definition())


def show_export_report(d: Path, report: ExportReport | None) -> None:
    if report is None:
        st.info(f"Not exported yet: `python -m export {d}` writes `{d}/onnx/export_report.json`.")
        return
    st.markdown(report.status_line())
    for failure in report.failures:
        st.error(failure)
    for warning in report.warnings:
        st.warning(warning)
    st.markdown("**Parity with PyTorch and sizes**")
    st.markdown(report.parity_note())
    table(report.graph_rows(), width="stretch")
    for section in report.quality:
        st.markdown(section.heading())
        rows, notes = section.rows()
        if rows:
            table(rows, width="stretch")
        for note in notes:
            st.caption(note)
