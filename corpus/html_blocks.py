"""HTML help pages -> `documents.Page`: the text blocks of a page in document order, and the ids that cut it.

Shared by the readers of generated HTML help (LibreOffice, GIMP, the Debian manuals); each names what it skips.

Blocks: the text of every p, h1-h6, li, dt, dd, td, th, caption and pre element (and of a <div> whose class a
reader names, such as Asciidoctor's captions), in the document order of their start tags. Inline elements
(<code>, <em>, <a>, ...) give their text joined to their neighbours without a space ("Strg</kbd>+Z"); any other
element boundary inside a block (<br>, <div>, <img>) separates words. A block nested in another (a <p> inside
a <td>) owns its text: the outer block gets only the text outside it, so nothing is paired twice. Entities are
decoded as html.unescape does. Subtrees the reader's skip rule names (scripts, navigation) give neither text
nor anchors.

Anchors: every `id` (and `name` on <a>) outside skipped subtrees, with the index of the first block after it.
DocBook puts a heading's id inside it (<h2><a id="x"/>Title</h2>): an id at the very start of the last block
opened cuts before that block, so a heading opens its own section.

HTML's implied end tags are honoured, since pages from older generators rely on them: a block-starting tag
closes an open <p>, and <body> closes an open <head>.
"""
from __future__ import annotations

from collections.abc import Callable
from html.parser import HTMLParser

from .documents import Block, Page
from .io import DataError

BLOCK_TAGS = frozenset("p h1 h2 h3 h4 h5 h6 li dt dd td th caption pre".split())
HEADING_TAGS = frozenset("h1 h2 h3 h4 h5 h6 caption".split())
INLINE_TAGS = frozenset("a abbr acronym b bdi bdo big cite code dfn em emph font i kbd mark q s samp small span "
                        "strong sub sup tt u var".split())
VOID_TAGS = frozenset("area base br col embed hr img input link meta param source track wbr".split())
# The tags that close an open <p> (HTML's implied end tag).
CLOSES_P = BLOCK_TAGS | frozenset("div ul ol dl table blockquote hr section".split())

Attrs = dict[str, str]
SkipRule = Callable[[str, Attrs, "tuple[str, Attrs] | None"], bool]  # (tag, attrs, parent (tag, attrs)) -> skip?


class _PageParser(HTMLParser):
    """Blocks and anchors of one page; see the module doc."""

    def __init__(self, skip: SkipRule, block_divs: frozenset[str]) -> None:
        super().__init__(convert_charrefs=True)  # entities and character references decoded as html.unescape does
        self.page = Page()
        self._skip = skip
        self._block_divs = block_divs
        self._stack: list[tuple[str, Attrs, Block | None, bool]] = []  # open elements: tag, attrs, block, skipped
        self._open: list[Block] = []  # the blocks among the open elements, innermost last
        self._skipping = 0  # open skipped elements

    def _is_block(self, tag: str, attrs: Attrs) -> bool:
        return tag in BLOCK_TAGS or (tag == "div" and attrs.get("class") in self._block_divs)

    def _anchor_position(self) -> int:
        """Where an id cuts the page: before the last block opened when the id stands at its very start."""
        blocks = self.page.blocks
        if self._open and self._open[-1] is blocks[-1] and not "".join(blocks[-1].parts).strip():
            return len(blocks) - 1
        return len(blocks)

    def _space(self) -> None:
        if self._open and not self._skipping:
            self._open[-1].parts.append(" ")

    def handle_starttag(self, tag: str, attr_list: list[tuple[str, str | None]]) -> None:
        attrs = {k: v or "" for k, v in attr_list}
        if tag in CLOSES_P and self._stack and self._stack[-1][0] == "p":
            self.handle_endtag("p")
        if tag == "body":  # ends a <head> left open (HTML allows omitting </head>), which would skip the page
            self.handle_endtag("head")
        parent = self._stack[-1][:2] if self._stack else None
        skipped = bool(self._skipping) or self._skip(tag, attrs, parent)
        if not skipped:
            anchor = attrs.get("id") or (attrs.get("name") if tag == "a" else "")
            if anchor:
                self.page.anchors.append((anchor, self._anchor_position()))
        if tag in VOID_TAGS:  # never closed in HTML: nothing to push
            self._space()
            return
        block = None
        if skipped:
            self._skipping += 1
        elif self._is_block(tag, attrs):
            self._space()  # the outer block's text before and after this one stays apart
            title = tag in HEADING_TAGS or "title" in attrs.get("class", "").split()
            block = Block(tag, attrs.get("id", ""), title)
            self.page.blocks.append(block)
            self._open.append(block)
        elif tag not in INLINE_TAGS:
            self._space()
        self._stack.append((tag, attrs, block, skipped))

    def handle_endtag(self, tag: str) -> None:
        # close up to the innermost open element of that name; a stray end tag is ignored
        for depth in range(len(self._stack) - 1, -1, -1):
            if self._stack[depth][0] == tag:
                break
        else:
            return
        while len(self._stack) > depth:
            _, _, block, skipped = self._stack.pop()
            if skipped:
                self._skipping -= 1
            if block is not None:
                self._open.pop()
        if tag not in INLINE_TAGS:
            self._space()

    def handle_data(self, data: str) -> None:
        if self._open and not self._skipping:
            self._open[-1].parts.append(data)


def parse_html(content: bytes, where: str, skip: SkipRule, block_divs: frozenset[str] = frozenset()) -> Page:
    """The blocks and anchors of one UTF-8 HTML page; `where` names the page in errors. `skip(tag, attrs,
    parent)` names the subtrees that give nothing, `block_divs` the classes of <div> elements that are blocks."""
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise DataError(f"{where}: not UTF-8 ({e.reason} at byte {e.start})") from None
    parser = _PageParser(skip, block_divs)
    parser.feed(text)
    parser.close()
    return parser.page
