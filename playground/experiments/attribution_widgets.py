"""The Experiments page's "Attribute a token": the target position, then occlusion and rollout (onnxruntime) and
the gradient methods (PyTorch, where installed: attribution_torch), each with its deletion curve; the report is
attribution_views'. Keys start with "exp_"."""
from __future__ import annotations

import json

import numpy as np
import streamlit as st

from playground import model_paths
from runtime import experiments as engine
from runtime.experiments import deletion
from runtime.experiments.rollout import translation_rollout

from . import attribution_contrast, attribution_torch, attribution_views, link
from .engine_widgets import _occlusion, opened_sentence, position_picker
from .report import Report
from .widgets import model_label

BENCH_FILE = "experiments/attribution.json"


@st.cache_data(show_spinner=False, max_entries=16)
def _rollout(_em, sentence, version: tuple) -> np.ndarray:
    return translation_rollout(engine.attention_maps(_em, sentence)).source  # (T, S)


@st.cache_data(show_spinner=False, max_entries=16)
def _curves(_em, sentence, position: int, orders: tuple, version: tuple):
    return deletion.deletion_curves(_em, sentence, position, dict(orders))


def benchmark(task: str = "translate") -> dict | None:
    """The benchmark's recorded numbers (python -m bench attribution), or None when there are none or they do not
    read."""
    path = model_paths.model_dir(task) / BENCH_FILE
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def gradients(sentence, position: int, contrast: int | None = None) -> tuple[dict | None, str | None]:
    """The gradient methods' numbers (for log p(A), or log p(A) − log p(B) with `contrast` B), or None and the
    reason (PyTorch missing, or the model would not load)."""
    why_not = attribution_torch.unavailable()
    if why_not:
        return None, why_not
    try:
        with st.spinner(attribution_torch.SPINNER):
            return attribution_torch.translation(sentence.src_ids, sentence.tgt_in_ids, position,
                                                 sentence.output_ids[position], contrast), None
    except Exception as e:  # a model.pt that does not load: said, and the onnxruntime methods still shown
        return None, f"The gradient methods could not run: {model_paths.first_line(e)}"


def experiment(model, base, direction: tuple[str, str], text: str, state: link.Experiment) -> Report | None:
    """Every method's scores for one output token of `base` (the served greedy translation of `text`), side by
    side, with their deletion curves."""
    opened = opened_sentence(model, base, direction, text, "attribute")
    if opened is None:
        return None
    em, sentence, version = opened
    positions = deletion.source_positions(sentence)
    if not positions:
        st.info("The source has no piece to attribute to.")
        return None
    position = position_picker(sentence.output_pieces, state)
    # B only changes the gradient methods: without them there is nothing to contrast
    contrast = None if attribution_torch.unavailable() else attribution_contrast.translation_contrast(
        em, sentence, position, state, version)
    with st.spinner("Occlusion and attention rollout…"):
        scores = {"occlusion": _occlusion(em, sentence, "mask", version).row(position).drop,
                  "rollout": _rollout(em, sentence, version)[position, positions]}
    gradient_result, why_not = gradients(sentence, position, contrast)
    if gradient_result is not None:
        scores |= {m: np.asarray(gradient_result["scores"][m])[positions] for m in attribution_torch.METHODS}
    scores = {m: scores[m] for m in attribution_views.NAMES if m in scores}  # the order the page shows them in
    orders = {m: deletion.order_from_scores(positions, v) for m, v in scores.items()}
    orders["random"] = deletion.random_order(positions, seed=0)
    with st.spinner("Deleting pieces in each method's order…"):
        curves = _curves(em, sentence, position, tuple((m, tuple(o)) for m, o in orders.items()), version)
    token = sentence.output_pieces[position]
    shown = {"model": model_label(state.model), "text": text, "translation": sentence.translation,
             "position": f"{position} ({token})"} | ({"rather than": state.rather} if contrast is not None else {})
    words = attribution_views.benchmark_words(benchmark(), f"{direction[0]}-{direction[1]}")
    pieces = [sentence.src_pieces[i] for i in positions]
    prefix = [*em.tokenizer.tokens([sentence.bos_id]), *sentence.output_pieces[:position]]  # tgt_in_ids[:t + 1]
    return attribution_views.attribution_report(pieces, token, scores, curves, gradient_result, why_not, words, shown,
                                                prefix=prefix, rather=state.rather or None)

