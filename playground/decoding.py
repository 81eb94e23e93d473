"""The Decoding explorer's numbers and figures: one input decoded once (greedy with every step's next-token
log-probs, and beam search with its trace), then temperature / top-k / top-p applied to the stored numbers, so a
slider redraws without running the model again.
"""
from __future__ import annotations

import json
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from runtime.batching import pad
from runtime.coverage import coverage
from runtime.coverage import warning as coverage_warning
from runtime.decoding import BeamTree, beam_search, greedy, keep_top_k, keep_top_p, softmax

BARS = 15  # tokens drawn per step
LENGTH_PENALTY = 0.6  # the Translate page's default
STATUS_WORDS = {"kept": "kept (a live beam)", "finished": "finished (EOS)", "max_len": "ended at the max length",
                "stopped": "stopped (the best could no longer be beaten)", "pruned": "pruned"}


class StepRecorder:
    """A `DecoderBackend` that passes everything through and keeps a copy of each step's log-probs of row 0."""

    def __init__(self, backend):
        self.backend, self.steps = backend, []
        self.max_source_len, self.max_target_len = backend.max_source_len, backend.max_target_len
        self.encode, self.reorder, self.top_k = backend.encode, backend.reorder, backend.top_k
        self.cross_attention, self.attention = backend.cross_attention, backend.attention

    def step(self, tokens, state, attention=False):
        log_probs, state = self.backend.step(tokens, state, attention)
        self.steps.append(np.array(log_probs[0], dtype=np.float32))
        return log_probs, state


@st.cache_data(show_spinner=False, max_entries=16)
def explore(_model, direction: tuple[str, str], text: str, beam: int, version: tuple) -> dict[str, Any]:
    """Run the model once for this input: greedy with its steps' log-probs, beam search with its trace."""
    tok = _model.tokenizer
    src, truncated = _model.source_ids(text, direction[1])
    src_ids, src_mask = pad([src], tok.pad_id)
    recorder = StepRecorder(_model.backend)
    path = greedy(recorder, src_ids, src_mask, bos_id=tok.bos_id, eos_id=tok.eos_id)[0]
    tree = BeamTree()
    best = beam_search(_model.backend, src_ids, src_mask, beam=beam, length_penalty=LENGTH_PENALTY,
                       bos_id=tok.bos_id, eos_id=tok.eos_id, observer=tree)[0]
    nodes = [dict(r, piece=tok.id_to_token(r["token"])) for r in tree.nodes()]
    return {"log_probs": np.stack(recorder.steps), "tokens": path.tokens, "pieces": tok.tokens(path.tokens),
            "greedy_text": tok.decode(path.tokens), "greedy_log_prob": path.log_prob,
            "beam_text": tok.decode(best.tokens), "beam_tokens": best.tokens, "beam_score": best.score,
            "nodes": nodes, "truncated": truncated,
            "warning": coverage_warning(coverage(text, tok.tokens(src[1:-1]))),
            "vocab": [tok.id_to_token(i) for i in range(tok.vocab_size)]}


def filtered(log_probs: np.ndarray, temperature: float, top_k: int, top_p: float) -> tuple[np.ndarray, float]:
    """One step's distribution after temperature, top-k and top-p (probabilities summing to 1), and the share of the
    tempered distribution the filters removed."""
    tempered = log_probs[None, :].astype(np.float64) / temperature
    kept = keep_top_p(keep_top_k(tempered, top_k), top_p)
    before, after = softmax(tempered)[0], softmax(kept)[0]
    return after, float(before[~np.isfinite(kept[0])].sum())


def removed_words(removed: float, kept: int, vocab: int, top_k: int, top_p: float) -> str:
    if top_k == 0 and top_p >= 1.0:
        return f"No filter: all {vocab:,} tokens keep their probability."
    return (f"Top-k and top-p removed {removed:.1%} of the probability: {vocab - kept:,} of {vocab:,} tokens dropped; "
            f"the {kept:,} kept are renormalised to sum to 100%.")


def bars_figure(probs: np.ndarray, raw: np.ndarray, vocab: list[str], chosen: int, title: str) -> go.Figure:
    """The BARS most probable tokens of a step; the token greedy chose in another colour."""
    top = np.argsort(-probs, kind="stable")[:BARS]
    top = top[probs[top] > 0]
    labels = [f"{vocab[i]} ({i})" for i in top]
    fig = go.Figure(go.Bar(
        x=probs[top].tolist(), y=labels, orientation="h",
        marker_color=["#d62728" if i == chosen else "#1f77b4" for i in top],
        customdata=np.stack([np.exp(raw[top]), raw[top]], axis=1).tolist(),
        hovertemplate="%{y}<br>shown: %{x:.2%}<br>model (T=1, no filter): %{customdata[0]:.2%}"
                      "<br>log-prob %{customdata[1]:.3f}<extra></extra>"))
    fig.update_layout(title=title, xaxis_title="probability", xaxis_tickformat=".0%", height=90 + 24 * len(top),
                      yaxis={"autorange": "reversed"}, margin={"l": 10, "r": 10, "t": 40, "b": 40})
    return fig


def best_path(nodes: list[dict]) -> list[int]:
    """Ids from the first step to the node marked best: the hypothesis beam search returned."""
    by_id = {n["id"]: n for n in nodes}
    node = next(n for n in nodes if n["best"])
    ids = []
    while node is not None:
        ids.append(node["id"])
        node = by_id.get(node["parent"])
    return ids[::-1]


