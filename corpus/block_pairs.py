"""A pair of structurally aligned blocks -> clean sentence pairs, with the reader counters behind them.

Shared by the LibreOffice help, GIMP help and gettext catalog readers. A block pair is dropped as format garbage
when a side is empty, when either side has no letter (numbers, punctuation) or when both sides hold the same
letters and digits (untranslated text, code). A block of several sentences is split and aligned by
`align.align_block`, and each sentence pair faces the same checks; a code listing is paired line by line.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict

from .align import AlignStats, align_block
from .records import Pair, kind_of

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
    """Copy a reader's counters into the caller's dict (every documentation and catalog reader ends with this);
    the aligner's under an "align_" prefix."""
    if out is None:
        return
    out.update(stats)
    out.update({f"align_{k}": v for k, v in asdict(align_stats).items()})


def make_pair(de: str, en: str, source: str, doc: str, stats: Counter) -> Pair:
    kind = kind_of(de, en)
    stats["pairs"] += 1
    stats[f"pairs_{kind}"] += 1
    return Pair(de, en, kind, source=source, doc=doc)

