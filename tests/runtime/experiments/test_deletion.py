"""runtime.experiments.deletion on the tiny exported models: every point of a deletion curve equals the served
model run by hand on the source with those pieces masked out; the area, the orders and bad input; rollout over a
real sentence's attention has rows that sum to 1."""
from __future__ import annotations

import numpy as np
import pytest
from export_fixtures import GERMAN, REVIEWS, exported

from runtime.experiments import ClassifierExperimentModel, ExperimentModel, attention_maps, occlusion
from runtime.experiments.classifier import log_softmax
from runtime.experiments.deletion import (
    area,
    classifier_deletion_curves,
    deletion_curves,
    occlusion_order,
    order_from_scores,
    random_order,
    source_positions,
)
from runtime.experiments.rollout import translation_rollout

pytestmark = pytest.mark.exports

ATOL = 1e-5  # probabilities: the experiment graphs against the served ones


@pytest.fixture(scope="module")
def model():
    return ExperimentModel(exported("translate"))


@pytest.fixture(scope="module")
def sentence(model):
    return model.sentence(GERMAN[3], "de", "en", max_len=8)


def served_prob(model, ids: list[int], keep: list[bool], tgt_in: list[int], token: int) -> float:
    """The served KV-cache decoder stepped through tgt_in by hand: the probability of `token` at the last step."""
    backend = model.translator.backend
    state = backend.encode(np.array([ids]), np.array([keep], dtype=bool))
    for step in tgt_in:
        log_probs, state = backend.step(np.array([step]), state)
    return float(np.exp(log_probs[0, token]))


def test_each_point_is_the_served_model_with_those_pieces_masked_out(model, sentence):
    t = 1
    positions = source_positions(sentence)
    orders = {"reversed": positions[::-1], "random": random_order(positions, seed=3)}
    curves = deletion_curves(model, sentence, t, orders)
    pad = model.tokenizer.pad_id
    for name, order in orders.items():
        curve = curves[name]
        assert curve.order == order and len(curve.probs) == len(positions) + 1
        for k in range(len(order) + 1):
            ids = [pad if i in order[:k] else token for i, token in enumerate(sentence.src_ids)]
            keep = [i not in order[:k] for i in range(len(ids))]
            expected = served_prob(model, ids, keep, sentence.tgt_in_ids[:t + 1], sentence.output_ids[t])
            assert curve.probs[k] == pytest.approx(expected, abs=ATOL), f"{name}, {k} deleted"
        assert curve.auc == pytest.approx(area(curve.probs))
    assert curves["random"].probs[0] == pytest.approx(np.exp(sentence.token_log_probs[t]), abs=1e-4)


def test_occlusions_first_deletion_is_its_largest_drop(model, sentence):
    t = 0
    occ = occlusion(model, sentence, "mask")
    order = occlusion_order(occ, t)
    curve = deletion_curves(model, sentence, t, {"occlusion": order})["occlusion"]
    assert order[0] == occ.positions[int(np.argmax(occ.drop[t]))]
    assert np.log(curve.probs[1]) == pytest.approx(occ.base[t] - occ.drop[t].max(), abs=1e-4)


def test_area_orders_and_bad_input():
    assert area([1.0, 0.0]) == pytest.approx(0.5)
    assert area([1.0, 1.0, 1.0]) == pytest.approx(1.0)
    assert area([0.8, 0.2, 0.2]) == pytest.approx((0.5 + 0.2) / 2)
    assert order_from_scores([4, 5, 6], [0.1, 0.3, 0.1]) == [5, 4, 6]  # ties: the earlier position first
    assert random_order([1, 2, 3, 4, 5], seed=7) == random_order([1, 2, 3, 4, 5], seed=7)
    assert sorted(random_order(list(range(10)), seed=1)) == list(range(10))
    with pytest.raises(ValueError, match="at least one deletion"):
        area([0.5])


def test_bad_orders_and_positions_are_value_errors_in_words(model, sentence):
    positions = source_positions(sentence)
    with pytest.raises(ValueError, match="each deletable position once"):
        deletion_curves(model, sentence, 0, {"short": positions[:-1]})
    with pytest.raises(ValueError, match="each deletable position once"):
        deletion_curves(model, sentence, 0, {"tag": [0, *positions[1:]]})
    with pytest.raises(ValueError, match="outside the translation"):
        deletion_curves(model, sentence, 99, {"x": positions})


def test_rollout_of_a_real_sentence_has_rows_that_sum_to_one(model, sentence):
    flow = translation_rollout(attention_maps(model, sentence))
    assert flow.source.shape == (len(sentence.output_ids), len(sentence.src_ids))
    np.testing.assert_allclose(flow.source.sum(axis=1), 1, atol=1e-5)


def test_the_classifier_curve_is_the_served_classifier_on_the_masked_texts():
    model = ClassifierExperimentModel(exported("sentiment"))
    review = model.review(REVIEWS[1][1])
    order = random_order(list(range(len(review.ids))), seed=0)
    curve = classifier_deletion_curves(model, review, {"random": order})["random"]
    pad = model.tokenizer.pad_id
    for k in range(len(order)):  # every one but the last, where nothing is left to read
        ids = [pad if i in order[:k] else token for i, token in enumerate(review.ids)]
        keep = [i not in order[:k] for i in range(len(ids))]
        logits, _ = model.classifier.logits(np.array([ids]), np.array([keep], dtype=bool), False)
        expected = np.exp(log_softmax(np.asarray(logits, dtype=np.float64))[0, review.label_index])
        assert curve.probs[k] == pytest.approx(expected, abs=ATOL), f"{k} deleted"
    assert np.isfinite(curve.probs).all() and 0 <= curve.auc <= 1
