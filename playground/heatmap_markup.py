"""A token × token attention map as HTML (a table shown through st.markdown), drawn by the browser itself instead of
plotly: for the maps redrawn on a click (Translate's cross-attention), where plotly's drawing was a large part of
the click: `python -m bench clicks`, before and after, alternating, Translate drawn p50 477 and 500 ms with the
plotly map, 362 and 359 ms with this one (docs/performance.md). The same picture as `figures.heatmap`: plotly's
"Blues" scale from 0 to the map's largest weight, rows top to bottom, every token labelled, each cell's hover naming
its pair and weight, the token markers explained. Every token is HTML-escaped: text, never markup.
Only for maps of at most MAX_LABELS tokens a side (`fits`): the markup takes ~100 bytes a cell (a 40 × 40 map ~170
kB, the longest input 256 × 256 ~7 MB), where plotly sends the weights as a typed array and thins its labels, so a
longer input's map stays `figures.heatmap`.
"""
from __future__ import annotations

import html

import numpy as np

from .figures import MAX_LABELS, marker_note

TITLE_CLASS = "tx-heat-title"  # the map's title
# The box around the table: as wide as its column at most; a map wider than that scrolls inside it (the browser
# tests measure this box against the column).
BOX_CLASS = "tx-heat-box"
# plotly's "Blues" (the colour scale of every attention map here): (position, (r, g, b))
BLUES = ((0.0, (247, 251, 255)), (0.125, (222, 235, 247)), (0.25, (198, 219, 239)), (0.375, (158, 202, 225)),
         (0.5, (107, 174, 214)), (0.625, (66, 146, 198)), (0.75, (33, 113, 181)), (0.875, (8, 81, 156)),
         (1.0, (8, 48, 107)))


def text(value: str) -> str:
    """`value` as markup text: HTML-escaped (quotes too: it also goes into attributes), and on one line, since a blank
    line would end markdown's HTML block and print the rest as text."""
    return html.escape(" ".join(str(value).splitlines()))


def blues(share: float) -> str:
    """The colour at `share` (0..1, clipped) of the scale, linear between its stops, as #rrggbb."""
    share = min(1.0, max(0.0, share)) if np.isfinite(share) else 0.0
    (low, low_rgb), (high, high_rgb) = next(pair for pair in zip(BLUES, BLUES[1:], strict=False) if share <= pair[1][0])
    t = (share - low) / (high - low)
    return "#" + "".join(f"{round(a + (b - a) * t):02x}" for a, b in zip(low_rgb, high_rgb, strict=True))


def fits(rows: int, columns: int) -> bool:
    """Whether a map of this size is drawn as markup (module doc), not by plotly."""
    return rows <= MAX_LABELS and columns <= MAX_LABELS


def cell_size(count: int) -> tuple[int, int, int]:
    """(widest, narrowest, height) in pixels of a cell on an axis of `count` tokens: the map widens to its column up
    to the widest cells; below the narrowest it scrolls sideways inside its box instead (a phone)."""
    return (44, 20, 30) if count <= 20 else (28, 16, 22)


def heatmap_html(z: np.ndarray, x_tokens: list[str], y_tokens: list[str], title: str, x_title: str,
                 y_title: str) -> str:
    """One block of markup (no blank line: markdown passes it through whole): the title, the marker note, the
    scale, and the map as a table in a box that scrolls sideways when it is wider than the column (a phone).
    Raises ValueError for a map that does not `fits`."""
    if not fits(len(y_tokens), len(x_tokens)):
        raise ValueError(f"a {len(y_tokens)} × {len(x_tokens)} map is drawn by figures.heatmap, not as markup "
                         f"(at most {MAX_LABELS} tokens a side)")
    z = np.nan_to_num(np.asarray(z, dtype=np.float64), nan=0.0, posinf=0.0, neginf=0.0)
    highest = float(z.max(initial=0.0))
    (widest, narrowest, _), (_, _, row_height) = cell_size(len(x_tokens)), cell_size(len(y_tokens))
    label_em = min(12.0, 1.0 + 0.55 * max((len(t) for t in y_tokens), default=1))  # the row labels' column
    x_text, y_text = [text(t) for t in x_tokens], [text(t) for t in y_tokens]
    header = "".join(
        f'<th title="{x}" style="writing-mode:vertical-rl;transform:rotate(180deg);white-space:nowrap;'
        f'font-weight:normal;border:0;padding:0 0 4px 0;overflow:hidden">'
        f'{x}</th>' for x in x_text)
    rows = []
    for i, y in enumerate(y_text):
        cells = "".join(
            f'<td title="{y} → {x_text[j]}: weight {z[i, j]:.3f}" '
            f'style="background:{blues(z[i, j] / highest if highest > 0 else 0.0)};padding:0;border:0"></td>'
            for j in range(len(x_text)))
        rows.append(f'<tr style="height:{row_height}px"><th title="{y}" style="text-align:right;font-weight:normal;'
                    f'white-space:nowrap;overflow:hidden;border:0;padding:0 6px 0 0">{y}</th>{cells}</tr>')
    note = marker_note(x_tokens, y_tokens)
    legend = (f'<span style="display:inline-block;width:8em;height:0.8em;vertical-align:middle;background:'
              f'linear-gradient(to right,{",".join(blues(p) for p, _ in BLUES)})"></span>')
    return (f'<div class="tx-heat" role="figure" aria-label="{text(title)}" style="margin-bottom:0.8em">'
            f'<p class="{TITLE_CLASS}" style="font-weight:600;margin:0 0 0.2em 0">{text(title)}</p>'
            + (f'<p style="font-size:0.8em;opacity:0.75;margin:0 0 0.2em 0">{text(note)}</p>' if note else "")
            + f'<p style="font-size:0.8em;opacity:0.75;margin:0 0 0.4em 0">rows: {text(y_title)}; columns: '
            f'{text(x_title)}; weight 0 {legend} {highest:.3f}</p>'
            f'<div class="{BOX_CLASS}" style="overflow-x:auto">'
            '<table style="border-collapse:collapse;font-size:0.75em;line-height:1;'
            f'table-layout:fixed;width:min(100%,calc({label_em:.1f}em + {widest * len(x_tokens)}px));'
            f'min-width:calc({label_em:.1f}em + {narrowest * len(x_tokens)}px);margin:0;border:0">'
            f'<colgroup><col style="width:{label_em:.1f}em"><col span="{max(1, len(x_tokens))}"></colgroup>'
            f'<thead><tr><th style="border:0"></th>{header}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div></div>')
