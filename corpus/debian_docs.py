"""Debian's translated manuals: German and English HTML editions built from the same sources.

Sources (Debian bookworm): the Debian Reference, the Debian FAQ, the New Maintainers' Guide, the Debian Edu
manual (DocBook XSL), the Developer's Reference (Sphinx), the KiCad manuals (Asciidoctor), one package per
language, and the Debian Administrator's Handbook (Publican, every language in one package). All are translated
paragraph by paragraph through PO files (po4a, Sphinx gettext, Publican), so both editions are the same
document with each paragraph replaced by its translation. (Which manuals were left out, and why: docs/corpus.md.)

Format: static HTML pages, one file per chapter or section; the German edition names its files
`<name>.de.html` or keeps them in a `de/` (`de-DE/`) folder, the English one `<name>.en.html` or `<name>.html`.
`MANUALS` maps both to one relative path, which with the manual's name is the document id
("debian-reference/ch02.html"), identical for both languages. Pages that repeat others (the Developer's
Reference as one page, the Debian Edu manual of the previous release) are not read.

Blocks: those of `html_blocks` (plus Asciidoctor's <div class="title"> captions and Publican's <div
class="para"> paragraphs); inline markup gives its text, so command names inside prose stay. Listings (<pre>),
<head> (its <title> repeats the <h1>), scripts, navigation bars, tables of contents, footnote markers ("[82]")
and Sphinx's "¶" permalinks give nothing. A heading's or caption's leading number ("3.4.1. ", "Tabelle 6.7. " /
"Table 6.7. ") is dropped where both editions carry the same one.

Pairing rule: pages by relative path; blocks by position inside anchored sections. Element ids (`id`, and
`name` on <a>) that occur once on each page cut both pages into sections. Ids the generator numbers as it walks
the document ("idm235", "id3") are not used: the translated page has other nodes, so the same number can name
a different element there. Of the rest, only ids in the same order on both sides are used (a longest increasing
subsequence): some are made from translated titles. Inside a section the blocks pair one-to-one when the two
sequences of block tags agree exactly. A section whose tag sequences differ is skipped whole and counted
(`sections_mismatched`, `blocks_in_mismatched_sections`): tags cannot show where the editions diverge (an extra
<p> shifts every later <p> and the next tag still agrees), so pairing a prefix could pair wrong paragraphs; the
anchors keep the loss to one section.

Dropped per block pair (counted by reason): empty on either side, no letter on either side (numbers, markup
remnants), identical on both sides up to case and spaces (untranslated paragraphs, package names, commands).
A kept pair is split into sentence pairs by `align.align_block` (pysbd + Gale-Church); a sentence pair that is
empty, letterless or identical is dropped the same way.
"""
from __future__ import annotations

import re
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

from .align import AlignStats, align_block
from .block_pairs import finish_stats
from .debpkg import iter_deb_files
from .documents import Block, Page
from .html_blocks import Attrs, parse_html
from .io import DataError, normalize
from .records import Pair, kind_of

FEEDS = "debian_docs"


@dataclass(frozen=True)
class Edition:
    key: str  # the SOURCES key of the package
    root: str  # the folder inside the package that holds the pages, ending in "/"
    suffix: str  # the file-name ending of a page in this language (".de.html", ".html")


@dataclass(frozen=True)
class Manual:
    name: str  # the first part of the document id
    de: Edition
    en: Edition
    exclude: tuple[str, ...] = ()  # relative paths that duplicate other pages (single-page editions, search)

    def relative(self, edition: Edition, path: str) -> str | None:
        """The language-neutral relative path of a page ("ch02.html"), or None for any other file."""
        if not path.startswith(edition.root) or not path.endswith(edition.suffix):
            return None
        rel = path[len(edition.root):-len(edition.suffix)] + ".html"
        if "/" in rel or rel in self.exclude:  # subfolders hold other languages or assets, never our pages
            return None
        return rel


MANUALS = (
    Manual("debian-reference",
           Edition("debian_reference_de", "usr/share/debian-reference/", ".de.html"),
           Edition("debian_reference_en", "usr/share/debian-reference/", ".en.html")),
    Manual("debian-faq",
           Edition("debian_faq_de", "usr/share/doc/debian/FAQ/de/", ".de.html"),
           Edition("debian_faq_en", "usr/share/doc/debian/FAQ/", ".en.html")),
    Manual("maint-guide",
           Edition("maint_guide_de", "usr/share/doc/maint-guide-de/html/", ".de.html"),
           Edition("maint_guide_en", "usr/share/doc/maint-guide/html/", ".en.html")),
    Manual("developers-reference",
           Edition("developers_reference_de", "usr/share/developers-reference/de/", ".html"),
           Edition("developers_reference_en", "usr/share/developers-reference/", ".html"),
           # the whole book again on one page, and the search form
           exclude=("developers-reference.html", "search.html", "genindex.html")),
    Manual("kicad",
           Edition("kicad_doc_de", "usr/share/doc/kicad/help/de/", ".html"),
           Edition("kicad_doc_en", "usr/share/doc/kicad/help/en/", ".html")),
    Manual("debian-edu",
           Edition("debian_edu_doc_de", "usr/share/doc/debian-edu-doc-de/", ".html"),
           Edition("debian_edu_doc_en", "usr/share/doc/debian-edu-doc-en/", ".html"),
           exclude=("debian-edu-bullseye-manual.html",)),
    Manual("debian-handbook",
           Edition("debian_handbook", "usr/share/doc/debian-handbook/html/de-DE/", ".html"),
           Edition("debian_handbook", "usr/share/doc/debian-handbook/html/en-US/", ".html")),
)

