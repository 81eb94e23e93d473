"""Which source tokens a target token needed: occlusion, beside the cross-attention for the same token.

    result = occlusion(model, sentence, method="mask")
    row = result.row(t)  # target token t: row.drop (per source piece), row.attention, row.spearman

Each piece of the source text is occluded in turn (the <2xx> tag and </s> stay: they are not the user's words),
and the translation is re-scored teacher-forced: the same decoder inputs, so `drop[t, i]` is how much less
probable the originally chosen token t becomes without source piece i (nats; > 0: the token needed it).

Two ways to occlude (`method`):
- "mask" (the default): the piece is replaced by <pad> and masked out of every attention, exactly as the model
  treats padding. Why this as the neutral token: it is the one token the model was trained to ignore, so nothing
  of its own leaks in (an <unk> or a common word would bring its own meaning, and its embedding), and every other
  piece keeps its position.
- "remove": the piece is deleted, so every later piece moves one position up: closer to "the sentence without the
  word", but the shift itself changes what later pieces look like to the model.

Attention is not attribution: a piece can be attended to and not needed (the drop is small), or needed and
hardly attended to (the information reached the decoder through other positions of the encoder). `row(t)` puts the
two side by side with their Spearman rank correlation.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..batching import pad
from .model import ExperimentModel, Sentence, one_source

METHODS = ("mask", "remove")


@dataclass(frozen=True)
class OcclusionRow:
    """One target token: per occluded source piece, the drop and the cross-attention, and how the two agree."""

    position: int  # target position t
    token: str  # the piece chosen there
    pieces: list[str]  # the occluded source pieces
    drop: np.ndarray  # (P,) nats
    attention: np.ndarray  # (P,) cross-attention averaged over every layer and head
    spearman: float  # rank correlation of drop and attention (NaN when either is constant)


@dataclass(frozen=True)
class Occlusion:
    sentence: Sentence
    method: str  # "mask" | "remove"
    positions: list[int]  # source positions occluded (the text's pieces)
    base: np.ndarray  # (T,) log-probability of each chosen token, nothing occluded
    drop: np.ndarray  # (T, P): base minus the log-probability with source piece positions[p] occluded
    attention: np.ndarray  # (L, H, T, S): cross-attention of the unedited sentence

    def row(self, t: int) -> OcclusionRow:
        """Target position t's drops next to its cross-attention (mean over layers and heads)."""
        if not 0 <= t < len(self.base):
            raise ValueError(f"target position {t} is outside the translation (0..{len(self.base) - 1})")
        attention = self.attention[:, :, t, self.positions].mean(axis=(0, 1))
        pieces = [self.sentence.src_pieces[i] for i in self.positions]
        return OcclusionRow(t, self.sentence.output_pieces[t], pieces, self.drop[t], attention,
                            spearman(self.drop[t], attention))


def rank(values: np.ndarray) -> np.ndarray:
    """Ranks 1..n, ties given their mean rank (what Spearman's coefficient needs)."""
    values = np.asarray(values, dtype=np.float64)
    order = np.argsort(values, kind="stable")
    ranks = np.empty(len(values))
    ranks[order] = np.arange(1, len(values) + 1)
    for value in np.unique(values):
        tied = values == value
        ranks[tied] = ranks[tied].mean()
    return ranks


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's rank correlation: Pearson's on the ranks; NaN for fewer than 2 values or a constant side."""
    if len(a) < 2:
        return float("nan")
    ra, rb = rank(a) - (len(a) + 1) / 2, rank(b) - (len(b) + 1) / 2
    denominator = np.sqrt((ra * ra).sum() * (rb * rb).sum())
    return float((ra * rb).sum() / denominator) if denominator > 0 else float("nan")


def occluded_sources(sentence: Sentence, method: str, pad_id: int) -> tuple[list[int], np.ndarray, np.ndarray]:
    """The occluded positions, and one edited source per position (ids (P, S'), mask (P, S'))."""
    positions = list(range(1, len(sentence.src_ids) - 1))  # the text's pieces: not the tag, not </s>
    if method == "mask":
        ids = np.repeat(np.array([sentence.src_ids], dtype=np.int64), len(positions), 0)
        mask = np.ones_like(ids, dtype=bool)
        for row, i in enumerate(positions):
            ids[row, i], mask[row, i] = pad_id, False
        return positions, ids, mask
    ids, mask = pad([sentence.src_ids[:i] + sentence.src_ids[i + 1:] for i in positions], pad_id)
    return positions, ids, mask


def occlusion(model: ExperimentModel, sentence: Sentence, method: str = "mask") -> Occlusion:
    """Occlude each source piece of `sentence` in turn (`method`: module doc) and re-score its translation; all
    of it in one encoder run and one decoder run."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    if len(sentence.src_ids) < 3:
        raise ValueError("the source has no piece to occlude")
    positions, ids, mask = occluded_sources(sentence, method, model.tokenizer.pad_id)
    src, src_mask = one_source(sentence)
    width = ids.shape[1]
    if width < src.shape[1]:  # "remove": one piece shorter; pad so the unedited source joins the batch
        ids = np.pad(ids, ((0, 0), (0, src.shape[1] - width)), constant_values=model.tokenizer.pad_id)
        mask = np.pad(mask, ((0, 0), (0, src.shape[1] - width)))
    ids, mask = np.concatenate([src, ids]), np.concatenate([src_mask, mask])  # row 0: nothing occluded
    rows = len(ids)
    encoded = model.encode(ids, mask)
    tgt = np.repeat(np.array([sentence.tgt_in_ids], dtype=np.int64), rows, 0)
    states, first = model.last_states(tgt, encoded["memory"], mask)
    targets = np.repeat(np.array([sentence.output_ids], dtype=np.int64), rows, 0)
    log_probs = model.token_log_probs(states, targets)  # (1 + P, T)
    attention = first["dec_cross_weights"][:, 0]  # (L, H, T, S) of the unedited row
    return Occlusion(sentence, method, positions, log_probs[0], (log_probs[0][None] - log_probs[1:]).T, attention)
