"""The PyTorch side of decoding: `runtime.decoding`'s step interface over a `Seq2SeqTransformer`.

The searches are written once, in numpy (`runtime.decoding`); these backends convert at their own
edge (numpy ids in, numpy log-probabilities out), so the same greedy, beam and sampling code drives
onnxruntime and PyTorch, and their outputs can be compared token for token.
- `TorchBackend`: incremental decoding with the model's KV cache.
- `FullPrefixBackend`: no cache, the whole prefix rerun each step (the reference the cache is tested against).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from runtime.decoding import top_k_numpy

from .layers import LayerCache
from .model import Seq2SeqTransformer


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
        self._weight_t, self._weight_t_key = None, None  # the generator's (D, V) copy and what it was made from

    @torch.inference_mode()
    def encode(self, src_ids: np.ndarray, src_mask: np.ndarray) -> TorchState:
        src_ids, src_mask = self._tensor(src_ids), self._tensor(src_mask)
        memory = self.model.encode(src_ids, src_mask).memory
        return TorchState(src_mask, self.model.init_cache(memory))

    @torch.inference_mode()
    def step(self, tokens: np.ndarray, state: TorchState, attention: bool = False) -> tuple[np.ndarray, TorchState]:
        new = self._tensor(tokens)[:, None]  # (B,) -> (B, 1): one new position per row
        hidden, cache, weights = self.model.decode(new, None, state.src_mask, cache=state.cache,
                                                   need_weights=attention)
        cross = torch.stack(weights["cross"], dim=1)[:, :, :, -1] if attention else None  # L×(B,H,1,S) -> (B,L,H,S)
        return self._log_probs(hidden), TorchState(state.src_mask, cache, cross)

    @staticmethod
    def cross_attention(state: TorchState) -> np.ndarray:
        return state.attention.float().cpu().numpy()

    @staticmethod
    @torch.inference_mode()
    def top_k(values: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """torch.topk: several times faster than numpy's argpartition on (64, 10k) rows (measured). torch picks
        among values tied at the k-th its own way, so rows with such a tie go through the exact numpy ranking;
        the k kept are put in the interface's order (value, NaN as +inf, then index)."""
        k = min(k, values.shape[1])
        full = torch.from_numpy(values)
        top_values, top_index = (t.numpy() for t in full.topk(k, dim=1))
        rank = np.where(np.isnan(top_values), -np.inf, -top_values)
        tied = (full.nan_to_num(nan=float("inf")) >= torch.from_numpy(-rank[:, -1:])).sum(dim=1).numpy() > k
        order = np.lexsort((top_index, rank), axis=1)  # by value, then by index
        top_values, top_index = np.take_along_axis(top_values, order, 1), np.take_along_axis(top_index, order, 1)
        if tied.any():
            top_values[tied], top_index[tied] = top_k_numpy(values[tied], k)
        return top_values, top_index

    @torch.inference_mode()
    def reorder(self, state: TorchState, index: np.ndarray) -> TorchState:
        index = self._tensor(index)
        pick = lambda t: t.index_select(0, index)
        return TorchState(pick(state.src_mask), [tuple(pick(t) for t in layer) for layer in state.cache],
                          None if state.attention is None else pick(state.attention))

    @torch.inference_mode()
    def attention(self, src_ids: np.ndarray, src_mask: np.ndarray, tgt_ids: np.ndarray) -> dict[str, list[np.ndarray]]:
        src_ids, src_mask, tgt_ids = self._tensor(src_ids), self._tensor(src_mask), self._tensor(tgt_ids)
        memory, encoder = self.model.encode(src_ids, src_mask, need_weights=True)
        decoder = self.model.decode(tgt_ids, memory, src_mask, need_weights=True).weights
        to_numpy = lambda ws: [w.float().cpu().numpy() for w in ws]
        return {"encoder": to_numpy(encoder), "self": to_numpy(decoder["self"]), "cross": to_numpy(decoder["cross"])}

    def _tensor(self, array: np.ndarray) -> Tensor:
        return torch.from_numpy(np.asarray(array)).to(self.device)

    def _log_probs(self, hidden: Tensor) -> np.ndarray:
        logits = hidden[:, -1] @ self._output_weight_t()  # (B, T, D) -> (B, D) @ (D, V) -> (B, V), last position
        if self.model.generator.bias is not None:
            logits = logits + self.model.generator.bias
        return logits.float().log_softmax(dim=-1).cpu().numpy()

    def _output_weight_t(self) -> Tensor:
        """The generator's weight as a contiguous (D, V) copy.

        At small batches a step is bound by reading weights, and the (V, D) matrix (tied to the
        embeddings) streams slower through x @ Wᵀ than a D-major copy: measured ~15% of a whole
        step for the default model at batch 1. The copy is remade whenever the weight changes
        (its version counter moves on every in-place update, e.g. an optimizer step).
        """
        weight = self.model.generator.weight
        key = (weight.data_ptr(), weight._version)
        if self._weight_t_key != key:
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

    The reference for the cache (same tokens and scores, `tests/runtime/test_decoding.py`) and the
    "without cache" leg of the decoding benchmark. Only the decoder is recomputed: the encoder's
    output is fixed per source, and recomputing it too would measure something else.
    """

    @torch.inference_mode()
    def encode(self, src_ids: np.ndarray, src_mask: np.ndarray) -> PrefixState:
        src_ids, src_mask = self._tensor(src_ids), self._tensor(src_mask)
        memory = self.model.encode(src_ids, src_mask).memory
        return PrefixState(src_mask, memory, src_ids.new_zeros(src_ids.size(0), 0))

    @torch.inference_mode()
    def step(self, tokens: np.ndarray, state: PrefixState, attention: bool = False) -> tuple[np.ndarray, PrefixState]:
        prefix = torch.cat([state.prefix, self._tensor(tokens)[:, None]], dim=1)  # (B, P) -> (B, P+1)
        hidden, _, weights = self.model.decode(prefix, state.memory, state.src_mask, need_weights=attention)
        cross = torch.stack(weights["cross"], dim=1)[:, :, :, -1] if attention else None  # newest position only
        return self._log_probs(hidden), PrefixState(state.src_mask, state.memory, prefix, cross)

    @torch.inference_mode()
    def reorder(self, state: PrefixState, index: np.ndarray) -> PrefixState:
        index = self._tensor(index)
        return PrefixState(*(t.index_select(0, index) for t in (state.src_mask, state.memory, state.prefix)),
                           None if state.attention is None else state.attention.index_select(0, index))
