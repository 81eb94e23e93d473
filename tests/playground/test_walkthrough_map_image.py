"""playground/walkthrough/map_image.py: a token × dimension map as a PNG in markup. The image decodes (its own
reader below, chunk by chunk, CRCs checked) to the scale's colour of every value, a non-finite one transparent;
rows at their own height, columns widened to the least width; the labels, the scale's ends and the hovers; every
token escaped; one block of markup."""
from __future__ import annotations

import base64
import re
import struct
import zlib

import numpy as np
import pytest

from playground.heatmap_markup import BLUES, RDBU_REVERSED, scale_rgb
from playground.walkthrough import map_image


def read_png(data: bytes) -> np.ndarray:
    """(height, width, 4) uint8 of an 8-bit RGBA PNG whose scanlines use filter 0 (what map_image.png writes)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    at, chunks = 8, {}
    while at < len(data):
        (length,), kind = struct.unpack(">I", data[at:at + 4]), data[at + 4:at + 8]
        body, (crc,) = data[at + 8:at + 8 + length], struct.unpack(">I", data[at + 8 + length:at + 12 + length])
        assert zlib.crc32(kind + body) & 0xFFFFFFFF == crc, f"{kind} chunk's CRC"
        chunks[kind] = chunks.get(kind, b"") + body
        at += 12 + length
    width, height, depth, colour_type = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
    assert (depth, colour_type) == (8, 6) and b"IEND" in chunks
    raw = zlib.decompress(chunks[b"IDAT"])
    lines = [raw[r * (1 + 4 * width):(r + 1) * (1 + 4 * width)] for r in range(height)]
    assert all(line[0] == 0 for line in lines)  # filter type 0
    return np.frombuffer(b"".join(line[1:] for line in lines), dtype=np.uint8).reshape(height, width, 4)


def image_of(markup: str) -> np.ndarray:
    return read_png(base64.b64decode(re.search(r'src="data:image/png;base64,([^"]+)"', markup).group(1)))


def cells(markup: str, rows: int, columns: int) -> np.ndarray:
    """One pixel per value: the image's rows and columns sampled at each cell's first pixel."""
    image = image_of(markup)
    return image[::image.shape[0] // rows][:rows, ::image.shape[1] // columns][:, :columns]


def test_a_png_round_trips_through_a_strict_reader():
    rgba = np.random.default_rng(0).integers(0, 256, (3, 5, 4), dtype=np.uint8)
    np.testing.assert_array_equal(read_png(map_image.png(rgba)), rgba)


def test_each_value_is_its_colour_on_a_scale_symmetric_about_zero():
    z = np.array([[-2.0, 0.0, 1.0], [2.0, 0.5, -1.0]])
    markup = map_image.map_html(z, ["▁a", "b"], "Map", "dimension")
    drawn = cells(markup, 2, 3)
    np.testing.assert_array_equal(drawn[..., :3], scale_rgb((z / 2 + 1) / 2, RDBU_REVERSED))
    assert tuple(drawn[0, 0, :3]) == (5, 48, 97) and tuple(drawn[1, 0, :3]) == (103, 0, 31)  # -2 blue, +2 red
    assert (drawn[..., 3] == 255).all()
    assert "value -2 " in markup and "> 2</p>" in markup  # the scale's ends


def test_sequential_maps_run_from_the_smallest_value_to_the_largest_in_blues():
    z = np.array([[0.0, 1.0, 4.0]])
    drawn = cells(map_image.map_html(z, ["x"], "ReLU", "hidden unit", diverging=False), 1, 3)
    np.testing.assert_array_equal(drawn[0, :, :3], scale_rgb(np.array([0.0, 0.25, 1.0]), BLUES))


def test_a_masked_value_is_transparent_and_said():
    z = np.array([[1.0, -np.inf], [np.nan, -1.0]])
    markup = map_image.map_html(z, ["a", "b"], "Masked", "key")
    drawn = cells(markup, 2, 2)
    assert drawn[0, 1, 3] == 0 and drawn[1, 0, 3] == 0 and drawn[0, 0, 3] == 255
    assert "blank: −∞, masked" in markup
    assert "blank" not in map_image.map_html(np.ones((1, 2)), ["a"], "t", "x")


def test_rows_keep_their_own_height_and_columns_widen_to_the_least_width():
    z = np.arange(8 * 64, dtype=float).reshape(8, 64)
    markup = map_image.map_html(z, [f"t{i}" for i in range(8)], "Q", "dimension of the head")
    image = image_of(markup)
    assert image.shape[0] == 8 * map_image.row_height(8) and image.shape[1] >= map_image.IMAGE_PX
    assert image.shape[1] % 64 == 0  # whole copies of each column: the browser only ever shrinks it
    assert f'height:{8 * map_image.row_height(8)}px' in markup and 'data-rows="8" data-columns="64"' in markup
    assert map_image.row_height(256) == 2 and map_image.row_height(4) == 22


def test_rows_are_labelled_by_token_with_their_range_and_columns_by_round_numbers():
    z = np.array([[-1.5, 3.25], [0.0, 0.5]])
    markup = map_image.map_html(z, ["▁Kinder", "</s>"], "t", "dimension")
    assert 'title="0: ▁Kinder · from -1.5 to 3.25"' in markup and ">1: &lt;/s&gt;</span>" in markup
    assert map_image.column_ticks(512) == [0, 64, 128, 192, 256, 320, 384, 448]
    assert map_image.column_ticks(2048)[:3] == [0, 256, 512] and map_image.column_ticks(3) == [0, 1, 2]
    many = map_image.map_html(np.zeros((100, 4)), [f"t{i}" for i in range(100)], "t", "x")
    assert many.count('style="position:absolute;right:6px') == len(range(0, 100, 3))  # every 3rd of 100 labelled


def test_tokens_and_titles_are_text_never_markup():
    markup = map_image.map_html(np.ones((1, 2)), ['<img src=x onerror="alert(1)">'], "<b>t</b>", "x")
    assert "<img src=x" not in markup and "<b>t" not in markup and 'onerror="' not in markup
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in markup


def test_the_map_is_one_block_and_its_rows_must_match_its_labels():
    markup = map_image.map_html(np.ones((2, 2)), ["a\n\nb", "c"], "t\n\nu", "x")
    assert "\n" not in markup  # a blank line would end markdown's HTML block
    with pytest.raises(ValueError, match="a map of 2 rows needs 2 row labels, got 1"):
        map_image.map_html(np.ones((2, 2)), ["a"], "t", "x")
