"""The n-gram baselines a sentiment Transformer has to beat (scikit-learn, a dev dependency).

- `tfidf_lr`: TF-IDF of word 1-2-grams (sublinear tf) + logistic regression.
- `nbsvm`: Wang & Manning's (2012) NB features: binarised 1-2-gram counts scaled by the log-count
  ratio r = log((p / |p|1) / (q / |q|1)) with add-one smoothing, then a linear model. We use
  logistic regression rather than their SVM so that the probabilities (and the ECE) are real,
  not a squashed margin; on MR the two are within a few tenths of a point.

C (inverse regularisation) is chosen on the valid split only; the test split is scored once.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .calibration import expected_calibration_error
from .evaluation import classification_scores, fold_split, fold_summary

C_GRID = (0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0)
BASELINES = ("tfidf_lr", "nbsvm")


def _vectorizer(binary: bool):
    from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer

    # lowercase word 1-2-grams; the token pattern keeps punctuation-free words and "n't"-style pieces together
    common = dict(ngram_range=(1, 2), lowercase=True, token_pattern=r"(?u)\b\w[\w']*\b", min_df=1)
    return CountVectorizer(binary=True, **common) if binary else TfidfVectorizer(sublinear_tf=True, **common)


@dataclass
class Fitted:
    """A fitted baseline: text -> P(label) with the C picked on valid."""

    name: str
    c: float
    vectorizer: Any
    model: Any
    ratio: Any = None  # NB-SVM's log-count ratio r (1, F), None for TF-IDF

    def probs(self, texts: list[str]) -> np.ndarray:
        x = self.vectorizer.transform(texts)
        if self.ratio is not None:
            x = x.multiply(self.ratio).tocsr()
        return self.model.predict_proba(x)


def _features(name: str, train_texts: list[str], y: np.ndarray):
    vectorizer = _vectorizer(binary=name == "nbsvm")
    x = vectorizer.fit_transform(train_texts)
    ratio = None
    if name == "nbsvm":
        p = np.asarray(x[y == 1].sum(axis=0)).ravel() + 1.0
        q = np.asarray(x[y == 0].sum(axis=0)).ravel() + 1.0
        ratio = np.log((p / p.sum()) / (q / q.sum()))[None, :]  # (1, F)
        x = x.multiply(ratio).tocsr()
    return vectorizer, x, ratio


def fit_baseline(name: str, train: list[dict[str, str]], valid: list[dict[str, str]], labels: list[str],
                 grid: tuple[float, ...] = C_GRID) -> tuple[Fitted, dict[float, float]]:
    """Fit one baseline per C in `grid`; keep the C with the best valid accuracy. Returns (model, {C: valid acc})."""
    from sklearn.linear_model import LogisticRegression

    if name not in BASELINES:
        raise ValueError(f"unknown baseline {name!r}; known: {', '.join(BASELINES)}")
    y = np.array([labels.index(r["label"]) for r in train])
    vectorizer, x, ratio = _features(name, [r["text"] for r in train], y)
    y_valid = np.array([labels.index(r["label"]) for r in valid])
    scores: dict[float, float] = {}
    best: Fitted | None = None
    for c in grid:
        model = LogisticRegression(C=c, max_iter=2000).fit(x, y)
        fitted = Fitted(name, c, vectorizer, model, ratio)
        scores[c] = 100.0 * float((fitted.probs([r["text"] for r in valid]).argmax(1) == y_valid).mean())
        if best is None or scores[c] > scores[best.c]:
            best = fitted
    assert best is not None
    return best, scores


def score(fitted: Fitted, rows: list[dict[str, str]], labels: list[str]) -> dict[str, Any]:
    probs = fitted.probs([r["text"] for r in rows])
    gold = [r["label"] for r in rows]
    out = classification_scores(gold, [labels[i] for i in probs.argmax(1)], labels)
    out["ece"] = round(expected_calibration_error(probs, np.array([labels.index(g) for g in gold])), 2)
    return out


def cross_validate(name: str, rows: list[dict[str, str]], labels: list[str], folds: int = 10) -> dict[str, Any]:
    """The Transformer's folds (`tx.evaluation.fold_split`); the valid fold picks C."""
    accuracies = []
    for k in range(folds):
        train, valid, test = fold_split(rows, folds, k)
        fitted, _ = fit_baseline(name, train, valid, labels)
        accuracies.append(score(fitted, test, labels)["accuracy"])
    return fold_summary(accuracies)


def run_baselines(splits: dict[str, list[dict[str, str]]], labels: list[str], all_rows: list[dict[str, str]] | None,
                  extra: dict[str, list[dict[str, str]]] | None = None, folds: int = 10,
                  log: Callable[[str], None] = print) -> dict[str, Any]:
    """Every baseline: C tuned on valid, scores on test (and any extra sets), and CV when all_rows is given."""
    result: dict[str, Any] = {}
    for name in BASELINES:
        fitted, valid_scores = fit_baseline(name, splits["train"], splits["valid"], labels)
        entry: dict[str, Any] = {"c": fitted.c, "valid_accuracy_by_c": {str(c): round(a, 2)
                                                                        for c, a in valid_scores.items()},
                                 "test": score(fitted, splits["test"], labels)}
        for set_name, rows in (extra or {}).items():
            entry[set_name] = score(fitted, rows, labels)
        if all_rows:
            entry["cv"] = cross_validate(name, all_rows, labels, folds)
        result[name] = entry
        cv = f", {folds}-fold CV {entry['cv']['mean']:.2f} ± {entry['cv']['std']:.2f}" if all_rows else ""
        log(f"{name}: C={fitted.c} (valid), test accuracy {entry['test']['accuracy']:.2f}, macro-F1 "
            f"{entry['test']['macro_f1']:.2f}, ECE {entry['test']['ece']:.2f}%{cv}")
    return result
