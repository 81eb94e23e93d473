"""What a model directory says about itself, read for the Model card and Home: metrics.json (through its schema,
runtime/metrics_file.py), export_report.json (through export_report.py's typed view), the parameter count of
model.pt (read without torch), the README model card, and the classifier's side files. A missing file reads as
None (or empty), and the page leaves that part out."""
from __future__ import annotations

from typing import Any

import streamlit as st

from runtime import metrics_file
from runtime.model_files import WEIGHTS_FILE

from .. import model_paths, models
from ..files import read_json
from . import card_text, weights
from .export_report import ExportReport


def model_metrics(task: str) -> tuple[metrics_file.ModelMetrics | None, str | None]:
    """(the task's metrics.json read through its one schema, a `ModelMetrics`; None) or (None, why not: missing
    or in the wrong layout)."""
    path = model_paths.model_dir(task) / metrics_file.METRICS_FILE
    if not path.is_file():
        return None, None
    try:
        return metrics_file.ModelMetrics.read(path), None
    except metrics_file.MetricsFormatError as e:
        return None, f"{e} (the layout `python -m tx ship` writes: see runtime/metrics_file.py)"


@st.cache_data(show_spinner=False, max_entries=8)
def _parameter_count(task: str, version: tuple) -> int | None:
    return weights.parameter_count(model_paths.model_dir(task) / WEIGHTS_FILE)


def parameter_count(task: str) -> int | None:
    """Parameters in the task's model.pt (tied weights counted once), read without torch once per version."""
    return _parameter_count(task, model_paths.stamp(task))


def export_report(task: str) -> ExportReport | None:
    return ExportReport.from_json(read_json(model_paths.export_report_path(task)))


def data_source(task: str) -> str | None:
    metrics, _ = model_metrics(task)
    return metrics.data.describe() if metrics else None


def readme_sections(task: str) -> list[tuple[str, str]]:
    """README.md (the model card) as (heading, body) pairs; empty when there is none."""
    try:
        readme = (model_paths.model_dir(task) / "README.md").read_text(encoding="utf-8")
    except OSError:
        return []
    return card_text.readme_sections(readme)


def side_file(task: str, name: str) -> Any:
    """A JSON file of the task's directory (baselines.json, calibration.json) as read, or None."""
    return read_json(model_paths.model_dir(task) / name)


def card_line(task: str) -> str:
    """One line: task, data, parameters, test metric, opset."""
    meta = models.model_meta(task)["meta"]
    title = f"**{models.TASK_TITLES[task]}**"
    if task == "translate":
        title += f" ({', '.join(models.direction_label(x) for x in models.directions())})"
    else:
        title += f" ({' / '.join(meta.get('labels', []))})"
    metrics, problem = model_metrics(task)
    report = export_report(task)
    return card_text.card_line(title, data_source(task), parameter_count(task), metrics, problem,
                               report.opset_words() if report else None)