STYLES = {"kept": ("circle", "#1f77b4", 10), "finished": ("star", "#2ca02c", 14), "max_len": ("square", "#ff7f0e", 11),
          "stopped": ("circle-open", "#1f77b4", 10), "pruned": ("x", "#bbbbbb", 7)}


def tree_figure(nodes: list[dict]) -> go.Figure:
    """Beam search as a tree: x = step, one node per candidate (rank order from the top), edges to the beam it
    extends; kept, finished and pruned styled apart; the returned hypothesis' path drawn thick."""
    place = {None: (0, 0.0)}
    rank: dict[int, int] = {}
    for n in nodes:
        rank[n["step"]] = rank.get(n["step"], -1) + 1
        place[n["id"]] = (n["step"], -float(rank[n["step"]]))
    fig = go.Figure()
    for pruned in (True, False):
        xs, ys = [], []
        for n in nodes:
            if (n["status"] == "pruned") == pruned:
                (x0, y0), (x1, y1) = place[n["parent"]], place[n["id"]]
                xs += [x0, x1, None]
                ys += [y0, y1, None]
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", hoverinfo="skip", showlegend=False,
                                 line={"color": "#dddddd" if pruned else "#7f7f7f", "width": 1,
                                       "dash": "dot" if pruned else "solid"}))
    path = [None, *best_path(nodes)]
    pieces = {n["id"]: n["piece"] for n in nodes}
    fig.add_trace(go.Scatter(x=[place[i][0] for i in path], y=[place[i][1] for i in path], mode="lines",
                             text=["<s>", *(pieces[i] for i in path[1:])],
                             line={"color": "#d62728", "width": 3}, name="the result", hoverinfo="skip"))
    fig.add_trace(go.Scatter(x=[0], y=[0], mode="markers+text", text=["<s>"], textposition="middle left",
                             marker={"color": "black", "size": 10}, name="start", hoverinfo="skip"))
    for status, (symbol, color, size) in STYLES.items():
        group = [n for n in nodes if n["status"] == status]
        if group:
            fig.add_trace(go.Scatter(
                x=[place[n["id"]][0] for n in group], y=[place[n["id"]][1] for n in group],
                mode="markers+text" if status != "pruned" else "markers", name=STATUS_WORDS[status],
                text=[n["piece"] for n in group], textposition="top center",
                marker={"symbol": symbol, "color": color, "size": size},
                customdata=[[n["piece"], n["log_prob"], n["score"]] for n in group],
                hovertemplate="%{customdata[0]}<br>log-prob (raw): %{customdata[1]:.3f}<br>"
                              "with length penalty: %{customdata[2]:.3f}<extra>" + STATUS_WORDS[status] + "</extra>"))
    fig.update_layout(xaxis_title="step (tokens generated)", yaxis={"visible": False}, height=520,
                      legend={"orientation": "h"}, margin={"l": 10, "r": 10, "t": 30, "b": 40})
    return fig


def distributions_csv(log_probs: np.ndarray, vocab: list[str], temperature: float, top_k: int, top_p: float,
                      per_step: int = 50) -> bytes:
    """Each step's `per_step` most probable tokens: the model's log-prob and the probability after the filters."""
    rows = []
    for step, lp in enumerate(log_probs, 1):
        probs, _ = filtered(lp, temperature, top_k, top_p)
        for i in np.argsort(-lp, kind="stable")[:per_step]:
            rows.append({"step": step, "token_id": int(i), "token": vocab[i], "log_prob": float(lp[i]),
                         "prob": float(np.exp(lp[i])), "prob_filtered": float(probs[i])})
    return pd.DataFrame(rows).to_csv(index=False).encode("utf-8")


def tree_json(nodes: list[dict]) -> bytes:
    return json.dumps({"length_penalty": LENGTH_PENALTY, "nodes": nodes}, indent=1).encode("utf-8")


# ---------------------------------------------------------------- the page's state in the URL

class Knob(NamedTuple):
    """A sampling slider's range: the page draws it from here and a link's value must fall inside it."""
    label: str
    low: float
    high: float
    default: float
    step: float


KNOBS = {"temperature": Knob("Temperature", 0.1, 3.0, 1.0, 0.05), "top_k": Knob("Top-k (0 = off)", 0, 100, 0, 1),
         "top_p": Knob("Top-p (1 = off)", 0.05, 1.0, 1.0, 0.05), "beam": Knob("Beam size", 1, 8, 4, 1)}


def parse_url(raw: dict[str, str], directions: list[tuple[str, str]]) -> dict[str, Any]:
    """The query parameters a link carries, as widget values (keys without the page prefix). A value that does not
    parse, or that its slider could not show (out of range, NaN), is dropped: the page's default stands. The step's
    upper end depends on the sentence, so the page clamps it."""
    parsers = {"direction": lambda v: next(d for d in directions if "-".join(d) == v), "text": str,
               "step": int, "temperature": float, "top_k": int, "top_p": float, "beam": int}
    found = {}
    for name, parse in parsers.items():
        if name in raw:
            try:
                found[name] = parse(raw[name])
            except (StopIteration, ValueError):
                pass
    for name, knob in KNOBS.items():
        if name in found and not knob.low <= found[name] <= knob.high:  # NaN fails both comparisons
            del found[name]
    if found.get("step", 1) < 1:
        del found["step"]
    return found


def url_of(values: dict[str, Any]) -> dict[str, str]:
    return {k: "-".join(v) if isinstance(v, tuple) else str(v) for k, v in values.items()}
