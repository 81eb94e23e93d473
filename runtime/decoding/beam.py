"""Beam search batched over sentences and beams, with GNMT length normalisation.

The batch holds k rows per unfinished sentence. Each step scores every one-token
extension of every live beam, keeps the k best that do not end the sentence as the
new beams (reordering the backend's cache to follow them), and offers those that end
with EOS to the sentence's best finished hypothesis. A sentence leaves the batch once
no live beam can beat that hypothesis any more, or at its max length.

`beam_search(..., observer=BeamTree())` also reports every candidate each step ranked to an observer
(runtime/decoding/beam_tree.py), which the Decoding explorer draws as a tree; without one it reports nothing.
"""
from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence
from itertools import pairwise
from operator import itemgetter

import numpy as np

from .backend import DecoderBackend
from .beam_tree import BeamObserver
from .hypothesis import Hypothesis, mask_eos, max_lengths
from .hypothesis import length_penalty as gnmt_penalty  # the name `length_penalty` is beam_search's alpha
from .paths import forced_prefixes

NEG_INF, INF = float("-inf"), float("inf")


def beam_search(backend: DecoderBackend, src_ids: np.ndarray, src_mask: np.ndarray,
                max_len: int | Sequence[int] | None = None,
                bos_id: int = 1, eos_id: int = 2, beam: int = 4, length_penalty: float = 0.6,
                min_len: int = 0, attention: bool = False, observer: BeamObserver | None = None,
                patience: float | None = None, target_prefix: Sequence[Sequence[int]] | None = None,
                num_hypotheses: int = 1) -> list[Hypothesis] | list[list[Hypothesis]]:
    """The best hypothesis per sentence by log_prob / ((5 + len) / 6) ** length_penalty.

    src_ids (B, S), src_mask (B, S) True at real tokens; max_len: see `max_lengths`; min_len:
    EOS is forbidden until that many tokens exist. Hypotheses that reach the max length
    without EOS compete too (finished=False). With beam=1 and length_penalty=0 this is greedy
    decoding; with length_penalty > 0 a beam of 1 may keep going past an EOS that greedy
    would stop at, because a longer hypothesis can still score higher after normalisation.
    attention=True: each hypothesis carries the cross-attention of its own steps (reordered with its beam).
    patience: None (the default) stops a sentence only when no live beam can still beat its best, which makes
    the search exact for its score; a number p also stops it once round(beam * p) hypotheses have finished, as
    CTranslate2 and most toolkits do (p = 1: as many as the beam): fewer steps, sometimes another result.
    observer: told each step's ranked candidates (per sentence, its 2k best) and what became of them (see
    `BeamObserver`; `BeamTree` records them as a tree); it changes no result.
    target_prefix: per sentence, tokens forced first (CTranslate2's name): while a sentence is inside its prefix
    its one live beam takes the prefix token, scored with the model's log-probability of it, so the prefix counts
    in log_prob, score and token_log_probs like any chosen token; the beam widens after it.
    num_hypotheses: 1 returns one Hypothesis per sentence; n (<= beam) returns per sentence a list of its n best
    (fewer only when fewer ever finished or reached the max length), best first, all distinct. Exact stopping
    then waits until no live beam can beat the n-th best, so the first is the n = 1 result; with `patience` a
    sentence stops once max(n, round(beam * patience)) hypotheses have finished.
    """
    if beam < 1:
        raise ValueError(f"beam must be at least 1, got {beam}")
    if not 1 <= num_hypotheses <= beam:
        raise ValueError(f"num_hypotheses must be between 1 and the beam ({beam}), got {num_hypotheses}")
    if patience is not None and not patience > 0:
        raise ValueError(f"patience must be > 0 (or None: exact stopping), got {patience}")
    alpha, k = length_penalty, beam
    n_sentences = src_ids.shape[0]
    limits = max_lengths(max_len, src_mask, backend)
    forced = forced_prefixes(target_prefix, n_sentences, limits)
    state = backend.encode(src_ids, src_mask)
    state = backend.reorder(state, np.repeat(np.arange(n_sentences, dtype=np.int64), k))  # (B) -> (B*k) rows

    sentences = list(range(n_sentences))  # sentence of each block of k rows in the batch
    # Per batch row, the live beam's raw log-probability (float32 values, as the model's). Only beam 0
    # starts live, so the first step does not fill the beam with k copies of the same extension.
    scores = ([0.0] + [NEG_INF] * (k - 1)) * n_sentences
    # Per batch row: the live beam's tokens, and its raw score after each of them (its token log-probs are
    # their differences). Plain lists: a few dozen small array ops per step would cost more.
    paths: list[list[int]] = [[] for _ in range(n_sentences * k)]
    path_scores: list[list[float]] = [[] for _ in range(n_sentences * k)]
    maps: np.ndarray | None = None  # (B*k, t, L, H, S) cross-attention of each live beam's steps (attention=True)
    last = np.full(n_sentences * k, bos_id, dtype=np.int64)
    best: list[list[Hypothesis]] = [[] for _ in range(n_sentences)]  # per sentence, its n best so far, best first
    finished = [0] * n_sentences  # hypotheses offered per sentence (patience counts them)
    enough = None if patience is None else max(num_hypotheses, round(beam * patience))  # finished ones that stop it
    if observer is not None:
        observer.begin(k, alpha)

    for t in range(max(limits)):
        log_probs, state = backend.step(last, state, attention)
        if attention:
            weights = backend.cross_attention(state)[:, None]  # (n*k, L, H, S) -> (n*k, 1, L, H, S)
            maps = weights if maps is None else np.concatenate([maps, weights], axis=1)
        if t < min_len:
            log_probs = mask_eos(log_probs, eos_id)
        if any(len(forced[s]) > t for s in sentences):
            log_probs = force_tokens(log_probs, [forced[s][t] if len(forced[s]) > t else None for s in sentences], k)
        length = t + 1
        # Per sentence, its 2k best candidates: even if k of them end in EOS, k live ones remain.
        ranked = top_candidates(scores, log_probs, k, 2 * k, backend.top_k)

        # Per sentence: the k new live beams' raw scores, batch rows they extend, and tokens.
        new_scores: list[float] = []
        new_rows: list[int] = []
        new_tokens: list[int] = []
        survivors = []
        for i, (s, candidates) in enumerate(zip(sentences, ranked, strict=True)):
            ended, kept = split_candidates(candidates, k, eos_id)
            for rank in ended:
                score, row, _ = candidates[rank]
                better = offer(best[s], num_hypotheses, paths[row] + [eos_id], path_scores[row] + [score], alpha,
                               True, None if maps is None else maps[row])
                finished[s] += 1
                if observer is not None:
                    observer.offered(rank, "finished", better)
            if length >= limits[s]:  # out of room: the live beams end here unfinished
                for rank in kept:
                    score, row, token = candidates[rank]
                    better = offer(best[s], num_hypotheses, paths[row] + [token], path_scores[row] + [score],
                                   alpha, False, None if maps is None else maps[row])
                    if observer is not None:
                        observer.offered(rank, "max_len", better)
                live = False
            else:
                # Log-probabilities are <= 0, so a live beam's raw score can only fall; divided by
                # the largest penalty it can still reach, it bounds every score its extensions can get.
                reachable_penalty = max(gnmt_penalty(length + 1, alpha), gnmt_penalty(limits[s], alpha))
                # With n hypotheses asked for, a live beam matters while it can still beat the n-th best.
                full = len(best[s]) == num_hypotheses
                live = bool(kept) and (not full or candidates[kept[0]][0] / reachable_penalty > best[s][-1].score)
                live = live and (enough is None or finished[s] < enough)
            if observer is not None:
                observer.ranked(s, length, candidates, kept, live)
            if live:
                dead = k - len(kept)  # too few finite candidates: pad with dead beams of this sentence
                survivors.append(i)
                new_scores += [candidates[rank][0] for rank in kept] + [NEG_INF] * dead
                new_rows += [candidates[rank][1] for rank in kept] + [i * k] * dead
                new_tokens += [candidates[rank][2] for rank in kept] + [eos_id] * dead

        if observer is not None:
            observer.step_done()
        if not survivors:
            break
        rows = np.array(new_rows, dtype=np.int64)  # (n'*k,) old batch row of each new beam
        state = backend.reorder(state, rows)
        last = np.array(new_tokens, dtype=np.int64)  # (n'*k,)
        scores = new_scores
        paths = [paths[row] + [token] for row, token in zip(new_rows, new_tokens, strict=True)]
        path_scores = [path_scores[row] + [score] for row, score in zip(new_rows, new_scores, strict=True)]
        if maps is not None:
            maps = maps[rows]  # each new beam keeps the steps of the beam it extends (this step's included)
        sentences = [sentences[i] for i in survivors]
    # A sentence ends without any hypothesis only if the model gave every token probability 0.
    n_best = [kept or [Hypothesis([], NEG_INF, NEG_INF, finished=False)] for kept in best]
    return n_best if num_hypotheses > 1 else [kept[0] for kept in n_best]


