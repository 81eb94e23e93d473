"""The Experiments page's Streamlit pieces for the sentiment classifier (runtime.experiments.classifier): its
experiment graph loaded once, its verdict on the text, and the experiments that apply to it: knocking out heads
(with the head-importance grid) and occlusion beside the attention each piece receives. Keys start with "exp_"."""
from __future__ import annotations

import streamlit as st

from playground import model_paths, models
from runtime import experiments as engine

from . import classifier, link, views
from .engine_widgets import grid_asked, head_controls, knock_out_the_top
from .report import Report
from .widgets import PREFIX


@st.cache_resource(show_spinner=False, max_entries=2)
def _classifier_model(task: str, path: str, version: tuple):
    return engine.ClassifierExperimentModel(path, provider="cpu")


@st.cache_data(show_spinner=False, max_entries=32)
def _review(_cem, text: str, version: tuple):
    return _cem.review(text)


@st.cache_data(show_spinner=False, max_entries=16)
def _occlusion(_cem, review, method: str, version: tuple):
    return engine.classify_occlusion(_cem, review, method)


@st.cache_data(show_spinner=False, max_entries=16)
def _knockout(_cem, review, heads: tuple, mode: str, version: tuple):
    return engine.classify_knockout(_cem, review, [engine.Head(*h) for h in heads], mode)


@st.cache_data(show_spinner=False, max_entries=8)
def _importance(_cem, review, mode: str, version: tuple):
    return engine.classify_head_importance(_cem, review, mode)


def reviewed(text: str) -> tuple | None:
    """The classifier's experiment model, its reading of `text` (its verdict, and what it could not read, shown)
    and the model's version; None, with the error shown, when either fails."""
    try:
        with st.spinner("Loading the classifier's experiment graph…"):
            cem = models.load(_classifier_model, "sentiment")
        version = model_paths.stamp("sentiment")
        review = _review(cem, text, version)
    except Exception as e:  # ModelLoadError names `python -m export DIR --if-stale`; ValueError says what is wrong
        models.show_error(e, "sentiment")
        return None
    if review.truncated:
        st.warning("Input too long: the classifier reads only its first pieces; the experiments work on what it saw.")
    if review.warning:
        st.warning(review.warning)
    st.info(f"The classifier says **{review.label}** ({classifier.verdict(review.labels, review.probs)}).")
    return cem, review, version


def experiment(text: str, state: link.Experiment, shape: link.Shape) -> Report | None:
    """The classifier's verdict on `text`, then knocking out its heads or occluding its pieces."""
    loaded = reviewed(text)
    if loaded is None:
        return None
    cem, review, version = loaded
    shown = {"model": "Sentiment classifier", "text": text, "label": review.label}
    if state.exp == "occlusion":
        method = st.radio("Occlude a piece by", list(engine.OCCLUSION_METHODS), key=PREFIX + "method",
                          horizontal=True, format_func={"mask": "masking it (<pad>, as the model ignores padding)",
                                                        "remove": "deleting it"}.get)
        with st.spinner("Occluding each piece…"):
            return classifier.occlusion_report(_occlusion(cem, review, method, version),
                                               {**shown, "occlusion": method})
    head_controls(state, shape)
    shown = {**shown, "heads knocked out": ", ".join(h.label() for h in state.heads) or "none",
             "ablation": state.ablation}
    if state.heads:
        result = _knockout(cem, review, tuple(h.engine() for h in state.heads), state.ablation, version)
        rep = classifier.knockout_report(result, shown)
    else:
        rep = Report("Knock out heads (classifier)", shown, ["Choose one head or more above to see the label "
                                                              "without them."])
    if grid_asked((review, state.ablation, version)):
        measured = _importance(cem, review, state.ablation, version)
        knock_out_the_top(measured)
        grid = views.importance_report(measured, shown, what=f"the label “{review.label}”")
        rep.sentences += grid.sentences
        rep.figures += grid.figures
    return rep
