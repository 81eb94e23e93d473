"""A token × token attention map as HTML (a table shown through st.markdown), drawn by the browser itself instead of
plotly: for the maps redrawn on a click (Translate's cross-attention), where plotly's drawing was a large part of
the click: `python -m bench clicks`, before and after, alternating, Translate drawn p50 477 and 500 ms with the
plotly map, 362 and 359 ms with this one (docs/performance.md). The same picture as `figures.heatmap`: plotly's
"Blues" scale from 0 to the map's largest weight, rows top to bottom, every token labelled, each cell's hover naming
its pair and weight, the token markers explained. Every token is HTML-escaped: text, never markup.
Only for maps of at most MAX_LABELS tokens a side (`fits`): the markup takes ~100 bytes a cell (a 40 × 40 map ~170
kB, the longest input 256 × 256 ~7 MB), where plotly sends the weights as a typed array and thins its labels, so a
longer input's map stays `figures.heatmap`.
The same table draws any token × token values (the Walkthrough's raw and masked attention scores: `diverging`):
plotly's RdBu, reversed, symmetric about 0 (negative blue, positive red), as the plotly maps draw them; a −∞ (masked)
cell is left blank and says so.
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


# plotly's "RdBu" (as plotly.py resolves the name), reversed as the diverging maps draw it: -bound blue, +bound red
RDBU_REVERSED = ((0.0, (5, 48, 97)), (0.1, (33, 102, 172)), (0.2, (67, 147, 195)), (0.3, (146, 197, 222)),
                 (0.4, (209, 229, 240)), (0.5, (247, 247, 247)), (0.6, (253, 219, 199)), (0.7, (244, 165, 130)),
                 (0.8, (214, 96, 77)), (0.9, (178, 24, 43)), (1.0, (103, 0, 31)))


def scale_rgb(shares: np.ndarray, stops=BLUES) -> np.ndarray:
    """(..., 3) uint8: the colours at `shares` (0..1, clipped; NaN counts as 0) of a scale, linear between its stops,
    rounded half to even."""
    shares = np.clip(np.nan_to_num(np.asarray(shares, dtype=np.float64), nan=0.0), 0.0, 1.0)
    positions = [p for p, _ in stops]
    channels = [np.interp(shares, positions, [rgb[c] for _, rgb in stops]) for c in range(3)]
    return np.round(np.stack(channels, axis=-1)).astype(np.uint8)


def colour(share: float, stops=BLUES) -> str:
    """The colour at `share` of a scale (scale_rgb), as #rrggbb."""
    return "#" + bytes(scale_rgb(np.array([share]), stops)[0]).hex()


def diverging_shares(z: np.ndarray) -> tuple[np.ndarray, tuple[str, str]]:
    """`z`'s places on a scale symmetric about 0 (-bound 0, +bound 1; bound: the largest finite |value|, 1 when
    there is none) and the scale's two ends as text."""
    finite = np.isfinite(z)
    bound = float(np.abs(z[finite]).max(initial=0.0)) or 1.0
    return (z / bound + 1) / 2, (f"{-bound:.4g}", f"{bound:.4g}")


def scale_legend(stops) -> str:
    """A scale's colours as a small bar, left to right: the maps' legend, between the two ends' numbers."""
    return (f'<span style="display:inline-block;width:8em;height:0.8em;vertical-align:middle;background:'
            f'linear-gradient(to right,{",".join(colour(p, stops) for p, _ in stops)})"></span>')


def blues(share: float) -> str:
    """The colour at `share` (0..1, clipped) of plotly's Blues, linear between its stops, as #rrggbb."""
    return colour(share, BLUES)


def fits(rows: int, columns: int) -> bool:
    """Whether a map of this size is drawn as markup (module doc), not by plotly."""
    return rows <= MAX_LABELS and columns <= MAX_LABELS


