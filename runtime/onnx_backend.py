"""`OnnxBackend`: runtime.decoding's step interface over the encoder and KV-cache decoder graphs.

The searches (greedy, beam, sampling) are runtime.decoding's own; this file only moves arrays
between them and onnxruntime. Two ways of running a graph:
- plain `session.run` with numpy arrays: the CPU path (binding brings nothing there but extra
  calls per step: docs/export-and-runtime.md#decoding-backend);
- IOBinding with the KV cache kept as OrtValues on the session's device: the CUDA path, so
  the cache never crosses PCIe between steps; beam reordering then runs a one-node Gather
  graph on the same device. Only log-probs come back to the host. This path runs in the
  tests on the CPU device (io_binding=True); on CUDA it is untested here (no GPU machine).
"""
from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort

from .decoding import top_k_numpy
from .model_files import ModelFiles
from .providers import CPU, CUDA, SessionHandle, session_options
from .spec import decoder_explain_graph, decoder_graph, encoder_explain_graph, encoder_graph

Array = Any  # np.ndarray, or ort.OrtValue on the session's device when binding


@dataclass(frozen=True)
class OnnxState:
    src_mask: np.ndarray  # (B, S) bool, always on the host (tiny)
    cross: tuple[Array, ...]  # cross_k_0, cross_v_0, ...: (B, H, S, K) each
    past: tuple[Array, ...]  # past_self_k_0, past_self_v_0, ...: (B, H, P, K) each
    sources: np.ndarray  # (B,) which encoded source each row's src_mask and cross K/V belong to
    attention: tuple[np.ndarray, ...] | None = None  # the last step's step_attn_cross_*, when asked for


def run_plain(handle: SessionHandle, feeds: Mapping[str, np.ndarray], outputs: list[str]) -> list[np.ndarray]:
    return handle.session.run(outputs, dict(feeds))


def run_bound(handle: SessionHandle, feeds: Mapping[str, Array], outputs: list[str], device: str,
              host_outputs: set[str]) -> list[Array]:
    """Run with IOBinding: OrtValue inputs stay where they are, numpy inputs are copied in,
    outputs stay on `device` except `host_outputs`, which come back as numpy arrays."""
    binding = handle.session.io_binding()  # one per call: bindings are not shared between threads
    for name, value in feeds.items():
        if isinstance(value, ort.OrtValue):
            binding.bind_ortvalue_input(name, value)
        else:
            binding.bind_cpu_input(name, np.ascontiguousarray(value))
    for name in outputs:
        binding.bind_output(name, "cpu" if name in host_outputs else device)
    handle.session.run_with_iobinding(binding)
    values = binding.get_outputs()
    return [v.numpy() if name in host_outputs else v for name, v in zip(outputs, values, strict=True)]


# One-node graphs the searches run between decoder steps, shipped beside this file (built and checked by
# `export/ops.py`: this package reads ONNX files, it never builds them).
OPS_DIR = Path(__file__).parent / "ops"
GATHER_ROWS, TOP_K = "gather_rows.onnx", "top_k.onnx"

_op_sessions: dict[tuple[str, str, int | None], SessionHandle] = {}
_op_lock = threading.Lock()


def op_session(name: str, provider: str, threads: int | None) -> SessionHandle:
    """The shared session of one of the one-node graphs in OPS_DIR."""
    with _op_lock:
        key = (name, provider, threads)
        if key not in _op_sessions:
            session = ort.InferenceSession(str(OPS_DIR / name), session_options(threads), providers=[provider])
            _op_sessions[key] = SessionHandle(session, session.get_providers()[0], None, threads)
        return _op_sessions[key]


