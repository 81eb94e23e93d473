"""Mallard and DocBook help pages (XML) -> `documents.Page`: the text blocks of a page and its sections.

Mallard topics are `*.page` (namespace http://projectmallard.org/1.0/, plus the if:, its:, ui: helpers); DocBook
4 manuals are `index.docbook` plus the `*.xml` files it pulls in. Pages are parsed with xml.etree: entities from
the DocBook DTD (which is never loaded) come from the HTML entity table, entities declared in a document's
internal subset are expanded by expat, and external entities (`<!ENTITY gad SYSTEM "gad.xml">`) are expanded
from the files of the same folder before parsing.

Blocks: Mallard <title>, <subtitle>, <desc>, <p>; DocBook <title>, <para>, <simpara>, <term>, <entry>, ...
(`Dialect.blocks`), in document order; a block's tag is qualified by its parent's ("item/p"). Inline markup
gives its text (<gui>, <key>, <link>, <em>, <cmd>, inline <code>), with the separators a renderer draws:
"Ctrl+Q" for <keyseq>/<keycombo>, "Files ▸ Open" for <guiseq>/<menuchoice>. A block nested in another (a
DocBook footnote in a paragraph) owns its text. Nothing comes from: listings (<screen>, <programlisting>, a
<code> outside any paragraph), <media> outside a paragraph, editorial <comment>/<remark>, index terms,
XIncludes, and page metadata (<info> and DocBook's *info: credits, revisions, licence) except its titles,
<desc> and <abstract>. Inside a paragraph a <media> gives its fallback text ("settings" for a gear icon), or
nothing when it sits beside its label (<gui><media/> Wi-Fi</gui>). Text the renderer makes up leaves the mark
AUTOTEXT: a link filled in with its target's title (`<link xref="x"/>`, `<xref linkend="x"/>`), an image
standing for a word ("bars above it (<media/>)").

Sections: every element the dialect names (Mallard <section>, DocBook's sect1/chapter/...) that has an id.
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from dataclasses import dataclass
from html.entities import name2codepoint

from .documents import Block, Page

MALLARD_NS = "http://projectmallard.org/1.0/"
# Elements of these namespaces hold content: Mallard, its conditionals (<if:choose>: every branch is shown in
# some environment, and itstool translates each), DocBook 4 (none) and 5.
CONTENT_NS = frozenset([MALLARD_NS, "http://projectmallard.org/if/1.0/", "", "http://docbook.org/ns/docbook"])
# Stands for text the renderer makes up (a linked page's title): it is in no source file, so a sentence that
# holds it is incomplete in both languages. A private-use character: clean_field keeps it, no page has it.
AUTOTEXT = "\ue000"
# The DocBook DTD is not loaded: its character entities (&mdash;, &nbsp;) are HTML's.
ENTITIES = {name: chr(code) for name, code in name2codepoint.items()}

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
