"""What a translation's `confidence` (the geometric mean of its token probabilities) says about it being
right, measured on hand-judged outputs of the same model: `everyday_judged.tsv` (direction, source,
hypothesis, correct = yes/no) in the model directory. The sources are translated again with the
page's settings; only outputs identical to the judged hypothesis are counted (the judgement is about
that exact text). `python -m tx confidence MODEL_DIR` writes MODEL_DIR/confidence.json (`runtime.confidence`
reads its threshold for the app):
- `threshold`: below it an output is marked "low confidence" in the app. Chosen as the highest
  confidence at which the outputs under it are still right at most `max_right_below` of the time
  (default 10%), i.e. a mark the user can trust to mean "probably wrong";
- per-bin accuracy (a reliability table), the area under the ROC curve (how well confidence ranks right
  above wrong: 0.5 = not at all), and each direction's share right above and below the threshold.
The everyday set is a dev set (it also picks checkpoints); the Django catalogs are never used here.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from .inference import Translator

JUDGED_FILE = "everyday_judged.tsv"
BINS = (0.0, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1.0001)


def auroc(scores: np.ndarray, right: np.ndarray) -> float:
    """P(a random right output has a higher score than a random wrong one); ties count half."""
    pos, neg = scores[right], scores[~right]
    if not len(pos) or not len(neg):
        return float("nan")
    greater = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return float(greater / (len(pos) * len(neg)))


def choose_threshold(scores: np.ndarray, right: np.ndarray, max_right_below: float) -> float:
    """The highest cut-off c (among the observed scores) such that at most `max_right_below` of the outputs
    with confidence < c are right; 0.0 (mark nothing) when even the lowest one is too often right."""
    best = 0.0
    for c in np.unique(scores):
        below = scores < c
        if below.sum() >= 5 and right[below].mean() <= max_right_below:
            best = float(c)
    return best


def summarise(scores: np.ndarray, right: np.ndarray, threshold: float) -> dict[str, Any]:
    below = scores < threshold
    part = lambda m: {"outputs": int(m.sum()), "right": int(right[m].sum()),
                      "share_right": round(float(right[m].mean()), 4) if m.any() else None}
    return {"outputs": len(scores), "right": int(right.sum()), "auroc": round(auroc(scores, right), 4),
            "below_threshold": part(below), "at_or_above_threshold": part(~below)}


def measure(model_dir: Path, rows: list[dict[str, str]], beam: int, length_penalty: float,
            max_right_below: float) -> dict[str, Any]:
    translator = Translator.from_dir(model_dir)
    kept: dict[str, list[tuple[float, bool]]] = {}
    skipped = 0
    for direction in sorted({r["direction"] for r in rows}):
        src, tgt = direction.split("-")
        part = [r for r in rows if r["direction"] == direction]
        outputs = translator.translate([r["source"] for r in part], src, tgt, method="beam", beam=beam,
                                       length_penalty=length_penalty)
        for row, out in zip(part, outputs, strict=True):
            if out.text != row["hypothesis"]:
                skipped += 1  # the judgement is about another text
                continue
            kept.setdefault(direction, []).append((out.confidence, row["correct"] == "yes"))
    pairs = [p for ps in kept.values() for p in ps]
    scores, right = np.array([s for s, _ in pairs]), np.array([r for _, r in pairs], dtype=bool)
    threshold = choose_threshold(scores, right, max_right_below)
    bins = []
    for lo, hi in zip(BINS[:-1], BINS[1:], strict=True):
        m = (scores >= lo) & (scores < hi)
        bins.append({"from": lo, "to": min(hi, 1.0), "outputs": int(m.sum()),
                     "share_right": round(float(right[m].mean()), 4) if m.any() else None})
    return {"threshold": round(threshold, 4), "max_right_below": max_right_below,
            "method": {"search": "beam", "beam": beam, "length_penalty": length_penalty},
            "judged_file": JUDGED_FILE, "skipped_changed_outputs": skipped,
            "all": summarise(scores, right, threshold), "bins": bins,
            "directions": {d: summarise(np.array([s for s, _ in ps]), np.array([r for _, r in ps], dtype=bool),
                                        threshold) for d, ps in kept.items()}}
