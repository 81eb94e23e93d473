"""The Translate page's cross-attention: one head or the heads' mean as markup (redrawn on every Translate click:
playground/heatmap_markup.py says why; a longer input's map by plotly), or every head of a layer as a plotly grid.
Pure: no streamlit."""
from __future__ import annotations

from typing import Any

from playground import figures, heatmap_markup
from runtime.text import Translation


def cross_map(chosen: Translation, layer: Any, head: Any) -> str | figures.Figure:
    """One head or the heads' mean: markup (a str) when the map `fits`, else a plotly figure (a dict). Rows: the
    target tokens; columns: the source tokens. `layer`/`head`: figures.MEAN or a number from 1."""
    weights = figures.pick_map(chosen.attention["cross"], layer, head)
    title = f"Cross-attention ({figures.choice_label(layer, 'layer')}, {figures.choice_label(head, 'head')})"
    if heatmap_markup.fits(*weights.shape):
        return heatmap_markup.heatmap_html(weights, chosen.src_tokens, chosen.tokens, title, "source tokens",
                                           "target tokens")
    return figures.heatmap(weights, chosen.src_tokens, chosen.tokens, title, "source tokens", "target tokens",
                           note_chars=figures.PHONE_NOTE_CHARS)


def heads_figure(chosen: Translation, layer: int) -> Any:
    """Every head of `layer` (a number from 1) as small plotly maps sharing one colour scale."""
    return figures.heads_grid(chosen.attention["cross"][int(layer) - 1], chosen.src_tokens, chosen.tokens,
                              f"Cross-attention, layer {layer}, every head")
