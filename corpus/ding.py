"""The Ding German-English dictionary (Debian `trans-de-en`): sentence, phrase and word pairs."""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from .debpkg import read_deb_member
from .io import DataError, collapse_spaces, normalize
from .records import Pair
from .sources import SOURCES


def read_ding_lines(deb: str | Path) -> list[str]:
    raw = read_deb_member(deb, SOURCES["ding"].member)
    try:
        return raw.decode("utf-8").split("\n")
    except UnicodeDecodeError as e:
        raise DataError(f"{deb}: dictionary is not UTF-8 ({e.reason} at byte {e.start})") from None


# Annotations: {f} {pl} {vt} (grammar), [Br.] [ugs.] [übtr.] (usage), <Aalmolch> (spelling variants),
# /Abk./ /GFK/ (abbreviations, opened after a space), (...) (clarifications and optional words).
_BRACKETED = re.compile(r"\{[^{}]*\}|\[[^\[\]]*\]|<[^<>]*>|\([^()]*\)")
_BRACKET_CHARS = re.compile(r"[{}\[\]<>()]")
_OPEN_CLOSE = ("{}", "[]", "<>", "()")
_SLASH_ABBR = re.compile(r"(?:(?<=\s)|^)/[^/\s][^/]*?/(?=[\s.,;:!?]|$)")
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([.,;:!?])")
_SENTENCE_END = re.compile(r"[.!?][\"'“”‘’»«)]*$")
# A final "word." that marks a dictionary form ("to ask sb.", "etw. tun"), not the end of a sentence.
DICTIONARY_ENDINGS = frozenset("""sb. sth. so. sb.'s sth.'s sb's sth's etw. jdn. jdm. jds. jd. jmd. jmdn. jmdm.
jmds. o.ä. o. u.ä. usw. etc. u.a. e.g. z.b. z. i.e. d.h. ca. vs. adj. adv.""".split())


def clean_ding(text: str) -> str:
    """Strip Ding annotations and normalise spacing; the result may be empty."""
    n = 1
    while n:  # innermost brackets first, until none is left (handles nesting)
        text, n = _BRACKETED.subn(" ", text)
    if "/" in text:
        text = _SLASH_ABBR.sub(" ", text)
    text = collapse_spaces(text)
    return _SPACE_BEFORE_PUNCT.sub(r"\1", text)


def split_outside_brackets(text: str, sep: str) -> list[str]:
    """`text.split(sep)`, but a separator inside {...} [...] <...> (...) does not split ("{bent; bent}")."""
    parts = text.split(sep)
    if len(parts) == 1 or not _BRACKET_CHARS.search(text):
        return parts
    out: list[str] = []
    depth = 0
    for part in parts:
        if depth > 0:
            out[-1] += sep + part
        else:
            out.append(part)
        depth += sum(part.count(o) - part.count(c) for o, c in _OPEN_CLOSE)
    return out


def first_alternative(text: str) -> str:
    """The part before the first top-level "; " (alternatives are separated by "; ")."""
    i = text.find("; ")
    if i < 0 or not _BRACKET_CHARS.search(text, 0, i):
        return text if i < 0 else text[:i]
    return split_outside_brackets(text, "; ")[0]


def is_sentence(text: str) -> bool:
    """Ends in . ? ! (closing quotes allowed) and is not a dictionary form ending in sb./sth./etw./jdn./...."""
    if not _SENTENCE_END.search(text):
        return False
    last = text.split()[-1].lower()
    return not (any(part in DICTIONARY_ENDINGS for part in last.split("/")) or text.endswith(("...", "…")))



@dataclass
class DingStats:
    lines: int = 0
    comments: int = 0
    entries: int = 0
    no_separator: int = 0  # non-comment lines without " :: "
    misaligned: int = 0  # lines whose " | " counts differ across "::" (skipped)
    subentries: int = 0  # aligned sub-entries
    empty: int = 0  # a side empty after stripping annotations
    unbalanced: int = 0  # a bracket left over after stripping
    short: int = 0  # not sentences and < 3 words on a side (kept as word pairs when words=True)
    word_pairs: int = 0  # short pairs from every alternative, before deduplication
    sentence_pairs: int = 0  # before deduplication
    phrase_pairs: int = 0
    duplicates: int = 0
    sentences: int = 0  # unique
    phrases: int = 0
    words: int = 0