def force_tokens(log_probs: np.ndarray, tokens: list[int | None], k: int) -> np.ndarray:
    """Per block of k rows (one sentence), keep only `tokens[i]`'s log-probability (the rest -inf) where it is
    not None: the block's one live beam must take it. Out of place: the backend's array may be read-only."""
    rows = np.array([i * k + j for i, token in enumerate(tokens) if token is not None for j in range(k)])
    columns = np.array([token for token in tokens if token is not None for _ in range(k)])
    masked = log_probs.copy()
    masked[rows] = -np.inf
    masked[rows, columns] = log_probs[rows, columns]
    return masked


Ranked = list[list[tuple[float, int, int]]]  # per sentence, best first: (raw score, batch row it extends, token)
TopK = Callable[[np.ndarray, int], tuple[np.ndarray, np.ndarray]]  # DecoderBackend.top_k


def split_candidates(candidates: list[tuple[float, int, int]], k: int, eos_id: int) -> tuple[list[int], list[int]]:
    """Ranks, best first, of one sentence's candidates that end in EOS and are offered as finished hypotheses,
    and of those (at most k, none -inf) that go on as its live beams. Only EOS within the top k counts, as in the
    usual formulation, so beam 1 = greedy."""
    ended: list[int] = []
    kept: list[int] = []
    for rank, (score, _, token) in enumerate(candidates):
        if score == NEG_INF or len(kept) == k:
            break
        if token == eos_id:
            if rank < k:
                ended.append(rank)
        else:
            kept.append(rank)
    return ended, kept


