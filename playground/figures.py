"""The plotly figures: attention heatmaps and head grids, bars, positional encodings, curves, reliability.
"""
from __future__ import annotations

import functools
import textwrap
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
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


MAX_LABELS = 40  # tick labels per heatmap axis: beyond this they overlap, so every k-th token is labelled
GRID_LABELS = 24  # the same in the small maps of a heads grid
# The token markers a map shows, explained once in its title (only those it shows).
TAG = "<2en>/<2de> is the tag that tells the model which language to write"
MARKERS = (("▁", "▁ starts a word"), ("<2en>", TAG), ("<2de>", TAG), ("<s>", "<s> is where the output starts"),
           ("</s>", "</s> ends the text"), ("<unk>", "<unk> is a character the model does not know"))


def label_step(count: int, most: int = MAX_LABELS) -> int:
    """Label every k-th token: 1 up to `most` tokens, else the smallest k that keeps the labels under `most`."""
    return 1 if count <= most else -(-count // most)


def ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def axis_title(title: str, count: int, most: int = MAX_LABELS) -> str:
    step = label_step(count, most)
    return title if step == 1 else f"{title} (every {ordinal(step)} token labelled; hover shows each)"


def _axis(tokens: list[str], most: int = MAX_LABELS) -> dict[str, Any]:
    # Positions on the axis, tokens as tick labels: repeated tokens must not merge into one category.
    shown = list(range(0, len(tokens), label_step(len(tokens), most)))
    return {"tickmode": "array", "tickvals": shown, "ticktext": [plotly_text(tokens[i]) for i in shown],
            "tickangle": -45}


def marker_note(*token_lists: list[str]) -> str:
    """One sentence explaining the markers (▁, <2en>/<2de>, </s>, <unk>) these tokens hold; "" when none."""
    present = {marker for tokens in token_lists for token in tokens for marker, _ in MARKERS if marker in token}
    said = dict.fromkeys(text for marker, text in MARKERS if marker in present)
    return ("Tokens: " + "; ".join(said) + ".") if said else ""


NOTE_CHARS = 90  # a title's marker note is wrapped to lines of at most this many characters: plotly never wraps
PHONE_NOTE_CHARS = 52  # the same for a map a phone shows at its full width (390 px: about 55 of the note's characters)


def titled(title: str, *token_lists: list[str], width: int = NOTE_CHARS) -> str:
    """The title, with the marker note in smaller lines under it (plotly label text: escaped), wrapped at `width`
    characters: a plotly title runs off the figure's edge instead of wrapping (half-width maps cut it off)."""
    note = marker_note(*token_lists)
    lines = textwrap.wrap(note, width) if note else []
    return "".join([title, *(f"<br><sup>{plotly_text(line)}</sup>" for line in lines)])


def title_lines(title: str) -> int:
    return title.count("<br>") + 1


MARGIN = {"l": 10, "r": 10, "t": 50, "b": 10}
# Figures on the hot path are plain dicts: st.plotly_chart validates a dict in ~5 ms, while building
# the same go.Figure with update_layout took ~22 ms per figure (measured), a sixth of a round trip.
Figure = dict[str, Any]


def heatmap(z: np.ndarray, x_tokens: list[str], y_tokens: list[str], title: str, x_title: str,
            y_title: str, note_chars: int = NOTE_CHARS) -> Figure:
    """Token × token weights. Beyond MAX_LABELS tokens an axis labels every k-th one (the hover names each cell),
    so long inputs stay readable; the title explains the token markers shown, wrapped at `note_chars` (narrower
    for a map in a half-width column), with room above the map for every line."""
    z = np.asarray(z, dtype=np.float32)
    x_text, y_text = [plotly_text(t) for t in x_tokens], [plotly_text(t) for t in y_tokens]
    hover = [[f"{y_text[i]} → {x_text[j]}" for j in range(len(x_tokens))] for i in range(len(y_tokens))]
    trace = {"type": "heatmap", "z": z, "x": list(range(len(x_tokens))), "y": list(range(len(y_tokens))),
             "zmin": 0, "colorscale": "Blues", "customdata": hover,
             "hovertemplate": "%{customdata}<br>weight %{z:.3f}<extra></extra>"}
    rows = min(len(y_tokens), MAX_LABELS)
    text = titled(title, x_tokens, y_tokens, width=note_chars)
    layout = {"title": {"text": text}, "height": min(900, max(320, 22 * rows + 180)),
              "margin": {**MARGIN, "t": 40 + 18 * title_lines(text)},
              "xaxis": {**_axis(x_tokens), "title": {"text": axis_title(x_title, len(x_tokens))}},
              "yaxis": {**_axis(y_tokens), "title": {"text": axis_title(y_title, len(y_tokens))},
                        "autorange": "reversed", "tickangle": 0}}
    return {"data": [trace], "layout": layout}


def heads_grid(maps: np.ndarray, x_tokens: list[str], y_tokens: list[str], title: str) -> go.Figure:
    """(H, T, S) -> one small heatmap per head, one colour scale; token labels on the outer axes only, every k-th
    one beyond GRID_LABELS tokens (the hover names each cell); the title explains the token markers shown."""
    heads = maps.shape[0]
    cols = min(4, heads)
    rows = -(-heads // cols)
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=[f"head {h + 1}" for h in range(heads)],
                        horizontal_spacing=0.02, vertical_spacing=0.14)
    zmax = float(maps.max()) if maps.size else 1.0
    x_text, y_text = [plotly_text(t) for t in x_tokens], [plotly_text(t) for t in y_tokens]
    hover = [[f"{y} → {x}" for x in x_text] for y in y_text]
    for h in range(heads):
        fig.add_trace(go.Heatmap(z=maps[h], zmin=0, zmax=zmax, colorscale="Blues", showscale=(h == 0),
                                 customdata=hover, hovertemplate="%{customdata}: %{z:.3f}<extra></extra>"),
                      row=h // cols + 1, col=h % cols + 1)
    for h in range(heads):
        row, col = h // cols + 1, h % cols + 1
        bottom = row == rows or h + cols >= heads  # nothing below this one
        fig.update_xaxes(_axis(x_tokens, GRID_LABELS) if bottom else {"showticklabels": False}, row=row, col=col)
        fig.update_yaxes({**_axis(y_tokens, GRID_LABELS), "tickangle": 0} if col == 1 else {"showticklabels": False},
                         row=row, col=col)
    fig.update_yaxes(autorange="reversed")
    steps = {name: label_step(len(tokens), GRID_LABELS) for name, tokens in (("columns", x_tokens), ("rows", y_tokens))}
    steps = [f"{name}: every {ordinal(step)} token labelled" for name, step in steps.items() if step > 1]
    note = marker_note(x_tokens, y_tokens) + (f" {'; '.join(steps)}; hover shows each." if steps else "")
    fig.update_layout(title=f"{title}<br><sup>{plotly_text(note.strip())}</sup>" if note else title,
                      height=320 * rows + 100, margin={**MARGIN, "t": 90})
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


# Cached in-process, not with st.cache_data: this module is the pure part every page's figures build on, so it must
# import without Streamlit. The table comes back read-only, since every caller shares it.
@functools.lru_cache(maxsize=8)
def positional_encoding(d_model: int, positions: int) -> np.ndarray:
    """The sinusoid table (positions × dimensions) of "Attention Is All You Need" §3.5, the one tx.PositionalEncoding
    adds to the embeddings: PE(pos, 2i) = sin(pos / 10000^(2i/d_model)), PE(pos, 2i+1) = cos(pos / 10000^(2i/d_model)).
    Written here in numpy so the app needs no torch (tests/app/test_pages.py checks the two tables agree)."""
    angle = np.arange(positions)[:, None] / 10000.0 ** (np.arange(0, d_model, 2) / d_model)  # (pos, d_model / 2)
    table = np.zeros((positions, d_model), dtype=np.float32)
    table[:, 0::2], table[:, 1::2] = np.sin(angle), np.cos(angle)
    table.flags.writeable = False
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


def series_name(column: str) -> str:
    """A metrics.csv column as a reader names it: "train_loss" -> "train loss", "valid_bleu" -> "valid BLEU"."""
    words = column.replace("_", " ").split()
    known = {"bleu": "BLEU", "chrf": "chrF", "acc": "accuracy", "f1": "F1", "ece": "ECE"}
    return " ".join(known.get(w.lower(), w) for w in words)


def curves(frame: pd.DataFrame, columns: list[str], title: str, x: str) -> go.Figure:
    fig = go.Figure()
    for column in columns:
        values = pd.to_numeric(frame[column], errors="coerce")
        fig.add_trace(go.Scatter(x=frame[x] if x in frame else frame.index, y=values, mode="lines+markers",
                                 name=series_name(column)))
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
