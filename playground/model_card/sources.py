"""What a model directory says about itself: metrics.json (in runtime/metrics_file.py's layout), the export and bench
reports, the README model card, and the measured meaning of a translation's confidence.
"""
from __future__ import annotations

import re
from typing import Any

import pandas as pd
import streamlit as st

from runtime import metrics_file
from runtime.model_files import WEIGHTS_FILE
from runtime.spec import ONNX_DIR
from runtime.timing import percentile

from . import weights
from .files import read_json
from .models import (
    TASK_TITLES,
    direction_label,
    directions,
    export_report_path,
    model_dir,
    model_meta,
    stamp,
)

# ---------------------------------------------------------------- model cards

def flatten(obj: Any, prefix: str = "") -> dict[str, Any]:
    """{"a.b.c": scalar} for every scalar leaf of nested dicts (lists of scalars joined)."""
    out: dict[str, Any] = {}
    if isinstance(obj, dict):
        for key, value in obj.items():
            out.update(flatten(value, f"{prefix}.{key}" if prefix else str(key)))
    elif isinstance(obj, list):
        if all(isinstance(v, str | int | float | bool) or v is None for v in obj):
            out[prefix] = ", ".join(str(v) for v in obj)
    elif obj is not None:
        out[prefix] = obj
    return out


def filled(frame: pd.DataFrame, missing: str = "—") -> pd.DataFrame:
    """The frame with no empty cell (a browser shows None): the columns with gaps as text, `missing` in the gaps,
    whole numbers without a trailing .0 (pandas makes a column with a gap float)."""
    out = frame.copy()
    for column in out.columns:
        if out[column].isna().any():
            out[column] = [missing if pd.isna(v) else f"{v:.0f}" if isinstance(v, float) and v.is_integer()
                           else str(v) for v in out[column]]
    return out


def model_metrics(task: str) -> tuple[Any, str | None]:
    """(the task's metrics.json read through its one schema, a `ModelMetrics`; None) or (None, why not: missing
    or in the wrong layout)."""
    path = model_dir(task) / metrics_file.METRICS_FILE
    if not path.is_file():
        return None, None
    try:
        return metrics_file.ModelMetrics.read(path), None
    except metrics_file.MetricsFormatError as e:
        return None, f"{e} (the layout `python -m tx ship` writes: see runtime/metrics_file.py)"


@st.cache_data(show_spinner=False, max_entries=8)
def _parameter_count(task: str, version: tuple) -> int | None:
    return weights.parameter_count(model_dir(task) / WEIGHTS_FILE)


def parameter_count(task: str) -> int | None:
    """Parameters in the task's model.pt (tied weights counted once), read without torch once per version."""
    return _parameter_count(task, stamp(task))


def export_report(task: str) -> dict[str, Any] | None:
    return read_json(export_report_path(task))


def bench_results(task: str) -> dict[str, Any] | None:
    """The latest `python -m export.bench` output for the task (MODEL_DIR/onnx/bench.json)."""
    found = read_json(model_dir(task) / ONNX_DIR / "bench.json")
    if isinstance(found, list):  # a --json file holding several models
        found = next((b for b in found if b.get("task") == task), None)
    return found if isinstance(found, dict) and found.get("results") else None


def spread(times: list[float]) -> tuple[float, float]:
    """(p10, p90) of a system's timed runs."""
    return percentile(times, 10), percentile(times, 90)


def within_noise(times: list[float], reference: list[float]) -> bool:
    """Whether a ratio of the two medians could be noise: the p10-p90 ranges overlap (the rule `python -m
    export.bench` distrusts its ratios by)."""
    (low, high), (ref_low, ref_high) = spread(times), spread(reference)
    return low <= ref_high and ref_low <= high


def data_source(task: str) -> str | None:
    metrics, _ = model_metrics(task)
    return metrics.data.describe() if metrics else None


def card_line(task: str) -> str:
    """One line: task, data, parameters, test metric, opset."""
    stored = model_meta(task)
    meta = stored["meta"]
    parts = [f"**{TASK_TITLES[task]}**"]
    if task == "translate":
        parts[0] += f" ({', '.join(direction_label(x) for x in directions())})"
    else:
        parts[0] += f" ({' / '.join(meta.get('labels', []))})"
    parts.append(f"data: {data_source(task) or 'not recorded (see the model card)'}")
    params = parameter_count(task)
    if params:
        parts.append(f"{params / 1e6:.1f}M parameters" if params >= 1e5 else f"{params / 1e3:.1f}k parameters")
    metrics, problem = model_metrics(task)
    if metrics:
        parts.append(f"test {metrics.test.headline()}")
    else:
        parts.append("test metrics unreadable (see the Model card)" if problem else "test metrics not recorded yet")
    report = export_report(task)
    if report:
        parts.append(f"ONNX opset {report.get('opset', '?')}" + ("" if report.get("ok") else " (export FAILED)"))
    else:
        parts.append("not exported to ONNX")
    return " · ".join(parts)


def readme_sections(task: str) -> list[tuple[str, str]]:
    """README.md (the model card) as (heading, body) pairs; text before the first heading has heading ""."""
    try:
        text = (model_dir(task) / "README.md").read_text(encoding="utf-8")
    except OSError:
        return []
    sections: list[tuple[str, list[str]]] = [("", [])]
    in_code = False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            in_code = not in_code
        match = None if in_code else re.match(r"^#{1,4}\s+(.*)", line)
        if match:
            sections.append((match.group(1).strip(), []))
        else:
            sections[-1][1].append(line)
    return [(h, "\n".join(body).strip()) for h, body in sections if h or "\n".join(body).strip()]
