"""The Walkthrough page's views: one function per kind of step, drawing the step's numbers from a trace that is
already computed (a redraw never runs the model). Figures are plain plotly dicts (fast to send: figures.py)."""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from runtime.walkthrough import ClassificationTrace

from .. import heatmap_markup
from ..decoding.bars import percent
from ..figures import MAX_LABELS
from . import bars_markup, map_image
from .bars_markup import Series, bars_html
from .figures import shape_line, values_map
from .steps import Step
from .tensors import (
    Trace,
    embedding_prefix,
    embedding_words,
    ffn_prefix,
    full_distribution_csv,
    layer_norm_stats,
    matrix_csv,
    norm_rows,
    relu_zero_share,
    stage,
    step_json,
    sublayer,
    tokens_of,
    top_candidates,
)

TABLE_ROWS = 40  # a longer table scrolls (st.dataframe)
INTERACTIVE_KEY = "walkthrough_interactive"  # the "Hover and zoom" toggle: plotly's maps instead of the markup ones


def chart(figure: dict[str, Any], key: str) -> None:
    st.plotly_chart(figure, width="stretch", key=f"walkthrough_{key}")


def bars(markup: str) -> None:
    """A bar chart as markup (bars_markup.py: every label escaped there). No plotly alternative: each bar's number
    is written beside it."""
    st.markdown(markup, unsafe_allow_html=True)


def table(rows: list[dict[str, Any]], key: str) -> None:
    """A step's numbers as a table: up to TABLE_ROWS rows a plain one (st.table, which the browser draws far faster
    than st.dataframe's grid: ~250 ms of a step's click, docs/performance.md), its fractions in plain decimals
    (bars_markup.number); a longer one st.dataframe's, which scrolls."""
    if len(rows) > TABLE_ROWS:
        st.dataframe(rows, hide_index=True, key=f"walkthrough_{key}")
        return
    frame = pd.DataFrame(rows)
    fractions = list(frame.select_dtypes("floating").columns)
    st.table(frame.style.hide(axis="index").format(bars_markup.number, subset=fractions))



def draw_map(z: np.ndarray, y_tokens: list[str], title: str, x_title: str, key: str,
             x_labels: list[str] | None = None, diverging: bool = True, most: int = MAX_LABELS) -> None:
    """A values map as markup, which the browser draws far faster than plotly (map_image.py says why): token ×
    dimension as an image, token × token (`x_labels`, at most 40 a side) as a table whose cells hover their values.
    plotly's map (figures.values_map) where the "Hover and zoom" toggle is on, or the table would be too long."""
    markup = not st.session_state.get(INTERACTIVE_KEY)
    if markup and x_labels is None:
        st.markdown(map_image.map_html(z, y_tokens, title, x_title, diverging), unsafe_allow_html=True)
    elif markup and heatmap_markup.fits(len(y_tokens), len(x_labels)):
        st.markdown(heatmap_markup.heatmap_html(z, x_labels, y_tokens, title, x_title, "query", diverging=True,
                                                value_name="score"), unsafe_allow_html=True)  # escaped there
    else:
        chart(values_map(z, y_tokens, title, x_title, x_labels, diverging, most), key)


def download(label: str, data: str, file_name: str, key: str) -> None:
    mime = "application/json" if file_name.endswith(".json") else "text/csv"
    st.download_button(label, data, file_name, mime, key=f"walkthrough_download_{key}", on_click="ignore")


# ---------------------------------------------------------------- the views

def show_tokens(trace: Trace, step: Step, view: dict) -> None:
    pieces = tokens_of(trace, "enc")
    ids = trace.ids if isinstance(trace, ClassificationTrace) else trace.src_ids
    table([{"position": i, "piece": p, "id": t} for i, (p, t) in enumerate(zip(pieces, ids, strict=True))], "tokens")
    st.caption(f"{len(ids)} tokens. " + ("The first is the tag that tells the translator which language to write."
                                         if pieces and pieces[0].startswith("<2") else ""))


