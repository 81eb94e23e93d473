"""playground/walkthrough/bars_markup.py: the Walkthrough's bar charts as markup. Each bar as long as its share of
the largest value, its number written beside it in plain decimals, the highlighted row in red, a legend only for
several series, every label escaped, one block of markup."""
from __future__ import annotations

import re

import pytest

from playground.walkthrough import bars_markup
from playground.walkthrough.bars_markup import Series, bars_html


def widths(markup: str) -> list[float]:
    return [float(w) for w in re.findall(r"width:([\d.]+)%;background", markup)]


def test_each_bar_is_its_share_of_the_largest_value_with_its_number_beside_it():
    markup = bars_html(["▁a", "b", "c"], [Series("", [1.0, 4.0, 0.0])], "Lengths")
    assert widths(markup) == [25.0, 100.0, 0.0]
    assert [n for n in re.findall(r'margin:1px 0">([^<]+)</span>', markup)] == ["1.000", "4.000", "0"]
    assert 'title="b: 4.000"' in markup and "Lengths" in markup and "<p style=\"font-size:0.8em" not in markup


def test_several_series_share_one_scale_and_a_legend_names_them():
    markup = bars_html(["x", "y"], [Series("norm", [2.0, 8.0]), Series("PE", [4.0, 4.0], "#ff7f0e")], "Two")
    assert widths(markup) == [25.0, 50.0, 100.0, 50.0]  # row by row: x's two bars, then y's
    assert "</span> norm" in markup and "</span> PE" in markup and "background:#ff7f0e" in markup


def test_the_highlighted_row_is_red_and_numbers_are_written_as_asked():
    markup = bars_html(["the", "a"], [Series("p", [0.8, 0.15])], "Next", lambda p: f"{p:.1%}", highlight=0)
    assert re.findall(r"width:[\d.]+%;background:(#\w+)", markup) == [bars_markup.HIGHLIGHT, bars_markup.COLOUR]
    assert ">80.0%</span>" in markup and ">15.0%</span>" in markup


def test_numbers_are_plain_decimals_to_four_significant_digits():
    assert [bars_markup.number(v) for v in (0.0000512345, 59.8124, 12345.6, 0.0, float("-inf"), 3.0)] == \
        ["0.00005123", "59.81", "12346", "0", "−∞", "3.000"]


def test_labels_are_text_one_block_and_every_series_has_a_value_per_label():
    markup = bars_html(['<img src=x onerror="alert(1)">', "a\n\nb"], [Series("<b>s</b>", [1.0, 2.0])], "<i>t</i>")
    assert "<img src" not in markup and "<b>s" not in markup and "<i>t" not in markup and "\n" not in markup
    with pytest.raises(ValueError, match="series 's' has 1 values for 2 labels"):
        bars_html(["a", "b"], [Series("s", [1.0])], "t")
