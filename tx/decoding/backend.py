"""The step interface every search algorithm is written against, and its two PyTorch implementations.

A search only ever calls `encode` once, then `step` / `reorder` per generated token, so the
same greedy, beam and sampling code drives the PyTorch model here and onnxruntime sessions
in `export/`. `State` is opaque to the search: each backend keeps whatever it needs in it.

Optional backend attributes, read with `getattr(..., None)`: `max_source_len` and
`max_target_len` (ints), the longest source and the most target tokens the model's
positional table allows; searches and `TextTranslator` stay within them.

Attention from the search itself: a backend that can, takes `step(tokens, state, attention=True)`
and then answers `cross_attention(new_state)` with that step's cross-attention weights
(B, L, H, S): the maps a page shows then come from the very search that produced the text.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import torch
from torch import Tensor

from ..layers import LayerCache
from ..model import Seq2SeqTransformer

State = Any


class DecoderBackend(Protocol):
    def encode(self, src_ids: Tensor, src_mask: Tensor) -> State:
        """src_ids (B, S) long, src_mask (B, S) bool True at real tokens -> state before the first step."""

    def step(self, tokens: Tensor, state: State) -> tuple[Tensor, State]:
        """tokens (B,) the newest token of each row (BOS first) -> (log_probs (B, V) float32, new state).
        (Backends that record attention also take attention=True; see the module doc.)"""

    def reorder(self, state: State, index: Tensor) -> State:
        """Keep/repeat/permute batch rows: row i of the result is row index[i] of `state`."""

    def attention(self, src_ids: Tensor, src_mask: Tensor, tgt_ids: Tensor) -> dict[str, list[np.ndarray]]:
        """Teacher-forced pass on decoder inputs tgt_ids (B, T) returning the attention weights:
        {"encoder": L × (B, H, S, S), "self": L × (B, H, T, T), "cross": L × (B, H, T, S)}."""


@dataclass
class TorchState:
    src_mask: Tensor  # (B, S) True at real source tokens
    cache: list[LayerCache]  # per decoder layer: self K/V (B, H, P, K), cross K/V (B, H, S, K)
    attention: Tensor | None = None  # (B, L, H, S) the last step's cross-attention, when it was asked for


class TorchBackend:
    """Incremental decoding with the model's KV cache: each step feeds only the newest token."""

    def __init__(self, model: Seq2SeqTransformer):
        self.model = model.eval()  # dropout off: decoding must be deterministic
        self.max_source_len = self.max_target_len = model.config.max_len
        self.device = next(model.parameters()).device

    @torch.inference_mode()
    def encode(self, src_ids: Tensor, src_mask: Tensor) -> TorchState:
        src_ids, src_mask = src_ids.to(self.device), src_mask.to(self.device)
        memory = self.model.encode(src_ids, src_mask).memory
        return TorchState(src_mask, self.model.init_cache(memory))

    @torch.inference_mode()
    def step(self, tokens: Tensor, state: TorchState, attention: bool = False) -> tuple[Tensor, TorchState]:
        new = tokens.to(self.device)[:, None]  # (B,) -> (B, 1): one new position per row
        hidden, cache, weights = self.model.decode(new, None, state.src_mask, cache=state.cache,
                                                   need_weights=attention)
        cross = torch.stack(weights["cross"], dim=1)[:, :, :, -1] if attention else None  # L×(B,H,1,S) -> (B,L,H,S)
        return self._log_probs(hidden), TorchState(state.src_mask, cache, cross)

    @staticmethod
    def cross_attention(state: TorchState) -> Tensor:
        return state.attention

    @torch.inference_mode()
    def reorder(self, state: TorchState, index: Tensor) -> TorchState:
        index = index.to(self.device)
        pick = lambda t: t.index_select(0, index)
        return TorchState(pick(state.src_mask), [tuple(pick(t) for t in layer) for layer in state.cache],
                          None if state.attention is None else pick(state.attention))

    @torch.inference_mode()
    def attention(self, src_ids: Tensor, src_mask: Tensor, tgt_ids: Tensor) -> dict[str, list[np.ndarray]]:
        src_ids, src_mask, tgt_ids = src_ids.to(self.device), src_mask.to(self.device), tgt_ids.to(self.device)
        memory, encoder = self.model.encode(src_ids, src_mask, need_weights=True)
        decoder = self.model.decode(tgt_ids, memory, src_mask, need_weights=True).weights
        to_numpy = lambda ws: [w.float().cpu().numpy() for w in ws]
        return {"encoder": to_numpy(encoder), "self": to_numpy(decoder["self"]), "cross": to_numpy(decoder["cross"])}

    def _log_probs(self, hidden: Tensor) -> Tensor:
        logits = hidden[:, -1] @ self._output_weight_t()  # (B, T, D) -> (B, D) @ (D, V) -> (B, V), last position
        if self.model.generator.bias is not None:
            logits = logits + self.model.generator.bias
        return logits.float().log_softmax(dim=-1)

    def _output_weight_t(self) -> Tensor:
        """The generator's weight as a contiguous (D, V) copy.

        At small batches a step is bound by reading weights, and the (V, D) matrix (tied to the
        embeddings) streams slower through x @ Wᵀ than a D-major copy: measured ~15% of a whole
        step for the default model at batch 1. The copy is remade whenever the weight changes
        (its version counter moves on every in-place update, e.g. an optimizer step).
        """
        weight = self.model.generator.weight
        key = (weight.data_ptr(), weight._version)
        if getattr(self, "_weight_t_key", None) != key:
            self._weight_t, self._weight_t_key = weight.detach().t().contiguous(), key
        return self._weight_t


@dataclass
class PrefixState:
    src_mask: Tensor  # (B, S)
    memory: Tensor  # (B, S, D): the encoder output does not change while decoding, so it is kept
    prefix: Tensor  # (B, P) every decoder input so far, BOS first
    attention: Tensor | None = None  # (B, L, H, S) the last step's cross-attention, when it was asked for


class FullPrefixBackend(TorchBackend):
    """Decoding without a KV cache: every step reruns the whole decoder over the full prefix.

    The reference for the cache (same tokens and scores, `tests/test_decoding.py`) and the
    "without cache" leg of `tx.bench_decode`. Only the decoder is recomputed: the encoder's
    output is fixed per source, and recomputing it too would measure something else.
    """

    @torch.inference_mode()
    def encode(self, src_ids: Tensor, src_mask: Tensor) -> PrefixState:
        src_ids, src_mask = src_ids.to(self.device), src_mask.to(self.device)
        memory = self.model.encode(src_ids, src_mask).memory
        return PrefixState(src_mask, memory, src_ids.new_zeros(src_ids.size(0), 0))

    @torch.inference_mode()
    def step(self, tokens: Tensor, state: PrefixState, attention: bool = False) -> tuple[Tensor, PrefixState]:
        prefix = torch.cat([state.prefix, tokens.to(self.device)[:, None]], dim=1)  # (B, P) -> (B, P+1)
        hidden, _, weights = self.model.decode(prefix, state.memory, state.src_mask, need_weights=attention)
        cross = torch.stack(weights["cross"], dim=1)[:, :, :, -1] if attention else None  # newest position only
        return self._log_probs(hidden), PrefixState(state.src_mask, state.memory, prefix, cross)

    @torch.inference_mode()
    def reorder(self, state: PrefixState, index: Tensor) -> PrefixState:
        index = index.to(self.device)
        return PrefixState(*(t.index_select(0, index) for t in (state.src_mask, state.memory, state.prefix)),
                           None if state.attention is None else state.attention.index_select(0, index))
