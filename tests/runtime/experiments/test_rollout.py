"""runtime.experiments.rollout (Abnar & Zuidema 2020) on attention made up here: every row a distribution, the
rule as the paper writes it, layers multiplied in order, and attention to oneself rolling out to the identity."""
from __future__ import annotations

import numpy as np
import pytest

from runtime.experiments.rollout import (
    classifier_rollout,
    encoder_rollout,
    residual_attention,
    translation_rollout,
)


def attention(rng: np.random.Generator, *shape: int) -> np.ndarray:
    """Random softmax rows of shape (..., Q, K)."""
    scores = rng.normal(size=shape) * 2
    weights = np.exp(scores)
    return weights / weights.sum(axis=-1, keepdims=True)


def maps(seed: int = 0, layers: int = 3, heads: int = 4, s: int = 7, t: int = 5) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"enc_self": attention(rng, layers, heads, s, s), "dec_cross": attention(rng, layers, heads, t, s)}


def test_every_row_sums_to_one():
    flow = translation_rollout(maps())
    np.testing.assert_allclose(flow.encoder.sum(axis=-1), 1, atol=1e-12)
    np.testing.assert_allclose(flow.per_layer.sum(axis=-1), 1, atol=1e-12)
    np.testing.assert_allclose(flow.source.sum(axis=-1), 1, atol=1e-12)
    assert (flow.source >= 0).all() and flow.source.shape == (5, 7)
    np.testing.assert_allclose(classifier_rollout(maps()["enc_self"]).sum(), 1, atol=1e-12)


def test_the_rule_is_half_attention_half_identity_multiplied_through_the_layers_in_order():
    weights = maps(1)["enc_self"]
    a = [0.5 * layer.mean(axis=0) + 0.5 * np.eye(7) for layer in weights]
    a = [m / m.sum(axis=1, keepdims=True) for m in a]
    np.testing.assert_allclose(residual_attention(weights[0]), a[0], atol=1e-12)
    np.testing.assert_allclose(encoder_rollout(weights), a[2] @ a[1] @ a[0], atol=1e-12)
    assert not np.allclose(encoder_rollout(weights), a[0] @ a[1] @ a[2], atol=1e-3)  # the order matters
    flow = translation_rollout(maps(1))
    cross = maps(1)["dec_cross"].mean(axis=1)  # (L, T, S)
    np.testing.assert_allclose(flow.per_layer[2], cross[2] @ (a[2] @ a[1] @ a[0]), atol=1e-12)
    np.testing.assert_allclose(flow.source, flow.per_layer.mean(axis=0), atol=1e-12)


def test_attending_to_oneself_rolls_out_to_the_identity():
    eye = np.broadcast_to(np.eye(6), (2, 3, 6, 6))
    np.testing.assert_allclose(encoder_rollout(eye), np.eye(6), atol=1e-12)
    np.testing.assert_allclose(classifier_rollout(eye), np.full(6, 1 / 6), atol=1e-12)


def test_bad_shapes_are_value_errors_in_words():
    with pytest.raises(ValueError, match="layers, heads, S, S"):
        encoder_rollout(np.ones((2, 3, 4, 5)))
    bad = maps()
    bad["dec_cross"] = bad["dec_cross"][..., :3]
    with pytest.raises(ValueError, match="source tokens"):
        translation_rollout(bad)