def show_embedding(trace: Trace, step: Step, view: dict) -> None:
    tensors, tokens = stage(trace, step.stack), tokens_of(trace, step.stack)
    p = embedding_prefix(step.stack)
    rows, scaled, positions = tensors[f"{p}_embed"], tensors[f"{p}_embed_scaled"], tensors[f"{p}_positions"]
    st.caption(shape_line(**{"E[t]": rows, "× √d_model": scaled, "PE": positions}))
    lengths = [Series("× √d_model", norm_rows(scaled)), Series("row of E", norm_rows(rows), "#aaa"),
               Series("positional encoding", norm_rows(positions), "#ff7f0e")]
    bars(bars_html(tokens, lengths, "Vector length per token (L2 norm)"))
    st.markdown(embedding_words(rows, scaled, positions))
    draw_map(scaled, tokens, "Embedding rows × √d_model (one row per token)", "dimension", f"{step.key}_rows")
    download("The embedding rows (CSV)", matrix_csv(scaled, tokens), f"{step.key}.csv", step.key)


def show_positions(trace: Trace, step: Step, view: dict) -> None:
    tensors, tokens = stage(trace, "enc"), tokens_of(trace, "enc")
    positions, x0 = tensors["src_positions"], tensors["src_x0"]
    st.caption(shape_line(PE=positions, sum=x0))
    if not np.any(positions):
        st.warning("This model adds no positional encoding (trained with it switched off).")
    left, right = st.columns(2)
    with left:
        draw_map(positions, tokens, "Positional encoding PE (position × dimension)", "dimension", "pe")
    with right:
        draw_map(x0, tokens, "Embedding × √d_model + PE: the input to layer 1", "dimension", "x0")
    download("The sum (CSV)", matrix_csv(x0, tokens), "layer_input.csv", "x0")


def show_norm(trace: Trace, step: Step, view: dict, pre_norm: bool) -> None:
    parts = sublayer(stage(trace, "enc"), "enc_self", view["layer"])
    tokens = tokens_of(trace, "enc")
    if pre_norm:
        st.info("This model is pre-LN: the LayerNorm comes before each sublayer (its input, below) and the "
                "residual sum is the stream itself; a final LayerNorm closes the stack.")
        before, after, names = parts["stream"], parts["in"], ("residual stream x", "LayerNorm(x): the sublayer input")
    else:
        st.info("This model is post-LN, as in the paper: the LayerNorm comes after each residual sum.")
        before, after, names = parts["sum"], parts["stream"], ("x + Attention(x)", "LayerNorm(x + Attention(x))")
    st.caption(f"Layer {view['layer'] + 1}, after self-attention: " + shape_line(before=before, after=after))
    left, right = st.columns(2)
    with left:
        draw_map(before, tokens, names[0], "dimension", "norm_before")
    with right:
        draw_map(after, tokens, names[1], "dimension", "norm_after")
    stats = layer_norm_stats(before, after)
    table([{"token": f"{s['position']}: {tokens[s['position']]}", **{k: round(v, 4) for k, v in s.items()
                                                                       if k != "position"}} for s in stats],
          "norm_stats")
    st.caption("After the norm every position has mean ≈ 0 and standard deviation ≈ 1 before the learned gain and "
               "bias; those move it a little (so not exactly 0 and 1).")
    download("Before and after the norm (JSON)", step_json({"before": before, "after": after}, {"rows": tokens}),
             f"layernorm_layer{view['layer'] + 1}.json", "norm")


def show_ffn(trace: Trace, step: Step, view: dict) -> None:
    prefix = ffn_prefix(step)
    stack = "enc" if prefix == "enc_ff" else "dec"
    parts, tokens = sublayer(stage(trace, stack), prefix, view["layer"]), tokens_of(trace, stack)
    hidden = parts["hidden"]
    zero = relu_zero_share(hidden)
    st.caption(f"Layer {view['layer'] + 1}: " + shape_line(input=parts["in"], hidden=hidden, output=parts["out"])
               + f" · {zero.mean():.0%} of the hidden units are 0 after the ReLU, on average over positions")
    bars(bars_html(tokens, [Series("", zero)], "Share of the d_ff hidden units the ReLU set to 0, per position",
                   lambda share: f"{share:.0%}"))
    draw_map(hidden, tokens, f"max(0, x W1 + b1): {hidden.shape[-1]} hidden units per position", "hidden unit",
             f"{step.key}_hidden", diverging=False)
    draw_map(parts["stream"], tokens, "Residual + LayerNorm: this layer's output", "dimension", f"{step.key}_stream")
    download("The hidden units (CSV)", matrix_csv(hidden, tokens), f"{step.key}_hidden.csv", f"{step.key}_hidden")


