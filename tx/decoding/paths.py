"""Greedy decoding and sampling: one hypothesis per sentence, grown a token at a time.

Both share one loop and differ only in how the next token is chosen. Rows leave the
batch (and the backend's state) as soon as their sentence ends, so a finished sentence
costs nothing more and never collects tokens after its EOS.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from torch import Tensor

from .backend import DecoderBackend
from .hypothesis import Hypothesis, as_log_probs, mask_eos, max_lengths, step, step_attention

Chooser = Callable[[Tensor], Tensor]  # log_probs (N, V) -> chosen token ids (N,)


def extend_paths(backend: DecoderBackend, src_ids: Tensor, src_mask: Tensor, max_len: int | Sequence[int] | None,
                 bos_id: int, eos_id: int, choose: Chooser, min_len: int = 0,
                 attention: bool = False) -> list[Hypothesis]:
    """Grow one hypothesis per sentence with `choose` until EOS or its max length; with attention=True each
    hypothesis also carries the cross-attention its steps computed."""
    n_sentences = src_ids.size(0)
    limits = max_lengths(max_len, src_mask, backend)
    state = backend.encode(src_ids, src_mask)
    rows = torch.arange(n_sentences)  # sentence index of each row still in the batch
    tokens: list[list[int]] = [[] for _ in range(n_sentences)]
    token_lps: list[list[float]] = [[] for _ in range(n_sentences)]
    maps: list[list[Tensor]] = [[] for _ in range(n_sentences)]  # per sentence, (L, H, S) per step
    results: list[Hypothesis | None] = [None] * n_sentences
    last = torch.full((n_sentences,), bos_id, dtype=torch.long)
    for t in range(int(limits.max())):
        log_probs, state = step(backend, last, state, attention)
        log_probs = as_log_probs(log_probs)
        weights = step_attention(backend, state) if attention else None  # (N, L, H, S)
        if t < min_len:
            log_probs = mask_eos(log_probs, eos_id)
        chosen = choose(log_probs)
        chosen_log_prob = log_probs.gather(1, chosen[:, None]).squeeze(1)  # (N, V) -> (N,)
        for i, (s, token, lp) in enumerate(zip(rows.tolist(), chosen.tolist(), chosen_log_prob.tolist(),
                                               strict=True)):
            tokens[s].append(token)
            token_lps[s].append(lp)
            if weights is not None:
                maps[s].append(weights[i])
        done = (chosen == eos_id) | (limits[rows] <= t + 1)
        for s in rows[done].tolist():
            finished = tokens[s][-1] == eos_id
            log_prob = sum(token_lps[s])
            results[s] = Hypothesis(tokens[s], log_prob, log_prob, finished, token_lps[s],
                                    torch.stack(maps[s]) if attention else None)
        if done.all():
            break
        if done.any():
            keep = (~done).nonzero().squeeze(1)
            state = backend.reorder(state, keep)
            rows, chosen = rows[keep], chosen[keep]
        last = chosen
    return results  # type: ignore[return-value]  # every row ends by its max length


def greedy(backend: DecoderBackend, src_ids: Tensor, src_mask: Tensor, max_len: int | Sequence[int] | None = None,
           bos_id: int = 1, eos_id: int = 2, min_len: int = 0, attention: bool = False) -> list[Hypothesis]:
    """The most probable next token at every step.

    src_ids (B, S), src_mask (B, S) True at real tokens; max_len: see `max_lengths`;
    min_len: EOS is forbidden until that many tokens exist. Score = summed log-probability.
    """
    return extend_paths(backend, src_ids, src_mask, max_len, bos_id, eos_id, lambda lp: lp.argmax(dim=-1), min_len,
                        attention)


def sample(backend: DecoderBackend, src_ids: Tensor, src_mask: Tensor, max_len: int | Sequence[int] | None = None,
           bos_id: int = 1, eos_id: int = 2, temperature: float = 1.0, top_k: int = 0, top_p: float = 1.0,
           seed: int | None = None, min_len: int = 0, attention: bool = False) -> list[Hypothesis]:
    """Ancestral sampling from softmax(log_probs / temperature), restricted to the top_k most probable
    tokens (0 = all) and to the smallest set holding top_p of the probability (1.0 = all).

    The same seed gives the same output for the same inputs; seed None draws from torch's global RNG.
    Scores are the model's own (untempered) log-probabilities of the sampled tokens.
    """
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    if top_k < 0:
        raise ValueError(f"top_k must be >= 0 (0 = no limit), got {top_k}")
    if not 0 < top_p <= 1:
        raise ValueError(f"top_p must be in (0, 1], got {top_p}")
    generator = torch.Generator().manual_seed(seed) if seed is not None else None

    def choose(log_probs: Tensor) -> Tensor:
        logits = keep_top_p(keep_top_k(log_probs / temperature, top_k), top_p)
        return torch.multinomial(logits.softmax(dim=-1), 1, generator=generator).squeeze(1)  # (N, 1) -> (N,)

    return extend_paths(backend, src_ids, src_mask, max_len, bos_id, eos_id, choose, min_len, attention)


def keep_top_k(logits: Tensor, k: int) -> Tensor:
    """Set all but the k largest logits of each row to -inf (k = 0 keeps all)."""
    if k <= 0 or k >= logits.size(-1):
        return logits
    kth = logits.topk(k, dim=-1).values[:, -1:]  # (N, 1) the k-th largest
    return logits.masked_fill(logits < kth, float("-inf"))


def keep_top_p(logits: Tensor, p: float) -> Tensor:
    """Nucleus filter: keep the most probable tokens until their mass reaches p (always at least one)."""
    if p >= 1.0:
        return logits
    sorted_logits, order = logits.sort(dim=-1, descending=True)
    probs = sorted_logits.softmax(dim=-1)
    mass_before = probs.cumsum(dim=-1) - probs  # probability of the strictly more likely tokens
    drop_sorted = mass_before >= p
    drop = drop_sorted.scatter(-1, order, drop_sorted)  # back to vocabulary order
    return logits.masked_fill(drop, float("-inf"))
