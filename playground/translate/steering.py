"""Steering on the Translate page (docs/steering.md), pure: no streamlit. The words of an output a user can click
and the target prefix each one stands for, the alternatives and n-best lists as table rows, and the page's state
in its URL (direction, text, method, beam, n-best, prefix), read back with corrections a shared link may need (the
word alignment's chart: alignment_markup.py)."""
from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from runtime.alignment import WORD_START, is_special, words

from ..links import MAX_LINK_TEXT_CHARS, Correction, direction_of, in_range, link_text

ALTERNATIVES = 5  # the alternatives shown at a word: one search of 5 rows (docs/steering.md: <= 1.5x greedy)
MAX_PREFIX_CHARS = 300  # a link's prefix longer than this is no start of a sentence-sized translation
MAX_BEAM = 16  # the sidebar's beam slider
DEFAULT_BEAM = 4  # the beam slider's first value, and what a link's unusable beam gives way to
# What a prefix may not hold: the runtime refuses special tokens in a prefix (TextTranslator.prefix_ids), and a
# line break would make the one-line translation two.
SPECIAL_TEXT = re.compile(r"</?s>|<pad>|<unk>|<2[A-Za-z_-]+>|[\x00-\x1f\x7f]")


def pieces_text(tokens: Sequence[str]) -> str:
    """Target pieces as text, as the tokenizer decodes them (Metaspace: "▁" is a space; specials left out)."""
    return "".join(t for t in tokens if not is_special(t)).replace(WORD_START, " ").strip()


def word_starts(tokens: Sequence[str]) -> list[tuple[str, int]]:
    """The output's words, each with the index of its first piece: what a click on a word stands for."""
    return [(word, pieces[0]) for word, pieces in words(tokens)]


def word_labels(starts: Sequence[tuple[str, int]]) -> list[str]:
    """The words as buttons show them, each label unique (a button row tells its buttons apart by label): a
    repeated word gets its occurrence, "the (2)"."""
    seen: dict[str, int] = {}
    labels = []
    for word, _ in starts:
        seen[word] = seen.get(word, 0) + 1
        labels.append(word if seen[word] == 1 else f"{word} ({seen[word]})")
    return labels


def prefix_before(tokens: Sequence[str], word_no: int) -> str:
    """The target prefix whose alternatives are the choices at word `word_no` (0-based): the words before it."""
    starts = word_starts(tokens)
    if not 0 <= word_no < len(starts):
        raise ValueError(f"word {word_no + 1} is not in this output of {len(starts)} word(s)")
    return pieces_text(tokens[:starts[word_no][1]])


def chosen_prefix(alternative) -> str:
    """The prefix an alternative stands for: the forced prefix and the alternative's own token (what a shared link
    carries; translating with it starts with the same tokens when the text tokenises back to them)."""
    return pieces_text(alternative.tokens[:alternative.prefix_len + 1])


def alternative_word(alternative) -> str:
    """The word the alternative starts or continues, as its completion spells it (a piece may be a word's part)."""
    at = alternative.prefix_len
    for word, pieces in words(alternative.tokens):
        if at in pieces:
            return word
    return alternative.tokens[at].replace(WORD_START, "") if at < len(alternative.tokens) else "(end)"


def alternative_rows(alternatives: Sequence) -> list[dict[str, Any]]:
    """One row per alternative, most likely first (as translate_n_best sorts them): the token the model put next,
    its probability there, the word it makes and the whole translation it completes to."""
    return [{"token": a.tokens[a.prefix_len] if a.prefix_len < len(a.tokens) else "</s>",
             "word": alternative_word(a), "probability": float(a.token_probs[a.prefix_len]),
             "translation": a.text} for a in alternatives]


def nbest_rows(hypotheses: Sequence) -> list[dict[str, Any]]:
    """The n best, as searched (best score first): rank, text, score (log P / length penalty) and confidence."""
    return [{"rank": i + 1, "translation": h.text, "score": round(float(h.score), 4),
             "confidence": round(float(h.confidence), 4)} for i, h in enumerate(hypotheses)]


