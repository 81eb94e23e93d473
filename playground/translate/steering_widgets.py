"""The Translate page's steering (docs/steering.md) in Streamlit: a shared link read into the widgets, the "start
the translation with…" box and the n-best size, the n-best list, a word's alternatives (one translate_n_best call
with return_alternatives) and the choice of one, which becomes the output, and the word alignment as lines. The
logic is steering.py's; keys start with "translate_"."""
from __future__ import annotations

from typing import Any

import streamlit as st

from .. import links, models
from ..links import note
from . import alignment_markup, steering
from .settings import Decoding

PREFIX_KEY, N_KEY, WORD_KEY = "translate_prefix", "translate_n_best", "translate_word"
BEAM_KEY = "translate_beam"
NBEST_KEY = "translate_nbest"  # the n-best table's container, which its style names
LINK_GO = "translate_link_go"  # a shared link with a text: translate it on opening, as it was when shared


def read_link(directions: list[tuple[str, str]], methods: tuple[str, ...], default_direction) -> None:
    """On a session's first run, a shared link's values become the widgets' first values (the text in its
    direction's box); what had to be corrected is said."""
    if "translate_url_read" in st.session_state:
        return
    st.session_state["translate_url_read"] = True
    values, fixes = steering.parse_link(dict(st.query_params), directions, methods)
    keys = {"direction": "translate_direction", "method": "translate_method", "beam": BEAM_KEY,
            "n": N_KEY, "prefix": PREFIX_KEY}
    for name, key in keys.items():
        if name in values:
            st.session_state[key] = values[name]
    if "text" in values:
        src = values.get("direction", default_direction)[0]
        st.session_state[f"translate_text_{src}"] = values["text"]
        st.session_state[LINK_GO] = True
    notice = note(fixes)
    if notice:
        st.warning(notice)


def link_go() -> bool:
    """Whether this run opens a shared link that holds a text (then it is translated at once, once)."""
    return bool(st.session_state.pop(LINK_GO, False))


def beam_slider(method: str) -> int:
    """The beam size, its first value steering.DEFAULT_BEAM (the value a link's unusable beam gives way to)."""
    st.session_state.setdefault(BEAM_KEY, steering.DEFAULT_BEAM)  # in session state: a link may set it
    return st.slider("Beam size", 1, steering.MAX_BEAM, key=BEAM_KEY, disabled=method != "beam")


def n_best_slider(method: str, beam: int) -> int:
    """How many of the beam's best to list (1..beam); kept inside the beam when the beam shrinks."""
    if st.session_state.get(N_KEY, 1) > beam:
        st.session_state[N_KEY] = beam
    if not steering.has_n_best(method, beam):
        st.caption("The n-best list needs beam search with a beam of 2 or more.")
        return 1
    st.session_state.setdefault(N_KEY, 1)  # its value lives in session state: a link may set it
    return st.slider("Hypotheses listed (n-best)", 1, beam, key=N_KEY,
                     help="The n best finished hypotheses of the beam search, best score first (num_hypotheses).")


def prefix_box() -> str:
    return st.text_input("Start the translation with… (optional: these target words are forced, the model "
                         "goes on from them)", key=PREFIX_KEY, max_chars=steering.MAX_PREFIX_CHARS,
                         placeholder="e.g. The dog").strip()


def write_url(decoding: Decoding, typed: str) -> None:
    """The page's state into its link; when the link holds less of the text than the box, the page says so."""
    st.query_params.from_dict(steering.url_of(decoding.direction, typed, decoding.method, decoding.beam,
                                              decoding.n_best, decoding.prefix))
    cut = links.link_text_note(typed)
    if cut:
        st.info(cut, icon="🔗")


def n_best_list(done: dict[str, Any]) -> None:
    hypotheses = (done.get("n_best") or [[]])[0]
    if len(done["results"]) == 1 and len(hypotheses) > 1:
        st.subheader(f"The {len(hypotheses)} best (beam search)")
        # A static table, not st.dataframe: its text wraps, so on a phone every column keeps its whole heading
        # (the grid cut "confidence" to "con"), and it has no toolbar to lay over the heading above it. A word
        # longer than the column (an untrained model's "ttttenenenen…") may break anywhere, or it would push the
        # other columns past the table's edge (!important: the cell's Markdown sets its own overflow-wrap).
        st.html(f"<style>.st-key-{NBEST_KEY} td * {{overflow-wrap: anywhere !important}}</style>")
        with st.container(key=NBEST_KEY):
            st.table(steering.nbest_rows(hypotheses), hide_index=True)
        st.caption("Score: log P / ((5 + length) / 6) ** α, the beam's own ranking; confidence: the geometric mean "
                   "of the token probabilities. The first is the output above.")


