"""The gradient half of "Attribute a token" (saliency, input × gradient, integrated gradients: tx.attribution).
Gradients need PyTorch, which `pip install .` leaves out: tx (and so torch) is imported inside these functions only,
and where it is missing the page shows occlusion and rollout alone and says which extra to install. With
playground/latency/pytorch.py, the only app modules that may import tx (tests/test_layering.py,
tests/app/test_pages.py). The results cross to the page as plain numbers, never as tx objects."""
from __future__ import annotations

from typing import Any

import streamlit as st

from .. import model_paths, models

TRAIN_EXTRA = "pip install '.[train]'"
METHODS = ("saliency", "input_x_gradient", "integrated_gradients")
SPINNER = ("Saliency, input × gradient and integrated gradients (64 steps, doubled while the completeness error "
           "is over 1%)…")


def unavailable() -> str | None:
    """Why the gradient methods are left out here (torch or tx cannot be imported), or None when they can run."""
    try:
        from tx import attribution  # noqa: F401 - only whether it imports
    except ImportError as e:
        if (e.name or "").split(".")[0] == "torch":
            return ("PyTorch is not installed here: saliency, input × gradient and integrated gradients need the "
                    f"training extra: {TRAIN_EXTRA}")
        return f"The gradient methods are left out: {model_paths.first_line(e)}"
    return None


@st.cache_resource(show_spinner=False, max_entries=2)
def _torch_model(task: str, path: str, version: tuple):
    from tx.checkpoint import load_model_dir

    return load_model_dir(path, "seq2seq" if task == "translate" else "classifier")


@st.cache_data(show_spinner=False, max_entries=16)
def _attribute(task: str, ids: tuple, prefix: tuple, position: int, target: int, contrast: int | None,
               version: tuple) -> dict[str, Any]:
    from tx.attribution import attribute_classification, attribute_translation

    model = models.load(_torch_model, task)
    if task == "translate":
        a = attribute_translation(model, list(ids), list(prefix), position, target, contrast)
    else:
        a = attribute_classification(model, list(ids), target, contrast)
    return {"scores": {m: a.source(m) for m in METHODS}, "prefix": {m: a.prefix(m) for m in METHODS},
            "completeness_error": a.completeness_error, "value": a.value, "baseline_value": a.baseline_value,
            "steps": a.steps, "rule": a.rule, "baseline": a.baseline, "passes": [list(p) for p in a.passes]}


def translation(src_ids: list[int], tgt_in_ids: list[int], position: int, target: int,
                contrast: int | None = None) -> dict[str, Any]:
    """The three methods for output token `position` of the shipped translator (log p(target), or with `contrast`
    token B: log p(target) − log p(B)): {"scores": {method: (S,)}, "prefix": {method: (position + 1,)},
    "completeness_error", "value", "baseline_value", "steps", "rule", "baseline", "passes": [[steps, error], ...]}
    (each integrated-gradients pass; more than one where the first missed 1% and the steps were doubled)."""
    return _attribute("translate", tuple(src_ids), tuple(tgt_in_ids[:position + 1]), position, target, contrast,
                      model_paths.stamp("translate"))


def classification(ids: list[int], label: int, contrast: int | None = None) -> dict[str, Any]:
    """The same for the shipped classifier's logit of `label` (minus label `contrast`'s) over the review's pieces."""
    return _attribute("sentiment", tuple(ids), (), 0, label, contrast, model_paths.stamp("sentiment"))