def prefix_problem(prefix: str) -> str | None:
    """Why a prefix from a link cannot be used (a clause for links.note), or None."""
    if len(prefix) > MAX_PREFIX_CHARS:
        return f"is longer than {MAX_PREFIX_CHARS} characters"
    if SPECIAL_TEXT.search(prefix):
        return "holds a special token (</s>, <s>, <pad>, <unk>, a language tag) or a control character"
    return None


def has_n_best(method: str, beam: int) -> bool:
    """Whether the page lists the n best: beam search with a beam of 2 or more (else its n-best size is 1)."""
    return method == "beam" and beam >= 2


def whole_number(name: str, given: str, low: int, high: int, default: int,
                 noun: str = "") -> tuple[int, Correction | None]:
    """A link's number as the slider will hold it: `default` when it is not a whole number, else moved into
    [low, high]; and the correction, naming that same value, when it had to change."""
    try:
        value = int(given)
    except ValueError:
        return default, Correction(name, given, str(default), "is not a whole number")
    used, fix = in_range(name, given, value, low, high, noun)
    return int(used), fix


def parse_link(raw: dict[str, str], directions: Sequence[tuple[str, str]],
               methods: Sequence[str]) -> tuple[dict[str, Any], list[Correction]]:
    """A shared link's values as the page's widget values (direction, text, method, beam, n, prefix), and what
    had to be corrected: a value the page cannot use gives way to its default (an unusable prefix: none), a number
    off its slider moves to the slider's nearest end, n-best above the beam to the beam, a text over
    MAX_LINK_TEXT_CHARS is cut as link_text cuts it. Every beam and n a link names is in `values` as the page will
    hold it, with the defaults the page opens with (methods[0], DEFAULT_BEAM) where the link gives none: each
    correction names that same value, so the notice says what the sliders and the rewritten link then show."""
    values: dict[str, Any] = {}
    fixes: list[Correction] = []
    direction = direction_of(raw, directions, fixes)
    if direction:
        values["direction"] = direction
    if "text" in raw:
        text = str(raw["text"])
        values["text"] = link_text(text)
        if values["text"] != text:
            fixes.append(Correction("text", text, f"the text cut to {len(values['text']):,} characters",
                                    f"is {len(text):,} characters long (a link holds at most {MAX_LINK_TEXT_CHARS:,})"))
    if "method" in raw:
        if raw["method"] in methods:
            values["method"] = raw["method"]
        else:
            fixes.append(Correction("method", raw["method"], methods[0], f"is not a method ({', '.join(methods)})"))
    method = values.get("method", methods[0])
    beam = DEFAULT_BEAM
    if "beam" in raw:
        beam, fix = whole_number("beam", raw["beam"], 1, MAX_BEAM, DEFAULT_BEAM)
        values["beam"] = beam
        fixes += [fix] if fix else []
    if "n" in raw:
        if has_n_best(method, beam):
            n, fix = whole_number("n", raw["n"], 1, beam, 1, "n-best sizes (1 to the beam)")
        else:
            n, fix = 1, None
            if raw["n"].strip() != "1":
                held = f"the method is {method}" if method != "beam" else f"the beam is {beam}"
                fix = Correction("n", raw["n"], "1", f"asks for an n-best list, which needs beam search with a "
                                                     f"beam of 2 or more ({held})")
        values["n"] = n
        fixes += [fix] if fix else []
    if "prefix" in raw:
        why = prefix_problem(raw["prefix"])
        if why:
            fixes.append(Correction("prefix", raw["prefix"], "no prefix", why))
        else:
            values["prefix"] = raw["prefix"].strip()
    return values, fixes


def url_of(direction: tuple[str, str], text: str, method: str, beam: int, n_best: int,
           prefix: str) -> dict[str, str]:
    """The page's state as query parameters: only what differs from a plain translation (beam and n-best for
    beam search, the prefix when there is one); the text as link_text cuts it."""
    url = {"direction": "-".join(direction), "text": link_text(text), "method": method}
    if method == "beam":
        url["beam"] = str(beam)
        if n_best > 1:
            url["n"] = str(n_best)
    if prefix.strip():
        url["prefix"] = prefix.strip()
    return url


def shown_word(word: str, most: int = 24) -> str:
    """A word as a button shows it: cut when long (an untrained model's "words" can run for a line)."""
    return word if len(word) <= most else word[:most - 1] + "…"
