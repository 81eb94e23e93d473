"""The GIMP user manual in German and English (Debian `gimp-help-de`, `gimp-help-en`).

Format: each package holds the manual as DocBook-generated XHTML pages, usr/share/gimp/2.0/help/<lang>/<page>.html
with <lang> = "de" or "en" (plus images/, CSS and two XML maps, skipped). The translation is made on the DocBook
sources (PO files per paragraph), so a translated page has the same blocks in the same order as the English one;
no element carries a paragraph id.

Pairing rule: (page path relative to the language folder, block index), where the blocks are the <p>, <h1>..<h6>,
<li>, <td>, <th>, <dt>, <dd> and <pre> elements of the page outside the navigation header and footer (which name
the neighbouring pages). A page is paired only when both languages have the same tag sequence of blocks; pages
where the English manual has paragraphs the German one lacks (a newer English text) are skipped and counted
(files_block_mismatch).

Text: the blocks of `html_blocks` (inline markup such as <span class="guimenu"> gives its text, a block nested
in another owns its text), with the drop rules of `block_pairs`, as for LibreOffice's help. The DocBook label
both languages share ("4.4.1. " before a section title, "Figure 14.127." / "Abbildung 14.127." before a
caption) is generated, not translated, and is cut off when it carries the same number on both sides (a section
number on one side only goes too). Untranslated paragraphs (the German page shows the English text) are dropped
as identical.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path

from .align import AlignStats
from .block_pairs import block_pairs, finish_stats, make_pair
from .help_packages import paired_pages
from .html_blocks import Attrs, parse_html
from .io import DataError
from .records import Pair

FEEDS = "gimp_help"
DE_KEY, EN_KEY = "gimp_help_de", "gimp_help_en"
HELP_ROOT = "usr/share/gimp/2.0/help/"
LANG_DIRS = {DE_KEY: "de", EN_KEY: "en"}

_NAVIGATION = frozenset({"navheader", "navfooter"})
# A generated label before a title: an optional word ("Figure", "Abbildung", "Tabelle") and a number holding a
# digit ("4.4.1.", "14.127.", "A.2."), or a bare part or appendix letter ("II.", "B.").
_LABEL = re.compile(r"^((?:[^\W\d]+\s)?(?:\d+|[A-Z](?=\.\d))(?:\.\d+)*\.|[IVX]+\.|[A-Z]\.)\s+(?=\S)")
_SECTION_NUMBER = re.compile(r"^(?:\d+|[A-Z])(?:\.\d+)+\.\s+(?=\S)")


def _skip(tag: str, attrs: Attrs, parent: tuple[str, Attrs] | None) -> bool:
    return tag in ("head", "script", "style") or (tag == "div" and attrs.get("class", "") in _NAVIGATION)


def page_blocks(content: bytes, where: str) -> list[tuple[str, str]]:
    """(tag, text) of the blocks of one page, in document order."""
    return [(b.tag, b.text) for b in parse_html(content, where, _skip).blocks]


def _number(label: str) -> str:
    return label.rsplit(" ", 1)[-1]


def strip_label(de: str, en: str) -> tuple[str, str]:
    """Both texts without their generated DocBook label, when both start with one of the same number. A section
    number on one side only ("8.11.3.1.1. " where the other edition numbers deeper sections no more) goes too;
    a lone "3. " stays: it may start a German date ("3. Mai")."""
    m_de, m_en = _LABEL.match(de), _LABEL.match(en)
    if m_de and m_en:
        if _number(m_de.group(1)) == _number(m_en.group(1)):
            return de[m_de.end():], en[m_en.end():]
        return de, en
    return _SECTION_NUMBER.sub("", de), _SECTION_NUMBER.sub("", en)


def read_pairs(files: Mapping[str, Path], stats: dict[str, int] | None = None) -> Iterator[Pair]:
    """Block-level pairs (sentence pairs inside) of every page present in both languages with the same blocks."""
    counts: Counter = Counter()
    align_stats = AlignStats()
    de_root, en_root = (f"{HELP_ROOT}{LANG_DIRS[k]}/" for k in (DE_KEY, EN_KEY))
    for rel, de_blocks, en_blocks in paired_pages(files, (DE_KEY, EN_KEY), (de_root, en_root), page_blocks, counts):
        if [tag for tag, _ in de_blocks] != [tag for tag, _ in en_blocks]:
            counts["files_block_mismatch"] += 1
            counts["dropped_blocks_of_mismatched_files"] += len(de_blocks)
            continue
        counts["files_paired"] += 1
        doc = f"gimp/{rel}"
        for (tag, de), (_, en) in zip(de_blocks, en_blocks, strict=True):
            de, en = strip_label(de, en)
            for s_de, s_en in block_pairs(de, en, counts, align_stats, code=tag == "pre"):
                yield make_pair(s_de, s_en, FEEDS, doc, counts)
    if not counts["files_paired"]:
        raise DataError(f"no help page with the same blocks in both {files[DE_KEY]} and {files[EN_KEY]} "
                        f"(expected {de_root}*.html)")
    finish_stats(counts, align_stats, stats)
