"""Greedy decoding and sampling: one hypothesis per sentence, grown a token at a time.

Both share one loop and differ only in how the next token is chosen. Rows leave the
batch (and the backend's state) as soon as their sentence ends, so a finished sentence
costs nothing more and never collects tokens after its EOS.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from .backend import DecoderBackend
from .hypothesis import Hypothesis, mask_eos, max_lengths

Chooser = Callable[[np.ndarray], np.ndarray]  # log_probs (N, V) float32 -> chosen token ids (N,) int64


def extend_paths(backend: DecoderBackend, src_ids: np.ndarray, src_mask: np.ndarray,
                 max_len: int | Sequence[int] | None, bos_id: int, eos_id: int, choose: Chooser, min_len: int = 0,
                 attention: bool = False, target_prefix: Sequence[Sequence[int]] | None = None,
                 check_room: bool = True, alternatives: int = 0) -> list[Hypothesis]:
    """Grow one hypothesis per sentence with `choose` until EOS or its max length; with attention=True each
    hypothesis also carries the cross-attention its steps computed. target_prefix: per sentence, the tokens it
    takes first whatever `choose` says (see `forced_prefixes`; a forced EOS ends the sentence).
    alternatives=k: at the step right after its prefix each sentence's row splits into k rows, one per token of
    that step's k most probable (backend.top_k order), and each grows on with `choose`: k hypotheses per sentence,
    sentence s's j-th at index s * k + j. The prefix is decoded once and the source encoded once for all k."""
    n_sentences = src_ids.shape[0]
    width = max(alternatives, 1)  # hypotheses per sentence
    limits = max_lengths(max_len, src_mask, backend)
    forced = forced_prefixes(target_prefix, n_sentences, limits if check_room else None)
    state = backend.encode(src_ids, src_mask)
    rows = [s * width for s in range(n_sentences)]  # hypothesis slot of each row still in the batch
    tokens: dict[int, list[int]] = {slot: [] for slot in rows}
    token_lps: dict[int, list[float]] = {slot: [] for slot in rows}
    maps: dict[int, list[np.ndarray]] = {slot: [] for slot in rows}  # per slot, (L, H, S) per step
    results: list[Hypothesis | None] = [None] * (n_sentences * width)
    last = np.full(n_sentences, bos_id, dtype=np.int64)
    longest = max((len(p) for p in forced), default=0)
    # Only steps before this one may force a prefix token or split a row: later ones skip the per-row checks.
    checked_steps = longest + 1 if alternatives else longest
    for t in range(max(limits)):
        log_probs, state = backend.step(last, state, attention)
        weights = backend.cross_attention(state) if attention else None  # (N, L, H, S)
        if t < min_len:
            log_probs = mask_eos(log_probs, eos_id)
        chosen = choose(log_probs)
        splitting: list[int] = []
        if t < checked_steps:
            sentences = [slot // width for slot in rows]
            if any(len(forced[s]) > t for s in sentences):  # rows still inside their prefix take its token
                picks = zip(sentences, chosen.tolist(), strict=True)
                chosen = np.array([forced[s][t] if len(forced[s]) > t else c for s, c in picks], dtype=np.int64)
            splitting = [i for i, s in enumerate(sentences) if alternatives and len(forced[s]) == t]
        if splitting:
            # (row, slot, token) of every hypothesis this step extends: one per row, or k for a row splitting here
            _, top = backend.top_k(np.ascontiguousarray(log_probs[splitting], dtype=np.float32), alternatives)
            split_tokens = dict(zip(splitting, top.tolist(), strict=True))
            entries = [(i, slot + j, token)
                       for i, slot, token in zip(range(len(rows)), rows, chosen.tolist(), strict=True)
                       for j, token in (enumerate(split_tokens[i]) if i in split_tokens else [(0, token)])]
            for i, slot, _ in entries:
                if slot not in tokens:  # a new alternative: the prefix so far is its own
                    base = rows[i]
                    tokens[slot], token_lps[slot], maps[slot] = list(tokens[base]), list(token_lps[base]), \
                        list(maps[base])
            entry_rows = np.array([i for i, _, _ in entries], dtype=np.int64)
            entry_slots = [slot for _, slot, _ in entries]
            entry_tokens = np.array([token for _, _, token in entries], dtype=np.int64)
        else:  # one entry per row, in row order
            entry_rows = np.arange(len(rows))
            entry_slots = rows
            entry_tokens = np.asarray(chosen, dtype=np.int64)
        entry_lps = log_probs[entry_rows, entry_tokens].tolist()  # the model's log-prob of each taken token
        keep: list[int] = []  # entries that go on
        for e, (slot, token, lp) in enumerate(zip(entry_slots, entry_tokens.tolist(), entry_lps, strict=True)):
            tokens[slot].append(token)
            token_lps[slot].append(lp)
            if weights is not None:
                maps[slot].append(weights[entry_rows[e]])
            if token == eos_id or limits[slot // width] <= t + 1:
                log_prob = sum(token_lps[slot])
                results[slot] = Hypothesis(tokens[slot], log_prob, log_prob, token == eos_id, token_lps[slot],
                                           np.stack(maps[slot]) if attention else None)
            else:
                keep.append(e)
        if not keep:
            break
        if len(keep) != len(rows) or splitting:
            state = backend.reorder(state, entry_rows[keep])
            rows = [entry_slots[e] for e in keep]
            last = entry_tokens[keep]
        else:
            last = entry_tokens
    return results  # type: ignore[return-value]  # every row ends by its max length


def greedy(backend: DecoderBackend, src_ids: np.ndarray, src_mask: np.ndarray,
           max_len: int | Sequence[int] | None = None, bos_id: int = 1, eos_id: int = 2, min_len: int = 0,
           attention: bool = False, prefix: Sequence[int] = (),
           target_prefix: Sequence[Sequence[int]] | None = None, alternatives: int = 0) -> list[Hypothesis]:
    """The most probable next token at every step (the first of equals).

    src_ids (B, S), src_mask (B, S) True at real tokens; max_len: see `max_lengths`;
    min_len: EOS is forbidden until that many tokens exist. Score = summed log-probability.
    prefix: tokens every sentence takes first, whatever their probability, before the most probable ones (where
    the output goes when one choice is changed); their log-probabilities count in the score like any other.
    target_prefix: the same, one token list per sentence (CTranslate2's name); it overrides `prefix`.
    alternatives=k: k hypotheses per sentence, one per most probable token right after its prefix, each then
    completed greedily (see `extend_paths`).
    """
    legacy = target_prefix is None and len(prefix) > 0  # `prefix` may end in EOS or run past max_len (as ever)
    if legacy:
        target_prefix = [prefix] * src_ids.shape[0]
    return extend_paths(backend, src_ids, src_mask, max_len, bos_id, eos_id, lambda lp: lp.argmax(axis=-1),
                        min_len, attention, target_prefix, check_room=not legacy, alternatives=alternatives)


def sample(backend: DecoderBackend, src_ids: np.ndarray, src_mask: np.ndarray,
           max_len: int | Sequence[int] | None = None, bos_id: int = 1, eos_id: int = 2, temperature: float = 1.0,
           top_k: int = 0, top_p: float = 1.0, seed: int | None = None, min_len: int = 0,
           attention: bool = False, target_prefix: Sequence[Sequence[int]] | None = None,
           alternatives: int = 0) -> list[Hypothesis]:
    """Ancestral sampling from softmax(log_probs / temperature), restricted to the top_k most probable
    tokens (0 = all) and to the smallest set holding top_p of the probability (1.0 = all).
    target_prefix: per sentence, tokens taken first (forced, scored by the model like the sampled ones).
    alternatives=k: k hypotheses per sentence, one per most probable token right after its prefix, each then
    completed by sampling (see `extend_paths`).

    The same seed gives the same output for the same inputs; seed None draws fresh entropy.
    Scores are the model's own (untempered) log-probabilities of the sampled tokens.
    """
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    if top_k < 0:
        raise ValueError(f"top_k must be >= 0 (0 = no limit), got {top_k}")
    if not 0 < top_p <= 1:
        raise ValueError(f"top_p must be in (0, 1], got {top_p}")
    rng = np.random.default_rng(seed)

    def choose(log_probs: np.ndarray) -> np.ndarray:
        probs = softmax(keep_top_p(keep_top_k(log_probs / np.float32(temperature), top_k), top_p))
        return draw(probs, rng)

    return extend_paths(backend, src_ids, src_mask, max_len, bos_id, eos_id, choose, min_len, attention,
                        target_prefix, alternatives=alternatives)


def forced_prefixes(target_prefix: Sequence[Sequence[int]] | None, n_sentences: int,
                    limits: Sequence[int] | None) -> list[list[int]]:
    """Each sentence's forced tokens as int lists (none when target_prefix is None), checked: one list per
    sentence and, given `limits` (each sentence's max length, which counts the prefix), room after each prefix
    for at least one token the search chooses."""
    if target_prefix is None:
        return [[] for _ in range(n_sentences)]
    if len(target_prefix) != n_sentences:
        raise ValueError(f"target_prefix has {len(target_prefix)} entries for {n_sentences} sentences")
    forced = [[int(t) for t in p] for p in target_prefix]
    for s, (tokens, limit) in enumerate(zip(forced, limits or [], strict=False)):
        if len(tokens) >= limit:
            raise ValueError(f"the target prefix of sentence {s} has {len(tokens)} tokens but its max length is "
                             f"{limit}: at most {limit - 1} fit, one token must follow them")
    return forced


def softmax(logits: np.ndarray) -> np.ndarray:
    """Row-wise softmax in float64 (-inf -> probability 0)."""
    shifted = np.exp(logits.astype(np.float64) - logits.max(axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


def draw(probs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One token per row, token i with probability probs[row, i] (inverse-CDF sampling; a token of probability 0
    is never drawn: its cumulative sum equals its predecessor's)."""
    cumulative = probs.cumsum(axis=-1)
    u = rng.random(probs.shape[0]) * cumulative[:, -1]  # in [0, total): the first cumulative > u always exists
    return (cumulative <= u[:, None]).sum(axis=-1).astype(np.int64)


def keep_top_k(logits: np.ndarray, k: int) -> np.ndarray:
    """Set all but the k largest logits of each row to -inf (k = 0 keeps all; ties with the k-th are kept)."""
    if k <= 0 or k >= logits.shape[-1]:
        return logits
    kth = np.partition(logits, -k, axis=-1)[:, [-k]]  # (N, 1) the k-th largest
    return np.where(logits < kth, -np.inf, logits).astype(logits.dtype, copy=False)


def keep_top_p(logits: np.ndarray, p: float) -> np.ndarray:
    """Nucleus filter: keep the most probable tokens until their mass reaches p (always at least one)."""
    if p >= 1.0:
        return logits
    order = np.argsort(-logits, axis=-1, kind="stable")
    probs = softmax(np.take_along_axis(logits, order, -1))
    mass_before = probs.cumsum(axis=-1) - probs  # probability of the strictly more likely tokens
    drop = np.zeros(logits.shape, dtype=bool)
    np.put_along_axis(drop, order, mass_before >= p, -1)  # back to vocabulary order
    return np.where(drop, -np.inf, logits).astype(logits.dtype, copy=False)
