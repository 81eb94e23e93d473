"""The record types every reader produces."""
from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Pair:
    de: str
    en: str
    kind: str  # "sentence" | "phrase"
    # Provenance, not content (left out of ==): the corpus it came from ("ding", "libreoffice_help", ...; the
    # `feeds` of its sources) and its document (a help page, a catalog): held-out splits keep documents whole.
    source: str = field(default="", compare=False)
    doc: str = field(default="", compare=False)



@dataclass(frozen=True)
class Example:
    label: str
    text: str


_SENTENCE_END = re.compile(r"[.!?][\"'“”‘’»«)]*$")


def kind_of(de: str, en: str, min_words: int = 3) -> str:
    """"sentence" when both sides end in . ! ? (closing quotes allowed) and have at least `min_words` words;
    "phrase" otherwise (a title, a menu entry, a table cell)."""
    full = all(_SENTENCE_END.search(t) and len(t.split()) >= min_words for t in (de, en))
    return "sentence" if full else "phrase"