MAX_ALTERNATIVES = 4  # word entries: alternatives used per side ("Haus; Gebäude :: house; building")


def _word_pairs(de_sub: str, en_sub: str) -> list[tuple[str, str]]:
    """Every alternative of a short sub-entry paired with the other side's first alternative (a star, not the
    cross product: alternatives are synonyms, not aligned with each other)."""
    de_alts = [clean_ding(a) for a in split_outside_brackets(de_sub, "; ")[:MAX_ALTERNATIVES]]
    en_alts = [clean_ding(a) for a in split_outside_brackets(en_sub, "; ")[:MAX_ALTERNATIVES]]
    de_alts = [a for a in de_alts if a and not _BRACKET_CHARS.search(a)]
    en_alts = [a for a in en_alts if a and not _BRACKET_CHARS.search(a)]
    if not de_alts or not en_alts:
        return []
    return [(d, en_alts[0]) for d in de_alts] + [(de_alts[0], e) for e in en_alts[1:]]


def parse_ding(lines: Iterable[str], min_phrase_words: int = 3, words: bool = False) -> tuple[list[Pair], DingStats]:
    """Sentence and phrase pairs out of Ding lines, deduplicated by their normalised (de, en); with `words`,
    also the 1-2-word entries (kind "word"), each alternative as its own pair."""
    stats = DingStats()
    pairs: list[Pair] = []
    seen: set[tuple[str, str]] = set()
    for line in lines:
        line = line.rstrip("\r\n")
        if not line.strip():
            continue
        stats.lines += 1
        if line.startswith("#"):
            stats.comments += 1
            continue
        stats.entries += 1
        if " :: " not in line:
            stats.no_separator += 1
            continue
        de_side, en_side = line.split(" :: ", 1)
        de_subs, en_subs = split_outside_brackets(de_side, " | "), split_outside_brackets(en_side, " | ")
        if len(de_subs) != len(en_subs):
            stats.misaligned += 1
            continue
        stats.subentries += len(de_subs)
        for de_sub, en_sub in zip(de_subs, en_subs, strict=True):
            de = clean_ding(first_alternative(de_sub))
            en = clean_ding(first_alternative(en_sub))
            if not de or not en:
                stats.empty += 1
                continue
            if _BRACKET_CHARS.search(de) or _BRACKET_CHARS.search(en):
                stats.unbalanced += 1
                continue
            if is_sentence(de) and is_sentence(en):
                kind = "sentence"
                stats.sentence_pairs += 1
            elif len(de.split()) >= min_phrase_words and len(en.split()) >= min_phrase_words:
                kind = "phrase"
                stats.phrase_pairs += 1
            else:
                stats.short += 1
                if words:
                    for d, e in _word_pairs(de_sub, en_sub):
                        stats.word_pairs += 1
                        key = (normalize(d), normalize(e))
                        if key in seen:
                            stats.duplicates += 1
                            continue
                        seen.add(key)
                        pairs.append(Pair(d, e, "word", "ding", "ding"))
                        stats.words += 1
                continue
            key = (normalize(de), normalize(en))
            if key in seen:
                stats.duplicates += 1
                continue
            seen.add(key)
            pairs.append(Pair(de, en, kind, "ding", "ding"))
            if kind == "sentence":
                stats.sentences += 1
            else:
                stats.phrases += 1
    return pairs, stats


DING_RULES = [
    "one entry per line 'German :: English'; lines starting with '#' are comments",
    "sub-entries separated by ' | ' are aligned across '::'; lines whose counts differ are skipped",
    "alternatives inside a sub-entry are separated by '; ': the first one on each side is kept",
    "annotations stripped: {...} [...] <...> (...) and /.../ opened after a space; whitespace normalised",
    "sentence: both sides end in . ? ! and the last word is not a dictionary form (sb. sth. etw. jdn. jdm. ...)",
    "phrase: not a sentence pair, at least 3 words on each side",
    "word: any shorter sub-entry; each of its first 4 alternatives paired with the other side's first "
    "alternative (alternatives are synonyms, so a star rather than the cross product)",
    "pairs deduplicated by normalised (de, en)",
    "test/valid: sentence pairs only, whole groups of identical normalised German in sha1 order, without "
    "'/' alternatives or '…' placeholders; a valid pair shares no English side with test",
    "train: every other pair, minus any pair sharing a normalised German or English side with valid/test",
]

