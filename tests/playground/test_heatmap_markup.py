"""playground/heatmap_markup.py: the attention map as markup (Translate's cross-attention) shows what
figures.heatmap showed: the weights, every token, plotly's Blues scale, the markers explained."""
from __future__ import annotations

import re

import numpy as np
import pytest
from app_fixtures import read_heatmap

from playground import heatmap_markup


def test_the_colour_scale_is_plotlys_blues_at_its_stops_and_between():
    assert heatmap_markup.blues(0.0) == "#f7fbff" and heatmap_markup.blues(1.0) == "#08306b"
    assert heatmap_markup.blues(0.5) == "#6baed6"
    assert heatmap_markup.blues(0.0625) == "#eaf3fb"  # halfway between the first two stops (234.5 rounds to even)
    assert heatmap_markup.blues(-1.0) == heatmap_markup.blues(0.0) and heatmap_markup.blues(2.0) == "#08306b"
    assert heatmap_markup.blues(float("nan")) == "#f7fbff"


def test_each_cell_says_its_weight_and_is_coloured_by_its_share_of_the_largest():
    z = np.array([[0.5, 0.25, 0.25], [0.1, 0.2, 0.7]])
    markup = heatmap_markup.heatmap_html(z, ["▁a", "b", "</s>"], ["▁c", "</s>"], "Map", "source tokens",
                                         "target tokens")
    shown = read_heatmap(markup)
    np.testing.assert_allclose(shown["z"], z)
    assert shown["title"] == "Map" and shown["x"] == ["▁a", "b", "</s>"] and shown["y"] == ["▁c", "</s>"]
    assert f"background:{heatmap_markup.blues(1.0)}" in markup  # 0.7, the largest
    assert f"background:{heatmap_markup.blues(0.1 / 0.7)}" in markup
    assert "weight 0 " in markup and " 0.700</p>" in markup  # the legend's range
    assert "▁ starts a word" in markup and "&lt;/s&gt; ends the text" in markup


def test_every_token_is_escaped():
    z = np.full((1, 2), 0.5)
    markup = heatmap_markup.heatmap_html(z, ["<script>alert(1)</script>", '" onclick="x'], ["<b>"], "<i>t</i>",
                                         "source", "target")
    assert "<script>" not in markup and "<b>" not in markup and "<i>" not in markup and '" onclick="x' not in markup
    shown = read_heatmap(markup)
    assert shown["x_tokens"] == ["<script>alert(1)</script>", '" onclick="x'] and shown["y"] == ["<b>"]
    assert shown["title"] == "<i>t</i>"


def test_only_maps_of_at_most_40_tokens_a_side_are_markup():
    """Beyond 40 a side the markup would be ~100 bytes a cell (7 MB at 256 × 256): plotly's map draws those."""
    assert heatmap_markup.fits(40, 40) and not heatmap_markup.fits(41, 3) and not heatmap_markup.fits(3, 41)
    with pytest.raises(ValueError, match="41 × 3 map is drawn by figures.heatmap"):
        heatmap_markup.heatmap_html(np.full((41, 3), 1 / 3), ["a", "b", "c"], [f"y{i}" for i in range(41)], "t",
                                    "s", "t")
    x = [f"x{j}" for j in range(40)]
    shown = read_heatmap(heatmap_markup.heatmap_html(np.full((2, 40), 1 / 40), x, ["a", "b"], "t", "s", "t"))
    assert shown["x"] == shown["x_tokens"] == x  # every token labelled
    assert len(heatmap_markup.heatmap_html(np.full((40, 40), 1 / 40), x, x, "t", "s", "t")) < 200_000


def test_a_blank_or_broken_map_draws_white_cells_without_dividing_by_zero():
    for z in (np.zeros((2, 2)), np.array([[np.nan, np.inf], [0.0, -np.inf]])):
        shown = read_heatmap(heatmap_markup.heatmap_html(z, ["a", "b"], ["c", "d"], "t", "s", "t"))
        assert shown["z"].shape == (2, 2) and np.all(np.isfinite(shown["z"]))


def test_the_map_is_one_markdown_block_that_scrolls_sideways_in_a_narrow_column():
    markup = heatmap_markup.heatmap_html(np.full((3, 3), 1 / 3), ["a\n\nb", "b", "c"], ["d", "e", "f"], "t\n\nu", "s",
                                         "t")
    assert "\n" not in markup  # markdown would end the HTML block at a blank line
    assert 'style="overflow-x:auto"' in markup


def test_values_are_drawn_on_a_scale_symmetric_about_zero_and_a_masked_cell_is_blank():
    """The Walkthrough's raw and masked scores (diverging): plotly's RdBu reversed, -bound blue, +bound red."""
    z = np.array([[-2.0, 0.0], [1.23456, -np.inf]])
    markup = heatmap_markup.heatmap_html(z, ["a", "b"], ["c", "d"], "Scores", "key", "query", diverging=True,
                                         value_name="score")
    shown = read_heatmap(markup)
    np.testing.assert_array_equal(shown["z"], [[-2.0, 0.0], [1.2346, -np.inf]])  # 4 decimals; −∞ said
    assert heatmap_markup.colour(0.0, heatmap_markup.RDBU_REVERSED) == "#053061"  # -2: the bound, dark blue
    assert heatmap_markup.colour(1.0, heatmap_markup.RDBU_REVERSED) == "#67001f"
    cells = re.findall(r'<td title="([^"]+)"( style="[^"]*")', markup)
    backgrounds = {title.split(":")[0]: style for title, style in cells}
    assert "background:#053061" in backgrounds["c → a"] and "background:#f7f7f7" in backgrounds["c → b"]
    assert "background" not in backgrounds["d → b"]  # masked: blank, as plotly leaves it
    assert "score -2 " in markup and "> 2 (blank: −∞, masked)</p>" in markup
