"""A step's most probable tokens as HTML bars, drawn by the browser itself (st.markdown), not by plotly.

Why not plotly: this chart is redrawn at every move of the Step slider, and plotly's drawing was about half of
each move. `python -m bench clicks` on the 2-core host, before and after, alternating: a Step move was drawn at p50 259
and 227 ms with the plotly chart, 135 and 142 ms with this markup; the server's CPU per move fell from 30 to 10-15
ms (no figure to build and validate). In a bare Streamlit app, a slider redrawing a 10-bar plotly chart was drawn at
135-155 ms, a line of text at 50-67 ms (docs/performance.md).
Each bar says its number in words, so nothing needs a hover; the hover (`title`) adds the model's own probability
and log-prob. Every token is HTML-escaped: a vocabulary piece is text, never markup.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..heatmap_markup import text

BARS = 15  # tokens drawn per step
GREEDY_COLOUR = "#d62728"  # the token greedy decoding chose
OTHER_COLOUR = "#1f77b4"
TITLE_CLASS = "tx-bars-title"  # the chart's title: what the browser tests and `bench clicks` wait for


@dataclass(frozen=True)
class Bar:
    token_id: int
    label: str  # the vocabulary piece and its id: "▁the (17)"
    shown: float  # the probability after the sliders (temperature, top-k, top-p)
    model: float  # the model's own probability (T = 1, no filter)
    log_prob: float  # the model's own log-prob
    chosen: bool  # greedy decoding's token


def top_bars(probs: np.ndarray, raw: np.ndarray, vocab: list[str], chosen: int) -> list[Bar]:
    """The BARS most probable tokens still allowed by the sliders (probability > 0), most probable first; ties
    in token-id order."""
    top = np.argsort(-probs, kind="stable")[:BARS]
    return [Bar(int(i), f"{vocab[i]} ({i})", float(probs[i]), float(np.exp(raw[i])), float(raw[i]), int(i) == chosen)
            for i in top if probs[i] > 0]


def scale_top(highest: float, most: int = 5) -> float:
    """The bars' scale: 0 to the first step of a 1-2-5 ladder (at most `most` steps) at or past `highest`, so a flat
    distribution (temperature 2: 1.7% at most) is drawn zoomed, on 0-2%, and says so, instead of as slivers."""
    if not highest > 0:
        return 1.0
    rough = highest / (most - 1)
    power = 10.0 ** math.floor(math.log10(rough))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= rough * (1 - 1e-9))
    return min(1.0, round(math.ceil(highest / step - 1e-9) * step, 12))


def percent(p: float) -> str:
    """A probability in percent with two significant digits below 10% (98.8%, 5.0%, 0.21%, 0.000085%), in plain
    decimals, never in e-notation; below a millionth of a percent, a bound."""
    pct = 100.0 * p
    if pct >= 10:
        return f"{pct:.1f}%"
    if pct < 1e-6:
        return "< 0.000001%"
    return f"{pct:.{1 - math.floor(math.log10(pct))}f}%"


def bars_html(bars: list[Bar], title: str) -> str:
    """One block of markup (no blank line, so markdown passes it through whole): the title, the scale, and one row
    per bar: label, a bar whose length is its share of the scale, and its probability in words."""
    scale = scale_top(max((b.shown for b in bars), default=0.0))
    rows = []
    for b in bars:
        hover = (f"{b.label}: shown {percent(b.shown)}; model (T = 1, no filter) {percent(b.model)}; "
                 f"log-prob {b.log_prob:.3f}" + ("; greedy's choice" if b.chosen else ""))
        colour = GREEDY_COLOUR if b.chosen else OTHER_COLOUR
        width = min(100.0, 100.0 * b.shown / scale)
        tip = f'title="{text(hover)}"'  # on each cell: the row itself draws no box to hover
        rows.append(
            f'<div class="tx-bar" data-token-id="{b.token_id}" data-shown="{b.shown!r}" style="display:contents">'
            f'<span {tip} style="text-align:right;overflow-wrap:anywhere">{text(b.label)}</span>'
            f'<span {tip} style="background:rgba(128,128,128,0.12);height:1.1em;display:block">'
            f'<span style="display:block;height:100%;width:{width:.2f}%;background:{colour}"></span></span>'
            f'<span {tip} style="font-variant-numeric:tabular-nums">{percent(b.shown)}</span></div>')
    scale_words = f"bar length: 0 to {percent(scale)} (a zoomed scale)" if scale < 1.0 else "bar length: 0 to 100%"
    return (f'<div class="tx-bars" role="figure" aria-label="{text(title)}" style="margin-bottom:0.8em">'
            f'<p class="{TITLE_CLASS}" style="font-weight:600;margin:0 0 0.2em 0">{text(title)}</p>'
            f'<p style="font-size:0.8em;opacity:0.75;margin:0 0 0.4em 0">{scale_words}</p>'
            '<div style="display:grid;grid-template-columns:minmax(4em,max-content) 1fr max-content;'
            'gap:0.25em 0.6em;align-items:center;font-size:0.9em">' + "".join(rows) + "</div></div>")
