"""playground/translate/alignment_markup.py: the word alignment as markup. Each row's words in order at their
spread positions, one line per link from its source word to its target word, as opaque as the link's weight, words
escaped, and one block of markup whatever a word holds. Numbers worked out by hand on a made-up alignment."""
from __future__ import annotations

from html.parser import HTMLParser

import numpy as np
import pytest

from playground.translate import alignment_markup
from runtime.alignment import DEFAULT_HEADS, WordAlignment

WEIGHTS = np.array([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8]], dtype=np.float32)


class Parts(HTMLParser):
    """The chart's words per side, in order, with their style; its links with their lines' attributes; its text."""

    def __init__(self):
        super().__init__()
        self.words: dict[str, list[tuple[str, dict]]] = {"source": [], "target": []}
        self.links: dict[str, dict] = {}
        self._word: dict | None = None
        self._link: str | None = None
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "data-side" in attrs:
            self._word = attrs
        if tag == "g" and "data-link" in attrs:
            self._link = attrs["data-link"]
            self.links[self._link] = {"weight": float(attrs["data-weight"]), "lines": []}
        if tag == "line" and self._link is not None:
            self.links[self._link]["lines"].append(attrs)

    def handle_endtag(self, tag):
        if tag == "span":
            self._word = None
        if tag == "g":
            self._link = None

    def handle_data(self, data):
        self.text.append(data)
        if self._word is not None:
            self.words[self._word["data-side"]].append((data, self._word))


def parse(markup: str) -> Parts:
    parts = Parts()
    parts.feed(markup)
    return parts


def chart(source=("Der", "Hund", "schläft"), target=("The", "sleeps"), links=([0], [2]), weights=WEIGHTS):
    found = WordAlignment(list(source), list(target), [list(x) for x in links], weights, DEFAULT_HEADS)
    return alignment_markup.alignment_html(found, "German", "English")


def left(style: str) -> float:
    return float(style.split("left:")[1].split("%")[0]) / 100


def test_each_row_holds_its_words_in_order_spread_over_the_same_width():
    parts = parse(chart())
    assert [w for w, _ in parts.words["source"]] == ["Der", "Hund", "schläft"]
    assert [w for w, _ in parts.words["target"]] == ["The", "sleeps"]
    assert [left(a["style"]) for _, a in parts.words["source"]] == pytest.approx([0.5 / 3, 1.5 / 3, 2.5 / 3], abs=1e-5)
    assert [left(a["style"]) for _, a in parts.words["target"]] == pytest.approx([0.25, 0.75])
    # no word wider than its share of the row: a long one ends in "…" instead of running into the next
    assert all("max-width:33.333%" in a["style"] for _, a in parts.words["source"])


def test_one_line_per_link_from_its_source_word_to_its_target_word_as_opaque_as_its_weight():
    parts = parse(chart())
    assert sorted(parts.links) == ["0-0", "1-2"]
    sleeps = parts.links["1-2"]  # "sleeps" (target 2 of 2: x = 0.75) to "schläft" (source 3 of 3: x = 2.5/3)
    drawn = sleeps["lines"][0]
    assert (float(drawn["x1"]), drawn["y1"], float(drawn["x2"]), drawn["y2"]) == (pytest.approx(2.5 / 3, abs=1e-5),
                                                                                  "0", 0.75, "1")
    assert sleeps["weight"] == pytest.approx(0.8) and drawn["stroke-opacity"] == "0.800"
    assert parts.links["0-0"]["lines"][0]["stroke-opacity"] == "0.700"
    assert "sleeps → schläft: 80% of the word's attention" in parts.text


def test_a_word_without_links_draws_no_line_and_both_languages_are_named():
    parts = parse(chart(links=([0], [])))
    assert list(parts.links) == ["0-0"]
    assert "source (German), top" in "".join(parts.text) and "target (English), bottom" in "".join(parts.text)


def test_a_long_sentence_keeps_room_per_word_and_scrolls_instead_of_squeezing():
    words = [f"w{i}" for i in range(20)]
    markup = chart(source=words, target=words[:3], links=([0], [1], [2]), weights=np.full((3, 20), 0.05))
    assert f"min-width:{20 * alignment_markup.MIN_WORD_PX}px" in markup
    assert f'class="{alignment_markup.BOX_CLASS}" style="overflow-x:auto' in markup


def test_words_are_text_never_markup():
    markup = chart(source=('<img src=x onerror="alert(1)">', "Hund", "schläft"), target=("a&b", "'q'"))
    parts = parse(markup)
    assert "<img" not in markup and 'onerror="' not in markup
    assert [w for w, _ in parts.words["source"]][0] == '<img src=x onerror="alert(1)">'  # shown as typed
    assert [w for w, _ in parts.words["target"]] == ["a&b", "'q'"]


def test_a_word_with_a_line_break_still_gives_one_block_of_markup():
    markup = chart(source=("Der\n\nHund", "x", "y"))
    assert "\n" not in markup  # a blank line would end markdown's HTML block and print the rest as text
    assert [w for w, _ in parse(markup).words["source"]][0] == "Der  Hund"
