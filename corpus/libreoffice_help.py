"""LibreOffice's offline help in German and English (Debian `libreoffice-help-de`, `libreoffice-help-en-us`).

Format: each package holds the help as static HTML pages generated from the same .xhp sources,
usr/share/libreoffice/help/<lang>/text/<module>/<page>.html with <lang> = "de" or "en-US" (plus a few .js
files, skipped). Every translatable paragraph of a page is an element with the id of its source paragraph,
identical in both languages: <h1 id="hd_id3152887">, <p id="par_id3154254" class="paragraph">, table cells
<td><p id="par_id..." class="tablecontentintable">. The XSL drops the id of some elements (paragraphs in note
boxes, code listings, titles of linked pages), but emits them in the same order in both languages.

Pairing rule: (page path relative to the language folder, element id, n-th element with that id on the page:
a page may embed the same paragraph twice, once per OS variant); the elements without id by their position
among those, only where both pages have the same tag sequence of them (nearly all do).
No sentence heuristic is needed at that level; inside a paired paragraph the sentences are aligned by
`align.align_block`. Page chrome (header, search box, debug footer) is skipped.

Markup: the blocks of `html_blocks` (inline elements such as <span class="emph"> give their text, a block
nested in another owns its text), with the drop rules of `block_pairs`, as for GIMP's help, which is the same
kind of HTML paired by position instead of id. An inline OS switch (<span class="switchinline">) holds one
hidden <span> per variant ("Command" for macOS, "Ctrl" by default): only the default variant is kept, otherwise
the text would read "CommandCtrl+Z".
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from .align import AlignStats
from .block_pairs import block_pairs, finish_stats, make_pair
from .help_packages import paired_pages
from .html_blocks import Attrs, parse_html
from .io import DataError
from .records import Pair

FEEDS = "libreoffice_help"
DE_KEY, EN_KEY = "libreoffice_help_de", "libreoffice_help_en"
HELP_ROOT = "usr/share/libreoffice/help/"
LANG_DIRS = {DE_KEY: "de", EN_KEY: "en-US"}

# --- LibreOffice ----------------------------------------------------------------------------------------------
_CHROME = frozenset({"head", "script", "style", "header", "aside", "footer", "nav"})


def _skip(tag: str, attrs: Attrs, parent: tuple[str, Attrs] | None) -> bool:
    """Page chrome (search box, module menu, debug footer), and the non-default variants of an inline switch."""
    if tag in _CHROME:
        return True
    return (tag == "span" and parent is not None and parent[0] == "span"
            and "switchinline" in parent[1].get("class", "").split()
            and not attrs.get("id", "").startswith("defaul"))  # one page spells it "defaul…"


@dataclass
class Paragraphs:
    paragraphs: dict[tuple[str, int], tuple[str, str]]  # {(element id, occurrence): (tag, text)}; id "": no id
    anonymous_tags: tuple[str, ...]  # the tag names of the elements without id, in order


def page_paragraphs(content: bytes, where: str) -> Paragraphs:
    out: dict[tuple[str, int], tuple[str, str]] = {}
    seen: Counter = Counter()
    anonymous_tags = []
    for block in parse_html(content, where, _skip).blocks:
        if not block.id:
            anonymous_tags.append(block.tag)
        out[(block.id, seen[block.id])] = (block.tag, block.text)
        seen[block.id] += 1
    return Paragraphs(out, tuple(anonymous_tags))


def paired_paragraphs(de: Paragraphs, en: Paragraphs, stats: Counter) -> Iterator[tuple[str, str, bool]]:
    """(de, en, is a code listing) of the elements of one page present in both languages, in German order.
    Elements without id (note boxes, code listings, links to related pages) come from the same source
    paragraphs in the same order: they are paired by position, but only when both pages list the same tags."""
    positional = de.anonymous_tags == en.anonymous_tags
    if not positional:
        stats["pages_without_id_mismatch"] += 1
    stats["dropped_id_only_en"] += sum(1 for key in en.paragraphs.keys() - de.paragraphs.keys() if key[0])
    for key, (tag, text) in de.paragraphs.items():
        if key[0] == "" and not positional:
            stats["dropped_without_id_mismatch"] += 1
        elif key not in en.paragraphs:
            stats["dropped_id_only_de"] += 1
        else:
            en_tag, en_text = en.paragraphs[key]
            yield text, en_text, tag == en_tag == "pre"


def read_pairs(files: Mapping[str, Path], stats: dict[str, int] | None = None) -> Iterator[Pair]:
    """Paragraph-level pairs of every page present in both languages, in German page order."""
    counts: Counter = Counter()
    align_stats = AlignStats()
    de_root, en_root = (f"{HELP_ROOT}{LANG_DIRS[k]}/" for k in (DE_KEY, EN_KEY))
    for rel, de_page, en_page in paired_pages(files, (DE_KEY, EN_KEY), (de_root, en_root), page_paragraphs, counts):
        counts["files_paired"] += 1
        doc = f"libreoffice/{rel}"
        for de, en, code in paired_paragraphs(de_page, en_page, counts):
            for s_de, s_en in block_pairs(de, en, counts, align_stats, code):
                yield make_pair(s_de, s_en, FEEDS, doc, counts)
    if not counts["files_paired"]:
        raise DataError(f"no help page found in both {files[DE_KEY]} and {files[EN_KEY]} (expected {de_root}*.html)")
    finish_stats(counts, align_stats, stats)
