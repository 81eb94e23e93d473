"""Text in, text out over the PyTorch models: the same `translate` / `classify` as the onnxruntime API.

Everything between a string and the model (tokenising, language tags, truncation, batching, the
searches) is `runtime.text`'s and `runtime.decoding`'s; here the PyTorch models are plugged in:
`Translator` (a `Seq2SeqTransformer` behind `tx.decoding.TorchBackend`) and `SentimentAnalyzer`.
`from_dir` loads a shipped model directory (`config.json` with `meta`, `model.pt`, `tokenizer.json`).
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import torch

from runtime.model_files import CheckpointError, read_model_config, read_tokenizer
from runtime.text import (
    DEFAULT_DIRECTIONS,
    METHODS,
    Prediction,
    TextClassifier,
    TextTokenizer,
    TextTranslator,
    Translation,
)

from .checkpoint import load_model_dir
from .decoding import TorchBackend
from .model import SentimentClassifier, Seq2SeqTransformer

__all__ = ["Translator", "SentimentAnalyzer", "Translation", "Prediction", "METHODS", "DEFAULT_DIRECTIONS",
           "read_meta", "torch_threads"]


def read_meta(model_dir: str | Path, kind: str, task: str) -> dict[str, Any]:
    meta = read_model_config(model_dir, kind)["meta"]
    if meta.get("task", task) != task:
        raise CheckpointError(f"{model_dir}: a {meta['task']} model, expected {task}")
    return meta


class Translator(TextTranslator):
    """`TextTranslator` over the PyTorch model with its KV cache."""

    def __init__(self, model: Seq2SeqTransformer, tokenizer: TextTokenizer, meta: dict[str, Any]):
        super().__init__(TorchBackend(model), tokenizer, meta)
        self.model = model

    @classmethod
    def from_dir(cls, model_dir: str | Path) -> Translator:
        """Load a translation model directory (raises `tx.CheckpointError` if it is not one)."""
        meta = read_meta(model_dir, "seq2seq", "translate")
        return cls(load_model_dir(model_dir, "seq2seq"), read_tokenizer(model_dir), meta)


class SentimentAnalyzer(TextClassifier):
    """`TextClassifier` over the PyTorch `SentimentClassifier`."""

    def __init__(self, model: SentimentClassifier, tokenizer: TextTokenizer, meta: dict[str, Any]):
        self.model = model.eval()
        super().__init__(self.model_logits, tokenizer, meta, returns="logits", max_positions=model.config.max_len)

    @torch.inference_mode()
    def model_logits(self, ids: np.ndarray, mask: np.ndarray, need_weights: bool):
        logits, weights = self.model.classify(torch.from_numpy(ids), torch.from_numpy(mask), need_weights)
        return logits.float().numpy(), None if weights is None else [w.float().numpy() for w in weights]

    @classmethod
    def from_dir(cls, model_dir: str | Path) -> SentimentAnalyzer:
        """Load a sentiment model directory (raises `tx.CheckpointError` if it is not one)."""
        meta = read_meta(model_dir, "classifier", "sentiment")
        return cls(load_model_dir(model_dir, "classifier"), read_tokenizer(model_dir), meta)


@contextlib.contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """torch's intra-op thread count for the calling thread, restored after (benchmarks pin both engines alike)."""
    previous = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(previous)
