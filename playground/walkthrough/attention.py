"""The Walkthrough's attention views: Q, K, V of one head; its scores, mask and softmax with one query row worked
through; the heads concatenated and W_O. Drawn from a trace that is already computed (views.py has the
other steps' views and the Streamlit helpers, figures.py the figures)."""
from __future__ import annotations

import numpy as np
import streamlit as st

from .. import heatmap_markup
from ..figures import heatmap
from .figures import HALF_LABELS, HALF_NOTE_CHARS, shape_line
from .steps import Step
from .tensors import Trace, attention_prefix, matrix_csv, softmax_check, stage, step_json, sublayer, tokens_of
from .views import INTERACTIVE_KEY, chart, download, draw_map, table


def attention_parts(trace: Trace, step: Step, view: dict) -> tuple[dict[str, np.ndarray], list[str], list[str]]:
    """The chosen layer's sublayer tensors, query tokens and key tokens for an attention step."""
    prefix = attention_prefix(step)
    parts = sublayer(stage(trace, "dec" if prefix.startswith("dec") else "enc"), prefix, view["layer"])
    queries = tokens_of(trace, "dec" if prefix.startswith("dec") else "enc")
    keys = tokens_of(trace, "enc") if prefix == "dec_cross" else queries
    return parts, queries, keys


def show_qkv(trace: Trace, step: Step, view: dict) -> None:
    parts, queries, keys = attention_parts(trace, step, view)
    h = view["head"]
    q, k, v = parts["q"][h], parts["k"][h], parts["v"][h]
    st.caption(f"Layer {view['layer'] + 1}, head {h + 1}: " + shape_line(input=parts["in"], Q=q, K=k, V=v))
    cols = st.columns(3)
    for col, (name, matrix, tokens) in zip(cols, (("Q", q, queries), ("K", k, keys), ("V", v, keys)), strict=True):
        with col:
            draw_map(matrix, tokens, f"{name} (head {h + 1})", "dimension of the head", f"{step.key}_{name}")
    download("Q, K, V of this head (JSON)", step_json({"q": q, "k": k, "v": v}, {"queries": queries, "keys": keys}),
             f"qkv_layer{view['layer'] + 1}_head{h + 1}.json", f"{step.key}_qkv")


def show_scores(trace: Trace, step: Step, view: dict) -> None:
    parts, queries, keys = attention_parts(trace, step, view)
    h, row = view["head"], min(view["query"], len(queries) - 1)
    scores, scaled, masked, weights = (parts[n][h] for n in ("scores", "scaled", "masked", "weights"))
    scale = float(scaled.flat[0] / scores.flat[0]) if scores.size and scores.flat[0] else float("nan")
    st.caption(f"Layer {view['layer'] + 1}, head {h + 1}: " + shape_line(QKᵀ=scores, weights=weights)
               + f" · scale {scale:.4g} (1/√d_k = {1 / np.sqrt(parts['q'].shape[-1]):.4g})")
    left, right = st.columns(2)
    with left:
        draw_map(scores, queries, "QKᵀ: raw scores (query row × key column)", "key", f"{step.key}_raw",
                 x_labels=keys, most=HALF_LABELS)
        draw_map(masked, queries, "÷ √d_k, mask applied (blank = −∞)", "key", f"{step.key}_masked", x_labels=keys,
                 most=HALF_LABELS)
    with right:
        if st.session_state.get(INTERACTIVE_KEY) or not heatmap_markup.fits(len(queries), len(keys)):
            chart(heatmap(weights, keys, queries, "softmax: the attention weights", "key", "query",
                          note_chars=HALF_NOTE_CHARS), f"{step.key}_weights")
        else:  # markup, as draw_map draws the scores beside it
            st.markdown(heatmap_markup.heatmap_html(weights, keys, queries, "softmax: the attention weights", "key",
                                                    "query"), unsafe_allow_html=True)
        masked_cells = int((~np.isfinite(masked)).sum())
        st.caption(f"{masked_cells} of {masked.size} cells masked. Each row sums to 1 "
                   f"(largest deviation {np.abs(weights.sum(-1) - 1).max():.1e}); softmax of the shown scores "
                   f"equals the shown weights to {softmax_check(masked, weights):.1e}.")
    st.markdown(f"**Row {row} (`{queries[row]}`) in detail**: what the softmax does to one query's scores.")
    finite = np.isfinite(masked[row])
    exps = np.where(finite, np.exp(masked[row] - masked[row][finite].max()) if finite.any() else 0.0, 0.0)
    table([{"key": f"{j}: {keys[j]}", "q·k": float(scores[row, j]), "÷ √d_k": float(scaled[row, j]),
            "masked": float(masked[row, j]), "exp(· − max)": float(exps[j]), "weight": float(weights[row, j])}
           for j in range(len(keys))], f"{step.key}_row")
    download("Scores, masked scores and weights of this head (JSON)",
             step_json({"scores": scores, "scaled": scaled, "masked": masked, "weights": weights},
                       {"queries": queries, "keys": keys}),
             f"{step.key}_layer{view['layer'] + 1}_head{h + 1}.json", f"{step.key}_scores")


def show_heads(trace: Trace, step: Step, view: dict) -> None:
    parts, queries, keys = attention_parts(trace, step, view)
    h = view["head"]
    context, concat, out = parts["context"][h], parts["concat"], parts["out"]
    d_k = context.shape[-1]
    st.caption(f"Layer {view['layer'] + 1}: " + shape_line(**{f"head {h + 1}": context, "concat": concat,
                                                              "after W_O": out})
               + f" · head {h + 1} fills columns {h * d_k}–{(h + 1) * d_k - 1} of the concatenation")
    draw_map(context, queries, f"Head {h + 1}: weights × V (one row per query)", "dimension of the head",
             f"{step.key}_context")
    left, right = st.columns(2)
    with left:
        draw_map(concat, queries, "All heads side by side (Concat)", "dimension", f"{step.key}_concat")
    with right:
        draw_map(out, queries, "× W_O: the sublayer's output", "dimension", f"{step.key}_out")
    download("The sublayer's output (CSV)", matrix_csv(out, queries), "attention_output.csv", f"{step.key}_out")
