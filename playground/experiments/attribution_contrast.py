"""Attribution's "why A rather than B": the optional token B (the translator: the likeliest alternatives to the
chosen token A at the position; the classifier: another label), passed to tx.attribution as `contrast`, so the
gradient methods explain log p(A) − log p(B) (the difference of the two logits) instead of log p(A). A link's B
that this model cannot take is dropped, and said (link.py reads it; the vocabulary is only known here).
Keys start with "exp_"."""
from __future__ import annotations

import numpy as np
import streamlit as st

from runtime.experiments.model import one_source

from . import link
from .widgets import PREFIX

NONE = ""  # no contrast: explain log p(A) alone
ALTERNATIVES = 8  # the likeliest other tokens offered as B


@st.cache_data(show_spinner=False, max_entries=16)
def _log_probs(_em, sentence, position: int, version: tuple) -> np.ndarray:
    """(V,) the served distribution at target `position`, teacher-forced on the translation's own prefix."""
    src, mask = one_source(sentence)
    memory = _em.encode(src, mask)["memory"]
    tgt = np.array([sentence.tgt_in_ids[:position + 1]], dtype=np.int64)  # (1, position + 1)
    states, _ = _em.last_states(tgt, memory, mask)  # (1, position + 1, D)
    return _em.project(states[:, position:position + 1])[0, 0].astype(np.float64)  # (1, 1, V) -> (V,)


def alternatives(log_probs: np.ndarray, chosen: int, k: int = ALTERNATIVES) -> list[int]:
    """The k likeliest tokens other than `chosen`, likeliest first (ties: the lower id first)."""
    order = np.argsort(-log_probs, kind="stable")[:k + 1]
    return [int(i) for i in order if i != chosen][:k]


def translation_contrast(em, sentence, position: int, state: link.Experiment, version: tuple) -> int | None:
    """The selectbox of token B at `position` (default none); its id, or None. state.rather keeps it for the
    link."""
    log_probs = _log_probs(em, sentence, position, version)
    chosen, a = sentence.output_ids[position], sentence.output_pieces[position]
    ids = alternatives(log_probs, chosen)
    pieces = em.tokenizer.tokens(ids)
    key = PREFIX + "rather"
    wanted = st.session_state.get(key, NONE)
    if wanted and wanted not in pieces:  # a link's B, or one kept from another position
        token = em.tokenizer.token_to_id(wanted)
        if token is None:
            state.notes.append(f"the token B “{wanted[:40]}” is not a piece of this model's vocabulary: no contrast "
                               "is used")
        elif token == chosen:
            state.notes.append(f"the token B “{wanted}” is token A at position {position}: no contrast is used")
        else:  # a real token, only less likely than the ones offered: kept, with its probability
            ids, pieces = [*ids, token], [*pieces, wanted]
        st.session_state[key] = wanted if wanted in pieces else NONE
    probs = dict(zip(pieces, np.exp(log_probs[ids]), strict=True))
    choice = st.selectbox(f"Rather than token B (why “{a}” and not B?)", [NONE, *pieces], key=key,
                          format_func=lambda p: "none: explain log p(A) alone" if p == NONE
                          else f"{p}  (p = {probs[p]:.3g})")
    state.rather = choice
    return ids[pieces.index(choice)] if choice else None


def classifier_contrast(review, state: link.Experiment) -> int | None:
    """The classifier's B: another label (default none); its index, or None."""
    others = [label for i, label in enumerate(review.labels) if i != review.label_index]
    key = PREFIX + "rather_label"
    wanted = st.session_state.get(key, NONE)
    if wanted and wanted not in others:
        state.notes.append(f"“{wanted[:40]}” is not another label of this classifier ({', '.join(others)}): no "
                           "contrast is used")
        st.session_state[key] = NONE
    choice = st.selectbox(f"Rather than another label (why “{review.label}” and not it?)", [NONE, *others],
                          key=key, format_func=lambda p: "none: explain its logit alone" if p == NONE else p)
    state.rather = choice
    return review.labels.index(choice) if choice else None
