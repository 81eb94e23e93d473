"""The Walkthrough's bar charts (the vector lengths per token, the ReLU's zeros per position, the likeliest next
tokens, the tokens max pooling took its dimensions from) as HTML, drawn by the browser itself instead of plotly: a
plotly chart was ~150-300 ms of a Next click on this 2-core host, as the maps were (map_image.py;
docs/performance.md). One row per label, one bar per series in it (a legend names them when there are several),
each bar's number written beside it, so nothing needs a hover; every label is HTML-escaped.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..heatmap_markup import text

CLASS = "tx-wbars"  # the chart (the AppTests find it by this)
HIGHLIGHT = "#d62728"  # a row picked out (the token greedy decoding chose)
COLOUR = "#1f77b4"  # plotly's first colour, as the charts had it


@dataclass(frozen=True)
class Series:
    name: str  # the legend's word for it ("" for a chart of one series)
    values: Sequence[float]  # one per label, >= 0
    colour: str = COLOUR


def number(value: float) -> str:
    """A number to 4 significant digits in plain decimals, never e-notation (0.00005123, 59.81, 12346); −∞ said."""
    if not np.isfinite(value):
        return "NaN" if np.isnan(value) else ("−∞" if value < 0 else "∞")
    if value == 0:
        return "0"
    return f"{value:.{max(0, 3 - math.floor(math.log10(abs(value))))}f}"


def bars_html(labels: Sequence[str], series: Sequence[Series], title: str,
              written: Callable[[float], str] = number, highlight: int | None = None) -> str:
    """One block of markup (no blank line: markdown passes it through whole): the title, the legend (several series),
    then one row per label with a bar per series, as long as its share of the largest value, and its number.
    `highlight`: a row whose bars are drawn in HIGHLIGHT. Raises ValueError for a series of another length."""
    for s in series:
        if len(s.values) != len(labels):
            raise ValueError(f"series {s.name!r} has {len(s.values)} values for {len(labels)} labels")
    finite = [float(v) for s in series for v in s.values if np.isfinite(v)]
    largest = max(finite, default=0.0) or 1.0
    rows = []
    for i, label in enumerate(labels):
        bars, numbers = [], []
        for s in series:
            value = float(s.values[i])
            width = min(100.0, max(0.0, 100.0 * value / largest)) if np.isfinite(value) else 0.0
            colour = HIGHLIGHT if i == highlight else s.colour
            tip = text(f"{label}: {s.name + ' ' if s.name else ''}{written(value)}")
            bars.append(f'<span title="{tip}" style="display:block;height:0.9em;margin:1px 0;'
                        f'background:rgba(128,128,128,0.12)"><span style="display:block;height:100%;'
                        f'width:{width:.2f}%;background:{colour}"></span></span>')
            numbers.append(f'<span style="display:block;line-height:0.9em;margin:1px 0">{text(written(value))}</span>')
        rows.append(f'<span style="text-align:right;overflow-wrap:anywhere">{text(label)}</span>'
                    f'<span>{"".join(bars)}</span>'
                    f'<span style="font-variant-numeric:tabular-nums;font-size:0.9em">{"".join(numbers)}</span>')
    legend = "" if len(series) < 2 else (
        '<p style="font-size:0.8em;opacity:0.8;margin:0 0 0.3em 0">' + " &nbsp; ".join(
            f'<span style="display:inline-block;width:0.8em;height:0.8em;background:{s.colour}"></span> {text(s.name)}'
            for s in series) + "</p>")
    return (f'<div class="{CLASS}" role="figure" aria-label="{text(title)}" style="margin-bottom:0.8em">'
            f'<p style="font-weight:600;margin:0 0 0.2em 0">{text(title)}</p>{legend}'
            '<div style="display:grid;grid-template-columns:minmax(4em,max-content) 1fr max-content;'
            'gap:0.3em 0.6em;align-items:center;font-size:0.9em">' + "".join(rows) + "</div></div>")