def cell_size(count: int) -> tuple[int, int, int]:
    """(widest, narrowest, height) in pixels of a cell on an axis of `count` tokens: the map widens to its column up
    to the widest cells; below the narrowest it scrolls sideways inside its box instead (a phone)."""
    return (44, 20, 30) if count <= 20 else (28, 16, 22)


def heatmap_html(z: np.ndarray, x_tokens: list[str], y_tokens: list[str], title: str, x_title: str,
                 y_title: str, diverging: bool = False, value_name: str = "weight") -> str:
    """One block of markup (no blank line: markdown passes it through whole): the title, the marker note, the
    scale, and the map as a table in a box that scrolls sideways when it is wider than the column (a phone).
    Weights (the default): Blues from 0 to the largest, 3 decimals. diverging: any values, RdBu reversed and
    symmetric about 0, 4 decimals; a non-finite cell (−∞: masked) is blank and says so. Each cell's hover: its pair
    and its `value_name` and value. Raises ValueError for a map that does not `fits`."""
    if not fits(len(y_tokens), len(x_tokens)):
        raise ValueError(f"a {len(y_tokens)} × {len(x_tokens)} map is drawn by figures.heatmap, not as markup "
                         f"(at most {MAX_LABELS} tokens a side)")
    z = np.asarray(z, dtype=np.float64)
    finite = np.isfinite(z)
    if diverging:
        (shares, ends), stops, digits = diverging_shares(z), RDBU_REVERSED, 4
    else:
        z = np.where(finite, z, 0.0)
        high = float(z.max(initial=0.0))
        shares, stops, digits = z / high if high > 0 else np.zeros_like(z), BLUES, 3
        ends = ("0", f"{high:.3f}")
    colours = ["#" + bytes(rgb).hex() for rgb in scale_rgb(shares, stops).reshape(-1, 3)]
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
            f'<td title="{y} → {x_text[j]}: {value_name} {z[i, j]:.{digits}f}" '
            f'style="background:{colours[i * len(x_text) + j]};padding:0;border:0"></td>' if finite[i, j] or
            not diverging else
            f'<td title="{y} → {x_text[j]}: {value_name} −∞ (masked)" style="padding:0;border:0"></td>'
            for j in range(len(x_text)))
        rows.append(f'<tr style="height:{row_height}px"><th title="{y}" style="text-align:right;font-weight:normal;'
                    f'white-space:nowrap;overflow:hidden;border:0;padding:0 6px 0 0">{y}</th>{cells}</tr>')
    note = marker_note(x_tokens, y_tokens)
    legend = scale_legend(stops)
    masked = " (blank: −∞, masked)" if diverging and not finite.all() else ""
    return (f'<div class="tx-heat" role="figure" aria-label="{text(title)}" style="margin-bottom:0.8em">'
            f'<p class="{TITLE_CLASS}" style="font-weight:600;margin:0 0 0.2em 0">{text(title)}</p>'
            + (f'<p style="font-size:0.8em;opacity:0.75;margin:0 0 0.2em 0">{text(note)}</p>' if note else "")
            + f'<p style="font-size:0.8em;opacity:0.75;margin:0 0 0.4em 0">rows: {text(y_title)}; columns: '
            f'{text(x_title)}; {text(value_name)} {ends[0]} {legend} {ends[1]}{masked}</p>'
            f'<div class="{BOX_CLASS}" style="overflow-x:auto">'
            '<table style="border-collapse:collapse;font-size:0.75em;line-height:1;'
            f'table-layout:fixed;width:min(100%,calc({label_em:.1f}em + {widest * len(x_tokens)}px));'
            f'min-width:calc({label_em:.1f}em + {narrowest * len(x_tokens)}px);margin:0;border:0">'
            f'<colgroup><col style="width:{label_em:.1f}em"><col span="{max(1, len(x_tokens))}"></colgroup>'
            f'<thead><tr><th style="border:0"></th>{header}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div></div>')
