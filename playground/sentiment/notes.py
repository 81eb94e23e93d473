"""The Sentiment page's words on one review: what the label's probability means (the model's calibration.json)
and the truncation notice. Pure: no streamlit."""
from __future__ import annotations

from typing import Any

CALIBRATION_FILE = "calibration.json"  # what `python -m tx calibration` writes into the model directory


def calibration_note(report: Any, probability: float) -> str:
    """What the probability means, from the model's calibration report (`python -m tx calibration`; None or
    anything else when there is none): the test split's expected calibration error and how often the label was
    right among the test reviews given a like probability."""
    splits = report.get("splits") if isinstance(report, dict) else None
    name = "test" if isinstance(splits, dict) and "test" in splits else next(iter(splits or {}), None)
    try:
        measured, reviews = splits[name]["calibrated"], int(splits[name]["reviews"])
        edges, counts, accuracy = (measured["reliability"][k] for k in ("edges", "counts", "accuracy"))
        note = (f"The probability is calibrated (temperature scaling) to read as a chance: of the reviews given "
                f"about p%, about p% should have the label given. Measured on the {reviews:,} {name} reviews, the "
                f"two differed by {float(measured['ece']):.1f} points on average (expected calibration error).")
        shown = round(probability, 3)  # the band of the number as shown: 79.96% reads 80.0%, in the 80–90% band
        band = max([i for i, edge in enumerate(edges[:-1]) if round(edge, 6) <= shown] or [0])
        if counts[band] and accuracy[band] is not None:
            note += (f" {round(accuracy[band] * counts[band])} of the {counts[band]:,} {name} reviews given "
                     f"{edges[band]:.0%}–{edges[band + 1]:.0%} had the label the model gave them "
                     f"({accuracy[band]:.0%}).")
    except (KeyError, TypeError, ValueError, IndexError):
        return ("This probability is not known to be calibrated (no calibration report in the model directory: "
                "`python -m tx calibration` writes one): read it as the model's score, not as a chance.")
    return note


def truncation_warning(cut: list[int], max_len: int) -> str | None:
    """cut: the numbers (line, row) of the texts the model saw only the beginning of; None when there are none."""
    if not cut:
        return None
    return (f"Input too long: text(s) {', '.join(map(str, cut[:20]))} exceeded the model's {max_len}-token limit "
            "and were truncated; only their beginning was classified.")


def details(prediction: Any, ms: float, runtime: tuple[str, str]) -> str:
    """Under one review's label: its token count, the time, and the precision and provider it ran on."""
    return f"{len(prediction.tokens)} tokens · {ms:.0f} ms · {runtime[0]} on {runtime[1]}"
