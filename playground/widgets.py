"""Widgets more than one page draws: a direction choice whose example text follows it, the example the
explorer pages open on, an example picker that fills a text box, and the layer and head pickers. Page-specific
widgets stay in their feature's package."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from . import figures
from .inputs import curated_examples


def forget_text_at_default(text_key: str, shown_key: str) -> Callable[[], None]:
    """An on_change callback for a direction radio: a text still at the old direction's default (the value under
    `shown_key`) is dropped, so the text box opens on the new direction's default; a text the user typed stays."""

    def callback() -> None:
        if st.session_state.get(text_key) == st.session_state.get(shown_key):
            st.session_state.pop(text_key, None)

    return callback


def restore_text(key: str, default: str) -> None:
    """Put back a text box's last value before drawing it. Streamlit drops a widget's state on a run that does not
    draw it, so a box drawn per direction would reopen on its default after a switch and back; `keep_text` holds
    what was typed under a key no widget owns."""
    st.session_state.setdefault(key, st.session_state.get(f"{key}_kept", default))


def keep_text(key: str, value: str) -> None:
    """Remember a text box's value (see restore_text)."""
    st.session_state[f"{key}_kept"] = value


@st.cache_data(show_spinner=False, max_entries=8)
def greedy_right_example(_model, direction: tuple[str, str], where: str, version: tuple) -> str:
    """The first hand-judged example of the direction (models/translate/examples.tsv) whose greedy output (the
    explorer pages decode greedily) is the output judged right; else the first one judged right (its note says
    greedy differs); else the first test-set sentence."""
    rows = curated_examples(*direction)
    right = [r for r in rows if r.get("verdict") == "works"]
    for row in right:
        out = _model.translate([row["source"]], src_lang=direction[0], tgt_lang=direction[1], method="greedy")[0]
        if out.text == row.get("output"):
            return row["source"]
    return (right or rows)[0]["source"]


def fill_from(choice_key: str, text_key: str) -> Callable[[], None]:
    """An on_change callback for an example picker: the picked example (under `choice_key`) goes into the text box
    (under `text_key`), where the user may edit it."""

    def callback() -> None:
        st.session_state[text_key] = st.session_state[choice_key]

    return callback


def layer_or_head(picker: Callable[..., Any], label: str, count: int, noun: str, **options: Any) -> Any:
    """A layer or head picker (st.selectbox, a column's selectbox, st.select_slider...): the mean, or 1..count,
    named as the figures name them ("layer 2", "mean over heads"). `options`: the picker's own (key, index...)."""
    return picker(label, [figures.MEAN, *range(1, count + 1)],
                  format_func=lambda v: figures.choice_label(v, noun), **options)
