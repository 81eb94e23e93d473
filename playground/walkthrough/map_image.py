"""A token × dimension map (the Walkthrough's embeddings, Q/K/V, head outputs, residual stream, FFN hidden units) as
one PNG inside markup shown through st.markdown, instead of a plotly heatmap.

Why: every Walkthrough step draws two or three such maps, and plotly's drawing of them was most of a Next click
(`python -m bench clicks` and docs/performance.md have the numbers). A map of 8 tokens × 512 dimensions is 4,096
values: as table cells that would be ~400 kB of markup a map, as a PNG a few kB.
The picture is plotly's: RdBu reversed and symmetric about 0 (negative blue, positive red), or Blues from the
smallest value to the largest (`diverging=False`: the ReLU's hidden units); rows top to bottom, labelled by token
(every k-th beyond MAX_LABELS), a non-finite value left blank. The image fits its column's width (below MIN_MAP_PX
it scrolls sideways inside its box instead), each row at its own height. A row's hover gives its token and its
smallest and largest value; the exact values are in each step's download, and the page's "Hover and zoom" toggle
draws plotly's maps again. Every token is HTML-escaped.
"""
from __future__ import annotations

import base64
import struct
import zlib

import numpy as np

from ..figures import MAX_LABELS, label_step
from ..heatmap_markup import BLUES, RDBU_REVERSED, diverging_shares, scale_legend, scale_rgb, text

CLASS = "tx-map"  # the map (the browser tests and the AppTests find it by this)
TITLE_CLASS = "tx-map-title"
BOX_CLASS = "tx-map-box"  # the box that scrolls when the map is wider than its column
LABEL_EM = 9.0  # the row labels' column
IMAGE_PX = 800  # the least width of the image as sent (module doc: shrunk to its column, never stretched)
MIN_MAP_PX = 160  # below this a map scrolls sideways inside its box rather than shrink further


def png(rgba: np.ndarray) -> bytes:
    """(height, width, 4) uint8 -> a PNG file (8-bit RGBA, no filter, zlib): the format's minimum, no image library."""
    height, width, _ = rgba.shape
    scanlines = b"".join(b"\x00" + rgba[row].tobytes() for row in range(height))  # filter type 0 per row

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)  # 8 bits a channel, colour type 6: RGBA
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(scanlines, 6)) \
        + chunk(b"IEND", b"")


def pixels(z: np.ndarray, diverging: bool) -> tuple[np.ndarray, tuple, tuple[str, str]]:
    """(rows, columns, 4) uint8 colours of `z` (a non-finite value transparent), the scale's stops and its two ends
    as text."""
    finite = np.isfinite(z)
    values = z[finite]
    if diverging:
        (shares, ends), stops = diverging_shares(z), RDBU_REVERSED
    else:
        low, high = (float(values.min()), float(values.max())) if values.size else (0.0, 1.0)
        span = high - low or 1.0
        shares, stops, ends = (z - low) / span, BLUES, (f"{low:.4g}", f"{high:.4g}")
    rgba = np.empty((*z.shape, 4), dtype=np.uint8)
    rgba[..., :3] = scale_rgb(np.where(finite, shares, 0.0), stops)
    rgba[..., 3] = np.where(finite, 255, 0)
    return rgba, stops, ends


def row_height(rows: int) -> int:
    """Pixels a row: as plotly's map was tall (260-700 px), at least 2 px a row."""
    return max(2, min(22, 560 // max(rows, 1)))


def column_ticks(columns: int, most: int = 8) -> list[int]:
    """Up to `most` round column numbers from 0 (0, 128, 256, ... for 512 columns)."""
    step = next(s for s in (1, 2, 4, 5, 8, 10, 16, 20, 25, 32, 50, 64, 100, 128, 256, 512, 1024, 2048, 4096, 8192)
                if columns <= s * most) if columns <= 8192 * most else columns // most
    return list(range(0, columns, step))


def map_html(z: np.ndarray, y_tokens: list[str], title: str, x_title: str, diverging: bool = True) -> str:
    """One block of markup (no blank line: markdown passes it through whole): the title, the scale, the row labels
    and the image, the column numbers. Raises ValueError when the rows and the tokens differ in number."""
    z = np.atleast_2d(np.asarray(z, dtype=np.float64))
    rows, columns = z.shape
    if rows != len(y_tokens):
        raise ValueError(f"a map of {rows} rows needs {rows} row labels, got {len(y_tokens)}")
    rgba, stops, ends = pixels(z, diverging)
    # Rows drawn at their own height, columns widened to at least IMAGE_PX: the browser then only ever shrinks the
    # image to its column, smoothly (neighbouring columns averaged, as plotly's narrow cells look), never
    # stretches a pixel into a blur. Repeated pixels and rows cost zlib next to nothing.
    height = row_height(rows) * rows
    widen = max(1, -(-IMAGE_PX // columns))
    image = base64.b64encode(png(np.repeat(np.repeat(rgba, row_height(rows), axis=0), widen, axis=1))).decode()
    finite = np.isfinite(z)
    labels = []
    for i in range(0, rows, label_step(rows, MAX_LABELS)):
        shown = z[i][finite[i]]
        hover = f"{i}: {y_tokens[i]}" + (f" · from {shown.min():.4g} to {shown.max():.4g}" if shown.size else "")
        labels.append(f'<span title="{text(hover)}" style="position:absolute;right:6px;'
                      f'top:{100 * (i + 0.5) / rows:.3f}%;transform:translateY(-50%);white-space:nowrap;'
                      f'overflow:hidden;max-width:{LABEL_EM - 0.5}em">{text(f"{i}: {y_tokens[i]}")}</span>')
    ticks = "".join(f'<span style="position:absolute;left:{100 * (c + 0.5) / columns:.3f}%;transform:translateX(-50%)">'
                    f'{c}</span>' for c in column_ticks(columns))
    legend = scale_legend(stops)
    blank = " (blank: −∞, masked)" if not finite.all() else ""
    return (f'<div class="{CLASS}" role="figure" aria-label="{text(title)}" data-rows="{rows}" data-columns="{columns}"'
            f' style="margin-bottom:0.8em">'
            f'<p class="{TITLE_CLASS}" style="font-weight:600;margin:0 0 0.2em 0">{text(title)}</p>'
            f'<p style="font-size:0.8em;opacity:0.75;margin:0 0 0.4em 0">{rows} × {columns}: rows: tokens; columns: '
            f'{text(x_title)}; value {ends[0]} {legend} {ends[1]}{blank}</p>'
            f'<div class="{BOX_CLASS}" style="overflow-x:auto">'
            f'<div style="display:flex;min-width:calc({LABEL_EM}em + {MIN_MAP_PX}px);font-size:0.75em;line-height:1">'
            f'<div style="position:relative;flex:0 0 {LABEL_EM}em;height:{height}px">{"".join(labels)}</div>'
            f'<div style="flex:1 1 0;min-width:{MIN_MAP_PX}px">'
            f'<img alt="{text(title)}" src="data:image/png;base64,{image}" style="display:block;width:100%;'
            f'height:{height}px;object-fit:fill">'
            f'<div style="position:relative;height:1.4em;margin-top:3px;opacity:0.75">{ticks}</div>'
            f'</div></div></div></div>')
