"""The onnxruntime inference API: what the app calls for every model output.

    from export import OnnxTranslator, OnnxSentimentClassifier
    translator = OnnxTranslator("models/translate", provider="auto", precision="int8", threads=2)
    translator.translate(["Guten Morgen!"], src_lang="de", tgt_lang="en", method="beam", attention=True)
    OnnxSentimentClassifier("models/sentiment").classify(["a gem of a film"], attention=True)

Text handling (tokenising, language tags, truncation, batching, searches) is tx.inference's
and tx.decoding's, shared with the PyTorch wrappers; here only the graphs run. Sessions are
shared per (file, provider, threads) across every wrapper in the process, and the wrappers
keep no per-call state, so one instance may serve many threads.

Failures: `ModelLoadError` (a tx.CheckpointError) for a missing/corrupt/stale ONNX file, a
tokenizer that does not fit, or a model directory of the other task, naming the file and the
fixing command; `ProviderError` when provider="cuda" and CUDA cannot run; ValueError for bad
input text (see tx.inference).
"""
from __future__ import annotations

import contextlib
from pathlib import Path

import numpy as np
import torch

from tx.inference import TextClassifier, TextTranslator

from .backend import OnnxBackend, run_plain
from .model_files import ModelFiles, ModelLoadError, load_tokenizer
from .providers import ProviderError, check_provider
from .spec import PRECISIONS, classifier_graph

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

    def search(self, *args, **kwargs):
        """The searches' own tensor ops (topk, argmax over ~10^4 log-probs per row) single-threaded: with torch's
        OpenMP threads on the same cores as onnxruntime's, each parallel op waits for a thread the other pool holds.
        Measured (2 cores, int8, 2 threads, medians of 3 passes, 2026-11-25): beam 4 over 8 sentences one by one
        228 vs 287 ms, and 912 vs 1972 ms under 5 busy processes; beam 4 and greedy at batch 16 ~20% faster.
        Per calling thread (OpenMP's thread count is), so other threads' PyTorch keeps its own."""
        with torch_threads(1):
            return super().search(*args, **kwargs)


@contextlib.contextmanager
def torch_threads(n: int):
    """torch's intra-op thread count for the calling thread, restored after."""
    previous = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


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
