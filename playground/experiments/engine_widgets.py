"""The Experiments page's Streamlit pieces for the engine's experiments (runtime.experiments over the experiment
graphs): the graphs loaded once, each result cached per sentence, the logit lens's and occlusion's position, the
heads to knock out and the head-importance grid. Keys start with "exp_"."""
from __future__ import annotations

import numpy as np
import streamlit as st

from playground import model_paths, models
from runtime import experiments as engine

from . import link, views
from .report import Report
from .widgets import PREFIX, model_label

# ---------------------------------------------------------------- the engine's experiments (runtime.experiments)

@st.cache_resource(show_spinner=False, max_entries=2)
def _experiment_model(task: str, path: str, version: tuple):
    return engine.ExperimentModel(path, provider="cpu")


def experiment_model():
    """The experiment graphs, loaded once per process and per version of the files; None after saying why not
    (an export older than them: the message names `python -m export DIR --if-stale`)."""
    try:
        with st.spinner("Loading the experiment graphs…"):
            return models.load(_experiment_model, "translate")
    except Exception as e:
        models.show_error(e, "translate")
        return None


def sentence_of(model, base, direction: tuple[str, str], text: str):
    """The engine's Sentence from the page's own greedy translation of `text` (the same served fp32 model), so the
    sentence is not translated a second time (ExperimentModel.sentence would: ~150 ms on the shipped model)."""
    src_ids, truncated = model.source_ids(text, direction[1])
    return engine.Sentence(text, direction[0], direction[1], src_ids, list(base.src_tokens), list(base.token_ids),
                           list(base.tokens), [float(np.log(p)) for p in base.token_probs], base.text, truncated,
                           base.warning, model.tokenizer.bos_id)


@st.cache_data(show_spinner=False, max_entries=8)
def _lens(_em, sentence, version: tuple):
    return engine.logit_lens(_em, sentence, k=5)


@st.cache_data(show_spinner=False, max_entries=16)
def _occlusion(_em, sentence, method: str, version: tuple):
    return engine.occlusion(_em, sentence, method)


@st.cache_data(show_spinner=False, max_entries=16)
def _knockout(_em, sentence, heads: tuple, mode: str, version: tuple):
    return engine.knockout(_em, sentence, [engine.Head(*h) for h in heads], mode)


@st.cache_data(show_spinner=False, max_entries=8)
def _importance(_em, sentence, over: str, mode: str, version: tuple):
    sentences = sentence if over == "sentence" else engine.reference_sentences(_em, sentence.src_lang,
                                                                                 sentence.tgt_lang)
    return engine.head_importance(_em, sentences, mode)


def position_picker(pieces: list[str], state: link.Experiment) -> int:
    """The target position (0-based) the lens and occlusion look at; a link's position past the end moves to the
    last, with a note."""
    position, note = link.clamp_position(st.session_state.get(PREFIX + "position", 0), len(pieces))
    if note:
        state.notes.append(note)
    st.session_state[PREFIX + "position"] = position
    state.position = st.selectbox("Target position", range(len(pieces)), key=PREFIX + "position",
                                  format_func=lambda t: f"{t}: {pieces[t]}")
    return state.position


def opened_sentence(model, base, direction: tuple[str, str], text: str, purpose: str) -> tuple | None:
    """The experiment graphs, `base` (the served greedy translation of `text`) as their Sentence, and the model's
    version; None, with the reason shown, when the translation is empty (nothing to `purpose`) or the graphs fail."""
    if not base.token_ids:
        st.info(f"The translation is empty: there is no target token to {purpose}.")
        return None
    em = experiment_model()
    if em is None:
        return None
    return em, sentence_of(model, base, direction, text), model_paths.stamp("translate")


