"""Beam search batched over sentences and beams, with GNMT length normalisation.

The batch holds k rows per unfinished sentence. Each step scores every one-token
extension of every live beam, keeps the k best that do not end the sentence as the
new beams (reordering the backend's cache to follow them), and offers those that end
with EOS to the sentence's best finished hypothesis. A sentence leaves the batch once
no live beam can beat that hypothesis any more, or at its max length.
"""
from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

from .backend import DecoderBackend
from .hypothesis import Hypothesis, as_log_probs, mask_eos, max_lengths, step, step_attention
from .hypothesis import length_penalty as gnmt_penalty  # the name `length_penalty` is beam_search's alpha

NEG_INF = float("-inf")


def beam_search(backend: DecoderBackend, src_ids: Tensor, src_mask: Tensor, max_len: int | Sequence[int] | None = None,
                bos_id: int = 1, eos_id: int = 2, beam: int = 4, length_penalty: float = 0.6,
                min_len: int = 0, attention: bool = False) -> list[Hypothesis]:
    """The best hypothesis per sentence by log_prob / ((5 + len) / 6) ** length_penalty.

    src_ids (B, S), src_mask (B, S) True at real tokens; max_len: see `max_lengths`; min_len:
    EOS is forbidden until that many tokens exist. Hypotheses that reach the max length
    without EOS compete too (finished=False). With beam=1 and length_penalty=0 this is greedy
    decoding; with length_penalty > 0 a beam of 1 may keep going past an EOS that greedy
    would stop at, because a longer hypothesis can still score higher after normalisation.
    attention=True: each hypothesis carries the cross-attention of its own steps (reordered with its beam).
    """
    if beam < 1:
        raise ValueError(f"beam must be at least 1, got {beam}")
    alpha, k = length_penalty, beam
    n_sentences = src_ids.size(0)
    limits = max_lengths(max_len, src_mask, backend).tolist()
    state = backend.encode(src_ids, src_mask)
    state = backend.reorder(state, torch.arange(n_sentences).repeat_interleave(k))  # (B) -> (B*k) rows

    sentences = list(range(n_sentences))  # sentence of each block of k rows in the batch
    # Raw log-probability of each live beam. Only beam 0 starts live, so the first step
    # does not fill the beam with k copies of the same extension.
    scores = torch.full((n_sentences, k), NEG_INF)
    scores[:, 0] = 0.0
    history = torch.zeros(n_sentences * k, 0, dtype=torch.long)  # (B*k, t) tokens of each live beam
    token_lps = torch.zeros(n_sentences * k, 0)  # (B*k, t) the model's log-probability of each of those tokens
    maps: Tensor | None = None  # (B*k, t, L, H, S) cross-attention of each live beam's steps (attention=True)
    last = torch.full((n_sentences * k,), bos_id, dtype=torch.long)
    best: list[Hypothesis | None] = [None] * n_sentences

    for t in range(max(limits)):
        n = len(sentences)
        log_probs, state = step(backend, last, state, attention)
        log_probs = as_log_probs(log_probs)
        if attention:
            weights = step_attention(backend, state)[:, None]  # (n*k, L, H, S) -> (n*k, 1, L, H, S)
            maps = weights if maps is None else torch.cat([maps, weights], dim=1)
        if t < min_len:
            log_probs = mask_eos(log_probs, eos_id)
        vocab = log_probs.size(1)
        candidates = (scores[:, :, None] + log_probs.view(n, k, vocab)).view(n, k * vocab)  # (n*k, V) -> (n, k*V)
        # 2k candidates: even if k of them end in EOS, k live ones remain.
        top_scores, top_index = candidates.topk(min(2 * k, k * vocab), dim=1)
        origins, tokens = top_index // vocab, top_index % vocab  # (n, 2k) beam each came from, token it adds
        added_lps = (top_scores - scores.gather(1, origins)).tolist()  # (n, 2k) log-prob of the added token

        length = t + 1
        # Per sentence: the k new live beams' raw scores, batch rows they extend, and tokens
        # (plain lists: per-element tensor writes would cost more than the bookkeeping itself).
        new_scores: list[list[float]] = []
        new_rows: list[list[int]] = []
        new_tokens: list[list[int]] = []
        new_lps: list[list[float]] = []
        survivors = []
        for i, s in enumerate(sentences):
            beam_scores, beam_rows, beam_tokens = [], [], []
            beam_lps = []
            ranked = zip(top_scores[i].tolist(), origins[i].tolist(), tokens[i].tolist(), added_lps[i], strict=True)
            for rank, (score, origin, token, added) in enumerate(ranked):
                if score == NEG_INF or len(beam_scores) == k:
                    break
                row = i * k + origin
                if token == eos_id:
                    # Only EOS within the top k counts, as in the usual formulation, so beam 1 = greedy.
                    if rank < k:
                        offer(best, s, history[row].tolist() + [eos_id], score, alpha, True,
                              token_lps[row].tolist() + [added], None if maps is None else maps[row])
                    continue
                beam_scores.append(score)
                beam_rows.append(row)
                beam_tokens.append(token)
                beam_lps.append(added)
            if length >= limits[s]:  # out of room: the live beams end here unfinished
                for score, row, token, added in zip(beam_scores, beam_rows, beam_tokens, beam_lps, strict=True):
                    offer(best, s, history[row].tolist() + [token], score, alpha, False,
                          token_lps[row].tolist() + [added], None if maps is None else maps[row])
                continue
            # Log-probabilities are <= 0, so a live beam's raw score can only fall; divided by
            # the largest penalty it can still reach, it bounds every score its extensions can get.
            reachable_penalty = max(gnmt_penalty(length + 1, alpha), gnmt_penalty(limits[s], alpha))
            if beam_scores and (best[s] is None or beam_scores[0] / reachable_penalty > best[s].score):
                dead = k - len(beam_scores)  # too few finite candidates: pad with dead beams of this sentence
                survivors.append(i)
                new_scores.append(beam_scores + [NEG_INF] * dead)
                new_rows.append(beam_rows + [i * k] * dead)
                new_tokens.append(beam_tokens + [eos_id] * dead)
                new_lps.append(beam_lps + [NEG_INF] * dead)

        if not survivors:
            break
        rows = torch.tensor(new_rows).reshape(-1)  # (n', k) -> (n'*k): old batch row of each new beam
        state = backend.reorder(state, rows)
        last = torch.tensor(new_tokens).reshape(-1)  # (n', k) -> (n'*k)
        history = torch.cat([history[rows], last[:, None]], dim=1)  # (n'*k, t) -> (n'*k, t+1)
        token_lps = torch.cat([token_lps[rows], torch.tensor(new_lps).reshape(-1, 1)], dim=1)
        if maps is not None:
            maps = maps[rows]  # each new beam keeps the steps of the beam it extends (this step's included)
        scores = torch.tensor(new_scores)  # (n', k)
        sentences = [sentences[i] for i in survivors]
    # A sentence ends without any hypothesis only if the model gave every token probability 0.
    return [h if h is not None else Hypothesis([], NEG_INF, NEG_INF, finished=False) for h in best]


def offer(best: list[Hypothesis | None], sentence: int, tokens: list[int], log_prob: float, alpha: float,
          finished: bool, token_lps: list[float], maps: Tensor | None) -> None:
    """Keep the hypothesis if it beats the sentence's best so far (ties keep the earlier one)."""
    score = log_prob / gnmt_penalty(len(tokens), alpha)
    if best[sentence] is None or score > best[sentence].score:
        best[sentence] = Hypothesis(tokens, log_prob, score, finished, token_lps, maps)
