""""Attribute a token" as a Report: for one output token (or the classifier's label), each method's score per
source piece side by side (occlusion, saliency, input × gradient, integrated gradients, attention rollout), each
method's deletion curve and its area, integrated gradients' completeness error, and the benchmark's verdict on
which method best predicts deletion (models/translate/experiments/attribution.json). Pure: no Streamlit."""
from __future__ import annotations

from typing import Any

import numpy as np

from . import figures
from .report import Figure, Report

NAMES = {"occlusion": "occlusion", "saliency": "saliency", "input_x_gradient": "input × gradient",
         "integrated_gradients": "integrated gradients", "rollout": "attention rollout", "random": "random order"}
# Column heads of the scores' grid: short, so five columns fit a 390 px phone beside the pieces' labels.
SHORT = {"occlusion": "occlusion", "saliency": "saliency", "input_x_gradient": "input×grad",
         "integrated_gradients": "IG", "rollout": "rollout"}
DEFINITIONS = {
    "occlusion": "how much less probable the output becomes with that piece alone masked out",
    "saliency": "the size of the gradient at the piece's embedding (sensitivity, no sign)",
    "input_x_gradient": "the embedding times its gradient, summed (signed: > 0 supports the output)",
    "integrated_gradients": "the gradient averaged along a straight path from a zero embedding, times the "
                            "embedding (signed; sums to the change from that baseline)",
    "rollout": "attention alone, rolled through the encoder and into cross-attention (Abnar & Zuidema 2020)",
}


def steps_words(gradients: dict[str, Any]) -> str:
    """How many steps integrated gradients took: one pass, or the refinement's passes with each one's error
    (tx.attribution doubles the steps while the completeness error is over 1%)."""
    passes = gradients.get("passes") or [(gradients["steps"], gradients["completeness_error"])]
    if len(passes) == 1:
        return f"{passes[0][0]} steps"
    tried = ", ".join(f"{steps} steps gave {error:.2%}" for steps, error in passes[:-1])
    return f"{passes[-1][0]} steps (refined because the completeness error was over 1%: {tried})"


def score_rows(pieces: list[str], scores: dict[str, np.ndarray], tops: dict[str, float] | None = None
               ) -> list[dict[str, Any]]:
    """One cell per piece (a row: long sentences stay readable on a phone) and method (a column); each method's
    scores divided by its largest |score| (`tops[method]`, else over these pieces) so the scales compare (the raw
    score is kept for the CSV)."""
    rows = []
    for method, values in scores.items():
        values = np.asarray(values, dtype=np.float64)
        top = (tops or {}).get(method) or float(np.abs(values).max()) or 1.0
        rows += [{"x": SHORT[method], "y": f"{i} {p}", "v": round(float(v) / top, 6), "raw": round(float(v), 6)}
                 for i, (p, v) in enumerate(zip(pieces, values, strict=True))]
    return rows


def largest(*parts: dict[str, np.ndarray]) -> dict[str, float]:
    """Each method's largest |score| over the source's pieces and the target prefix together: one scale for both
    figures, so a prefix cell and a source cell of the same colour are the same score."""
    tops: dict[str, float] = {}
    for part in parts:
        for method, values in part.items():
            values = np.abs(np.asarray(values, dtype=np.float64))
            tops[method] = max(tops.get(method, 0.0), float(values.max()) if values.size else 0.0)
    return tops


def curve_spec(curves: dict[str, Any], title: str, what: str) -> figures.Spec:
    """Probability after each deletion against the fraction deleted, one line per method."""
    rows = [{"fraction": round(float(f), 6), "method": NAMES[m], "v": round(float(p), 6), "auc": round(c.auc, 4)}
            for m, c in curves.items() for f, p in zip(c.fractions, c.probs, strict=True)]
    return {"$schema": figures.SCHEMA, "title": figures.title_lines(title), "padding": figures.PADDING,
            "data": {"values": rows}, "width": figures.WIDTH, "height": 260,
            "mark": {"type": "line", "point": True},
            "encoding": {"x": {"field": "fraction", "type": "quantitative", "title": "fraction of pieces deleted",
                               "scale": {"domain": [0, 1]}},
                         "y": {"field": "v", "type": "quantitative", "title": f"p({what})",
                               "scale": {"domain": figures.domain([r["v"] for r in rows], zero=True)}},
                         "color": {"field": "method", "type": "nominal", "legend": {"orient": "bottom"}},
                         "tooltip": [{"field": "method"}, {"field": "fraction"}, {"field": "v", "title": "p"},
                                     {"field": "auc", "title": "AUC"}]}}


def best_words(curves: dict[str, Any], ranked: list[str]) -> str:
    """Which method's curve has the lowest area here; methods whose areas are equal (the same first pieces, and
    so the same curve where it matters) tie."""
    best = [m for m in ranked if curves[m].auc <= curves[ranked[0]].auc + 1e-9]
    if len(best) == 1:
        return f"{NAMES[best[0]]} predicted deletion best."
    return f"{', '.join(NAMES[m] for m in best[:-1])} and {NAMES[best[-1]]} tie for best (equal areas)."


def benchmark_words(bench: dict[str, Any] | None, direction: str) -> str:
    """The benchmark's verdict for `direction` ("de-en", or "sentiment"), in a sentence."""
    measured = (bench or {}).get("directions", {}).get(direction)
    if not measured:
        return ("No benchmark of the methods is recorded for this model (`python -m bench attribution` measures "
                "which one best predicts deletion).")
    methods = measured["methods"]
    ranked = sorted((m for m in methods if m != "random"), key=lambda m: methods[m]["mean"])
    names = bench.get("names", {})
    listed = ", ".join(f"{names.get(m, m)} {methods[m]['mean']:.3f} ± {methods[m]['se']:.3f}" for m in ranked)
    return (f"Over {measured['sentences']} held-out sentences ({bench.get('set', '?')}, {direction}, measured "
            f"{bench.get('measured', '?')}), **{names.get(ranked[0], ranked[0])}** best predicted what deleting does "
            f"(mean deletion AUC, lower is better: {listed}; random order {methods['random']['mean']:.3f}).")