def alternatives(model, line: str, decoding: Decoding, prefix: str) -> list:
    """The ALTERNATIVES likeliest next tokens after `prefix`, each completed by the page's method: one call."""
    [completions] = model.translate_n_best([line], **decoding.search(), target_prefix=[prefix],
                                           return_alternatives=True, num_hypotheses=steering.ALTERNATIVES,
                                           alignment=True)
    return completions


def choose(done: dict[str, Any], alternative, back) -> None:
    """The chosen alternative's completion becomes the output, made under the prefix it stands for (so the
    result is kept, the box shows the prefix and the URL carries it)."""
    prefix = steering.chosen_prefix(alternative)
    st.session_state[PREFIX_KEY] = prefix
    settings = {k: v for k, v in done["settings"].items() if k != "start"}
    if prefix:  # as Decoding.settings names it: an empty start is none
        settings["start"] = prefix
    st.session_state["translate_results"] = {**done, "results": [alternative], "n_best": [[alternative]],
                                             "settings": settings, "back": back, "steered": True}
    st.session_state.pop(WORD_KEY, None)
    st.session_state.pop("translate_alternatives", None)


@st.fragment
def steer(done: dict[str, Any], model, decoding: Decoding, back_of) -> None:
    """A row of the output's words: the one picked shows the alternatives the model had there, each completed; a
    button per alternative makes it the output. A fragment: picking a word reruns this block only."""
    result = done["results"][0]
    if st.session_state.get("translate_results", {}).get("results", [None])[0] is not result:
        # An alternative was chosen (its button's callback, `choose`, ran before this rerun of the fragment): the
        # whole page shows the new output. Checked first: `choose` also cleared the picked word, so a check after
        # the "no word picked" return below would never run (AppTest reruns the whole script, which would hide that:
        # tests/browser/test_browser_steering.py checks it in a browser).
        st.rerun()
    starts = steering.word_starts(result.tokens)
    if not starts:
        return
    labels = steering.word_labels(starts)
    st.subheader("What else the model considered")
    word_no = st.pills("Pick a word of the output to see the alternatives at that point (Tab and Enter work too)",
                       range(len(starts)), format_func=lambda i: labels[i], key=WORD_KEY)
    if word_no is None or word_no >= len(starts):
        st.caption(f"The {steering.ALTERNATIVES} likeliest words at that point, each completed by "
                   f"{decoding.method} search; choose one and the rest is re-translated from it.")
        return
    prefix = steering.prefix_before(result.tokens, word_no)
    asked = (result.text, word_no, prefix)
    kept = st.session_state.get("translate_alternatives")
    if not kept or kept[0] != asked:
        try:
            with st.spinner("Completing the alternatives…"):
                completions = alternatives(model, done["lines"][0], decoding, prefix)
        except Exception as e:
            models.show_error(e, "translate")
            return
        kept = st.session_state["translate_alternatives"] = (asked, completions)
    completions = kept[1]
    shown = f"after “{prefix}”" if prefix else "as the first word"
    st.markdown(f"**Alternatives {shown}** (the model's probability of each next token there). A button makes its "
                "completion the translation:")
    for i, row in enumerate(steering.alternative_rows(completions)):
        left, right = st.columns([1, 4], vertical_alignment="center")
        # No `help=`: Streamlit draws a button with a tooltip twice, one copy hidden, which keyboard and screen
        # reader users still reach; the sentence above says what a click does.
        left.button(f"{steering.shown_word(row['word'])} · {row['probability']:.1%}", key=f"translate_use_{i}",
                    on_click=lambda a=completions[i]: choose(done, a, back_of(a)))
        right.markdown(f"{row['translation'] or '(empty output)'}")


def alignment(done: dict[str, Any]) -> None:
    """The chosen line's word alignment as lines from each target word to the source word it attended to most."""
    row = st.session_state.get("translate_line", 0) if len(done["results"]) > 1 else 0
    word_alignment = done["results"][row].alignment if row < len(done["results"]) else None
    st.subheader("Word alignment")
    if word_alignment is None or not word_alignment.target_words:
        st.caption("No word alignment for this output.")
        return
    used = done["settings"]["direction"]
    st.markdown(alignment_markup.alignment_html(word_alignment, models.LANGUAGES.get(used[0], used[0]),
                                                models.LANGUAGES.get(used[1], used[1])),
                unsafe_allow_html=True)  # every word escaped by alignment_markup
    st.caption("Each target word (bottom) linked to the source word it attended to most: the last decoder layer's "
               "cross-attention, heads averaged (the reading that agreed best with a dictionary, 68% of held-out "
               "words: docs/steering.md). Attention is not alignment: the model was never trained to align.")
