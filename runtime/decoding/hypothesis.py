"""What every search returns, and the pieces of bookkeeping they share."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .backend import DecoderBackend

DEFAULT_EXTRA_LEN = 50  # default max target length = source length + this


@dataclass
class Hypothesis:
    """One decoded sentence."""

    tokens: list[int]  # generated ids: BOS excluded, the final EOS included when `finished`
    log_prob: float  # sum of the model's log-probabilities of `tokens` (untempered, unfiltered)
    score: float  # what the search ranked by: log_prob / length_penalty for beam search, log_prob otherwise
    finished: bool  # True when it ended with EOS, False when it stopped at the max length
    token_log_probs: list[float] = field(default_factory=list)  # the model's log-probability of each token
    # (T, L, H, S) cross-attention of each generated token, as the search saw it (searches run with attention=True)
    attention: np.ndarray | None = None


def length_penalty(length: int, alpha: float) -> float:
    """GNMT's lp(Y) = ((5 + |Y|) / 6) ** alpha (Wu et al. 2016); alpha = 0 turns it off."""
    return ((5.0 + length) / 6.0) ** alpha


def normalized_score(log_prob: float, length: int, alpha: float) -> float:
    return log_prob / length_penalty(length, alpha)


def max_lengths(max_len: int | Sequence[int] | np.ndarray | None, src_mask: np.ndarray,
                backend: DecoderBackend) -> list[int]:
    """The most tokens (EOS included) each row may generate, one int per row.

    None = each row's real source length + 50; an int applies to every row; a sequence
    gives one limit per row, which is what lets a batched search equal one-by-one searches.
    Capped by the backend's `max_target_len` (its positional table) when it has one.
    """
    rows = src_mask.shape[0]
    if max_len is None:
        lengths = [n + DEFAULT_EXTRA_LEN for n in src_mask.sum(axis=1).tolist()]
    elif isinstance(max_len, int | np.integer):
        lengths = [int(max_len)] * rows
    else:
        lengths = np.asarray(max_len, dtype=np.int64).reshape(-1).tolist()
    if len(lengths) != rows:
        raise ValueError(f"max_len has {len(lengths)} entries for {rows} sentences")
    if lengths and min(lengths) < 1:
        raise ValueError(f"max_len must be at least 1, got {min(lengths)}")
    limit = backend.max_target_len
    return [min(n, limit) for n in lengths] if limit is not None else lengths


def mask_eos(log_probs: np.ndarray, eos_id: int) -> np.ndarray:
    """Forbid EOS (used while fewer than `min_len` tokens exist); out of place, the backend's array may be read-only."""
    masked = log_probs.copy()
    masked[:, eos_id] = -np.inf
    return masked
