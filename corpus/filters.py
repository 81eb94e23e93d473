"""Corpus-level filters applied to every pair that is not hand-curated dictionary data.

Each filter is a named predicate: the builder counts what each one removes per source (the manifest's
"filters" table), in the order listed in `PAIR_FILTERS`. Deduplication and decontamination work on keys
across the whole corpus and live in their own functions.
"""
from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator

from .io import normalize
from .records import Pair

MAX_WORDS = 120  # longer pairs are almost always mis-aligned blocks, and exceed the model's 128-token source
MAX_CHAR_RATIO = 2.5  # German/English character-length ratio outside [1/r, r] means a bad alignment
RATIO_MIN_CHARS = 15  # below this length the ratio is noise ("OK" / "Okay")
LANGID_MIN_WORDS = 4  # language identification is unreliable below this many words

_PLACEHOLDER = re.compile(r"%(?:\([^)]*\))?[-+ #0-9.]*[a-zA-Z]|\{[^{}]*\}|\$\{?[A-Za-z_][A-Za-z_0-9]*\}?|"
                          r"<[^<>]+>|&[a-z]+;|https?://\S+|\S+@\S+\.\w+|[\w./-]+\.(?:html?|png|svg|xml|txt)\b")
_LETTERS = re.compile(r"[^\W\d_]{2,}")


def words_left(text: str) -> int:
    """Words of two or more letters once placeholders, markup, URLs and file names are removed."""
    return len(_LETTERS.findall(_PLACEHOLDER.sub(" ", text)))


def markup_only(p: Pair) -> bool:
    """Nothing translatable left on a side: placeholders, tags, numbers, punctuation, file names."""
    return words_left(p.de) == 0 or words_left(p.en) == 0


def untranslated(p: Pair) -> bool:
    """The same text on both sides (a catalog entry left in English, a code token)."""
    return normalize(p.de) == normalize(p.en)


_FRAGMENT = re.compile(r"(?:\s[.,;:!?]|[(\[/-])$|^[.,;:!?)\]]")


def fragment(p: Pair) -> bool:
    """A side cut by the sentence splitter at a dotted name (".py", ".uno:"): "... in einer ." / "a ." """
    return bool(_FRAGMENT.search(p.de) or _FRAGMENT.search(p.en))


def too_long(p: Pair) -> bool:
    return len(p.de.split()) > MAX_WORDS or len(p.en.split()) > MAX_WORDS


def bad_length_ratio(p: Pair) -> bool:
    a, b = len(p.de), len(p.en)
    if max(a, b) < RATIO_MIN_CHARS:
        return False
    return max(a, b) > MAX_CHAR_RATIO * max(min(a, b), 1)


def non_latin(p: Pair) -> bool:
    """A side written mostly in another script (a catalog entry left in Greek, CJK examples in a manual)."""
    return _latin_share(p.de) < 0.8 or _latin_share(p.en) < 0.8


def _latin_share(text: str) -> float:
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return 1.0
    return sum(unicodedata.name(c, "").startswith("LATIN") for c in letters) / len(letters)


@functools.cache
def _identifier():
    """py3langid's shipped model (no download), restricted to German vs English with normalised probabilities."""
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    ident = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    ident.set_languages(["de", "en"])
    return ident


def language_of(text: str) -> str:
    return _identifier().classify(text)[0]


def wrong_language(p: Pair) -> bool:
    """German side not German or English side not English (only judged on sides of LANGID_MIN_WORDS+ words)."""
    for text, lang in ((p.de, "de"), (p.en, "en")):
        if words_left(text) >= LANGID_MIN_WORDS and language_of(_PLACEHOLDER.sub(" ", text)) != lang:
            return True
    return False


# In order: cheap structural checks first, language identification (the slow one) last.
PAIR_FILTERS: dict[str, Callable[[Pair], bool]] = {
    "markup_or_placeholders_only": markup_only,
    "untranslated": untranslated,
    "fragment": fragment,
    "too_long": too_long,
    "length_ratio": bad_length_ratio,
    "non_latin_script": non_latin,
    "wrong_language": wrong_language,
}


def apply_filters(pairs: Iterable[Pair], counts: dict[str, int]) -> Iterator[Pair]:
    """Pairs that pass every filter; `counts[name]` += what each filter removed (first failing filter wins)."""
    for p in pairs:
        counts["input"] = counts.get("input", 0) + 1
        for name, rejects in PAIR_FILTERS.items():
            if rejects(p):
                counts[name] = counts.get(name, 0) + 1
                break
        else:
            counts["kept"] = counts.get("kept", 0) + 1
            yield p


_NEAR = re.compile(r"[\W_]+")
_DIGITS = re.compile(r"\d+")


def near_key(text: str) -> str:
    """Key for near-duplicates: normalised, digits -> 0, punctuation and spacing removed
    ("Seite 3 von 10." ~ "Seite 4 von 12", "Save as..." ~ "Save As…")."""
    return _NEAR.sub("", _DIGITS.sub("0", normalize(text)))


def dedup(pairs: Iterable[Pair], seen_exact: set, seen_near: set, counts: dict[str, int]) -> Iterator[Pair]:
    """Drop exact duplicates (normalised de+en) and near duplicates (near_key of de+en) of anything already
    seen, across sources: earlier sources win."""
    for p in pairs:
        exact = (normalize(p.de), normalize(p.en))
        if exact in seen_exact:
            counts["exact_duplicate"] = counts.get("exact_duplicate", 0) + 1
            continue
        near = (near_key(p.de), near_key(p.en))
        if near in seen_near:
            counts["near_duplicate"] = counts.get("near_duplicate", 0) + 1
            continue
        seen_exact.add(exact)
        seen_near.add(near)
        yield p


class HeldOut:
    """Every side of every evaluation pair, as exact and near keys: a training pair sharing either side with
    any valid/test set is removed (so no test sentence, nor its translation, is ever trained on)."""

    def __init__(self, texts: Iterable[str] = ()):
        self.exact: set[str] = set()
        self.near: set[str] = set()
        self.add(texts)

    def add(self, texts: Iterable[str]) -> None:
        for t in texts:
            self.exact.add(normalize(t))
            k = near_key(t)
            if len(k) >= 8:  # a near key as short as "ok" or "datei" would remove every such word from train
                self.near.add(k)

    def __contains__(self, p: Pair) -> bool:
        return any(normalize(t) in self.exact or near_key(t) in self.near for t in (p.de, p.en))


def decontaminate(pairs: Iterable[Pair], held: HeldOut, counts: dict[str, int]) -> Iterator[Pair]:
    for p in pairs:
        if p in held:
            counts["overlaps_valid_or_test"] = counts.get("overlaps_valid_or_test", 0) + 1
            continue
        yield p