# --- HTML -> blocks -------------------------------------------------------------------------------------------
# <head>: its <title> repeats the page's <h1> (Sphinx adds the book's name to it); <pre>: listings
SKIP_TAGS = frozenset("head pre script style noscript form button select textarea svg math".split())
# Page chrome and repeated matter, by class: DocBook (navheader, toc, list-of-tables), Sphinx (related,
# sphinxsidebar, headerlink), Asciidoctor (toc2, toctitle); footnote markers hold only "[82]" or "1".
SKIP_CLASSES = frozenset("navheader navfooter toc toc2 toctitle list-of-tables list-of-figures list-of-examples "
                         "list-of-equations related sphinxsidebar footer headerlink footnote docnav "
                         "footnote-reference".split())
SKIP_IDS = frozenset("toc toctitle footer footer-text searchbox".split())
# Asciidoctor's captions are <div class="title">, Publican's paragraphs <div class="para">
BLOCK_DIVS = frozenset({"title", "para"})
# "3.4.1. ", "A.2 ", "Kapitel 3. ", "Table 6.7. " before a title: stripped where both editions carry the same
# number (a title that starts with a number of its own, "Debian 11 veröffentlicht", keeps it).
TITLE_LABEL = re.compile(r"^(?:(?:Chapter|Kapitel|Appendix|Anhang|Part|Teil|Section|Abschnitt|Table|Tabelle|"
                         r"Figure|Abbildung|Example|Beispiel)\s+)?([A-Z](?:\.\d+)*\.|[A-Z](?:\.\d+)+|\d+(?:\.\d+)*\.?)"
                         r"\s+(?=\S)")
LETTER = re.compile(r"[^\W\d_]")
# Ids numbered by the generator as it walks the document ("idm235" from DocBook's generate-id(), Sphinx's "id3"):
# the translated edition has other nodes, so the same id can name a different element there.
GENERATED_ID = re.compile(r"^idm?-?\d+$")


def _skipped(tag: str, attrs: Attrs, parent: tuple[str, Attrs] | None) -> bool:
    if tag in SKIP_TAGS or attrs.get("role") == "navigation" or attrs.get("id") in SKIP_IDS:
        return True
    # Asciidoctor marks <body> "toc2" too (the layout with a side table of contents)
    return tag != "body" and not SKIP_CLASSES.isdisjoint(attrs.get("class", "").split())


def parse_page(content: bytes, where: str) -> Page:
    """Blocks of one page and the anchors that can cut it (generated ids left out)."""
    page = parse_html(content, where, _skipped, BLOCK_DIVS)
    page.anchors = [(a, pos) for a, pos in page.anchors if not GENERATED_ID.match(a)]
    return page


# --- block pairing --------------------------------------------------------------------------------------------
def _longest_increasing(values: list[int]) -> list[int]:
    """Indices (into `values`) of one longest strictly increasing subsequence (patience sorting)."""
    tails: list[int] = []  # tails[k]: index of the smallest last value of an increasing run of length k+1
    tail_values: list[int] = []  # values[tails[k]], for bisect
    prev = [-1] * len(values)
    for i, v in enumerate(values):
        k = bisect_left(tail_values, v)
        if k:
            prev[i] = tails[k - 1]
        if k == len(tails):
            tails.append(i)
            tail_values.append(v)
        else:
            tails[k], tail_values[k] = i, v
    out, i = [], tails[-1] if tails else -1
    while i >= 0:
        out.append(i)
        i = prev[i]
    return out[::-1]


def section_cuts(de: Page, en: Page) -> list[tuple[int, int]]:
    """Block positions (de, en) where both pages start a new section: the ids unique on each page, kept where
    they follow the same order on both; (0, 0) first, the two page ends last."""
    counts_de = Counter(a for a, _ in de.anchors)
    counts_en = Counter(a for a, _ in en.anchors)
    en_at = {a: (order, pos) for order, (a, pos) in enumerate(en.anchors) if counts_en[a] == 1}
    common = [(pos, en_at[a]) for a, pos in de.anchors if counts_de[a] == 1 and a in en_at]
    keep = _longest_increasing([order for _, (order, _) in common])
    cuts = [(0, 0)] + [(common[i][0], common[i][1][1]) for i in keep] + [(len(de.blocks), len(en.blocks))]
    return sorted(set(cuts))