class OnnxBackend:
    """KV-cached decoding with onnxruntime: `encode` once, then one decoder-graph call per token.

    Holds no per-call state, so one backend may serve many threads at once.
    """

    def __init__(self, files: ModelFiles, precision: str = "fp32", provider: str = "auto",
                 threads: int | None = None, io_binding: bool | None = None):
        """io_binding: None = only under CUDA (where it pays); True forces it (tests run it on CPU)."""
        self.files, self.precision, self.threads = files, precision, threads
        self.requested_provider = provider
        shape = files.shape
        self.encoder_spec, self.decoder_spec = encoder_graph(shape), decoder_graph(shape)
        self.encoder = files.session(self.encoder_spec, precision, provider, threads)
        self.decoder = files.session(self.decoder_spec, precision, provider, threads)
        self.provider, self.provider_note = self.decoder.provider, self.decoder.note
        self.binding = (self.provider == CUDA) if io_binding is None else io_binding
        self.device = "cuda" if self.provider == CUDA else "cpu"
        self.max_source_len = self.max_target_len = files.max_len  # the positional table's length
        self.cross_names = [t.name for t in self.encoder_spec.outputs[1:]]
        self.past_names = [t.name for t in self.decoder_spec.inputs if t.name.startswith("past_self_")]
        self.present_names = [n for n in self.decoder_spec.output_names if n.startswith("present_self_")]
        self.step_attention_names = [n for n in self.decoder_spec.output_names if n.startswith("step_attn_cross_")]
        self.head_shape = (shape.n_heads, shape.head_dim)
        # Names of a step's feeds and, without and with attention, of its outputs (and those that come back
        # to the host): built once, as a beam step's own Python time is a few hundred µs.
        self.step_inputs = ["tokens", "src_mask", *self.past_names, *self.cross_names]
        self.step_outputs = {False: (["log_probs", *self.present_names], {"log_probs"}),
                             True: (["log_probs", *self.present_names, *self.step_attention_names],
                                    {"log_probs", *self.step_attention_names})}

    def run(self, handle: SessionHandle, feeds: Mapping[str, Array], outputs: list[str],
            host_outputs: set[str]) -> list[Array]:
        if self.binding:
            return run_bound(handle, feeds, outputs, self.device, host_outputs)
        return run_plain(handle, feeds, outputs)

    def encode(self, src_ids: np.ndarray, src_mask: np.ndarray) -> OnnxState:
        ids = np.ascontiguousarray(src_ids, dtype=np.int64)
        mask = np.ascontiguousarray(src_mask, dtype=bool)
        cross = self.run(self.encoder, {"src_ids": ids, "src_mask": mask}, self.cross_names, host_outputs=set())
        heads, head_dim = self.head_shape
        empty = np.zeros((ids.shape[0], heads, 0, head_dim), dtype=np.float32)  # (B, H, 0, K): no past yet
        if self.binding:
            empty = ort.OrtValue.ortvalue_from_numpy(empty, self.device, 0)
        return OnnxState(mask, tuple(cross), (empty,) * len(self.past_names), np.arange(ids.shape[0]))

    def step(self, tokens: np.ndarray, state: OnnxState, attention: bool = False) -> tuple[np.ndarray, OnnxState]:
        new = np.ascontiguousarray(tokens, dtype=np.int64)[:, None]  # (B,) -> (B, 1)
        feeds = dict(zip(self.step_inputs, (new, state.src_mask, *state.past, *state.cross), strict=True))
        # The weights are computed either way; asking for them only costs their copy out.
        outputs, host_outputs = self.step_outputs[bool(attention)]
        log_probs, *rest = self.run(self.decoder, feeds, outputs, host_outputs)
        present = len(self.present_names)
        newest = log_probs[:, -1]  # (B, 1, V) -> (B, V)
        return newest, OnnxState(state.src_mask, state.cross, tuple(rest[:present]), state.sources,
                                 tuple(rest[present:]) if attention else None)

    @staticmethod
    def cross_attention(state: OnnxState) -> np.ndarray:
        """The last step's cross-attention: L × (B, H, 1, S) -> (B, L, H, S)."""
        return np.stack([w[:, :, -1] for w in state.attention], axis=1)

    @staticmethod
    def top_k(values: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """onnxruntime's TopK (ties: lower index first) on one CPU thread: the log-probs are on the host already,
        and at (4..64, 10k) a second thread costs more than it brings. NaN (a broken model) goes
        through numpy, which ranks it as +inf as the interface says; TopK's comparisons would put it anywhere."""
        if np.isnan(values).any():
            return top_k_numpy(values, k)
        session = op_session(TOP_K, CPU, 1).session
        top_values, top_index = session.run(None, {"values": np.ascontiguousarray(values, dtype=np.float32),
                                                   "k": np.array([min(k, values.shape[1])], dtype=np.int64)})
        return top_values, top_index

    def reorder(self, state: OnnxState, index: np.ndarray) -> OnnxState:
        rows = np.ascontiguousarray(index, dtype=np.int64)
        if self.binding:
            gather = op_session(GATHER_ROWS, self.decoder.provider, self.threads)
            take = lambda a: run_bound(gather, {"data": a, "index": rows}, ["rows"], self.device, set())[0]
        else:
            take = lambda a: a.take(rows, axis=0)
        sources = state.sources[rows]
        past = tuple(map(take, state.past))
        # Compared as lists: cheaper than np.array_equal here, right after a decoder step (docs/export-and-runtime.md).
        if sources.tolist() == state.sources.tolist():
            # Beam search mostly permutes beams within a sentence: rows of one source hold identical
            # cross K/V, so they need no copy (the copies were a large share of a beam step).
            return OnnxState(state.src_mask, state.cross, past, state.sources)
        n = len(sources)
        if not self.binding and sources.tolist() == state.sources[:n].tolist():
            # Rows left the batch (finished alternatives of one sentence, say) and the first n rows already hold
            # the sources of the n that stay: their cross K/V serve as views, no copy (docs/steering.md, Speed).
            return OnnxState(state.src_mask[:n], tuple(a[:n] for a in state.cross), past, sources)
        return OnnxState(state.src_mask.take(rows, axis=0), tuple(map(take, state.cross)), past, sources)

    def attention(self, src_ids: np.ndarray, src_mask: np.ndarray, tgt_ids: np.ndarray) -> dict[str, list]:
        """Attention weights from the explain graphs (same precision and provider as the decoding)."""
        shape = self.files.shape
        enc_spec, dec_spec = encoder_explain_graph(shape), decoder_explain_graph(shape)
        encoder = self.files.session(enc_spec, self.precision, self.requested_provider, self.threads)
        decoder = self.files.session(dec_spec, self.precision, self.requested_provider, self.threads)
        mask = np.ascontiguousarray(src_mask, dtype=bool)
        memory, *encoder_weights = run_plain(
            encoder, {"src_ids": np.ascontiguousarray(src_ids, dtype=np.int64), "src_mask": mask},
            enc_spec.output_names)
        _, *decoder_weights = run_plain(
            decoder, {"tgt_ids": np.ascontiguousarray(tgt_ids, dtype=np.int64), "memory": memory,
                      "src_mask": mask}, dec_spec.output_names)
        layers = shape.n_decoder_layers
        return {"encoder": encoder_weights, "self": decoder_weights[:layers], "cross": decoder_weights[layers:]}
