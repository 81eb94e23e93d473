"""The "Train your own" page's figures: loss and held-out accuracy curves (one run or two side by side) and one
attention map of the probe input at one moment of training."""
from __future__ import annotations

import textwrap
from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from playground.figures import plotly_text

KINDS = {"cross": "decoder → source (cross-attention)", "encoder": "encoder self-attention",
         "self": "decoder self-attention"}
MEAN = "average"
# An attention map's top margin, stacked from the top: the title (its lines), then the keys' axis (its title and tick
# labels, drawn above the map). Plotly centres a title in the margin and knows nothing of an axis on top, so the
# title is pinned to the figure's top and the margin holds both: otherwise two maps side by side would write their
# two-line titles over the key labels.
TITLE_FONT = 15  # px
TITLE_LINE = round(1.3 * TITLE_FONT)  # plotly's line spacing for <br>-separated lines
TITLE_PAD = 8  # above the title
TITLE_CHARS = 40  # a title line fits a map half the page wide (two side by side on a 1024 px screen); longer wraps
KEYS_AXIS = 62  # the keys' axis title and one line of level tick labels (plus KEY_CHAR a character upright)
TOP = TITLE_PAD + TITLE_LINE + KEYS_AXIS  # a one-line title's: the figure is `height` tall then
KEY_CHAR = 7  # px a tick-label character takes when plotly turns labels upright in a narrow map ("<2out>")


def of(events: list[dict], kind: str) -> list[dict]:
    return [e for e in events if e.get("event") == kind]


def curves(runs: dict[str, list[dict]], height: int = 340) -> go.Figure:
    """Training loss and held-out exact match against training seconds, one colour per run."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=("training loss", "held-out exact match"))
    palette = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"]
    for i, (name, events) in enumerate(runs.items()):
        colour = palette[i % len(palette)]
        steps, evals = of(events, "step"), of(events, "eval")
        fig.add_trace(go.Scatter(x=[e["seconds"] for e in steps], y=[e["loss"] for e in steps], name=name,
                                 legendgroup=name, line={"color": colour},
                                 customdata=[e["step"] for e in steps],
                                 hovertemplate="%{x:.1f} s, step %{customdata}: loss %{y:.3f}"), row=1, col=1)
        fig.add_trace(go.Scatter(x=[e["seconds"] for e in evals], y=[e["accuracy"] for e in evals], name=name,
                                 legendgroup=name, showlegend=False, line={"color": colour}, mode="lines+markers",
                                 customdata=[e["step"] for e in evals],
                                 hovertemplate="%{x:.1f} s, step %{customdata}: %{y:.1%} exact"), row=1, col=2)
    fig.update_xaxes(title_text="seconds of training")
    fig.update_yaxes(title_text="cross-entropy", row=1, col=1)
    fig.update_yaxes(title_text="share of held-out sequences exactly right", tickformat=".0%", range=[0, 1.02],
                     row=1, col=2)
    fig.update_layout(height=height, margin={"l": 10, "r": 10, "t": 40, "b": 10},
                      legend={"orientation": "h", "y": -0.25})
    return fig


def pick(snapshot: dict, kind: str, layer: Any, head: Any) -> np.ndarray:
    """One (queries, keys) map: a layer (1-based) or the average over layers, a head (1-based) or the average."""
    stack = np.asarray(snapshot[kind], dtype=np.float32)  # (L, H, Q, K)
    chosen = stack.mean(axis=0) if layer == MEAN else stack[int(layer) - 1]
    return chosen.mean(axis=0) if head == MEAN else chosen[int(head) - 1]


def tokens_of(probe: dict, kind: str) -> tuple[list[str], list[str]]:
    """(query tokens, key tokens) of a map kind, from the start event's probe."""
    src, tgt = probe["source"], probe["target"]
    return {"cross": (tgt, src), "encoder": (src, src), "self": (tgt, tgt)}[kind]


def attention_map(snapshot: dict, probe: dict, kind: str, layer: Any, head: Any, title: str = "",
                  height: int = 380) -> go.Figure:
    weights = pick(snapshot, kind, layer, head)
    queries, keys = tokens_of(probe, kind)
    # positions, not tokens, on the axes: the probe repeats symbols, and repeated categories would merge
    fig = go.Figure(go.Heatmap(z=weights, zmin=0, zmax=1, colorscale="Blues", showscale=False,
                               customdata=[[f"{plotly_text(q)} → {plotly_text(k)}" for k in keys] for q in queries],
                               hovertemplate="%{customdata}: %{z:.2f}<extra></extra>"))
    fig.update_xaxes(tickmode="array", tickvals=list(range(len(keys))), ticktext=[plotly_text(k) for k in keys],
                     title_text="attended to (keys)", side="top")
    fig.update_yaxes(tickmode="array", tickvals=list(range(len(queries))),
                     ticktext=[plotly_text(q) for q in queries], title_text="attending (queries)", autorange="reversed")
    lines = title_lines(title or f"{KINDS[kind]}, step {snapshot['step']}")
    longest = max(len(plotly_text(k)) for k in keys)
    top = TITLE_PAD + TITLE_LINE * len(lines) + KEYS_AXIS + KEY_CHAR * max(0, longest - 2)
    # the map keeps its size: a longer title makes the figure taller, not the map smaller
    tall = height + top - TOP
    fig.update_layout(title={"text": "<br>".join(lines), "font": {"size": TITLE_FONT}, "yref": "container",
                             "y": 1 - (TITLE_PAD + TITLE_LINE * len(lines)) / tall, "yanchor": "bottom"},
                      height=tall, margin={"l": 10, "r": 10, "t": top, "b": 10})
    return fig


def title_lines(title: str) -> list[str]:
    """A title's lines: its own (<br>-separated), each wrapped at TITLE_CHARS (plotly never wraps a title)."""
    return [part for line in title.split("<br>") for part in textwrap.wrap(line, TITLE_CHARS) or [""]]
