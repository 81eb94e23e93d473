"""GNOME's translated help: German and English editions of the same Mallard or DocBook pages.

Sources (Debian bookworm): `gnome-user-docs` (the desktop help and the system administrators' guide),
`gnome-devel-docs` (the HIG, the platform overview, the developer demos and guidelines) and application packages
that ship their own help (evolution, evince, orca, gnome-terminal, ...; see SOURCES, and docs/corpus.md for how
they were chosen). Each package holds every language of its help: /usr/share/help/C/<doc>/ is the English
original, /usr/share/help/de/<doc>/ the German edition. Only C and de are read.

Format: the German edition is made by itstool at build time from the English sources and the translators' PO
file: every translatable unit (a title, a paragraph, a list item's paragraph, a table cell's paragraph) is
replaced by its msgstr, so both files have the same XML structure. A unit without a translation keeps its English
text (such blocks are dropped below). Pages are read by `xml_blocks`; the files of the page's folder (same
language) go with it, since itstool writes the German edition of a manual split by external entities as one
file, while the English one stays split.

Blocks: those of `xml_blocks`. Text the renderer makes up (a link filled in with its target's title, an image
standing for a word) leaves the mark AUTOTEXT: a sentence holding it is dropped, the rest of its block kept.

Pairing rule: files by path (C/<doc>/x.page <-> de/<doc>/x.page); the document id is "gnome-help/<doc>/<path>"
for both. Blocks by position: every block has a shape (its tag and its parent's tag, "item/p"), and when the
two pages' shape sequences agree the blocks pair one to one. Where they differ, the pages are cut at their
sections (<section id>, DocBook's sect1/chapter/... ids; itstool never changes ids), provided both pages hold
the same ids in the same order, and each section whose shapes agree is paired (the others are skipped and
counted); with no usable sections the page is skipped and counted (`pages_mismatched`).

Dropped per block pair (counted by reason): empty on either side, no letter on either side, identical on both
sides up to case and spaces (untranslated units, names, commands). A kept pair is split into sentence pairs by
`align.align_block`; a sentence pair that is empty, letterless, identical or holds AUTOTEXT is dropped the same
way. A page that is not well-formed XML is skipped and counted (`files_unparsable`).
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from itertools import pairwise
from pathlib import Path

from .align import AlignStats, align_block
from .block_pairs import finish_stats
from .debpkg import iter_deb_files
from .documents import Block, Page
from .io import DataError, normalize
from .records import Pair, kind_of
from .sources import sources_for
from .xml_blocks import AUTOTEXT, parse_page

FEEDS = "gnome_help"
HELP_ROOT = "usr/share/help/"
LANGS = ("C", "de")  # the English original and the German edition; the other languages are not read
PAGE_SUFFIXES = (".page", ".docbook", ".xml")

LETTER = re.compile(r"[^\W\d_]")


# --- block pairing --------------------------------------------------------------------------------------------
def _shapes(blocks: Sequence[Block]) -> list[str]:
    return [b.tag for b in blocks]


def _section_spans(de: Page, en: Page) -> list[tuple[tuple[int, int], tuple[int, int]]] | None:
    """Spans ((de start, de end), (en start, en end)) between the section boundaries (a section's start and its
    end, so nested sections and the text after them stay apart) of both pages; None when the pages do not hold
    the same section ids in the same order (itstool keeps them), or the boundaries cross."""
    ids_de = [s[0] for s in de.sections]
    if not ids_de or ids_de != [s[0] for s in en.sections] or len(set(ids_de)) != len(ids_de):
        return None
    points = {(0, 0), (len(de.blocks), len(en.blocks))}
    for (_, a, b), (_, c, d) in zip(de.sections, en.sections, strict=True):
        points |= {(a, c), (b, d)}
    ordered = sorted(points)
    if any(q[1] < p[1] for p, q in pairwise(ordered)):
        return None
    return [((p[0], q[0]), (p[1], q[1])) for p, q in pairwise(ordered)]


def paired_blocks(de: Page, en: Page, stats: Counter) -> Iterator[tuple[Block, Block]]:
    """Blocks paired by position: the whole page when the shapes agree, else section by section."""
    if _shapes(de.blocks) == _shapes(en.blocks):
        yield from zip(de.blocks, en.blocks, strict=True)
        return
    spans = _section_spans(de, en)
    if spans is None:
        stats["pages_mismatched"] += 1
        stats["blocks_in_mismatched_pages"] += max(len(de.blocks), len(en.blocks))
        return
    for (a, b), (c, d) in spans:
        de_part, en_part = de.blocks[a:b], en.blocks[c:d]
        if _shapes(de_part) != _shapes(en_part):
            stats["sections_mismatched"] += 1
            stats["blocks_in_mismatched_sections"] += max(len(de_part), len(en_part))
            continue
        yield from zip(de_part, en_part, strict=True)


def _drop_reason(de: str, en: str) -> str:
    if not de or not en:
        return "dropped_empty"
    if AUTOTEXT in de or AUTOTEXT in en:
        return "dropped_autotext"
    if not (LETTER.search(de) and LETTER.search(en)):
        return "dropped_no_letters"
    if "".join(normalize(de).split()) == "".join(normalize(en).split()):
        return "dropped_untranslated"
    return ""


def page_pairs(de: Page, en: Page, doc: str, stats: Counter, align_stats: AlignStats) -> Iterator[Pair]:
    for de_block, en_block in paired_blocks(de, en, stats):
        de_text, en_text = de_block.text, en_block.text
        # AUTOTEXT spoils a sentence, not the block: it is checked per sentence
        reason = _drop_reason(de_text.replace(AUTOTEXT, ""), en_text.replace(AUTOTEXT, ""))
        if reason:
            stats[reason] += 1
            continue
        stats["blocks"] += 1
        for de_s, en_s in align_block(de_text, en_text, align_stats):
            reason = _drop_reason(de_s, en_s)
            if reason:
                stats[f"{reason}_sentences"] += 1
                continue
            yield Pair(de_s, en_s, kind_of(de_s, en_s), source=FEEDS, doc=doc)


# --- packages -------------------------------------------------------------------------------------------------
def _help_files(deb: Path) -> dict[str, dict[str, dict[str, bytes]]]:
    """{lang: {doc: {relative path: content}}} of the C and de help files of one package."""
    out: dict[str, dict[str, dict[str, bytes]]] = {lang: {} for lang in LANGS}
    for path, content in iter_deb_files(deb, HELP_ROOT + "*"):
        lang, _, rest = path[len(HELP_ROOT):].partition("/")
        doc, _, rel = rest.partition("/")
        if lang in out and doc and rel.endswith(PAGE_SUFFIXES):
            out[lang].setdefault(doc, {})[rel] = content
    return out


def _parse(content: bytes, siblings: Mapping[str, bytes], where: str, stats: Counter) -> Page | None:
    try:
        return parse_page(content, siblings)
    except (ET.ParseError, UnicodeDecodeError):
        stats["files_unparsable"] += 1
        stats[f"files_unparsable.{where}"] += 1  # the manifest names the page
        return None


def package_pairs(key: str, deb: Path, stats: Counter, align_stats: AlignStats) -> Iterator[Pair]:
    files = _help_files(deb)
    if not files["de"] or not files["C"]:
        raise DataError(f"{deb}: no German and English help under {HELP_ROOT} (not the {key} package?)")
    for doc, en_files in sorted(files["C"].items()):
        de_files = files["de"].get(doc, {})
        stats["files_en"] += len(en_files)
        stats["files_de"] += len(de_files)
        stats["files_unpaired"] += len(en_files.keys() ^ de_files.keys())
        before = stats["pairs"]
        for rel in sorted(en_files.keys() & de_files.keys()):
            de_page = _parse(de_files[rel], de_files, f"de/{doc}/{rel}", stats)
            en_page = _parse(en_files[rel], en_files, f"C/{doc}/{rel}", stats)
            if de_page is None or en_page is None:
                continue
            stats["files_paired"] += 1
            for pair in page_pairs(de_page, en_page, f"gnome-help/{doc}/{rel}", stats, align_stats):
                stats["pairs"] += 1
                stats[f"pairs_{pair.kind}"] += 1
                yield pair
        stats[f"pairs.{key}.{doc}"] += stats["pairs"] - before
    for doc in files["de"].keys() - files["C"].keys():  # a German folder with no English original
        stats["files_de"] += len(files["de"][doc])
        stats["files_unpaired"] += len(files["de"][doc])


def read_pairs(files: Mapping[str, Path], stats: dict[str, int] | None = None,
               keys: Sequence[str] | None = None) -> Iterator[Pair]:
    """Sentence and phrase pairs of every package in `keys` (default: every source of this corpus); `stats`
    gets the counters (see the module doc): files_en/files_de/files_paired/files_unpaired/files_unparsable,
    pages_mismatched, sections_mismatched, blocks (kept block pairs), dropped_* by reason, pairs,
    pairs_sentence/pairs_phrase, pairs.<key>.<doc>, align_* from the aligner."""
    counts: Counter = Counter()
    align_stats = AlignStats()
    try:
        for key in (keys if keys is not None else list(sources_for(FEEDS))):
            if key not in files:
                raise DataError(f"{FEEDS}: no file given for source {key!r}; "
                                f"run `python -m corpus fetch --only {key}`")
            yield from package_pairs(key, Path(files[key]), counts, align_stats)
    finally:
        finish_stats(counts, align_stats, stats)
