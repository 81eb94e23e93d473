"""The Walkthrough's figures and captions that need no Streamlit: any array as a labelled heatmap (a plain plotly
dict, fast to send: playground/figures.py), and the one-line list of the shapes a step shows."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..figures import MARGIN, MAX_LABELS, axis_title, label_step, plotly_text

HALF_LABELS = 20  # tick labels on an axis of a map in a half-width column (MAX_LABELS: full width)
HALF_NOTE_CHARS = 48  # a half-width map's marker note, per line (playground.figures.titled)


def values_map(z: np.ndarray, y_tokens: list[str], title: str, x_title: str, x_labels: list[str] | None = None,
               diverging: bool = True, most: int = MAX_LABELS) -> dict[str, Any]:
    """Any (rows × columns) array as a heatmap, rows labelled by token; −∞ cells are drawn blank and named. Beyond
    `most` tokens an axis labels every k-th one (the hover names each cell): 128 keys' labels would smear into one
    line."""
    z = np.asarray(z, dtype=np.float32)
    finite = np.isfinite(z)
    shown = np.where(finite, z, np.nan)
    x = list(range(z.shape[1]))
    y_text = [f"{i}: {plotly_text(t)}" for i, t in enumerate(y_tokens)]
    hover = [[f"{y_text[i]} · {x_labels[j] if x_labels else j}" + ("" if finite[i, j] else " · −∞ (masked)")
              for j in x] for i in range(z.shape[0])]
    bound = float(np.nanmax(np.abs(shown))) if finite.any() else 1.0
    trace = {"type": "heatmap", "z": shown, "x": x, "y": list(range(z.shape[0])), "customdata": hover,
             "hovertemplate": "%{customdata}<br>%{z:.4f}<extra></extra>",
             "colorscale": "RdBu" if diverging else "Blues", "reversescale": diverging}
    if diverging:
        trace |= {"zmin": -bound, "zmax": bound}
    xaxis = {"title": {"text": x_title}}
    if x_labels:
        ticks = x[::label_step(len(x), most)]
        xaxis = {"title": {"text": axis_title(x_title, len(x), most)}, "tickmode": "array", "tickvals": ticks,
                 "ticktext": [plotly_text(x_labels[j]) for j in ticks]}
    rows = list(range(z.shape[0]))[::label_step(z.shape[0], MAX_LABELS)]
    layout = {"title": {"text": title}, "height": min(700, max(260, 20 * z.shape[0] + 150)), "margin": MARGIN,
              "xaxis": xaxis, "yaxis": {"tickmode": "array", "tickvals": rows, "ticktext": [y_text[i] for i in rows],
                                        "autorange": "reversed"}}
    return {"data": [trace], "layout": layout}


def shape_line(**arrays: np.ndarray) -> str:
    return " · ".join(f"{name} {tuple(a.shape)}" for name, a in arrays.items())