def paired_blocks(de: Page, en: Page, stats: Counter) -> Iterator[tuple[Block, Block]]:
    """Blocks paired position by position inside each section whose tag sequences agree."""
    cuts = section_cuts(de, en)
    for (a, c), (b, d) in pairwise(cuts):
        de_part, en_part = de.blocks[a:b], en.blocks[c:d]
        if not de_part and not en_part:
            continue
        if [x.tag for x in de_part] != [x.tag for x in en_part]:
            stats["sections_mismatched"] += 1
            stats["blocks_in_mismatched_sections"] += max(len(de_part), len(en_part))
            continue
        stats["sections_matched"] += 1
        yield from zip(de_part, en_part, strict=True)


def strip_title_numbers(de: str, en: str) -> tuple[str, str]:
    """Both titles without their leading number, when it is the same number on both sides."""
    m_de, m_en = TITLE_LABEL.match(de), TITLE_LABEL.match(en)
    if m_de and m_en and m_de[1].rstrip(".") == m_en[1].rstrip("."):
        return de[m_de.end():], en[m_en.end():]
    return de, en


def _drop_reason(de: str, en: str) -> str:
    if not de or not en:
        return "dropped_empty"
    if not (LETTER.search(de) and LETTER.search(en)):
        return "dropped_no_letters"
    if "".join(normalize(de).split()) == "".join(normalize(en).split()):  # "html → text" / "html→text"
        return "dropped_untranslated"
    return ""


def page_pairs(de: Page, en: Page, doc: str, stats: Counter, align_stats: AlignStats) -> Iterator[Pair]:
    for de_block, en_block in paired_blocks(de, en, stats):
        de_text, en_text = de_block.text, en_block.text
        if de_block.title and en_block.title:
            de_text, en_text = strip_title_numbers(de_text, en_text)
        reason = _drop_reason(de_text, en_text)
        if reason:
            stats[reason] += 1
            continue
        stats["blocks"] += 1
        for de_s, en_s in align_block(de_text, en_text, align_stats):
            if _drop_reason(de_s, en_s):  # an aligned sentence may be a bare command or number
                stats["dropped_sentences"] += 1
                continue
            yield Pair(de_s, en_s, kind_of(de_s, en_s), source=FEEDS, doc=doc)


# --- packages -------------------------------------------------------------------------------------------------
def _package(files: Mapping[str, Path], key: str) -> Path:
    if key not in files:
        raise DataError(f"{FEEDS}: no file given for source {key!r}; run `python -m corpus fetch --only {key}`")
    return Path(files[key])


def _pages(manual: Manual, edition: Edition, deb: Path) -> Iterator[tuple[str, bytes]]:
    for path, content in iter_deb_files(deb, edition.root + "*" + edition.suffix):
        rel = manual.relative(edition, path)
        if rel is not None:
            yield rel, content


def manual_pairs(manual: Manual, files: Mapping[str, Path], stats: Counter,
                 align_stats: AlignStats) -> Iterator[Pair]:
    """Pairs of one manual: the German pages are held (parsed) while the English package streams by."""
    de_deb, en_deb = _package(files, manual.de.key), _package(files, manual.en.key)
    german = {rel: parse_page(content, f"{de_deb}:{rel}") for rel, content in _pages(manual, manual.de, de_deb)}
    if not german:
        raise DataError(f"{de_deb}: no pages under {manual.de.root} (not the {manual.de.key} package?)")
    stats["files_de"] += len(german)
    seen = 0
    for rel, content in _pages(manual, manual.en, en_deb):
        stats["files_en"] += 1
        de_page = german.pop(rel, None)
        if de_page is None:
            stats["files_unpaired_en"] += 1
            continue
        seen += 1
        stats["files_paired"] += 1
        stats[f"files_paired.{manual.name}"] += 1
        before = stats["pairs"]
        for pair in page_pairs(de_page, parse_page(content, f"{en_deb}:{rel}"), f"{manual.name}/{rel}",
                               stats, align_stats):
            stats["pairs"] += 1
            stats[f"pairs_{pair.kind}"] += 1
            yield pair
        stats[f"pairs.{manual.name}"] += stats["pairs"] - before
    if not seen:
        raise DataError(f"{en_deb}: no page matches the German edition of {manual.name}")
    stats["files_unpaired_de"] += len(german)


def read_pairs(files: Mapping[str, Path], stats: dict[str, int] | None = None,
               manuals: Sequence[Manual] = MANUALS) -> Iterator[Pair]:
    """Sentence and phrase pairs of every manual in `manuals`; `stats` gets the counters (see the module doc):
    files_de/files_en/files_paired (and per manual), sections_matched/mismatched, blocks (kept block pairs),
    dropped_* by reason, pairs, pairs_sentence/pairs_phrase (and pairs per manual), align_* from the aligner."""
    counts: Counter = Counter()
    align_stats = AlignStats()
    try:
        for manual in manuals:
            yield from manual_pairs(manual, files, counts, align_stats)
    finally:
        finish_stats(counts, align_stats, stats)
