"""The Translate page's cross-attention figure: one head, the heads' mean, or every head of a layer. Pure: it
draws through playground.figures and calls no streamlit."""
from __future__ import annotations

from typing import Any

from playground import figures
from runtime.text import Translation


def cross_figure(chosen: Translation, layer: Any, head: Any, grid: bool) -> Any:
    """Rows: the target tokens; columns: the source tokens. `layer`/`head`: figures.MEAN or a number from 1;
    `grid`: every head of the layer (a layer's mean has no heads to show)."""
    cross = chosen.attention["cross"]
    if grid and layer != figures.MEAN:
        return figures.heads_grid(cross[int(layer) - 1], chosen.src_tokens, chosen.tokens,
                                  f"Cross-attention, layer {layer}, every head")
    return figures.heatmap(figures.pick_map(cross, layer, head), chosen.src_tokens, chosen.tokens,
                           f"Cross-attention ({figures.choice_label(layer, 'layer')}, "
                           f"{figures.choice_label(head, 'head')})", "source tokens", "target tokens",
                           note_chars=figures.PHONE_NOTE_CHARS)
