"""The Latency page's optional PyTorch column. onnxruntime is the app's own runtime; PyTorch needs torch, which
`pip install .` leaves out: tx (and so torch) is imported inside these functions only, and where it is missing the
page times onnxruntime alone and says how to add it. The only app module that may import tx (tests/test_layering.py).
"""
from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any

import streamlit as st

from .. import model_paths, models

TRAIN_EXTRA = "pip install '.[train]'"


def unavailable() -> str | None:
    """Why the PyTorch column is left out here (torch or tx cannot be imported), or None when it can run."""
    try:
        from tx import inference  # noqa: F401 - only whether it imports
    except ImportError as e:
        if (e.name or "").split(".")[0] == "torch":
            return f"PyTorch is not installed here: the PyTorch column needs the training extra: {TRAIN_EXTRA}"
        return f"PyTorch is left out: {model_paths.first_line(e)}"
    return None


@st.cache_resource(show_spinner=False, max_entries=4)
def _pytorch_model(task: str, path: str, version: tuple):
    from tx import inference

    return (inference.Translator if task == "translate" else inference.SentimentAnalyzer).from_dir(path)


def model(task: str) -> Any:
    """The task's PyTorch wrapper (tx.inference), loaded once per version of its files."""
    return models.load(_pytorch_model, task)


def pinned_threads(threads: int) -> AbstractContextManager:
    """torch's intra-op thread count set to `threads` inside the block (as onnxruntime's)."""
    from tx import inference

    return inference.torch_threads(threads)


def thread_count() -> int:
    import torch  # only called once the PyTorch column ran, so torch is there

    return torch.get_num_threads()
