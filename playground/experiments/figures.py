"""The Experiments page's figures, as Vega-Lite specs (plain dicts, the numbers inline under data.values): the page
draws them with st.vega_lite_chart, and the same spec becomes the SVG and PNG downloads (vl-convert, offline) and
the figures of the HTML export, so what is downloaded is what is shown. Pure: no Streamlit."""
from __future__ import annotations

import textwrap
from typing import Any

import numpy as np

Spec = dict[str, Any]
# Streamlit 1.67 draws with Vega-Lite 6.5 and warned once per chart that a v5 spec was given (issue 44.8);
# vl-convert 1.9 reads v6 (6.1, 6.4) too.
SCHEMA = "https://vega.github.io/schema/vega-lite/v6.json"
TITLE_CHARS = 44  # a title is wrapped into lines of at most this many characters: one line was cut on a phone
PADDING = {"top": 12, "left": 5, "right": 5, "bottom": 5}  # the title's top stayed clipped in Streamlit without it
PAIR = {"range": ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"]}  # A blue, B red: apart at a glance
WIDTH = 560
CELL = 20  # pixels per heatmap row


def title_lines(title: str) -> str | list[str]:
    """A title as Vega-Lite's lines (a list draws one line each): Vega never wraps a title, so a long one ran past a
    390 px phone's chart and was cut ("…chose it")."""
    lines = textwrap.wrap(title, TITLE_CHARS)
    return lines if len(lines) > 1 else title


def domain(values: list[float], zero: bool = False) -> list[float]:
    """A quantitative scale's domain written into the spec, from the numbers it draws (with 0 where `zero`, as
    Vega-Lite's default for bars and points). Streamlit first draws a chart with no rows and then inserts them: a
    domain left to the data was computed over nothing at first, and Vega warned "Infinite extent for field v"
    once per chart (issue 44.8)."""
    finite = [float(v) for v in values if v is not None and np.isfinite(v)]
    low, high = (min(finite), max(finite)) if finite else (0.0, 1.0)
    if zero:
        low, high = min(low, 0.0), max(high, 0.0)
    if low == high:  # one value everywhere: a range around it
        low, high = low - 0.5, high + 0.5
    return [low, high]


def labels(tokens: list[str]) -> list[str]:
    """Axis labels: the position before the token, so repeated tokens stay apart ("3 ▁the", "7 ▁the")."""
    return [f"{i} {t}" for i, t in enumerate(tokens)]


def heatmap(z: np.ndarray, x_tokens: list[str], y_tokens: list[str], title: str, x_title: str, y_title: str,
            value: str = "weight", diverging: bool = False) -> Spec:
    """Token × token values, one cell each; `diverging`: a red-blue scale centred on 0 (for differences)."""
    z = np.asarray(z, dtype=np.float64)
    xs, ys = labels(x_tokens), labels(y_tokens)
    values = [{"x": xs[j], "y": ys[i], "v": round(float(z[i, j]), 6)} for i in range(len(ys)) for j in range(len(xs))]
    top = float(np.abs(z).max()) if z.size else 1.0
    scale = {"scheme": "redblue", "domainMid": 0, "domain": [-top, top], "reverse": True} if diverging \
        else {"scheme": "blues", "domain": domain([r["v"] for r in values])}
    return {"$schema": SCHEMA, "title": title_lines(title), "padding": PADDING,
            "data": {"values": values}, "mark": "rect", "width": WIDTH, "height": max(120, CELL * len(ys)),
            "encoding": {"x": {"field": "x", "type": "ordinal", "sort": xs, "title": x_title},
                         "y": {"field": "y", "type": "ordinal", "sort": ys, "title": y_title},
                         "color": {"field": "v", "type": "quantitative", "title": value, "scale": scale},
                         "tooltip": [{"field": "y", "title": y_title}, {"field": "x", "title": x_title},
                                     {"field": "v", "title": value, "format": ".4f"}]}}


def paired_points(rows: list[dict[str, Any]], title: str, y_title: str) -> Spec:
    """Per position (x), one point per series ("A"/"B", "fp32"/"int8"...), joined by a rule: rows are
    {"x": label, "series": name, "v": value}. Used for log-probs before and after."""
    order = list(dict.fromkeys(r["x"] for r in rows))
    base = {"x": {"field": "x", "type": "ordinal", "sort": order, "title": "target position and token"}}
    return {"$schema": SCHEMA, "title": title_lines(title), "padding": PADDING,
            "data": {"values": rows}, "width": WIDTH, "height": 260,
            "mark": {"type": "point", "filled": True, "size": 60},
            "encoding": {**base, "y": {"field": "v", "type": "quantitative", "title": y_title,
                                       "scale": {"domain": domain([r["v"] for r in rows], zero=True)}},
                         # the legend under the chart: at its right it took a phone's chart's last tokens
                         "color": {"field": "series", "type": "nominal", "title": "", "scale": PAIR,
                                   "legend": {"orient": "bottom", "direction": "vertical"}},
                         "shape": {"field": "series", "type": "nominal", "title": ""},
                         "tooltip": [{"field": "series"}, {"field": "x"},
                                     {"field": "v", "title": y_title, "format": ".4f"}]}}


def bars(rows: list[dict[str, Any]], title: str, y_title: str, x_title: str) -> Spec:
    """Grouped bars: rows are {"x": label, "series": name, "v": value}, one bar per series side by side."""
    order = list(dict.fromkeys(r["x"] for r in rows))
    return {"$schema": SCHEMA, "title": title_lines(title), "padding": PADDING,
            "data": {"values": rows}, "mark": "bar", "width": WIDTH, "height": 260,
            "encoding": {"x": {"field": "x", "type": "ordinal", "sort": order, "title": x_title},
                         "xOffset": {"field": "series", "type": "nominal"},
                         # side by side (xOffset), never stacked: each bar from 0 to its own value
                         "y": {"field": "v", "type": "quantitative", "title": y_title, "stack": None,
                               "scale": {"domain": domain([r["v"] for r in rows], zero=True)}},
                         "color": {"field": "series", "type": "nominal", "title": "", "scale": PAIR,
                                   "legend": None if len({r["series"] for r in rows}) == 1 else
                                   {"orient": "bottom", "direction": "vertical"}},
                         "tooltip": [{"field": "series"}, {"field": "x"},
                                     {"field": "v", "title": y_title, "format": ".4f"}]}}


def grid(rows: list[dict[str, Any]], title: str, value: str, facet: str | None = None, text: str | None = None,
         diverging: bool = False, x_title: str | None = None) -> Spec:
    """A small-multiples heatmap: rows are {"x": column label, "y": row label, "v": value, facet: panel, text:
    cell text}; x and y keep the order they first appear in."""
    xs, ys = list(dict.fromkeys(r["x"] for r in rows)), list(dict.fromkeys(r["y"] for r in rows))
    top = max((abs(r["v"]) for r in rows), default=1.0) or 1.0
    scale = {"scheme": "redblue", "domainMid": 0, "domain": [-top, top], "reverse": True} if diverging \
        else {"scheme": "blues", "domain": domain([r["v"] for r in rows])}
    encoding = {"x": {"field": "x", "type": "ordinal", "sort": xs, "title": x_title, "axis": {"labelAngle": 0}},
                "y": {"field": "y", "type": "ordinal", "sort": ys, "title": None}}
    tooltip = [{"field": "y"}, {"field": "x"}, {"field": "v", "title": value, "format": ".4f"}]
    if facet:
        tooltip.insert(0, {"field": facet})
    # Each layer carries its own x and y: Streamlit's renderer lost a shared top-level encoding (cells one pixel
    # wide, seen in chromium), while vl-convert drew both the same.
    layers = [{"mark": "rect", "encoding": {**encoding, "color": {"field": "v", "type": "quantitative",
                                                                  "title": value, "scale": scale},
                                            "tooltip": tooltip}}]
    if text:
        layers.append({"mark": {"type": "text", "fontSize": 10},
                       "encoding": {**encoding, "text": {"field": text}, "tooltip": tooltip,
                                    "color": {"value": "black"}}})
    inner = {"layer": layers,
             "width": max(120, 22 * len(xs)) if facet else min(WIDTH, max(240, 90 * len(xs))),
             "height": max(80, CELL * len(ys))}
    spec = {"$schema": SCHEMA, "title": title_lines(title), "padding": PADDING,
            "data": {"values": rows}}
    if facet:  # the panels one under another: side by side, three were ~600 px wide, past a phone's width
        return {**spec, "facet": {"field": facet, "type": "nominal", "title": None,
                                  "sort": list(dict.fromkeys(r[facet] for r in rows))}, "columns": 1,
                "spec": inner, "resolve": {"scale": {"color": "shared"}}}
    return {**spec, **inner}


def numbers(spec: Spec) -> list[dict[str, Any]]:
    """The rows a figure draws (what its CSV download holds)."""
    return list(spec["data"]["values"])


def frame(spec: Spec) -> dict[str, Any]:
    """st.vega_lite_chart's width and height for a spec. Every chart but a faceted grid takes its column's width
    ("stretch"; Vega fits axes, legend and padding inside it): drawn at the spec's own 560 px, a chart ran ~190 px
    past a 390 px phone's column and lost its last tokens and its legend. A heatmap (ordinal rows) also gets a height
    of its own, since at Streamlit's "content" height its rows were squeezed into a few pixels (seen in chromium;
    vl-convert drew the same spec right). A faceted grid keeps its own size ("content": Vega cannot fit a facet to a
    width), narrow enough for a phone (its panels one under another)."""
    if "facet" in spec:
        return {"width": "content"}
    if spec.get("encoding", {}).get("y", {}).get("type") == "quantitative":
        return {"width": "stretch"}
    return {"width": "stretch", "height": spec["height"] + 160}
