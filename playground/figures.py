"""The plotly figures: attention heatmaps and head grids, bars, positional encodings, curves, reliability.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

MEAN = "average"  # the layer/head choice that averages instead of picking one

# ---------------------------------------------------------------- attention and plots

def pick_map(weights: list[np.ndarray], layer: Any, head: Any) -> np.ndarray:
    """L × (H, T, S) -> (T, S): one layer (1-based) or the average, one head (1-based) or the average."""
    stack = np.stack([np.asarray(w, dtype=np.float32) for w in weights])  # (L, H, T, S)
    chosen = stack.mean(axis=0) if layer == MEAN else stack[int(layer) - 1]
    return chosen.mean(axis=0) if head == MEAN else chosen[int(head) - 1]


def choice_label(value: Any, noun: str) -> str:
    return f"average of all {noun}s" if value == MEAN else f"{noun} {value}"


def plotly_text(token: str) -> str:
    """A token as plotly label text: plotly reads a subset of HTML, so `</s>` would vanish."""
    return token.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _axis(tokens: list[str]) -> dict[str, Any]:
    # Positions on the axis, tokens as tick labels: repeated tokens must not merge into one category.
    return {"tickmode": "array", "tickvals": list(range(len(tokens))), "ticktext": [plotly_text(t) for t in tokens],
            "tickangle": -45}


MARGIN = {"l": 10, "r": 10, "t": 50, "b": 10}
# Figures on the hot path are plain dicts: st.plotly_chart validates a dict in ~5 ms, while building
# the same go.Figure with update_layout took ~22 ms per figure (measured), a sixth of a round trip.
Figure = dict[str, Any]


def heatmap(z: np.ndarray, x_tokens: list[str], y_tokens: list[str], title: str, x_title: str,
            y_title: str) -> Figure:
    z = np.asarray(z, dtype=np.float32)
    x_text, y_text = [plotly_text(t) for t in x_tokens], [plotly_text(t) for t in y_tokens]
    hover = [[f"{y_text[i]} → {x_text[j]}" for j in range(len(x_tokens))] for i in range(len(y_tokens))]
    trace = {"type": "heatmap", "z": z, "x": list(range(len(x_tokens))), "y": list(range(len(y_tokens))),
             "zmin": 0, "colorscale": "Blues", "customdata": hover,
             "hovertemplate": "%{customdata}<br>weight %{z:.3f}<extra></extra>"}
    layout = {"title": {"text": title}, "height": min(900, max(320, 22 * len(y_tokens) + 160)), "margin": MARGIN,
              "xaxis": {**_axis(x_tokens), "title": {"text": x_title}},
              "yaxis": {**_axis(y_tokens), "title": {"text": y_title}, "autorange": "reversed", "tickangle": 0}}
    return {"data": [trace], "layout": layout}


def heads_grid(maps: np.ndarray, x_tokens: list[str], y_tokens: list[str], title: str) -> go.Figure:
    """(H, T, S) -> one small heatmap per head, one colour scale; token labels on the outer axes only."""
    heads = maps.shape[0]
    cols = min(4, heads)
    rows = -(-heads // cols)
    labelled = len(x_tokens) <= 24 and len(y_tokens) <= 24
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=[f"head {h + 1}" for h in range(heads)],
                        horizontal_spacing=0.02, vertical_spacing=0.14 if labelled else 0.06)
    zmax = float(maps.max()) if maps.size else 1.0
    for h in range(heads):
        fig.add_trace(go.Heatmap(z=maps[h], zmin=0, zmax=zmax, colorscale="Blues", showscale=(h == 0),
                                 hovertemplate="query %{y}, key %{x}: %{z:.3f}<extra></extra>"),
                      row=h // cols + 1, col=h % cols + 1)
    for h in range(heads):
        row, col = h // cols + 1, h % cols + 1
        bottom = row == rows or h + cols >= heads  # nothing below this one
        fig.update_xaxes(_axis(x_tokens) if labelled and bottom else {"showticklabels": False}, row=row, col=col)
        fig.update_yaxes({**_axis(y_tokens), "tickangle": 0} if labelled and col == 1 else {"showticklabels": False},
                         row=row, col=col)
    fig.update_yaxes(autorange="reversed")
    fig.update_layout(title=title, height=(320 if labelled else 260) * rows + 80, margin={**MARGIN, "t": 70})
    return fig


def bar(labels: list[str], values: list[float], title: str, y_title: str) -> Figure:
    trace = {"type": "bar", "x": list(range(len(labels))), "y": list(values), "marker": {"color": "#1f77b4"},
             "customdata": [plotly_text(t) for t in labels], "hovertemplate": "%{customdata}: %{y:.3f}<extra></extra>"}
    layout = {"title": {"text": title}, "height": 340, "margin": MARGIN, "xaxis": _axis(labels),
              "yaxis": {"title": {"text": y_title}}}
    return {"data": [trace], "layout": layout}


def attention_received(weights: list[np.ndarray], layer: Any) -> np.ndarray:
    """How much attention each token receives: a (H, S, S) map averaged over heads and query rows."""
    return pick_map(weights, layer, MEAN).mean(axis=0)


@st.cache_data(show_spinner=False, max_entries=8)
def positional_encoding(d_model: int, positions: int) -> np.ndarray:
    """The sinusoid table (positions × dimensions) of "Attention Is All You Need" §3.5, the one tx.PositionalEncoding
    adds to the embeddings: PE(pos, 2i) = sin(pos / 10000^(2i/d_model)), PE(pos, 2i+1) = cos(pos / 10000^(2i/d_model)).
    Written here in numpy so the app needs no torch (tests/test_app.py checks the two tables agree)."""
    angle = np.arange(positions)[:, None] / 10000.0 ** (np.arange(0, d_model, 2) / d_model)  # (pos, d_model / 2)
    table = np.zeros((positions, d_model), dtype=np.float32)
    table[:, 0::2], table[:, 1::2] = np.sin(angle), np.cos(angle)
    return table


def positional_figures(d_model: int, positions: int) -> tuple[Figure, Figure]:
    pe = positional_encoding(d_model, positions)
    unit = pe / np.linalg.norm(pe, axis=1, keepdims=True)
    fig_pe = {"data": [{"type": "heatmap", "z": pe, "colorscale": "RdBu", "zmid": 0,
                        "hovertemplate": "position %{y}, dimension %{x}: %{z:.3f}<extra></extra>"}],
              "layout": {"title": {"text": f"PE(pos, i): {positions} positions × {d_model} dimensions"},
                         "height": 420, "margin": MARGIN, "xaxis": {"title": {"text": "dimension i"}},
                         "yaxis": {"title": {"text": "position"}, "autorange": "reversed"}}}
    fig_sim = {"data": [{"type": "heatmap", "z": unit @ unit.T, "colorscale": "Viridis",
                         "hovertemplate": "positions %{y} and %{x}: cosine %{z:.3f}<extra></extra>"}],
               "layout": {"title": {"text": "Position similarity: cosine of PE(p) and PE(q)"}, "height": 420,
                          "margin": MARGIN, "xaxis": {"title": {"text": "position q"}},
                          "yaxis": {"title": {"text": "position p"}, "autorange": "reversed"}}}
    return fig_pe, fig_sim


def curves(frame: pd.DataFrame, columns: list[str], title: str, x: str) -> go.Figure:
    fig = go.Figure()
    for column in columns:
        values = pd.to_numeric(frame[column], errors="coerce")
        fig.add_trace(go.Scatter(x=frame[x] if x in frame else frame.index, y=values, mode="lines+markers",
                                 name=column))
    fig.update_layout(title=title, height=340, xaxis_title=x, margin=MARGIN)
    return fig


def reliability_figure(split: dict[str, Any], name: str) -> go.Figure:
    """Reliability diagram of one split of `calibration.json` (tx.calibration): per confidence bin, how often
    the label was right, before and after temperature scaling; on the diagonal a probability means what it says."""
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[0.5, 1.0], y=[0.5, 1.0], mode="lines", name="perfect calibration",
                             line={"dash": "dash", "color": "gray"}))
    for tag, colour in (("uncalibrated", "#d62728"), ("calibrated", "#1f77b4")):
        entry = split.get(tag) or {}
        table = entry.get("reliability") or {}
        columns = zip(table.get("confidence", []), table.get("accuracy", []), table.get("counts", []), strict=False)
        points = [(c, a, n) for c, a, n in columns if c is not None and a is not None]
        if points:
            fig.add_trace(go.Scatter(
                x=[c for c, _, _ in points], y=[a for _, a, _ in points], mode="lines+markers",
                name=f"{tag} (ECE {entry.get('ece', float('nan')):.1f}%)", line={"color": colour},
                marker={"size": [6 + 14 * (n / max(p[2] for p in points)) ** 0.5 for _, _, n in points]},
                customdata=[n for _, _, n in points],
                hovertemplate="confidence %{x:.2f}: right %{y:.0%} of %{customdata} reviews<extra></extra>"))
    fig.update_layout(title=f"Reliability on {name}: accuracy per confidence bin (marker size = reviews)",
                      height=360, margin=MARGIN, xaxis_title="mean confidence in the bin",
                      yaxis_title="share correct", xaxis_range=[0.45, 1.02], yaxis_range=[0.0, 1.02])
    return fig
