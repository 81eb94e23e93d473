"""The Attention explorer's words and figures: the kinds of attention each model has, the maps and token axes of
a kind, what is known of the output the maps explain, and the figure of a layer and head. Pure: it draws through
playground.figures and calls no streamlit."""
from __future__ import annotations

from typing import Any

import numpy as np

from playground import figures, heatmap_markup
from runtime.text import Prediction, Translation

KINDS = {"translate": {"encoder": "encoder self-attention", "self": "decoder self-attention (causal)",
                       "cross": "cross-attention (decoder → encoder)"},
         "sentiment": {"encoder": "encoder self-attention"}}


def translation_maps(out: Translation, kind: str) -> tuple[list[np.ndarray], list[str], list[str]]:
    """(maps, query tokens, key tokens) of one kind of a translation's attention ("encoder", "self", "cross")."""
    rows = out.src_tokens if kind == "encoder" else out.tokens
    cols = out.tokens if kind == "self" else out.src_tokens
    return out.attention[kind], rows, cols


def judged_note(source: str, output: str, examples: list[dict[str, str]]) -> str:
    """What is known of a greedy output: the hand verdict of examples.tsv (`examples`: the direction's rows, as
    inputs.curated_examples gives them) where that output was judged, else that it was not judged (and the judged
    beam-search output where the sentence has one)."""
    row = next((r for r in examples if r["source"] == source.strip()), None)
    if row is None or not row.get("verdict"):
        return ("This greedy output was not judged: greedy decoding is often wrong on this model, so read the maps as "
                "how the model got its answer, not as a checked translation.")
    judged = "judged right by hand" if row["verdict"] == "works" else "judged wrong by hand"
    if output == row.get("output"):
        return f"{'✓' if row['verdict'] == 'works' else '✗'} This output was {judged}" + (
            f" ({row['note']})." if row.get("note") else ".")
    return (f"This greedy output was not judged. The output of beam search (4 beams, the Translate page's default), "
            f"“{row.get('output')}”, was {judged}" + (f" ({row['note']})." if row.get("note") else "."))


def known_label_note(label: str | None, out: Prediction) -> str:
    """Whether the classifier is right on a test-set review (`label`: its label there, None for another text)."""
    if not label:
        return "Not a test-set review: no known label to compare with."
    return f"A test-set review labelled {label}: the model is {'right' if label == out.label else 'wrong'} here."


def one_head_map(maps: list[np.ndarray], rows: list[str], cols: list[str], kind: str, layer: Any,
                 head: Any) -> str | figures.Figure:
    """One head's map (or the mean over heads or layers): rows attend to columns. Markup (heatmap_markup: the
    browser draws it far faster than plotly, redrawn at every pick) up to 40 tokens a side, plotly's beyond."""
    weights = figures.pick_map(maps, layer, head)
    title = f"{kind.capitalize()}: {figures.choice_label(layer, 'layer')}, {figures.choice_label(head, 'head')}"
    if heatmap_markup.fits(len(rows), len(cols)):
        return heatmap_markup.heatmap_html(weights, cols, rows, title, "key (attended to)", "query (attending)")
    return figures.heatmap(weights, cols, rows, title, "key (attended to)", "query (attending)")


def heads_figure(maps: list[np.ndarray], rows: list[str], cols: list[str], kind: str, layer: Any) -> Any:
    """Every head of one layer, side by side."""
    heads = maps[0].shape[0]
    return figures.heads_grid(maps[int(layer) - 1], cols, rows,
                              f"{kind.capitalize()}: layer {layer}, all {heads} heads")


def positional_choices(config: dict[str, Any]) -> tuple[list[int], int, int]:
    """The d_model choices, the one to start on (the model's own, when even) and the positions to start on (the
    model's length limit, at most 100)."""
    model_d = int(config.get("d_model", 256))
    model_d = model_d if model_d % 2 == 0 else 256
    return sorted({16, 32, 64, 128, 256, 512, model_d}), model_d, min(100, int(config.get("max_len", 100)))