def show_output(trace: Trace, step: Step, view: dict, model) -> None:
    tokenizer = model.tokenizer
    tensors, inputs = stage(trace, "dec"), tokens_of(trace, "dec")
    t = min(view["position"], len(inputs) - 1)
    log_probs, logits = tensors["log_probs"][t], tensors["logits"][t]
    candidates = top_candidates(log_probs, tokenizer)
    chosen = trace.output_pieces[t] if t < len(trace.output_pieces) else None
    st.caption(shape_line(hidden=tensors["hidden"], logits=tensors["logits"]) +
               f" · position {t}: the decoder has read `{' '.join(inputs[:t + 1])}`")
    greedy = next((i for i, c in enumerate(candidates) if c["token"] == chosen), None)
    bars(bars_html([c["token"] for c in candidates], [Series("probability", [c["probability"] for c in candidates])],
                   f"Position {t}: the {len(candidates)} likeliest next tokens", percent, highlight=greedy))
    table([{**c, "logit": float(logits[c["id"]]), "probability": f"{c['probability']:.2%}"} for c in candidates],
          "output_table")
    st.caption(f"Red: `{chosen}`, the token the greedy translation chose here (always the top one). "
               f"The softmax runs over all {len(log_probs)} vocabulary entries; download them below.")
    download("The whole distribution at this position (CSV, every vocabulary entry)",
             full_distribution_csv(log_probs, logits, tokenizer), f"next_token_position{t}.csv", "output_full")
    others = {c["id"]: c for c in candidates if c["token"] != chosen}
    pick = st.selectbox(f"Take another token at position {t} and continue greedily", [None, *others],
                        format_func=lambda i: "— (keep greedy's choice)" if i is None else
                        f"{others[i]['token']} ({others[i]['probability']:.2%})", key=f"walkthrough_alternative_{t}")
    if pick is not None:
        pick = others[pick]
        other = model.alternative(trace, t, pick["id"])  # one greedy decode: runs only when a token is picked
        st.markdown(f"Greedy: **{trace.text or '(empty output)'}** (log-probability {other.greedy_log_prob:.2f})  \n"
                    f"With `{pick['token']}` at position {t}: **{other.text or '(empty output)'}** "
                    f"(log-probability {other.log_prob:.2f})")
        st.caption("One choice changes everything after it: the decoder reads its own output. Greedy keeps the most "
                   "probable token at every step, which need not give the most probable sentence (beam search "
                   "looks further; see the Decoding explorer).")


def show_pool(trace: Trace, step: Step, view: dict, pooling: str) -> None:
    encoded, pooled, tokens = trace.steps["encoded"], trace.steps["pooled"], trace.pieces
    st.caption(shape_line(encoded=encoded, pooled=pooled) + f" · pooling: {pooling}")
    draw_map(encoded, tokens, "The encoder's output, one vector per token", "dimension", "pool_encoded")
    if pooling == "max":
        winners = np.bincount(encoded.argmax(axis=0), minlength=len(tokens))
        bars(bars_html(tokens, [Series("", winners)], "Dimensions of the pooled vector each token supplied (max "
                       "pooling)", lambda count: f"{count:.0f}"))
    draw_map(pooled[None], ["pooled"], "The pooled vector", "dimension", "pool_vector")
    download("The encoder's output and the pooled vector (JSON)",
             step_json({"encoded": encoded, "pooled": pooled}, {"rows": tokens}), "pooling.json", "pool")


def show_head(trace: Trace, step: Step, view: dict, temperature: float) -> None:
    s = trace.steps
    rows = [{"label": label, "head score z": float(z), f"z / T (T = {temperature:g})": float(c),
             "probability": f"{p:.2%}"}
            for label, z, c, p in zip(trace.labels, s["head_logits"], s["logits"], s["probs"], strict=True)]
    table(rows, "head_table")
    download("Scores and probabilities (JSON)",
             step_json({"head_logits": s["head_logits"], "logits": s["logits"], "probs": s["probs"]},
                       {"labels": trace.labels}), "classifier_head.json", "head")
    raw = np.exp(s["head_logits"] - s["head_logits"].max())
    raw = raw / raw.sum()
    st.caption(f"Without the temperature the top label would get {raw.max():.1%}; calibrated, "
               f"{s['probs'].max():.1%}. The label is **{trace.labels[int(s['probs'].argmax())]}** either way.")
