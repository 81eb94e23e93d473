"""runtime.experiments.classifier against the served classifier of the same tiny model (no torch; the PyTorch parity
is tests/export/test_experiments.py): knocking out nothing gives the served probabilities, occlusion equals
re-classifying the edited texts by hand, the head-importance batch equals one knock-out at a time."""
from __future__ import annotations

import numpy as np
import pytest
from export_fixtures import REVIEWS, exported

from runtime.experiments import (
    OCCLUSION_METHODS,
    ClassifierExperimentModel,
    Head,
    classify_head_importance,
    classify_knockout,
    classify_occlusion,
    every_head,
    reference_means,
    spearman,
)
from runtime.experiments.classifier import label_log_probs, log_softmax
from runtime.experiments.heads import gates_for

pytestmark = pytest.mark.exports

ATOL = 1e-5  # probabilities and log-probabilities of the experiment graph vs the served (fused) one


@pytest.fixture(scope="module")
def model():
    return ClassifierExperimentModel(exported("sentiment"))


@pytest.fixture(scope="module")
def review(model):
    return model.review(REVIEWS[0][1])


def served_label_log_prob(model, ids: list[int], keep: list[bool], label: int) -> float:
    """The served classifier graph run by hand on one edited input."""
    logits, _ = model.classifier.logits(np.array([ids]), np.array([keep], dtype=bool), False)
    return float(log_softmax(np.asarray(logits, dtype=np.float64))[0, label])


def test_knocking_out_no_head_gives_the_served_probabilities(model, review):
    served = model.classifier.classify([review.text])[0]
    assert review.pieces == served.tokens and review.label == served.label
    for mode in ("zero", "mean"):
        result = classify_knockout(model, review, [], mode)
        np.testing.assert_allclose(result.probs, review.probs, atol=ATOL)
        assert not result.changed and result.attention.shape == (2, 2, len(review.ids), len(review.ids))


def test_occlusion_equals_reclassifying_the_edited_texts_by_hand(model, review):
    label = review.label_index
    for method in OCCLUSION_METHODS:
        result = classify_occlusion(model, review, method)
        assert result.base == pytest.approx(served_label_log_prob(model, review.ids, [True] * len(review.ids), label),
                                            abs=ATOL)
        for i in range(len(review.ids)):
            if method == "mask":
                ids, keep = [*review.ids[:i], 0, *review.ids[i + 1:]], [j != i for j in range(len(review.ids))]
            else:
                ids, keep = review.ids[:i] + review.ids[i + 1:], [True] * (len(review.ids) - 1)
            edited = served_label_log_prob(model, ids, keep, label)
            assert result.drop[i] == pytest.approx(result.base - edited, abs=ATOL), f"{method} piece {i}"
        assert result.spearman == pytest.approx(spearman(result.drop, result.attention))
        assert result.attention.shape == (len(review.ids),) and result.attention.sum() == pytest.approx(1, abs=1e-5)


def test_the_head_importance_batch_equals_one_knockout_at_a_time(model, review):
    grid = classify_head_importance(model, [review, model.review(REVIEWS[1][1])], mode="mean")
    fills = reference_means(model).fill
    assert "16 short film reviews" in grid.reference
    base, _ = label_log_probs(model, review, gates_for(model, [[]]), fills)
    for head in every_head(model):
        alone, _ = label_log_probs(model, review, gates_for(model, [[head]]), fills)
        assert grid.per_sentence["enc_self"][0, head.layer, head.head] == pytest.approx(base[0] - alone[0], abs=ATOL)
    assert grid.drop["enc_self"].shape == (2, 2) and len(grid.ranked()) == 4


def test_bad_input_gets_a_clear_message(model, review):
    with pytest.raises(ValueError, match="this model has enc_self"):
        classify_knockout(model, review, [Head("dec_cross", 0, 0)])
    with pytest.raises(ValueError, match="method must be one of"):
        classify_occlusion(model, review, "blank")
    with pytest.raises(ValueError, match="empty text"):
        model.review(" ")
    with pytest.raises(ValueError, match="no texts"):
        classify_head_importance(model, [])
    assert model.review("🙂🙂").probs.shape == (2,)  # what the served classifier does with it, without an error
