"""The classifier's side files in the Model card's tables: baselines.json (`python -m tx evaluate sentiment
--baselines`) and calibration.json (`python -m tx calibration`). Either may be missing or from an older layout:
a part not recorded shows as a gap (filled with "—" by card_text.filled), never an error. No Streamlit here."""
from __future__ import annotations

from typing import Any

from runtime import metrics_file

from .card_text import BASELINES
from .export_report import typed

CALIBRATION_COLUMNS = (("ece", "ECE %"), ("mean_confidence", "mean confidence %"))


def calibration_splits(calibration: Any) -> dict[str, dict[str, Any]]:
    """split -> its calibration entry; empty when calibration.json is missing or holds none."""
    return {k: v for k, v in typed(calibration, "splits", dict, {}).items() if isinstance(v, dict)}


def baseline_rows(baselines: Any, metrics: metrics_file.ModelMetrics | None, calibration: Any) -> list[dict]:
    """This model (when metrics.json is readable) beside each n-gram baseline: test accuracy, macro-F1, ECE, the
    negation probes, 10-fold cross-validation."""
    rows = []
    for name, entry in (baselines.items() if isinstance(baselines, dict) else ()):
        if not isinstance(entry, dict) or "test" not in entry:
            continue
        test, cv = typed(entry, "test", dict, {}), typed(entry, "cv", dict)
        rows.append({"model": BASELINES.get(name, name.replace("_", " ")), "test accuracy": test.get("accuracy"),
                     "test macro-F1": test.get("macro_f1"), "test ECE %": test.get("ece"),
                     "negation probes": typed(entry, "negation", dict, {}).get("accuracy"),
                     "10-fold CV": f"{cv['mean']:.2f} ± {cv['std']:.2f}" if cv else None})
    if metrics:
        ece = typed(calibration_splits(calibration).get("test"), "calibrated", dict, {}).get("ece")
        rows.insert(0, {"model": "Transformer (this model)", "test accuracy": metrics.test.accuracy,
                        "test macro-F1": metrics.test.macro_f1, "test ECE %": ece})
    return rows


def temperature(calibration: Any, config: dict[str, Any]) -> float:
    """The fitted temperature (the config's when calibration.json does not say)."""
    return typed(calibration, "temperature", (int, float), config.get("temperature", 1.0))


def calibration_rows(calibration: Any) -> list[dict[str, Any]]:
    """Per split: reviews, ECE and mean confidence before and after temperature scaling, accuracy."""
    return [{"evaluated on": name, "reviews": entry.get("reviews"),
             **{f"{tag} {label}": typed(entry, tag, dict, {}).get(key) for tag in ("uncalibrated", "calibrated")
                for key, label in CALIBRATION_COLUMNS},
             "accuracy %": typed(entry, "calibrated", dict, {}).get("accuracy")}
            for name, entry in calibration_splits(calibration).items()]


def shown_split(calibration: Any) -> str:
    """The split the reliability diagram draws: test where it was measured."""
    splits = calibration_splits(calibration)
    return "test" if "test" in splits else next(iter(splits))
