"""The classifier's experiments as Reports (runtime.experiments.classifier's results in, sentences and figures
out): its label's probabilities with heads knocked out, and occlusion beside the attention each piece receives.
The head-importance grid is views.importance_report's. Pure: no Streamlit."""
from __future__ import annotations

import numpy as np

from . import figures
from .report import Figure, Report
from .views import agreement_words, occlusion_words


def verdict(labels: list[str], probs: np.ndarray) -> str:
    return ", ".join(f"{label} {p:.1%}" for label, p in zip(labels, probs, strict=True))


def knockout_report(result, inputs: dict[str, str]) -> Report:
    """runtime.experiments.classifier.ClassifierKnockout -> the label and probabilities beside the original's."""
    review = result.original
    heads = ", ".join(h.label() for h in result.heads) or "none"
    mode = "zeroed" if result.mode == "zero" else f"replaced by {result.reference}"
    label_index = review.label_index
    drop = float(np.log(review.probs[label_index]) - np.log(max(result.probs[label_index], 1e-30)))
    rows = [{"x": label, "series": series, "v": round(float(p), 6)} for series, probs in
            (("all heads", review.probs), ("heads knocked out", result.probs)) for label, p in zip(review.labels, probs,
                                                                                                      strict=True)]
    report = Report("Knock out heads (classifier)", inputs, [
        f"**Knocked out** ({mode}): {heads}.",
        f"**Original:** {review.label} ({verdict(review.labels, review.probs)})",
        f"**Without those heads:** {result.label} ({verdict(review.labels, result.probs)})"
        + (" — the label changed." if result.changed else "."),
        f"The original label “{review.label}” loses {drop:.3f} nats without these heads."])
    report.figures.append(Figure("classifier_knockout", figures.bars(
        rows, "Each label's probability, all heads vs without the chosen", "probability", "label")))
    return report


def occlusion_report(occ, inputs: dict[str, str]) -> Report:
    """runtime.experiments.classifier.ClassifierOcclusion -> the predicted label's drop per occluded piece beside
    the attention each piece receives, their rank correlation and where they disagree."""
    labels = [f"{i} {p}" for i, p in enumerate(occ.pieces)]
    label = occ.review.label
    report = Report("Which words the label needed (classifier)", inputs, [
        f"The classifier says “{label}” ({verdict(occ.review.labels, occ.review.probs)}). "
        f"{occlusion_words(occ.method)}",
        agreement_words(occ, "the classifier")])
    report.figures.append(Figure("classifier_occlusion_drop", figures.bars(
        [{"x": x, "series": "occlusion", "v": round(float(v), 6)} for x, v in zip(labels, occ.drop, strict=True)],
        f"Occlusion: how much less probable “{label}” becomes without each piece", "log-prob drop (nats)", "piece"),
        "Tall bar: the label needed that piece."))
    report.figures.append(Figure("classifier_occlusion_attention", figures.bars(
        [{"x": x, "series": "attention", "v": round(float(v), 6)} for x, v in zip(labels, occ.attention, strict=True)],
        "Attention each piece receives (mean over layers, heads and the other pieces)", "attention weight", "piece"),
        "Tall bar: the encoder looked there. Looking is not needing: compare with the bars above."))
    return report