def top_candidates(scores: list[float], log_probs: np.ndarray, k: int, width: int, top_k: TopK) -> Ranked:
    """Each sentence's `width` best one-token extensions of its k beams (raw `scores`, one per batch row;
    next-token `log_probs` (n*k, V) float32), best first: exactly what one top-k over its k*V float32 candidate
    scores gives (ties: the lower row, then the lower token, first).

    In two stages, because building and scanning the (n, k*V) candidate matrix costs more than the rest of
    a beam step: `top_k` picks each beam's `width` + 1 best tokens, then Python ranks those k*(width + 1) per
    sentence (array ops on so few numbers cost more). A candidate its beam left out is no better than that
    beam's width + 1 kept ones, so no better than the sentence's (width + 1)-th: if the width + 1 best are
    distinct, the first `width` are the sentence's best, in the same order. If any of them tie, the one-stage
    top-k over the whole candidate matrix decides.
    """
    n, vocab = len(scores) // k, log_probs.shape[1]
    per_beam = min(width + 1, vocab)
    beam_lps, beam_tokens = top_k(log_probs, per_beam)  # (n*k, per_beam) each, best first
    lps, tokens = beam_lps.tolist(), beam_tokens.tolist()
    # top-k ranks NaN, then +inf, first; only they can make a sum NaN, which Python's sort cannot rank.
    if all(row[0] < INF for row in lps):
        ranked = [shortlist_best(scores, lps, tokens, range(i * k, i * k + k), width) for i in range(n)]
        if all(sentence is not None for sentence in ranked):
            return ranked
    with np.errstate(invalid="ignore"):  # a dead beam's -inf + a broken model's +inf is NaN: ranked, not an error
        candidates = (np.array(scores, dtype=np.float32)[:, None] + log_probs).reshape(n, k * vocab)  # (n, k*V)
    top_scores, top_index = top_k(candidates, min(width, k * vocab))
    return [[(score, i * k + j // vocab, j % vocab) for score, j in zip(row_scores, row_index, strict=True)]
            for i, (row_scores, row_index) in enumerate(zip(top_scores.tolist(), top_index.tolist(), strict=True))]


def shortlist_best(scores: list[float], lps: list[list[float]], tokens: list[list[int]], rows: range,
                   width: int) -> list[tuple[float, int, int]] | None:
    """One sentence's `width` best candidates among its beams' (`rows`) shortlisted tokens, or None if
    any of the width + 1 best tie.

    Python adds in float64. Rounded to float32 (array "f"), each sum is exactly the float32 sum the
    one-stage top-k ranks (rounding twice is harmless for one addition of float32 numbers), and rounding
    keeps the order, except that two sums may round to the same float32 value: a tie, so None."""
    ranked = sorted(((scores[row] + lp, row, token) for row in rows
                     for lp, token in zip(lps[row], tokens[row], strict=True)),
                    key=itemgetter(0), reverse=True)[:width + 1]
    rounded = array("f", [score for score, _, _ in ranked]).tolist()
    if not distinct(rounded):
        return None
    return [(score, row, token) for score, (_, row, token) in zip(rounded[:width], ranked[:width], strict=True)]


def distinct(ranked: list[float]) -> bool:
    """Whether scores sorted best first strictly decrease until they reach -inf (no ties, no NaN)."""
    return all(a > b or b == NEG_INF for a, b in pairwise(ranked))


def offer(best: list[Hypothesis], n: int, tokens: list[int], path_scores: list[float], alpha: float,
          finished: bool, maps: np.ndarray | None) -> bool:
    """Keep the hypothesis among a sentence's n best so far (`best`, best first; ties keep the earlier ones
    first); whether it became the best.

    path_scores: its raw score after each token; each token's log-prob is the float32 difference, as the
    search's float32 scores computed it."""
    log_prob = path_scores[-1]
    score = log_prob / gnmt_penalty(len(tokens), alpha)
    place = next((i for i, h in enumerate(best) if score > h.score), len(best))
    if place >= n:
        return False
    token_lps = np.diff(np.array([0.0] + path_scores, dtype=np.float32)).tolist()
    best.insert(place, Hypothesis(tokens, log_prob, score, finished, token_lps, maps))
    del best[n:]
    return place == 0
