"""The model's next-token distribution right after a forced target prefix: where alternatives are taken."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .backend import DecoderBackend


def prefix_log_probs(backend: DecoderBackend, src_ids: np.ndarray, src_mask: np.ndarray,
                     target_prefix: Sequence[Sequence[int]], bos_id: int = 1) -> np.ndarray:
    """(B, V) float32: per sentence, log P(next token | source, BOS + its prefix), from teacher-forced steps.

    Prefixes may differ in length: a sentence leaves the batch (and the backend's state) at the step after its
    prefix, so each row is computed exactly as the searches compute that position."""
    n = src_ids.shape[0]
    if len(target_prefix) != n:
        raise ValueError(f"target_prefix has {len(target_prefix)} entries for {n} sentences")
    forced = [[int(t) for t in p] for p in target_prefix]
    state = backend.encode(src_ids, src_mask)
    rows = list(range(n))  # sentence of each row still in the batch
    result: list[np.ndarray | None] = [None] * n
    last = np.full(n, bos_id, dtype=np.int64)
    for t in range(max(len(p) for p in forced) + 1 if forced else 0):
        log_probs, state = backend.step(last, state)
        keep = []
        for i, s in enumerate(rows):
            if len(forced[s]) == t:
                result[s] = np.array(log_probs[i], dtype=np.float32)
            else:
                keep.append(i)
        if not keep:
            break
        if len(keep) < len(rows):
            state = backend.reorder(state, np.array(keep, dtype=np.int64))
            rows = [rows[i] for i in keep]
        last = np.array([forced[s][t] for s in rows], dtype=np.int64)
    return np.stack(result) if n else np.zeros((0, 0), dtype=np.float32)  # type: ignore[arg-type]
