"""Deletion curves: does an explanation's ranking of the source tokens predict what deleting them does?

    orders = {"occlusion": occlusion_order(occ, t), "random": random_order(positions, seed=0), ...}
    curves = deletion_curves(model, sentence, t, orders)   # {name: DeletionCurve}
    curves["occlusion"].probs, curves["occlusion"].auc

Given an order of the source pieces (most important first), the pieces are deleted cumulatively: after k
deletions the first k of the order are gone, and the translation is re-scored teacher-forced on its original
prefix (the same decoder inputs), recording the probability of the originally chosen token t. Deleting means
what occlusion's default "mask" means (runtime.experiments.occlude): the piece becomes <pad> and is masked out of
every attention, as padding is, so no token of our choosing leaks in and the other pieces keep their positions.
The <2xx> tag and </s> are never deleted (they are not the user's words).

The area under the curve (AUC): the trapezoid rule over the fraction deleted, k / P for k = 0..P, of the
probability after k deletions; both axes run over [0, 1], so the AUC does too. Lower is better: an order that
puts first what the token really needs makes its probability fall early (Samek et al. 2017's "most relevant
first" perturbation curve, with deletion as in Petsiuk et al. 2018's RISE). A seeded random order is the floor
every method should beat.

The classifier: the same over a review's pieces (every piece can go), for the probability of its predicted label.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .classifier import log_softmax
from .model import ExperimentModel, Sentence
from .occlude import Occlusion


@dataclass(frozen=True)
class DeletionCurve:
    order: list[int]  # positions deleted, most important first
    probs: np.ndarray  # (P + 1,) the token's (or label's) probability after 0, 1, …, P deletions
    auc: float  # area under probs over the fraction deleted, in [0, 1]; lower = the order predicted better

    @property
    def fractions(self) -> np.ndarray:
        return np.linspace(0.0, 1.0, len(self.probs))


def area(probs: np.ndarray) -> float:
    """The trapezoid rule over fractions 0, 1/P, …, 1 (P + 1 values)."""
    probs = np.asarray(probs, dtype=np.float64)
    if len(probs) < 2:
        raise ValueError("a deletion curve needs at least one deletion")
    return float(((probs[1:] + probs[:-1]) / 2).sum() / (len(probs) - 1))


def source_positions(sentence: Sentence) -> list[int]:
    """The positions a deletion may remove: the text's pieces, not the <2xx> tag and not </s>."""
    return list(range(1, len(sentence.src_ids) - 1))


def order_from_scores(positions: Sequence[int], scores: Sequence[float]) -> list[int]:
    """`positions` by descending score (most important first); ties keep the earlier position first."""
    if len(positions) != len(scores):
        raise ValueError(f"{len(scores)} scores for {len(positions)} positions")
    ranked = sorted(range(len(positions)), key=lambda i: (-float(scores[i]), i))
    return [positions[i] for i in ranked]


def random_order(positions: Sequence[int], seed: int = 0) -> list[int]:
    """A seeded random order: the same seed and positions give the same order on every machine."""
    return [positions[i] for i in np.random.default_rng(seed).permutation(len(positions))]


def occlusion_order(result: Occlusion, position: int) -> list[int]:
    """Occlusion's own order for target token `position`: the pieces by how much occluding each alone cost."""
    return order_from_scores(result.positions, result.row(position).drop)


def check_order(order: Sequence[int], positions: Sequence[int]) -> list[int]:
    order = [int(i) for i in order]
    if sorted(order) != sorted(positions):
        raise ValueError(f"an order must hold each deletable position once ({positions[0]}..{positions[-1]}), "
                         f"got {order}")
    return order


def deletion_rows(base_ids: Sequence[int], orders: dict[str, list[int]], pad_id: int
                  ) -> tuple[np.ndarray, np.ndarray, dict[str, slice]]:
    """Every order's cumulative deletions as rows: ids and mask (rows, S), and each order's rows."""
    rows_ids, rows_mask, spans = [], [], {}
    for name, order in orders.items():
        ids, mask = np.array(base_ids, dtype=np.int64), np.ones(len(base_ids), dtype=bool)
        start = len(rows_ids)
        for position in [None, *order]:  # None: the unedited row, then one more deletion per row
            if position is not None:
                ids[position], mask[position] = pad_id, False
            rows_ids.append(ids.copy())
            rows_mask.append(mask.copy())
        spans[name] = slice(start, len(rows_ids))
    return np.stack(rows_ids), np.stack(rows_mask), spans


def deletion_curves(model: ExperimentModel, sentence: Sentence, position: int,
                    orders: dict[str, Sequence[int]]) -> dict[str, DeletionCurve]:
    """Each order's deletion curve for target token `position` of `sentence`'s translation, all in one encoder
    run and one decoder run (over the prefix up to `position` only: later tokens cannot change it)."""
    if not 0 <= position < len(sentence.output_ids):
        raise ValueError(f"target position {position} is outside the translation (0..{len(sentence.output_ids) - 1})")
    positions = source_positions(sentence)
    if not positions:
        raise ValueError("the source has no piece to delete")
    checked = {name: check_order(order, positions) for name, order in orders.items()}
    ids, mask, spans = deletion_rows(sentence.src_ids, checked, model.tokenizer.pad_id)
    encoded = model.encode(ids, mask)
    tgt = np.repeat(np.array([sentence.tgt_in_ids[:position + 1]], dtype=np.int64), len(ids), 0)
    states, _ = model.last_states(tgt, encoded["memory"], mask)
    token = np.full((len(ids), 1), sentence.output_ids[position], dtype=np.int64)
    probs = np.exp(model.token_log_probs(states[:, position:position + 1], token)[:, 0].astype(np.float64))
    return {name: DeletionCurve(checked[name], probs[span], area(probs[span])) for name, span in spans.items()}


def classifier_deletion_curves(model, review, orders: dict[str, Sequence[int]],
                               label: int | None = None) -> dict[str, DeletionCurve]:
    """The classifier's: delete a review's pieces (positions 0..n-1) in each order; the probability of `label`
    (default: the predicted one). `model` a ClassifierExperimentModel, `review` its Review."""
    positions = list(range(len(review.ids)))
    label = review.label_index if label is None else label
    if not 0 <= label < len(review.labels):
        raise ValueError(f"label {label} is outside the classes (0..{len(review.labels) - 1})")
    checked = {name: check_order(order, positions) for name, order in orders.items()}
    ids, mask, spans = deletion_rows(review.ids, checked, model.tokenizer.pad_id)
    probs = np.exp(log_softmax(model.run(ids, mask)["logits"].astype(np.float64))[:, label])
    return {name: DeletionCurve(checked[name], probs[span], area(probs[span])) for name, span in spans.items()}
