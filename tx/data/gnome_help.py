"""GNOME's translated help: German and English editions of the same Mallard or DocBook pages.

Sources (Debian bookworm): `gnome-user-docs` (the desktop help and the system administrators' guide),
`gnome-devel-docs` (the HIG, the platform overview, the developer demos and guidelines) and application packages
that ship their own help (evolution, evince, orca, gnome-terminal, ...; see SOURCES). Each package holds every
language of its help: /usr/share/help/C/<doc>/ is the English original, /usr/share/help/de/<doc>/ the German
edition. Only C and de are read. The 20 packages are the best of ~60 surveyed by pairs per download MB (47 MB in
all); left out: packages whose help has no German edition (gnome-maps, gnome-contacts, gnome-disk-utility, ...),
help too small for its package (the games with large artwork, zenity, gnote, geary), and eog, whose pinned build
is served only from the security archive, which the fallback download URL cannot reach.

Format: the German edition is made by itstool at build time from the English sources and the translators' PO
file: every translatable unit (a title, a paragraph, a list item's paragraph, a table cell's paragraph) is
replaced by its msgstr, so both files have the same XML structure. A unit without a translation keeps its English
text (such blocks are dropped below). Mallard topics are `*.page` (namespace http://projectmallard.org/1.0/,
plus the if:, its:, ui: helpers); DocBook 4 manuals are `index.docbook` plus the `*.xml` files it pulls in.
Pages are parsed with xml.etree: entities from the DocBook DTD (which is never loaded) come from the HTML entity
table, entities declared in a document's internal subset are expanded by expat, and external entities
(`<!ENTITY gad SYSTEM "gad.xml">`) are expanded from the same folder before parsing: itstool writes the German
edition of such a manual as one file, while the English one stays split.

Blocks: Mallard <title>, <subtitle>, <desc>, <p>; DocBook <title>, <para>, <simpara>, <term>, <entry>, ...
(`Dialect.blocks`), in document order. Inline markup gives its text (<gui>, <key>, <link>, <em>, <cmd>, inline
<code>), with the separators a renderer draws: "Ctrl+Q" for <keyseq>/<keycombo>, "Files ▸ Open" for
<guiseq>/<menuchoice>. A block nested in another (a DocBook footnote in a paragraph) owns its text. Nothing comes
from: listings (<screen>, <programlisting>, a <code> outside any paragraph), <media> outside a paragraph, editorial
<comment>/<remark>, index terms, XIncludes, and page metadata (<info> and DocBook's *info: credits, revisions,
licence) except its titles, <desc> and <abstract>. Inside a paragraph a <media> gives its fallback text ("settings"
for a gear icon), or nothing when it sits beside its label (<gui><media/> Wi-Fi</gui>). Text the renderer makes up
leaves the mark AUTOTEXT: a link filled in with its target's title (`<link xref="x"/>`, `<xref linkend="x"/>`), an
image standing for a word ("bars above it (<media/>)"). A sentence holding it is dropped, the rest of its block kept.

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
from dataclasses import dataclass, field
from html.entities import name2codepoint
from itertools import pairwise
from pathlib import Path

from .align import AlignStats, align_block
from .debpkg import iter_deb_files
from .io import DataError, clean_field, normalize
from .records import Pair, kind_of
from .sources import sources_for

FEEDS = "gnome_help"
HELP_ROOT = "usr/share/help/"
LANGS = ("C", "de")  # the English original and the German edition; the other languages are not read
PAGE_SUFFIXES = (".page", ".docbook", ".xml")

MALLARD_NS = "http://projectmallard.org/1.0/"
# Elements of these namespaces hold content: Mallard, its conditionals (<if:choose>: every branch is shown in
# some environment, and itstool translates each), DocBook 4 (none) and 5.
CONTENT_NS = frozenset([MALLARD_NS, "http://projectmallard.org/if/1.0/", "", "http://docbook.org/ns/docbook"])
# Stands for text the renderer makes up (a linked page's title): it is in no source file, so a sentence that
# holds it is incomplete in both languages. A private-use character: clean_field keeps it, no page has it.
AUTOTEXT = "\ue000"
# The DocBook DTD is not loaded: its character entities (&mdash;, &nbsp;) are HTML's.
ENTITIES = {name: chr(code) for name, code in name2codepoint.items()}
LETTER = re.compile(r"[^\W\d_]")

# --- dialects -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Dialect:
    blocks: frozenset[str]  # elements whose text is one translation unit
    skip: frozenset[str]  # subtrees that give nothing, wherever they are
    skip_outside: frozenset[str]  # skipped outside a block (a listing, a figure); inside one they are inline
    info: frozenset[str]  # metadata containers: only their `info_keep` children are read
    info_keep: frozenset[str]
    sections: frozenset[str]  # elements whose id cuts the page
    seqs: dict[str, str]  # inline sequences whose children the renderer joins with a separator


MALLARD = Dialect(
    blocks=frozenset("title subtitle desc p".split()),
    # comment: editors' notes, not shown; include/fallback: XInclude of legal.xml or code samples
    skip=frozenset("comment screen include fallback".split()),
    skip_outside=frozenset("code media".split()),
    info=frozenset(["info"]),
    info_keep=frozenset("title desc".split()),
    sections=frozenset(["section"]),
    seqs={"keyseq": "+", "guiseq": " ▸ "},
)
DOCBOOK = Dialect(
    blocks=frozenset("title subtitle para simpara term entry member bridgehead refpurpose attribution "
                     "caption".split()),
    skip=frozenset("indexterm remark comment programlisting screen synopsis cmdsynopsis funcsynopsis "
                   "literallayout mediaobject inlinemediaobject graphic inlinegraphic include fallback".split()),
    skip_outside=frozenset(),
    info=frozenset("bookinfo articleinfo chapterinfo sectioninfo sect1info sect2info sect3info sect4info "
                   "sect5info refentryinfo refsect1info appendixinfo prefaceinfo partinfo info".split()),
    info_keep=frozenset("title subtitle abstract".split()),
    sections=frozenset("chapter appendix preface part article sect1 sect2 sect3 sect4 sect5 section "
                       "simplesect refsect1 refsect2 refsect3 glossary glossdiv qandadiv".split()),
    seqs={"keycombo": "+", "menuchoice": " ▸ "},
)


def _bare_media(el: ET.Element) -> bool:
    """A Mallard <media> with no fallback text: an image only."""
    return _local(el.tag) == (MALLARD_NS, "media") and not "".join(el.itertext()).strip()


def _local(tag: object) -> tuple[str, str]:
    """(namespace, local name) of an element tag; comments and processing instructions give ("", "")."""
    if not isinstance(tag, str):
        return "", ""
    if tag.startswith("{"):
        ns, _, name = tag[1:].partition("}")
        return ns, name
    return "", tag


# --- XML -> blocks --------------------------------------------------------------------------------------------
@dataclass
class Block:
    shape: str  # "parent/tag": what itstool keeps the same in both editions
    parts: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return clean_field("".join(self.parts))


@dataclass
class Page:
    blocks: list[Block] = field(default_factory=list)
    # (section id, index of its first block, index after its last block), in document order
    sections: list[tuple[str, int, int]] = field(default_factory=list)


class _Walker:
    """Blocks of one parsed page. `block` is the open block text goes to (None outside blocks)."""

    def __init__(self, dialect: Dialect) -> None:
        self.d = dialect
        self.page = Page()

    def element(self, el: ET.Element, parent: str, block: Block | None) -> None:
        ns, tag = _local(el.tag)
        if not tag or tag in self.d.skip or (ns not in CONTENT_NS and block is None):
            # other vocabularies outside a paragraph (its:rules, tt: captions, facet: tags) give nothing
            return
        if tag in self.d.info:
            for child in el:
                if _local(child.tag)[1] in self.d.info_keep and child.get("type") != "sort":
                    self.element(child, tag, None)
            return
        if block is None and tag in self.d.skip_outside:
            return
        if block is not None and tag in self.d.seqs and len(el):
            self._sequence(el, block)
            return
        start = len(self.page.blocks)
        opened = tag in self.d.blocks or (tag == "glossterm" and parent == "glossentry")
        if opened:
            if block is not None:
                block.parts.append(" ")  # the outer block's text before and after this one stays apart
            block = Block(f"{parent}/{tag}")
            self.page.blocks.append(block)
        elif block is not None:
            self._inline_start(el, tag, block)
        self._children(el, tag, block, opened)
        if tag in self.d.sections and el.get("id"):
            self.page.sections.append((el.get("id"), start, len(self.page.blocks)))

    def _children(self, el: ET.Element, tag: str, block: Block | None, opened: bool = False) -> None:
        if block is not None and el.text:
            block.parts.append(el.text)
        for child in el:
            if block is not None and _bare_media(child) and (opened or not "".join(el.itertext()).strip()):
                # an icon standing for a word ("bars above it (<media/>)", a button shown as its icon) leaves a
                # gap in both languages; an icon beside its label (<gui><media/> Wi-Fi</gui>) is decoration
                block.parts.append(AUTOTEXT)
            self.element(child, tag, block)
            if block is not None and child.tail:
                block.parts.append(child.tail)

    def _inline_start(self, el: ET.Element, tag: str, block: Block) -> None:
        """What an inline element gives besides its content: a link the renderer fills in gives AUTOTEXT (a
        URL link shows its URL)."""
        if len(el) or (el.text or "").strip():
            return
        if tag in ("link", "xref", "ulink"):
            url = el.get("href") or el.get("url")
            block.parts.append(url if url else AUTOTEXT)

    def _sequence(self, el: ET.Element, block: Block) -> None:
        """<keyseq><key>Ctrl</key><key>Q</key></keyseq> -> "Ctrl+Q": the children joined by the separator the
        renderer draws; the whitespace between them is layout."""
        pieces = []
        for child in el:
            sub = Block("")
            self.element(child, "", sub)
            pieces.append("".join(sub.parts).strip())
        block.parts.append(self.d.seqs[_local(el.tag)[1]].join(p for p in pieces if p))


# --- reading files --------------------------------------------------------------------------------------------
_SYSTEM_ENTITY = re.compile(r"""<!ENTITY\s+([\w.-]+)\s+SYSTEM\s+["']([^"']+)["']\s*>""")
_PROLOG = re.compile(r"^\s*(?:<\?xml[^>]*\?>\s*)?(?:<!DOCTYPE[^\[>]*(?:\[.*?\])?\s*>)?", re.S)


def expand_system_entities(text: str, siblings: Mapping[str, bytes]) -> str:
    """`text` with each external entity declared in its internal subset (`<!ENTITY gad SYSTEM "gad.xml">`)
    replaced by that file's content (prolog stripped), read from `siblings` (same folder, same language).
    Expat does not read external entities; an entity whose file is missing stays and fails the parse."""
    for name, href in _SYSTEM_ENTITY.findall(text):
        content = siblings.get(href)
        if content is None:
            continue
        body = _PROLOG.sub("", content.decode("utf-8", "replace"), count=1)
        text = text.replace(f"&{name};", body)
        text = re.sub(rf"<!ENTITY\s+{re.escape(name)}\s+SYSTEM\s+[^>]*>", "", text)
    return text


def parse_page(content: bytes, siblings: Mapping[str, bytes] | None = None) -> Page:
    """Blocks and sections of one Mallard or DocBook file. Raises ET.ParseError (or UnicodeDecodeError)."""
    text = content.decode("utf-8-sig")
    if "SYSTEM" in text and siblings:
        text = expand_system_entities(text, siblings)
    parser = ET.XMLParser()
    parser.entity.update(ENTITIES)
    parser.feed(text)
    root = parser.close()
    ns, _ = _local(root.tag)
    walker = _Walker(MALLARD if ns == MALLARD_NS else DOCBOOK)
    walker.element(root, "", None)
    return walker.page


# --- block pairing --------------------------------------------------------------------------------------------
def _shapes(blocks: Sequence[Block]) -> list[str]:
    return [b.shape for b in blocks]


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
        stats[f"files_unparsable.{where}"] += 1  # the manifest names the page (none in the packages read)
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
                                f"run `python -m tx.data fetch --only {key}`")
            yield from package_pairs(key, Path(files[key]), counts, align_stats)
    finally:
        if stats is not None:
            stats.update(counts)
            stats.update({f"align_{k}": v for k, v in vars(align_stats).items()})
