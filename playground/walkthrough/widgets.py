"""The Walkthrough page's Streamlit pieces: the walkthrough graphs loaded once, a shared link read into the widgets,
the model choice, the step picker, the layer / head / query / position controls, and the view each step draws.
Keys start with "walkthrough_"."""
from __future__ import annotations

from typing import Any

import streamlit as st

from runtime.walkthrough import ClassifierWalkthrough, TranslationWalkthrough

from .. import models
from ..links import Correction, note
from . import attention, views
from .steps import Step, direction_of, parse_url
from .tensors import Trace, tokens_of


@st.cache_resource(show_spinner=False, max_entries=4)
def _walkthrough(task: str, path: str, version: tuple):
    return (ClassifierWalkthrough if task == "sentiment" else TranslationWalkthrough)(path, provider="cpu")


def walkthrough_model(task: str):
    """The task's walkthrough runner, loaded once per process and per version of its files."""
    return models.load(_walkthrough, task)


def run(model, choice: str, text: str):
    if choice == "sentiment":
        return model.run(text)
    return model.run(text, *direction_of(choice))


PENDING = "walkthrough_link_pending"  # the link's numbers whose upper ends are checked once the view knows them


def read_link(choices: list[str]) -> None:
    """On a session's first run, a shared link's values become the widgets' first values; what had to be corrected
    is said. A step, layer, head, query row or position is checked against the model and the text where its
    control is drawn (step_picker, view_controls)."""
    if "walkthrough_url_read" not in st.session_state:
        st.session_state["walkthrough_url_read"] = True
        found, corrections = parse_url(dict(st.query_params), choices)
        for name, value in found.items():
            st.session_state[f"walkthrough_{name}"] = value
        st.session_state[PENDING] = {name: st.query_params[name] for name in found
                                     if name in ("step", "layer", "head", "query", "position")}
        said = note(corrections)
        if said:
            st.warning(said)


def _fit(name: str, highest: int, lowest: int, why: str, corrections: list[Correction]) -> None:
    """Clamp a layer / head / row / position to the model's or the text's upper end; a link's value that had to be
    clamped is added to `corrections` (only the link's: a value kept from another model or text is the user's)."""
    key = f"walkthrough_{name}"
    value = st.session_state.get(key, lowest)
    given = st.session_state.get(PENDING, {}).pop(name, None)
    if given is not None and value > highest:
        corrections.append(Correction(name, given, f"{highest}", why))
    st.session_state[key] = min(value, highest)


def model_label(choice: str) -> str:
    if choice == "sentiment":
        return "Sentiment classifier"
    return f"Translator {models.direction_label(direction_of(choice))}"


def another_model_another_text() -> None:
    """A new model starts from its own default text (a German sentence means nothing to the EN→DE translator)."""
    st.session_state.pop("walkthrough_text", None)


def step_picker(steps: list[Step]) -> Step:
    """Back / the step list / Next in one row; a step the model does not have (a link's, the other model's) becomes
    the first."""
    keys = [s.key for s in steps]
    given = st.session_state.get(PENDING, {}).pop("step", None)
    if st.session_state.get("walkthrough_step") not in keys:
        if given is not None:
            st.warning(note([Correction("step", given, f"the first step ({keys[0]})",
                                        "is not a step of the model shown")]))
        st.session_state["walkthrough_step"] = keys[0]

    def move(by: int) -> None:
        at = keys.index(st.session_state["walkthrough_step"])
        st.session_state["walkthrough_step"] = keys[max(0, min(len(keys) - 1, at + by))]

    # at the first or the last step the button that would go nowhere is disabled (a click on it did nothing)
    at = keys.index(st.session_state["walkthrough_step"])
    back, pick, forward = st.columns([1, 6, 1], vertical_alignment="bottom")
    back.button("◀ Back", key="walkthrough_back", on_click=move, args=(-1,), width="stretch", disabled=at == 0)
    forward.button("Next ▶", key="walkthrough_next", on_click=move, args=(1,), width="stretch",
                   disabled=at == len(keys) - 1)
    key = pick.selectbox("Step", keys, key="walkthrough_step",
                         format_func=lambda k: f"{keys.index(k) + 1}/{len(keys)} · {steps[keys.index(k)].title}")
    return steps[keys.index(key)]


def view_controls(step: Step, trace: Trace, config: dict[str, Any], state: dict[str, Any]) -> dict[str, int]:
    """The layer, head, query row and decoder position the step needs, clamped to the model and the text (a link's
    value may be out of range); each chosen one is also written into `state`, the page's URL."""
    view = {"layer": 0, "head": 0, "query": 0, "position": 0}
    controls, corrections = st.columns(4), []
    if step.kind in ("attention", "scores", "heads", "norm", "ffn"):
        layers = config.get("n_decoder_layers") or config["n_layers"] if step.stack.startswith("dec") \
            else config["n_layers"]
        _fit("layer", layers, 1, f"is outside this model's layers 1–{layers}", corrections)
        view["layer"] = controls[0].slider("Layer", 1, layers, key="walkthrough_layer") - 1 if layers > 1 else 0
        state["layer"] = view["layer"] + 1
    if step.kind in ("attention", "scores", "heads"):
        heads = config["n_heads"]
        _fit("head", heads, 1, f"is outside this model's heads 1–{heads}", corrections)
        view["head"] = controls[1].slider("Head", 1, heads, key="walkthrough_head") - 1
        state["head"] = view["head"] + 1
    if step.kind == "scores":
        queries = tokens_of(trace, "dec" if step.stack.startswith("dec") else "enc")
        _fit("query", len(queries) - 1, 0, f"is past this text's last query row ({len(queries) - 1})", corrections)
        view["query"] = controls[2].selectbox("Query row in detail", range(len(queries)),
                                              format_func=lambda i: f"{i}: {queries[i]}",
                                              key="walkthrough_query") or 0
        state["query"] = view["query"]
    if step.kind == "output":
        positions = tokens_of(trace, "dec")
        _fit("position", len(positions) - 1, 0, f"is past this output's last position ({len(positions) - 1})",
             corrections)
        view["position"] = controls[0].selectbox("Decoder position t", range(len(positions)),
                                                 format_func=lambda i: f"{i}: after {positions[i]}",
                                                 key="walkthrough_position") or 0
        state["position"] = view["position"]
    if step.kind not in ("tokens", "head", "output"):  # the steps that draw maps
        controls[3].toggle("Hover and zoom", key=views.INTERACTIVE_KEY,
                           help="Draw the maps with plotly: hover any value, zoom into a region. Slower on every "
                                "click; the maps' numbers are also in each step's download.")
    if corrections:
        st.warning(note(corrections))
    return view


def show_step(step: Step, trace: Trace, view: dict[str, int], model, config: dict[str, Any]) -> None:
    """The view of the step's kind (views.py, attention.py), with the model settings it needs."""
    kinds = {"tokens": views.show_tokens, "embedding": views.show_embedding, "positions": views.show_positions,
             "attention": attention.show_qkv, "scores": attention.show_scores, "heads": attention.show_heads,
             "ffn": views.show_ffn}
    if step.kind in kinds:
        kinds[step.kind](trace, step, view)
    elif step.kind == "norm":
        views.show_norm(trace, step, view, bool(config.get("pre_norm")))
    elif step.kind == "output":
        views.show_output(trace, step, view, model)
    elif step.kind == "pool":
        views.show_pool(trace, step, view, config.get("pooling", "mean"))
    elif step.kind == "head":
        views.show_head(trace, step, view, float(config.get("temperature", 1.0)))
