"""Grouping texts into model calls: padding token lists into arrays, and batches of similar length."""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import chain

import numpy as np

BATCH_SIZE = 32  # sentences per model call; sorted by length first so each batch pads little


def pad(rows: Sequence[Sequence[int]], pad_id: int) -> tuple[np.ndarray, np.ndarray]:
    """The one padding helper (training batches and inference alike): token lists -> ids (B, S) int64, right-padded
    with pad_id, and mask (B, S) bool, True at real tokens. Training wraps ids with torch.from_numpy (no copy)."""
    lengths = np.fromiter((len(r) for r in rows), dtype=np.int64, count=len(rows))
    width = max(1, int(lengths.max(initial=0)))
    mask = np.arange(width) < lengths[:, None]  # (B, S)
    ids = np.full((len(rows), width), pad_id, dtype=np.int64)
    # the mask's True cells, read row by row, are exactly the rows' tokens one after another: one vectorised write
    # instead of a Python loop (a GPU run pads ~1M pairs into batches before its first step)
    ids[mask] = np.fromiter(chain.from_iterable(rows), dtype=np.int64, count=int(lengths.sum()))
    return ids, mask


def batches_by_length(lengths: Sequence[int], size: int = BATCH_SIZE) -> Iterator[list[int]]:
    """Indices grouped into batches of similar length; callers put results back by index."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    for start in range(0, len(order), size):
        yield order[start:start + size]
