"""Steering options checked before a search (CTranslate2's names, `TextTranslator.translate_n_best`): the sentence a
user sees for options that cannot work. The service checks each request with them before it joins a batch."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

MAX_ALTERNATIVES = 32  # return_alternatives: each one is a row of the completing search
MAX_SAMPLES = 32  # num_hypotheses with method="sample": each draw is a row of the search


def check_steering(n_texts: int, method: str, beam: int, num_hypotheses: int, return_alternatives: bool,
                   target_prefix: Sequence[str | None] | None) -> None:
    """Reject steering options that cannot work, with the sentence a user sees."""
    if isinstance(num_hypotheses, bool) or not isinstance(num_hypotheses, int | np.integer):
        raise ValueError(f"num_hypotheses must be an integer, got {num_hypotheses!r}")
    if target_prefix is not None:
        if isinstance(target_prefix, str):
            raise ValueError("target_prefix is one prefix per text: wrap the string in a list")
        if len(target_prefix) != n_texts:
            raise ValueError(f"target_prefix has {len(target_prefix)} entries for {n_texts} texts: give one per "
                             f"text (None or '' for no prefix)")
        for i, prefix in enumerate(target_prefix):
            if prefix is not None and not isinstance(prefix, str):
                raise ValueError(f"the target prefix of text #{i} is a {type(prefix).__name__}, not a string")
    if return_alternatives:  # at the position after each text's prefix; no prefix (None, ""): the first position
        if not 1 <= num_hypotheses <= MAX_ALTERNATIVES:
            raise ValueError(f"num_hypotheses (the number of alternatives) must be between 1 and "
                             f"{MAX_ALTERNATIVES}, got {num_hypotheses}")
        return
    if method == "beam" and beam >= 1 and not 1 <= num_hypotheses <= beam:  # beam < 1: beam_search says so
        raise ValueError(f"num_hypotheses must be between 1 and the beam ({beam}), got {num_hypotheses}")
    if method == "greedy" and num_hypotheses != 1:
        raise ValueError(f"greedy search finds one translation: num_hypotheses must be 1, got {num_hypotheses} "
                         f"(use beam search, or sampling, for more)")
    if method == "sample" and not 1 <= num_hypotheses <= MAX_SAMPLES:
        raise ValueError(f"num_hypotheses (draws) must be between 1 and {MAX_SAMPLES}, got {num_hypotheses}")


def check_room(text_no: int, prefix_len: int, limit: int, alternatives: bool) -> None:
    """A prefix must leave room for a token the method chooses (with alternatives: the alternative and one
    token after it)."""
    room = limit - (2 if alternatives else 1)
    if prefix_len > room:
        after = "the alternative and a token after it" if alternatives else "at least one token"
        raise ValueError(f"the target prefix of text #{text_no} has {prefix_len} tokens, more than the room "
                         f"left: max_len is {limit} target tokens and {after} must follow the prefix, so at "
                         f"most {max(room, 0)} fit (raise max_len or shorten the prefix)")
