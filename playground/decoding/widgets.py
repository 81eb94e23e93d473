"""The Decoding explorer's Streamlit pieces: the run cached per input, a shared link read into the widgets, the
sampling sliders, the step slider, the three-way comparison and the downloads. Keys start with "decoding_"."""
from __future__ import annotations

import functools
from typing import Any

import streamlit as st

from .. import models
from ..links import Correction, note
from . import bars, figures, link, numbers, run
from .link import KNOBS, parse_url


@st.cache_data(show_spinner=False, max_entries=16)
def explore(_model, direction: tuple[str, str], text: str, beam: int, version: tuple) -> dict[str, Any]:
    """run.explore, once per input and per version of the model's files."""
    return run.explore(_model, direction, text, beam)


@st.cache_resource(show_spinner=False, max_entries=16)
def tree_figure(_model, direction: tuple[str, str], text: str, beam: int, version: tuple):
    """The beam search tree's figure, built once per input: building it (plotly validates every trace) was ~70 ms
    of each whole-page rerun, and a temperature, top-k or top-p change does not change the tree. Shared and never
    modified: st.plotly_chart only reads it (to_dict)."""
    return figures.tree_figure(explore(_model, direction, text, beam, version)["nodes"])


def read_link(directions: list[tuple[str, str]]) -> None:
    """On a session's first run, a shared link's values become the widgets' first values; what had to be corrected
    is said. The link's step is checked once the sentence's length is known (step_slider)."""
    if "decoding_url_read" not in st.session_state:
        st.session_state["decoding_url_read"] = True
        values, corrections = parse_url(dict(st.query_params), directions)
        for name, value in values.items():
            st.session_state[f"decoding_{name}"] = value
        if "step" in values:
            st.session_state["decoding_link_step"] = st.query_params["step"]
        notice = note(corrections)
        if notice:
            st.warning(notice)


def knob_sliders() -> dict[str, float]:
    """The sampling sliders in one row (temperature, top-k, top-p, beam size): name -> value."""
    knobs = {}
    for column, (name, knob) in zip(st.columns(len(KNOBS)), KNOBS.items(), strict=True):
        # the value lives in session state (a link sets it), not in the slider's default
        st.session_state.setdefault(f"decoding_{name}", knob.default)
        knobs[name] = column.slider(knob.label, knob.low, knob.high, step=knob.step, key=f"decoding_{name}")
    return knobs


def step_slider(steps: int) -> int:
    """The greedy step shown (1..steps); a link's step, or one kept from a longer text, is clamped first, and a
    link's step that had to be is said (once: later clamps follow the user's own edits)."""
    step = st.session_state.get("decoding_step", 1)
    given = st.session_state.pop("decoding_link_step", None)
    if given is not None and step > steps:
        st.warning(note([Correction("step", given, f"{steps}", f"is past this sentence's last step ({steps})")]))
    st.session_state["decoding_step"] = min(step, steps)
    return st.slider("Step", 1, steps, key="decoding_step") if steps > 1 else 1


@st.fragment
def greedy_steps(explored: dict[str, Any], state: dict[str, Any]) -> None:
    """The step slider and what it shows (the words so far, the step's distribution, the greedy translation), one
    fragment: moving the slider reruns this block only, not the tree, the comparison or the downloads, none of
    which depends on the step (issue 44.9: a Decoding slider move <= 100 ms). The link follows the step."""
    temperature, top_k, top_p = state["temperature"], state["top_k"], state["top_p"]
    step = state["step"] = step_slider(len(explored["log_probs"]))
    st.query_params.from_dict(link.url_of(state))
    chosen, raw = explored["tokens"][step - 1], explored["log_probs"][step - 1]
    probs, removed = numbers.filtered(raw, temperature, top_k, top_p)
    st.markdown(numbers.chosen_words(explored["pieces"], step, raw[chosen]))
    # markup, not plotly: a Step move is drawn in about half the time (bars.py)
    st.markdown(bars.bars_html(bars.top_bars(probs, raw, explored["vocab"], chosen),
                               numbers.step_title(step, temperature, top_k, top_p)), unsafe_allow_html=True)
    st.caption(numbers.removed_words(removed, int((probs > 0).sum()), len(probs), top_k, top_p) + numbers.BARS_NOTE)
    st.info(f"Greedy translation: {explored['greedy_text'] or '(empty output)'}")


def compare_three_ways(model, direction: tuple[str, str], text: str, knobs: dict[str, Any], version: tuple) -> None:
    """A seed, a button that decodes greedy, beam and sampled, and their table while the settings stay the same."""
    beam, temperature, top_k, top_p = knobs["beam"], knobs["temperature"], knobs["top_k"], knobs["top_p"]
    seed = st.number_input("Sampling seed", 0, 10**6, 0, key="decoding_seed")
    compare_key = (direction, text, beam, temperature, top_k, top_p, seed, version)
    if st.button("Decode three ways", key="decoding_compare"):
        try:
            with st.spinner("Decoding…"):
                outs = {name: model.translate([text], src_lang=direction[0], tgt_lang=direction[1],
                                              method=method, beam=beam, temperature=temperature, top_k=top_k,
                                              top_p=top_p, seed=seed)[0]
                        for name, method in (("greedy", "greedy"), (f"beam ({beam})", "beam"),
                                             ("sampled", "sample"))}
            st.session_state["decoding_compared"] = (compare_key, outs)
        except Exception as e:
            models.show_error(e, "translate")
    compared = st.session_state.get("decoding_compared")
    if compared and compared[0] == compare_key:
        st.dataframe(numbers.compared_rows(compared[1]), hide_index=True, key="decoding_table")
        st.caption(numbers.compared_words(temperature, top_k, top_p, seed))
    else:
        st.caption("Runs the model three times with the settings above (sampling uses the sliders and the seed).")


def downloads(explored: dict[str, Any], knobs: dict[str, Any]) -> None:
    """The step distributions (CSV) and the beam search tree (JSON), side by side."""
    # Deferred: Streamlit calls these when the button is clicked, not on every rerun of the page (the CSV's
    # argsort over the vocabulary at every step was ~40 ms of each slider move's whole-page run).
    # on_click="ignore": a download changes nothing on the page, and the default rerun on click re-registers
    # the deferred files, so a click on the other button during that rerun could get no file at all.
    d1, d2 = st.columns(2)
    d1.download_button("Step distributions (CSV: each step's 50 most probable tokens)",
                       functools.partial(numbers.distributions_csv, explored["log_probs"], explored["vocab"],
                                         knobs["temperature"], knobs["top_k"], knobs["top_p"]),
                       "decoding_steps.csv", "text/csv", key="decoding_download_steps",
                       on_click="ignore")
    d2.download_button("Beam search tree (JSON)", functools.partial(numbers.tree_json, explored["nodes"]),
                       "beam_tree.json", "application/json", key="decoding_download_tree",
                       on_click="ignore")
