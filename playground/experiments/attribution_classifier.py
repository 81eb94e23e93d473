"""The Experiments page's "Attribute the label" for the sentiment classifier: occlusion and rollout (onnxruntime),
the gradient methods where PyTorch is installed (attribution_torch), each with its deletion curve over the review's
pieces; the report is attribution_views'. Keys start with "exp_"."""
from __future__ import annotations

import numpy as np
import streamlit as st

from playground import model_paths
from runtime.experiments import deletion
from runtime.experiments.rollout import classifier_rollout

from . import attribution_contrast, attribution_torch, attribution_views, link
from .classifier_widgets import _occlusion, reviewed
from .report import Report


@st.cache_data(show_spinner=False, max_entries=16)
def _rollout(_cem, review, version: tuple) -> np.ndarray:
    ids = np.array([review.ids], dtype=np.int64)
    return classifier_rollout(_cem.run(ids, np.ones_like(ids, dtype=bool))["enc_self_weights"][:, 0])


@st.cache_data(show_spinner=False, max_entries=16)
def _curves(_cem, review, orders: tuple, version: tuple):
    return deletion.classifier_deletion_curves(_cem, review, dict(orders))


def gradients(review, contrast: int | None = None) -> tuple[dict | None, str | None]:
    why_not = attribution_torch.unavailable()
    if why_not:
        return None, why_not
    try:
        with st.spinner(attribution_torch.SPINNER):
            return attribution_torch.classification(review.ids, review.label_index, contrast), None
    except Exception as e:  # a model.pt that does not load: said, and the onnxruntime methods still shown
        return None, f"The gradient methods could not run: {model_paths.first_line(e)}"


def experiment(text: str, state: link.Experiment) -> Report | None:
    """Every method's scores for the label the classifier gave `text`, with their deletion curves."""
    loaded = reviewed(text)
    if loaded is None:
        return None
    cem, review, version = loaded
    if len(review.ids) < 2:
        st.info("One piece only: there is nothing to rank.")
        return None
    with st.spinner("Occlusion and attention rollout…"):
        scores = {"occlusion": _occlusion(cem, review, "mask", version).drop, "rollout": _rollout(cem, review, version)}
    # B only changes the gradient methods: without them there is nothing to contrast
    contrast = None if attribution_torch.unavailable() else attribution_contrast.classifier_contrast(review, state)
    gradient_result, why_not = gradients(review, contrast)
    if gradient_result is not None:
        scores |= {m: np.asarray(gradient_result["scores"][m]) for m in attribution_torch.METHODS}
    scores = {m: scores[m] for m in attribution_views.NAMES if m in scores}
    positions = list(range(len(review.ids)))
    orders = {m: deletion.order_from_scores(positions, v) for m, v in scores.items()}
    orders["random"] = deletion.random_order(positions, seed=0)
    with st.spinner("Deleting pieces in each method's order…"):
        curves = _curves(cem, review, tuple((m, tuple(o)) for m, o in orders.items()), version)
    shown = {"model": "Sentiment classifier", "text": text, "label": review.label} | (
        {"rather than": state.rather} if contrast is not None else {})
    words = ("The deletion benchmark (`python -m bench attribution`) measures the translator; for the classifier, "
             "read this text's curves.")
    return attribution_views.attribution_report(list(review.pieces), f"{review.label}", scores, curves, gradient_result,
                                                why_not, words, shown, what="the label", rather=state.rather or None)
