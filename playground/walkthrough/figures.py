"""The Walkthrough's figures and captions that need no Streamlit: any array as a labelled heatmap (a plain plotly
dict, fast to send: playground/figures.py), and the one-line list of the shapes a step shows."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..figures import MARGIN, plotly_text


def values_map(z: np.ndarray, y_tokens: list[str], title: str, x_title: str, x_labels: list[str] | None = None,
               diverging: bool = True) -> dict[str, Any]:
    """Any (rows × columns) array as a heatmap, rows labelled by token; −∞ cells are drawn blank and named."""
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
        xaxis |= {"tickmode": "array", "tickvals": x, "ticktext": [plotly_text(t) for t in x_labels]}
    layout = {"title": {"text": title}, "height": min(700, max(260, 20 * z.shape[0] + 150)), "margin": MARGIN,
              "xaxis": xaxis, "yaxis": {"tickmode": "array", "tickvals": list(range(z.shape[0])), "ticktext": y_text,
                                        "autorange": "reversed"}}
    return {"data": [trace], "layout": layout}


def shape_line(**arrays: np.ndarray) -> str:
    return " · ".join(f"{name} {tuple(a.shape)}" for name, a in arrays.items())
