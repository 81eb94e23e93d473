"""The onnxruntime inference API: what the app calls for every model output.

    from runtime import OnnxTranslator, OnnxSentimentClassifier
    translator = OnnxTranslator("models/translate", provider="auto", precision="int8", threads=2)
    translator.translate(["Guten Morgen!"], src_lang="de", tgt_lang="en", method="beam", attention="cross")
    OnnxSentimentClassifier("models/sentiment").classify(["a gem of a film"], attention=True)

Text handling (tokenising, language tags, truncation, batching) is runtime.text's and the searches are
runtime.decoding's, shared with the PyTorch wrappers (tx.inference); here only the graphs run. Sessions are
shared per (file, provider, threads) across every wrapper in the process, and the wrappers
keep no per-call state, so one instance may serve many threads.

Failures: `ModelLoadError` (a `runtime.model_files.CheckpointError`, which tx re-exports) for a
missing/corrupt/stale ONNX file, a tokenizer that does not fit, or a model directory of the other task,
naming the file and the fixing command; `ProviderError` when provider="cuda" and CUDA cannot run; ValueError for bad
input text (see runtime.text).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .model_files import ModelFiles, ModelLoadError, load_tokenizer
from .onnx_backend import OnnxBackend, run_plain
from .providers import ProviderError, check_provider
from .spec import PRECISIONS, classifier_graph
from .text import TextClassifier, TextTranslator

__all__ = ["OnnxTranslator", "OnnxSentimentClassifier", "ModelLoadError", "ProviderError"]


def check_options(provider: str, precision: str, threads: int | None) -> None:
    check_provider(provider)
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
    if threads is not None and (not isinstance(threads, int) or threads < 1):
        raise ValueError(f"threads must be a positive int (or None for onnxruntime's default), got {threads!r}")


class OnnxTranslator(TextTranslator):
    """`TextTranslator` over the exported encoder + KV-cache decoder graphs.

    `.provider` is the execution provider that really runs (session.get_providers()[0]);
    `.provider_note` says why CUDA is not used when provider="auto" could not start it.
    """

    def __init__(self, model_dir: str | Path, provider: str = "auto", precision: str = "fp32",
                 threads: int | None = None, io_binding: bool | None = None):
        check_options(provider, precision, threads)
        files = ModelFiles.open(model_dir, "seq2seq")
        tokenizer = load_tokenizer(files)
        backend = OnnxBackend(files, precision, provider, threads, io_binding)
        files.check_tokenizer(tokenizer, backend.decoder)
        try:
            super().__init__(backend, tokenizer, files.meta)
        except ValueError as e:  # e.g. the tokenizer lacks a language tag the meta names
            raise ModelLoadError(f"{files.model_dir}: tokenizer and meta do not fit ({e})") from e
        self.model_dir, self.precision, self.threads = files.model_dir, precision, threads
        self.provider, self.provider_note = backend.provider, backend.provider_note


class OnnxSentimentClassifier(TextClassifier):
    """`TextClassifier` over the exported classifier graph; attention=True runs its explain variant."""

    def __init__(self, model_dir: str | Path, provider: str = "auto", precision: str = "fp32",
                 threads: int | None = None):
        check_options(provider, precision, threads)
        files = ModelFiles.open(model_dir, "classifier")
        tokenizer = load_tokenizer(files)
        self.files, self.requested_provider = files, provider
        self.lean_spec, self.explain_spec = classifier_graph(files.shape), classifier_graph(files.shape, explain=True)
        handle = self.lean = files.session(self.lean_spec, precision, provider, threads)
        files.check_tokenizer(tokenizer, handle)
        self.model_dir, self.precision, self.threads = files.model_dir, precision, threads
        self.provider, self.provider_note = handle.provider, handle.note
        try:
            super().__init__(self.logits, tokenizer, files.meta, returns="logits", max_positions=files.max_len)
        except ValueError as e:  # meta without labels
            raise ModelLoadError(f"{files.model_dir / 'config.json'}: {e}") from e

    def logits(self, ids: np.ndarray, mask: np.ndarray, need_weights: bool):
        """The `LogitsFn` of TextClassifier: (B, S) ids and mask -> logits (B, C), attention or None."""
        spec = self.explain_spec if need_weights else self.lean_spec
        # The explain graph loads on first use (most callers never ask for attention).
        handle = self.files.session(spec, self.precision, self.requested_provider, self.threads) \
            if need_weights else self.lean
        feeds = {"input_ids": np.ascontiguousarray(ids, dtype=np.int64),
                 "attention_mask": np.ascontiguousarray(mask, dtype=bool)}
        logits, *weights = run_plain(handle, feeds, spec.output_names)
        return logits, (weights if need_weights else None)
