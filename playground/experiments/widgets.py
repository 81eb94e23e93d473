"""The Experiments page's Streamlit pieces: the shared link read into the widgets (and its corrections said), the
translations cached per input, edit-and-compare's controls and models (int8, a model trained on the Train page),
and a Report drawn with its downloads (SVG, PNG, CSV per figure; the whole as HTML). The engine's experiments are
engine_widgets.py's. Keys start with "exp_"."""
from __future__ import annotations

from pathlib import Path

import streamlit as st

from playground import inputs, model_paths, models, widgets
from runtime import OnnxTranslator

from . import checks, figures, link, report, views
from .report import Report

PREFIX = "exp_"
SHOWN = PREFIX + "model_shown"  # the model the page last drew (the radio's value before a switch)
KEPT = PREFIX + "by_model"  # each model left: its experiment's settings, {model: {setting: value}}


def model_shapes() -> dict[str, link.Shape]:
    """The models the page offers (the translator's directions; the classifier where one is exported), each with
    its heads."""
    translator = link.Shape.of(models.model_meta("translate")["config"])
    shapes = {f"translate:{s}-{t}": translator for s, t in models.directions()}
    if models.model_problem("sentiment") is None:
        shapes["sentiment"] = link.Shape.of(models.model_meta("sentiment")["config"], classifier=True)
    return shapes


def default_text(model, choice: str) -> str:
    """The text a model opens on: a review for the classifier; for the translator, the direction's first hand-judged
    example that greedy gets right (the explorer pages' choice)."""
    if choice == "sentiment":
        return (inputs.examples("sentiment", "text") or ["a gem of a film, warm and funny"])[0]
    return widgets.greedy_right_example(model, direction_of(choice), str(model_paths.model_dir("translate")),
                                        model_paths.stamp("translate", "examples.tsv"))


def direction_of(choice: str) -> tuple[str, str]:
    src, tgt = choice.split(":")[1].split("-")
    return src, tgt


def model_label(choice: str) -> str:
    if choice == "sentiment":
        return "Sentiment classifier"
    return f"Translator {models.direction_label(direction_of(choice))}"


def experiments_of(choice: str) -> dict[str, str]:
    """The experiments a model has (key -> name); one kept from the other model that this one lacks becomes the
    first."""
    offered = link.CLASSIFIER_EXPERIMENTS if choice == "sentiment" else link.EXPERIMENTS
    if st.session_state.get(PREFIX + "exp") not in offered:
        st.session_state[PREFIX + "exp"] = next(iter(offered))
    return offered


def read_link(shapes: dict[str, link.Shape]) -> None:
    """On a session's first run, a shared link's values become the widgets' first values; what had to be
    corrected is kept to be said (show_corrections)."""
    if PREFIX + "url_read" not in st.session_state:
        st.session_state[PREFIX + "url_read"] = True
        found, notes = link.parse_url(dict(st.query_params), shapes)
        for name, value in found.items():
            st.session_state[PREFIX + name] = value
        st.session_state[PREFIX + "notes"] = notes


def show_corrections(more: list[str] | None = None) -> None:
    notes = st.session_state.get(PREFIX + "notes", []) + (more or [])
    if notes:
        st.warning("This link was corrected: " + "; ".join(notes) + ".")


def model_choice(column, shapes: dict[str, link.Shape]) -> str:
    """The model radio; the model it shows is kept, so that a switch can keep its experiment (another_model)."""
    choice = column.radio("Model", list(shapes), format_func=model_label, key=PREFIX + "model",
                          on_change=another_model)
    st.session_state[SHOWN] = choice
    return choice


def another_model() -> None:
    """A switch of model: the model left keeps its experiment and that experiment's settings (link.SETTINGS:
    text, experiment, position, heads…), and a model shown before gets its own back (a widget that is not drawn
    loses its value, so the logit lens, which the classifier lacks, fell back to "Knock out heads" and its position
    to 0). A model not shown yet starts from its own example (a German sentence means nothing to the EN→DE
    translator) and with no head knocked out (the classifier has other heads); the experiment stays where the new
    model has it.

    The experiment is written back even when it stays: the browser holds the radio's choice by its label, and the
    same experiment is named differently for the other model ("Which source words a target word needed" / "Which
    words the label needed"), so unless the page sends it again the radio showed no choice, and the next click sent
    the old label, which the new options lack: the page fell back to their first, "Knock out heads"."""
    kept = st.session_state.setdefault(KEPT, {})
    left = st.session_state.get(SHOWN)
    if left is not None:
        kept[left] = {name: st.session_state[PREFIX + name] for name in link.SETTINGS
                      if PREFIX + name in st.session_state}
    chosen = st.session_state.get(PREFIX + "model")
    if chosen in kept:
        for name in link.SETTINGS:
            st.session_state.pop(PREFIX + name, None)
        st.session_state.update({PREFIX + name: value for name, value in kept[chosen].items()})
        return
    for name in ("text", "other", "heads"):
        st.session_state.pop(PREFIX + name, None)
    offered = link.CLASSIFIER_EXPERIMENTS if chosen == "sentiment" else link.EXPERIMENTS
    experiment = st.session_state.get(PREFIX + "exp")
    st.session_state[PREFIX + "exp"] = experiment if experiment in offered else next(iter(offered))


@st.cache_data(show_spinner=False, max_entries=64)
def translate(_model, key: tuple, direction: tuple[str, str], text: str):
    """A greedy translation with the search's own cross-attention; key: which model (path, precision, version)."""
    return _model.translate([text], src_lang=direction[0], tgt_lang=direction[1], method="greedy",
                            attention="cross")[0]


