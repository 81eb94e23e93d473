"""The Decoding explorer's figure (plotly): beam search as a tree. A step's bars are markup (bars.py)."""
from __future__ import annotations

import plotly.graph_objects as go

from .numbers import best_path

STATUS_WORDS = {"kept": "kept (a live beam)", "finished": "finished (EOS)", "max_len": "ended at the max length",
                "stopped": "stopped (the best could no longer be beaten)", "pruned": "pruned"}


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
