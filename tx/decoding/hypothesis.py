"""What every search returns, and the pieces of bookkeeping they share."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import Tensor

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
    attention: Tensor | None = None


def length_penalty(length: int, alpha: float) -> float:
    """GNMT's lp(Y) = ((5 + |Y|) / 6) ** alpha (Wu et al. 2016); alpha = 0 turns it off."""
    return ((5.0 + length) / 6.0) ** alpha


def normalized_score(log_prob: float, length: int, alpha: float) -> float:
    return log_prob / length_penalty(length, alpha)


def max_lengths(max_len: int | Sequence[int] | Tensor | None, src_mask: Tensor, backend: object) -> Tensor:
    """The most tokens (EOS included) each row may generate: (B,) long.

    None = each row's real source length + 50; an int applies to every row; a sequence
    gives one limit per row, which is what lets a batched search equal one-by-one searches.
    Capped by the backend's `max_target_len` (its positional table) when it has one.
    """
    rows = src_mask.size(0)
    # Python lists rather than tensor ops: this runs once per search call, right after the previous
    # call's model steps, when each tensor op costs microseconds (measured: 155 -> 80 µs per sentence).
    if max_len is None:
        lengths = [n + DEFAULT_EXTRA_LEN for n in src_mask.sum(dim=1).tolist()]
    elif isinstance(max_len, int):
        lengths = [max_len] * rows
    else:
        lengths = torch.as_tensor(max_len, dtype=torch.long).reshape(-1).tolist()
    if len(lengths) != rows:
        raise ValueError(f"max_len has {len(lengths)} entries for {rows} sentences")
    if lengths and min(lengths) < 1:
        raise ValueError(f"max_len must be at least 1, got {min(lengths)}")
    limit = getattr(backend, "max_target_len", None)
    return torch.tensor([min(n, limit) for n in lengths] if limit is not None else lengths, dtype=torch.long)


def mask_eos(log_probs: Tensor, eos_id: int) -> Tensor:
    """Forbid EOS (used while fewer than `min_len` tokens exist); out of place, the backend's array may be read-only."""
    return log_probs.index_fill(1, torch.tensor([eos_id], device=log_probs.device), float("-inf"))


def as_log_probs(log_probs: Tensor | np.ndarray) -> Tensor:
    """A backend's (B, V) output as a float32 CPU tensor (ONNX backends may hand back numpy arrays)."""
    if isinstance(log_probs, np.ndarray):
        # torch warns on read-only arrays (onnxruntime outputs can be); copy only then.
        return torch.from_numpy(np.require(log_probs, dtype=np.float32, requirements="W"))
    if log_probs.dtype == torch.float32 and log_probs.is_cpu:
        return log_probs  # .float().cpu() would return it too, at ~8 µs per beam step here (measured)
    return log_probs.float().cpu()


def step_attention(backend: object, state: object) -> Tensor:
    """The cross-attention (B, L, H, S) of the step that produced `state`, as a float32 CPU tensor; the backend
    must have been stepped with attention=True."""
    weights = backend.cross_attention(state)  # type: ignore[attr-defined]
    if isinstance(weights, np.ndarray):
        return torch.from_numpy(np.array(weights, dtype=np.float32))
    return weights.float().cpu()


def step(backend: object, tokens: Tensor, state: object, attention: bool) -> tuple[Tensor, object]:
    """backend.step, asking for the step's cross-attention only when wanted (backends without it still work)."""
    if attention:
        return backend.step(tokens, state, attention=True)  # type: ignore[attr-defined]
    return backend.step(tokens, state)  # type: ignore[attr-defined]