def model_key(model) -> tuple:
    return (str(getattr(model, "model_dir", id(model))), model.precision, model_paths.stamp("translate"))


def translated(model, direction: tuple[str, str], text: str):
    """translate(), or None after saying why not (a message, never a traceback)."""
    try:
        with st.spinner("Translating…"):
            return translate(model, model_key(model), direction, text)
    except Exception as e:
        models.show_error(e, "translate")
        return None


def say_input_notes(t, text: str) -> None:
    """The notes a translated input needs: cut to the model's length, mostly unknown to its tokenizer."""
    for note in checks.translation_notes(t, text):
        st.warning(note)


# ---------------------------------------------------------------- edit and compare

@st.cache_resource(show_spinner=False, max_entries=4)
def _trained(path: str, version: int):
    return OnnxTranslator(path, provider="cpu")


def trained_models() -> dict[str, Path]:
    """The exported models this browser session trained on the Train page: run label -> model folder."""
    training = st.session_state.get("train_session")
    found = {}
    for record in getattr(training, "records", []):
        if record.exported is not None and (record.model_dir / "onnx").is_dir():
            found[record.label] = record.model_dir
    return found


def compare(model, direction: tuple[str, str], text: str, base, state: link.Experiment) -> Report | None:
    """The comparison the user picks: an edited sentence, the int8 model, or a model trained on the Train page."""
    state.against = st.radio("Compare against", list(link.AGAINST), format_func=link.AGAINST.get,
                             key=PREFIX + "against", horizontal=True)
    inputs_shown = {"model": model_label(state.model), "text": text}
    if state.against == "edit":
        st.session_state.setdefault(PREFIX + "other", text)
        other = st.text_input("B: your edit of the sentence (change a word, or write a new one; press Enter)",
                              key=PREFIX + "other")
        state.other = other
        problem = checks.text_problem(other)
        if problem:
            st.info(f"B: {problem}")
            return None
        if other.strip() == text.strip():  # nothing to compare: no report ("the largest move is +0.000 ...")
            st.info("B is still the same sentence as A, so there is nothing to compare yet: change a word (or the "
                    "whole sentence) to see what moves.")
            return None
        b = translated(model, direction, other.strip())
        if b is None:
            return None
        say_input_notes(b, other)
        return views.compare_report(base, b, ("A: the sentence", "B: your edit"), {**inputs_shown, "edited": other})
    if state.against == "int8":
        int8 = models.onnx_model("translate", "cpu", "int8")
        b = translated(int8, direction, text) if int8 is not None else None
        if b is None:
            return None
        return views.compare_report(base, b, ("A: fp32", "B: int8"), {**inputs_shown, "compared": "fp32 vs int8"})
    trained = trained_models()
    if not trained:
        st.info("No model of yours yet: train one on the Train your own page and press its Export button, then come "
                "back (a trained model lives as long as your browser session).")
        st.page_link("pages/7_Train_your_own.py", label="Train your own", icon="🏋️")
        return None
    name = st.selectbox("Your model", list(trained), key=PREFIX + "trained")
    path = trained[name]
    try:
        mine = _trained(str(path), (path / "onnx").stat().st_mtime_ns)
    except Exception as e:
        models.show_error(e)
        return None
    mine_direction = mine.directions[0]  # a toy model has one (runtime.toy.DIRECTION: in → out)
    st.caption(f"Your model translates {mine_direction[0]} → {mine_direction[1]} with its own "
               "vocabulary: the comparison lines up what the two outputs and inputs share, token by token.")
    b = translated(mine, tuple(mine_direction), text)
    if b is None:
        return None
    return views.compare_report(base, b, ("A: shipped", f"B: {name}"), {**inputs_shown, "compared": name})


# ---------------------------------------------------------------- drawing a report

def show(rep: Report) -> None:
    """The report's sentences, then each figure with its words and its SVG / PNG / CSV downloads."""
    for sentence in rep.sentences:
        st.markdown(sentence)
    for figure in rep.figures:
        st.vega_lite_chart(figure.spec, key=PREFIX + figure.key, **figures.frame(figure.spec))
        if figure.words:
            st.caption(figure.words)
        files = st.columns(3)
        spec = figure.spec
        files[0].download_button("SVG", lambda spec=spec: report.svg(spec), f"{figure.key}.svg", "image/svg+xml",
                                 key=f"{PREFIX}{figure.key}_svg", on_click="ignore", icon="⬇️")
        files[1].download_button("PNG", lambda spec=spec: report.png(spec), f"{figure.key}.png", "image/png",
                                 key=f"{PREFIX}{figure.key}_png", on_click="ignore", icon="⬇️")
        files[2].download_button("Numbers (CSV)", lambda spec=spec: report.csv(spec), f"{figure.key}.csv",
                                 "text/csv", key=f"{PREFIX}{figure.key}_csv", on_click="ignore", icon="⬇️")


def export(rep: Report, state: link.Experiment) -> None:
    """The whole experiment as one HTML file (made when clicked), and the link that reopens it."""
    share = report.link(str(st.context.url or "").split("?")[0], state.url())
    st.download_button("The whole experiment as one HTML file (inputs, words, figures)",
                       lambda: report.html_file(rep, share), f"experiment_{state.exp}.html", "text/html",
                       key=PREFIX + "html", on_click="ignore", icon="📄")
    st.caption("This page's link holds the experiment (model, text, what is compared or knocked out, position): "
               "share it to show this view.")
