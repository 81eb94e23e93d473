"""The step interface every search is written against: numpy arrays in, numpy arrays out.

A search calls `encode` once, then `step` / `reorder` per generated token, so the same greedy,
beam and sampling code drives onnxruntime sessions (`runtime.onnx_backend`) and the PyTorch model
(`tx.decoding`, which converts at its own edge). `State` is opaque to the search: each backend
keeps whatever it needs in it.

Every backend has every member below; none is optional, so a search never has to ask.
"""
from __future__ import annotations

from typing import Any, Protocol

import numpy as np

State = Any


class DecoderBackend(Protocol):
    max_source_len: int | None  # the longest source its positional table allows (None: no limit)
    max_target_len: int | None  # the most target tokens its positional table allows (None: no limit)

    def encode(self, src_ids: np.ndarray, src_mask: np.ndarray) -> State:
        """src_ids (B, S) int64, src_mask (B, S) bool True at real tokens -> state before the first step."""

    def step(self, tokens: np.ndarray, state: State, attention: bool = False) -> tuple[np.ndarray, State]:
        """tokens (B,) int64, the newest token of each row (BOS first) -> (log_probs (B, V) float32, new state).
        attention=True: the new state also holds this step's cross-attention (see `cross_attention`)."""

    def cross_attention(self, state: State) -> np.ndarray:
        """(B, L, H, S) float32: the cross-attention of the step that produced `state` (stepped with attention=True).
        The maps a page shows then come from the very search that produced the text."""

    def reorder(self, state: State, index: np.ndarray) -> State:
        """Keep/repeat/permute batch rows: row i of the result is row index[i] (int64) of `state`."""

    def top_k(self, values: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The k largest of each row of values (N, M) float32, largest first: (values (N, k), indices (N, k) int64).
        NaN ranks as +inf; equal values: the lower index first. (Each backend picks the fastest exact way it has.)"""

    def attention(self, src_ids: np.ndarray, src_mask: np.ndarray, tgt_ids: np.ndarray) -> dict[str, list[np.ndarray]]:
        """Teacher-forced pass on decoder inputs tgt_ids (B, T) returning the attention weights:
        {"encoder": L × (B, H, S, S), "self": L × (B, H, T, T), "cross": L × (B, H, T, S)}."""


def top_k_numpy(values: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """`DecoderBackend.top_k` in numpy: exact, NaN ranked as +inf, ties to the lower index.

    A stable sort of the negated values keeps equal values in index order; argpartition first when k is small
    (it is several times slower than onnxruntime's TopK on a (64, 10k) array, which is why backends bring their own)."""
    n, m = values.shape
    k = min(k, m)
    keyed = np.where(np.isnan(values), np.inf, values)  # NaN first, as onnxruntime ranks it
    if k < m // 4:
        part = np.argpartition(-keyed, k - 1, axis=1)[:, :k]  # the k largest, unordered
        # the k-th value may be tied outside `part`: take every index tied with it, then sort stably
        kth = np.take_along_axis(keyed, part, 1).min(axis=1, keepdims=True)
        if (keyed >= kth).sum(axis=1).max() > k:
            part = None
    else:
        part = None
    if part is None:
        order = np.argsort(-keyed, axis=1, kind="stable")[:, :k]
    else:
        # rows whose k largest are unique beyond the k-th: sort them by (value desc, index asc)
        cand = np.sort(part, axis=1)  # index order first, so the stable sort below breaks ties by index
        order = np.take_along_axis(cand, np.argsort(-np.take_along_axis(keyed, cand, 1), axis=1, kind="stable"), 1)
    return np.take_along_axis(values, order, 1), order.astype(np.int64)
