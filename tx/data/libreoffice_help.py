"""LibreOffice's offline help in German and English (Debian `libreoffice-help-de`, `libreoffice-help-en-us`).

Format: each package holds the help as static HTML pages generated from the same .xhp sources,
usr/share/libreoffice/help/<lang>/text/<module>/<page>.html with <lang> = "de" or "en-US" (plus a few .js
files, skipped). Every translatable paragraph of a page is an element with the id of its source paragraph,
identical in both languages: <h1 id="hd_id3152887">, <p id="par_id3154254" class="paragraph">, table cells
<td><p id="par_id..." class="tablecontentintable">. The XSL drops the id of some elements (paragraphs in note
boxes, code listings, titles of linked pages), but emits them in the same order in both languages.

Pairing rule: (page path relative to the language folder, element id, n-th element with that id on the page:
a page may embed the same paragraph twice, once per OS variant); the elements without id by their position
among those, only where both pages have the same tag sequence of them (all 2561 pages but 6 in 7.4.7).
No sentence heuristic is needed at that level; inside a paired paragraph the sentences are aligned by
`align.align_block`. Page chrome (header, search box, debug footer) is skipped.

Markup: inline elements (<span class="emph">, <a>, <code>, ...) contribute their text; entities are decoded
by the parser (html.unescape rules). An inline OS switch (<span class="switchinline">) holds one hidden
<span> per variant ("Command" for macOS, "Ctrl" by default): only the default variant is kept, otherwise the
text would read "CommandCtrl+Z". A block nested in another block (a <p> inside a <td>) owns its text: the
outer block gets only the text outside it, so nothing is paired twice.

The block extraction and the drop rules (`html_blocks`, `block_pairs`) are shared with `gimp_help`, whose
help is the same kind of HTML paired by position instead of id.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from html.parser import HTMLParser
from pathlib import Path

from .align import AlignStats, align_block
from .debpkg import iter_deb_files
from .io import DataError, clean_field
from .records import Pair, kind_of

FEEDS = "libreoffice_help"
DE_KEY, EN_KEY = "libreoffice_help_de", "libreoffice_help_en"
HELP_ROOT = "usr/share/libreoffice/help/"
LANG_DIRS = {DE_KEY: "de", EN_KEY: "en-US"}

# --- HTML -> text blocks (shared with gimp_help) --------------------------------------------------------------
BLOCK_TAGS = frozenset("p h1 h2 h3 h4 h5 h6 li td th dt dd pre caption".split())
# Inline elements join their text to the neighbours without a space ("Strg</span>+Z"); any other element
# boundary inside a block (<br>, <div>, <img>) separates words.
INLINE_TAGS = frozenset("a abbr acronym b bdi bdo big cite code dfn em emph font i kbd mark q s samp small span "
                        "strong sub sup tt u var".split())
VOID_TAGS = frozenset("area base br col embed hr img input link meta param source track wbr".split())

Attrs = dict[str, str]
SkipRule = Callable[[str, Attrs, "tuple[str, Attrs] | None"], bool]  # (tag, attrs, parent (tag, attrs)) -> skip?


@dataclass
class Block:
    tag: str
    id: str  # the element's id attribute, "" when it has none
    parts: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        """Whitespace collapsed; a <pre> listing keeps one line per "\n" (its empty lines dropped)."""
        raw = "".join(self.parts)
        if self.tag == "pre":
            return "\n".join(line for line in map(clean_field, raw.split("\n")) if line)
        return clean_field(raw)


class _BlockParser(HTMLParser):
    """Collects the blocks of one page in document order (of their start tags). Subtrees the skip rule
    names (scripts, navigation, hidden variants) contribute nothing."""

    def __init__(self, skip: SkipRule):
        super().__init__(convert_charrefs=True)  # entities and character references decoded as html.unescape does
        self.blocks: list[Block] = []
        self._skip = skip
        self._stack: list[tuple[str, Attrs, Block | None, bool]] = []  # tag, attrs, block it opened, skipped
        self._open: list[Block] = []  # the blocks among the open elements, innermost last
        self._skipping = 0  # open skipped elements

    def _space(self) -> None:
        if self._open and not self._skipping:
            self._open[-1].parts.append(" ")

    def handle_starttag(self, tag: str, attr_list: list[tuple[str, str | None]]) -> None:
        if tag in VOID_TAGS:  # never closed in HTML: nothing to push
            self._space()
            return
        attrs = {k: v or "" for k, v in attr_list}
        parent = self._stack[-1][:2] if self._stack else None
        skipped = bool(self._skipping) or self._skip(tag, attrs, parent)
        block = None
        if skipped:
            self._skipping += 1
        elif tag in BLOCK_TAGS:
            self._space()  # the outer block's text before and after this one stays apart
            block = Block(tag, attrs.get("id", ""))
            self.blocks.append(block)
            self._open.append(block)
        elif tag not in INLINE_TAGS:
            self._space()
        self._stack.append((tag, attrs, block, skipped))

    def handle_endtag(self, tag: str) -> None:
        # Close up to the innermost open element of that name; a stray end tag is ignored.
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


def html_blocks(content: bytes, where: str, skip: SkipRule) -> list[Block]:
    """The text blocks of one UTF-8 HTML page, in document order; `where` names the page in errors."""
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError as e:
        raise DataError(f"{where}: not UTF-8 ({e.reason} at byte {e.start})") from None
    parser = _BlockParser(skip)
    parser.feed(text)
    parser.close()
    return parser.blocks


# --- block pairs -> sentence pairs (shared with gimp_help) ----------------------------------------------------
_LETTER = re.compile(r"[^\W\d_]")
_NOT_WORD = re.compile(r"[\W_]+")
# Sentence punctuation followed by more text: only such blocks go through the (slow) sentence splitter.
_MAYBE_SEVERAL = re.compile(r"[.!?…][\"'”“’»«)\]]*\s+\S")
# "click the icon <img>." and "<span>Run Macros </span>." leave a space before the final punctuation.
_SPACE_BEFORE_END = re.compile(r"\s+([.,;:!?]+)$")


def _letters_and_digits(text: str) -> str:
    return _NOT_WORD.sub("", text).casefold()


def _garbage(de: str, en: str) -> str:
    """Why a pair is format garbage ("empty", "no_letters": numbers and punctuation, "identical": untranslated
    or code), or "" when it is not. An untranslated block may still differ in its quotation marks
    („Multiply“ / “Multiply”) or spacing: "identical" compares letters and digits only."""
    if not de or not en:
        return "empty"
    if not (_LETTER.search(de) and _LETTER.search(en)):
        return "no_letters"
    if _letters_and_digits(de) == _letters_and_digits(en):
        return "identical"
    return ""


def _code_lines(de: str, en: str, stats: Counter) -> Iterator[tuple[str, str]]:
    """A code listing is paired line by line (translators translate its comments and strings; sentence
    splitting would cut it at "1." or "x.y"), only when both sides have the same number of lines."""
    de_lines, en_lines = de.split("\n"), en.split("\n")
    if len(de_lines) != len(en_lines):
        stats["dropped_code_line_count"] += 1
        return
    for de_line, en_line in zip(de_lines, en_lines, strict=True):
        if _garbage(de_line, en_line):
            stats["dropped_code_lines"] += 1
        else:
            yield de_line, en_line


def block_pairs(de: str, en: str, stats: Counter, align_stats: AlignStats,
                code: bool = False) -> Iterator[tuple[str, str]]:
    """The (de, en) pairs of one structurally paired block (`code`: a <pre> listing, one line per "\n"):
    format garbage dropped and counted in `stats`, multi-sentence blocks split and aligned by align_block."""
    if not de and not en:  # a container whose text is in its nested blocks (<li><p>, <td><p>)
        return
    stats["blocks"] += 1
    reason = _garbage(de, en)
    if reason:
        stats[f"dropped_{reason}"] += 1
        return
    if code:
        yield from _code_lines(de, en, stats)
        return
    de, en = _SPACE_BEFORE_END.sub(r"\1", de), _SPACE_BEFORE_END.sub(r"\1", en)
    if not (_MAYBE_SEVERAL.search(de) or _MAYBE_SEVERAL.search(en)):
        yield de, en
        return
    for s_de, s_en in align_block(de, en, align_stats):
        reason = _garbage(s_de, s_en)  # an untranslated sentence inside a translated block, a lone "1."
        if reason:
            stats[f"dropped_sentence_{reason}"] += 1
        else:
            yield s_de, s_en


def finish_stats(stats: Counter, align_stats: AlignStats, out: dict[str, int] | None) -> None:
    """Copy the counters into the caller's dict; the aligner's under an "align_" prefix."""
    if out is None:
        return
    out.update(stats)
    out.update({f"align_{k}": v for k, v in asdict(align_stats).items()})


def make_pair(de: str, en: str, source: str, doc: str, stats: Counter) -> Pair:
    kind = kind_of(de, en)
    stats["pairs"] += 1
    stats[f"pairs_{kind}"] += 1
    return Pair(de, en, kind, source=source, doc=doc)


def package_pages(files: Mapping[str, Path], key: str, root: str, stats: Counter) -> Iterator[tuple[str, bytes]]:
    """(path relative to `root`, content) of the .html pages of one package; counts them as files_<key>."""
    if key not in files:
        raise DataError(f"no file given for source {key!r} (have: {', '.join(files) or 'none'})")
    for path, content in iter_deb_files(files[key], root + "*.html"):
        stats[f"files_{key}"] += 1
        yield path[len(root):], content


def paired_pages(files: Mapping[str, Path], keys: tuple[str, str], roots: tuple[str, str], parse: Callable,
                 stats: Counter) -> Iterator[tuple[str, object, object]]:
    """(relative path, parsed German page, parsed English page) of every page both packages hold, in German
    package order; `parse(content, where)` reads one page. The English pages are parsed first and kept (a few
    MB of text); the German ones are streamed. Counts files_only_de / files_only_en / files_paired."""
    (de_key, en_key), (de_root, en_root) = keys, roots
    english = {rel: parse(c, f"{files.get(en_key)}:{en_root}{rel}")
               for rel, c in package_pages(files, en_key, en_root, stats)}
    de_pages = set()
    for rel, content in package_pages(files, de_key, de_root, stats):
        de_pages.add(rel)
        if rel not in english:
            stats["files_only_de"] += 1
            continue
        yield rel, parse(content, f"{files[de_key]}:{de_root}{rel}"), english[rel]
    stats["files_only_en"] = len(english.keys() - de_pages)


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
class Page:
    paragraphs: dict[tuple[str, int], tuple[str, str]]  # {(element id, occurrence): (tag, text)}; id "": no id
    anonymous_tags: tuple[str, ...]  # the tag names of the elements without id, in order


def page_paragraphs(content: bytes, where: str) -> Page:
    out: dict[tuple[str, int], tuple[str, str]] = {}
    seen: Counter = Counter()
    anonymous_tags = []
    for block in html_blocks(content, where, _skip):
        if not block.id:
            anonymous_tags.append(block.tag)
        out[(block.id, seen[block.id])] = (block.tag, block.text)
        seen[block.id] += 1
    return Page(out, tuple(anonymous_tags))


def paired_paragraphs(de: Page, en: Page, stats: Counter) -> Iterator[tuple[str, str, bool]]:
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
