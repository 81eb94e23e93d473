"""A translated document as the documentation readers see it: a page of text blocks in document order.

A block is one translation unit (a paragraph, a heading, a list item, a table cell): translators translate it
as a whole, so the German and English editions of a page hold the same blocks, and the readers pair them by
position or by id. `html_blocks` builds pages from HTML, `xml_blocks` from Mallard and DocBook XML.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .io import clean_field


@dataclass
class Block:
    # What the two editions must agree on to pair this block: the element's name ("p", "pre"); the XML reader
    # qualifies it with its parent's ("item/p"), which itstool keeps the same in both editions.
    tag: str
    id: str = ""  # the element's id attribute, "" when it has none
    title: bool = False  # a heading or caption: a leading number in it is a generated label, not text
    parts: list[str] = field(default_factory=list)  # the text pieces, in order (joined by `text`)

    @property
    def text(self) -> str:
        """Whitespace collapsed; a <pre> listing keeps one line per "\\n" (its empty lines dropped)."""
        raw = "".join(self.parts)
        if self.tag == "pre":
            return "\n".join(line for line in map(clean_field, raw.split("\n")) if line)
        return clean_field(raw)


@dataclass
class Page:
    blocks: list[Block] = field(default_factory=list)
    # Where the page's ids cut it, in page order: (id, index of the first block after the cut). HTML generators
    # put an id on a heading or an empty <a>, which marks where a section starts but not where it ends.
    anchors: list[tuple[str, int]] = field(default_factory=list)
    # Sections that enclose their blocks (XML): (id, index of the first block, index after the last one).
    sections: list[tuple[str, int, int]] = field(default_factory=list)
