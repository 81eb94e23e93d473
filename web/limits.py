"""The app's input limits and words, computed here from the modules the app itself uses and written into the built
folder (config.json), so the page says and cuts exactly what the Translate page does. Nothing here is re-typed
from runtime/ except the empty-text words, which live in a Streamlit helper (tests/web checks they still match)."""
from __future__ import annotations

import functools
import sys
import unicodedata
from typing import Any

from playground.translate.result_words import truncation_warning
from runtime import coverage
from runtime.decoding import DEFAULT_EXTRA_LEN
from runtime.text import DEFAULT_MAX_SRC_LEN, MAX_ALTERNATIVES, Translation

# playground/models.py show_error's words for a ValueError "empty text: ..." (kept equal by tests/web)
EMPTY_WORDS = "Nothing to work on: type some text (or pick an example) first."
PERCENT = "{percent}"  # where the page puts its own share into a coverage warning


@functools.cache
def code_point_ranges(keep) -> list[list[int]]:
    """[[first, last], ...] of the code points for which keep(ch) holds (Python's Unicode tables, not the
    browser's: the page then counts letters exactly as runtime.coverage does)."""
    ranges: list[list[int]] = []
    for cp in range(sys.maxunicode + 1):
        if keep(chr(cp)):
            if ranges and ranges[-1][1] == cp - 1:
                ranges[-1][1] = cp
            else:
                ranges.append([cp, cp])
    return ranges


def is_latin_letter(ch: str) -> bool:
    return ch.isalpha() and unicodedata.name(ch, "").startswith("LATIN")


def coverage_words() -> dict[str, str]:
    """runtime.coverage.warning's three sentences, a share replaced by PERCENT."""
    no_letters = coverage.warning(coverage.Coverage(0.0, 0.0, 0))
    script = coverage.warning(coverage.Coverage(0.0, 1.0, 1))
    unknown = coverage.warning(coverage.Coverage(1.0, 0.0, 1))
    assert script.count("100%") == 1 and unknown.count("100%") == 1
    return {"no_letters": no_letters, "script": script.replace("100%", PERCENT),
            "unknown": unknown.replace("100%", PERCENT)}


def input_limits(meta: dict[str, Any], max_positions: int) -> dict[str, Any]:
    """What the page needs to treat input as runtime.text.TextTranslator does for this model."""
    max_src_len = min(int(meta.get("max_src_len", DEFAULT_MAX_SRC_LEN)), max_positions)  # TextTranslator.__init__
    cut = Translation(text="", tokens=[], token_ids=[], score=0.0, src_tokens=[], truncated=True)
    return {
        "max_src_len": max_src_len,
        "source_room": max_src_len - 2,  # TextTranslator.source_room: the tag and </s> always stay
        "extra_len": DEFAULT_EXTRA_LEN,  # max target tokens = source length + this (runtime.decoding.max_lengths)
        "max_target_len": max_positions,  # the positional table caps it too
        "max_alternatives": MAX_ALTERNATIVES,
        "unknown_limit": coverage.UNKNOWN_LIMIT,
        "non_latin_limit": coverage.NON_LATIN_LIMIT,
        "words": {"empty": EMPTY_WORDS, "truncated": truncation_warning([cut], max_src_len),
                  **coverage_words()},
        "letters": code_point_ranges(str.isalpha),
        "latin_letters": code_point_ranges(is_latin_letter),
    }