def meaning(a: str, b: str, what: str = "the token") -> str:
    """What the gradient methods' scores mean once token (or label) B is chosen: tx.attribution's `contrast`."""
    f = (f"log p(“{a}”) − log p(“{b}”)" if what == "the token"
         else f"the logit of “{a}” minus the logit of “{b}”")
    return (f"**Why “{a}” rather than “{b}”**: saliency, input × gradient and integrated gradients now explain "
            f"**{f}**{' (the difference of the two logits)' if what == 'the token' else ''}, not “{a}” alone: a "
            f"piece scores > 0 when it makes “{a}” more likely *than* “{b}”, and one that raises both scores near 0. "
            f"Occlusion, rollout and the deletion curves still read p(“{a}”) alone.")


def attribution_report(pieces: list[str], token: str, scores: dict[str, np.ndarray], curves: dict[str, Any],
                       gradients: dict[str, Any] | None, why_not: str | None, bench: str,
                       inputs: dict[str, str], what: str = "the token", prefix: list[str] | None = None,
                       rather: str | None = None) -> Report:
    """pieces: the deletable source pieces; scores: method -> (P,) over them; curves: method -> DeletionCurve
    (runtime.experiments.deletion); gradients: attribution_torch's dict (None when PyTorch is missing, why_not
    then says why); bench: benchmark_words; prefix: the target prefix's pieces (the decoder's inputs up to the
    token: <s> and the earlier output; None for the classifier, which has none), whose gradient scores are
    gradients["prefix"]; rather: token (label) B when the gradient methods explain A rather than B."""
    kept = ", the translation's earlier tokens kept" if what == "the token" else ""
    sentences = [f"Explaining **“{token}”**. Each method ranks the input's pieces; deleting them in that order "
                 f"(masked out as padding, one more each step{kept}) shows which ranking finds what {what} really "
                 "needs: the lower the area under the curve (AUC), the better.",
                 " ".join(f"**{NAMES[m]}**: {DEFINITIONS[m]}." for m in scores)]
    if gradients is not None and rather:
        sentences.append(meaning(token, rather, what))
    if gradients is not None:
        sentences.append(f"Integrated gradients: {steps_words(gradients)} ({gradients['rule']} rule), baseline: "
                         f"{gradients['baseline']} embeddings with the positions kept; completeness error "
                         f"**{gradients['completeness_error']:.2%}** (|Σ attributions − (f(input) − f(baseline))| "
                         f"/ |f(input) − f(baseline)|, f = {gradients['value']:.3f}, f(baseline) = "
                         f"{gradients['baseline_value']:.3f}). Another baseline gives other, equally complete "
                         "numbers.")
    elif why_not:
        sentences.append(why_not)
    ranked = sorted((m for m in curves if m != "random"), key=lambda m: curves[m].auc)
    sentences.append("Deletion AUC here: " + ", ".join(f"{NAMES[m]} {curves[m].auc:.3f}" for m in ranked)
                     + (f"; random order {curves['random'].auc:.3f}" if "random" in curves else "")
                     + f". On this {'sentence' if what == 'the token' else 'text'}, " + best_words(curves, ranked))
    sentences.append(bench)
    sentences.append("Attention is not explanation: rollout reads the attention weights alone (not what the "
                     "values carry); compare its curve with occlusion's.")
    prefix_scores = {m: np.asarray(v) for m, v in (gradients or {}).get("prefix", {}).items()} if prefix else {}
    if prefix is not None and not prefix_scores:
        sentences.append("No scores over the target prefix: only the gradient methods give them (occlusion masks "
                         "source pieces, and rollout reads the source's path alone).")
    tops = largest(scores, prefix_scores)
    contrasted = gradients is not None and rather
    explained = f"“{token}”" + (f", rather than “{rather}” for the gradients" if contrasted else "")
    report = Report("Attribute a token", inputs, sentences)
    report.figures.append(Figure("attribution_scores", figures.grid(
        score_rows(pieces, scores, tops), f"Each method's scores for {explained} (each divided by its largest)",
        "score / max |score|", diverging=True, x_title="method"),
        "Red: the piece supports the token (by that method); blue: it speaks against it. Saliency, occlusion "
        "and rollout have no sign worth reading as against (saliency and rollout none at all)."))
    if prefix_scores:
        report.figures.append(Figure("attribution_prefix", figures.grid(
            score_rows(prefix, prefix_scores, tops), f"The target prefix's scores for {explained} (same scale "
            "as the source's)", "score / max |score|", diverging=True, x_title="method"),
            "The target prefix: the decoder's inputs up to this token (<s> and the translation's earlier tokens), "
            "which the token was also computed from. Each method is divided by its largest |score| over the source "
            "and the prefix together, so the two figures compare. Occlusion and attention rollout have no scores "
            "here: occlusion masks source pieces only, and rollout follows the source through the encoder into "
            "cross-attention (the decoder's self-attention is not rolled)."))
    report.figures.append(Figure("attribution_deletion", curve_spec(
        curves, f"Deleting pieces in each method's order: p(“{token}”)", what),
        "A curve that falls fast means the method put first what the token needed; random order is the floor."))
    return report