def engine_experiment(model, base, direction: tuple[str, str], text: str, state: link.Experiment,
                      shape: link.Shape) -> Report | None:
    """The logit lens, knocking out heads (and the head-importance grid), or occlusion, on the experiment graphs,
    over `base`: the served model's greedy translation of `text`."""
    opened = opened_sentence(model, base, direction, text, "experiment on")
    if opened is None:
        return None
    em, sentence, version = opened
    shown = {"model": model_label(state.model), "text": text, "translation": sentence.translation}
    if state.exp == "lens":
        position = position_picker(sentence.output_pieces, state)
        with st.spinner("Reading every decoder layer…"):
            return views.lens_report(_lens(em, sentence, version), position, {**shown, "position": str(position)})
    if state.exp == "occlusion":
        position = position_picker(sentence.output_pieces, state)
        method = st.radio("Occlude a piece by", list(engine.OCCLUSION_METHODS), key=PREFIX + "method", horizontal=True,
                          format_func={"mask": "masking it (<pad>, as the model ignores padding)",
                                       "remove": "deleting it"}.get)
        with st.spinner("Occluding each source piece…"):
            occ = _occlusion(em, sentence, method, version)
        return views.occlusion_report(occ, position, {**shown, "position": str(position), "occlusion": method})
    return knockout(em, sentence, state, shape, shown, version)


def head_controls(state: link.Experiment, shape: link.Shape) -> None:
    """The heads to knock out (any of this model's) and zero or mean, into `state`."""
    every = shape.all_heads()
    st.session_state[PREFIX + "heads"] = [h for h in st.session_state.get(PREFIX + "heads", []) if h in every]
    picked, how = st.columns([3, 1])
    state.heads = picked.multiselect("Heads to knock out", every, key=PREFIX + "heads", format_func=link.Head.label,
                                     max_selections=link.MAX_HEADS, placeholder="Choose heads (or read the grid "
                                     "below and pick the ones that matter)")
    state.ablation = how.radio("Knock out by", list(link.ABLATIONS), key=PREFIX + "ablation",
                               format_func=link.ABLATIONS.get)


def grid_asked(key: tuple) -> bool:
    """The head-importance grid's button: once pressed, the grid stays for the same sentence, set and mode."""
    if st.button("Compute the head-importance grid (every head alone: a few seconds)", key=PREFIX + "grid"):
        st.session_state[PREFIX + "grid_done"] = key
    return st.session_state.get(PREFIX + "grid_done") == key


def knock_out_the_top(grid, count: int = 3) -> None:
    """A button under the grid that knocks out together the `count` heads that matter most (their drops were
    measured one at a time: together they may matter more or less)."""
    top = [link.Head(head.kind, head.layer + 1, head.head + 1) for head, _ in grid.ranked()[:count]]

    def choose() -> None:
        st.session_state[PREFIX + "heads"] = top

    st.button(f"Knock out these {count} together: " + "; ".join(h.label() for h in top), key=PREFIX + "top",
              on_click=choose)


def knockout(em, sentence, state: link.Experiment, shape: link.Shape, shown: dict[str, str], version: tuple):
    """Heads to knock out, zero or mean; the new output beside the original; the head-importance grid on demand."""
    head_controls(state, shape)
    shown = {**shown, "heads knocked out": ", ".join(h.label() for h in state.heads) or "none",
             "ablation": state.ablation}
    if state.heads:
        with st.spinner("Translating without those heads…"):
            result = _knockout(em, sentence, tuple(h.engine() for h in state.heads), state.ablation, version)
        rep = views.knockout_report(result, shown)
    else:
        rep = Report("Knock out heads", shown, ["Choose one head or more above to see the translation without them."])
    over = st.radio("Head-importance grid over", ["sentence", "set"], key=PREFIX + "over", horizontal=True,
                    format_func={"sentence": "this sentence", "set": "a small built-in set (8 sentences)"}.get)
    if grid_asked((sentence, over, state.ablation, version)):
        with st.spinner("Knocking out every head alone…"):
            measured = _importance(em, sentence, over, state.ablation, version)
        knock_out_the_top(measured)
        grid = views.importance_report(measured, shown)
        rep.sentences += grid.sentences
        rep.figures += grid.figures
    return rep
