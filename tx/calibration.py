"""Does a classifier's 90% mean right nine times in ten? Temperature scaling and its measures.

Temperature scaling (Guo et al., 2017): divide the logits by one scalar T > 0 fitted on held-out
data by minimising the negative log-likelihood. Dividing by a positive number keeps every argmax,
so labels and accuracy do not change; only the confidence does. T > 1 softens an over-confident
model. The fitted T lives in `ClassifierConfig.temperature` and inside the model's forward, so
PyTorch and every exported graph give the same calibrated probabilities (`python -m tx calibration MODEL_DIR`
fits it on the valid split and writes `calibration.json`).

Expected calibration error (ECE): sort predictions into equal-width confidence bins, and average
|accuracy - mean confidence| over the bins weighted by their share of predictions.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

CALIBRATION_FILE = "calibration.json"  # a model directory's report: `report`'s dict
MIN_T, MAX_T = 0.05, 20.0  # fitted temperatures outside this range mean broken logits, not calibration


def nll(logits: np.ndarray, labels: np.ndarray, temperature: float = 1.0) -> float:
    """Mean negative log-likelihood of `labels` (N,) under softmax(logits (N, C) / temperature)."""
    z = torch.as_tensor(logits, dtype=torch.float64) / temperature
    return float(F.cross_entropy(z, torch.as_tensor(labels, dtype=torch.long)))


def fit_temperature(logits: np.ndarray, labels: np.ndarray) -> float:
    """The T minimising NLL(logits / T); a 1-D convex problem in log T, solved by golden-section search.

    Why not LBFGS: the search is bracketed, deterministic and cannot step to T <= 0.
    """
    logits, labels = np.asarray(logits, dtype=np.float64), np.asarray(labels)
    if logits.ndim != 2 or len(logits) != len(labels) or not len(labels):
        raise ValueError(f"need logits (N, C) and labels (N,), got {logits.shape} and {labels.shape}")
    lo, hi = math.log(MIN_T), math.log(MAX_T)
    ratio = (math.sqrt(5) - 1) / 2
    a, b = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
    fa, fb = nll(logits, labels, math.exp(a)), nll(logits, labels, math.exp(b))
    for _ in range(80):  # the bracket shrinks by 0.618 each time: far below 1e-9 in log T
        if fa < fb:
            hi, b, fb = b, a, fa
            a = hi - ratio * (hi - lo)
            fa = nll(logits, labels, math.exp(a))
        else:
            lo, a, fa = a, b, fb
            b = lo + ratio * (hi - lo)
            fb = nll(logits, labels, math.exp(b))
    return math.exp((lo + hi) / 2)


@dataclass
class Reliability:
    """Per-bin statistics of a reliability diagram (equal-width bins over the top-label confidence)."""

    edges: list[float]  # bins + 1 equal-width edges from 0 to 1
    counts: list[int]  # predictions per bin
    accuracy: list[float]  # share correct per bin (nan where empty)
    confidence: list[float]  # mean top-label probability per bin (nan where empty)
    ece: float  # expected calibration error, in percent


def reliability(probs: np.ndarray, labels: np.ndarray, bins: int = 10) -> Reliability:
    """probs (N, C) rows summing to 1, labels (N,) -> the reliability table and ECE (percent)."""
    probs, labels = np.asarray(probs, dtype=np.float64), np.asarray(labels)
    confidence, predicted = probs.max(axis=1), probs.argmax(axis=1)
    correct = (predicted == labels).astype(np.float64)
    edges = np.linspace(0.0, 1.0, bins + 1)
    which = np.clip(np.digitize(confidence, edges[1:-1], right=True), 0, bins - 1)  # bin i holds (e_i, e_i+1]
    counts, acc, conf, gap = [], [], [], 0.0
    for i in range(bins):
        inside = which == i
        n = int(inside.sum())
        counts.append(n)
        acc.append(float(correct[inside].mean()) if n else float("nan"))
        conf.append(float(confidence[inside].mean()) if n else float("nan"))
        if n:
            gap += n * abs(acc[-1] - conf[-1])
    ece = 100.0 * gap / max(len(labels), 1)
    return Reliability(edges=[float(e) for e in edges], counts=counts, accuracy=acc, confidence=conf, ece=ece)


def expected_calibration_error(probs: np.ndarray, labels: np.ndarray, bins: int = 10) -> float:
    """ECE in percent (10 equal-width bins by default)."""
    return reliability(probs, labels, bins).ece


def softmax(logits: np.ndarray) -> np.ndarray:
    z = np.asarray(logits, dtype=np.float64)
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


# --- a classifier model directory ----------------------------------------------------------------------------------
def log_probs(model, tokenizer, meta: dict, texts: list[str]) -> np.ndarray:
    """Uncalibrated log-probabilities (N, C) of a `SentimentClassifier` (its temperature ignored).

    Log-probabilities differ from logits by one constant per row, which softmax ignores, so
    temperature scaling fitted on them is the same as on the logits.
    """
    from .inference import SentimentAnalyzer

    fitted = model.config.temperature
    model.config.temperature = 1.0
    try:
        predictions = SentimentAnalyzer(model, tokenizer, meta).classify(texts)
    finally:
        model.config.temperature = fitted
    labels = list(meta["labels"])
    probs = np.array([[p.probs[label] for label in labels] for p in predictions], dtype=np.float64)
    return np.log(np.clip(probs, 1e-300, 1.0))


def fit_classifier(model, tokenizer, meta: dict, rows: list[dict[str, str]]) -> float:
    """Fit the model's temperature on `rows` (label, text) and store it in `model.config`; returns it."""
    labels = np.array([list(meta["labels"]).index(r["label"]) for r in rows])
    model.config.temperature = fit_temperature(log_probs(model, tokenizer, meta, [r["text"] for r in rows]), labels)
    return model.config.temperature


def report(model, tokenizer, meta: dict, splits: dict[str, list[dict[str, str]]], temperature: float,
           bins: int = 10) -> dict:
    """ECE, NLL and accuracy per split before (T = 1) and after (T = temperature), with reliability tables."""
    out: dict = {"temperature": temperature, "bins": bins, "splits": {}}
    names = list(meta["labels"])
    for split, rows in splits.items():
        z = log_probs(model, tokenizer, meta, [r["text"] for r in rows])
        y = np.array([names.index(r["label"]) for r in rows])
        entry = {"reviews": len(rows)}
        for tag, t in (("uncalibrated", 1.0), ("calibrated", temperature)):
            p = softmax(z / t)
            table = reliability(p, y, bins)
            entry[tag] = {"ece": round(table.ece, 2), "nll": round(nll(z, y, t), 4),
                          "accuracy": round(100.0 * float((p.argmax(1) == y).mean()), 2),
                          "mean_confidence": round(100.0 * float(p.max(1).mean()), 2),
                          "reliability": {"edges": table.edges, "counts": table.counts,
                                          "accuracy": [None if math.isnan(a) else round(a, 4) for a in table.accuracy],
                                          "confidence": [None if math.isnan(c) else round(c, 4)
                                                         for c in table.confidence]}}
        out["splits"][split] = entry
    return out
