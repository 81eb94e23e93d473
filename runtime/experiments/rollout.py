"""Attention rollout (Abnar & Zuidema 2020, "Quantifying Attention Flow in Transformers", ACL, §3): how much of
each input token reaches a position through every layer's attention, residual connections included.

    maps = attention_maps(model, sentence)       # runtime.experiments.model
    flow = translation_rollout(maps)             # flow.source (T, S): target token t's distribution over the source
    classifier_rollout(weights)                  # the classifier: (S,) over its tokens

The rule, per encoder layer l with attention A_l (H, S, S):
    A'_l = 0.5 · mean_h A_l + 0.5 · I, rows renormalised to sum to 1
(half for the attention, half for the residual connection that carries each position's own state past it), and
the encoder rollout is R = A'_L · … · A'_1 (S, S): row i is how much of each input token encoder output i holds.

Into the decoder: every decoder layer's cross-attention reads the same encoder output (the memory), so for target
token t and decoder layer l, C_l[t] · R (C_l = mean over heads of the cross-attention (T, S)) is a distribution
over the source tokens. `source` is the mean over the decoder layers of these. Why every layer and not the last:
each layer adds what it reads to the residual stream that the output layer projects, and nothing in the weights
says one layer's read counts more. `per_layer` keeps each layer's: the last layer's mean of heads is the reading
that best matches dictionary word pairs (`python -m bench alignment`, docs/steering.md), and `python -m bench
attribution` scores it beside the mean (docs/experiments.md). The decoder's self-attention is not rolled: it
mixes target positions, each of which read the source through its own cross-attention, and a rule for that flow
is not in the paper (it rolls one stack); so this rollout follows only the direct path source -> encoder -> the
cross-attention of position t. Rows sum to 1 because each factor's rows do (tested).

Attention is not explanation: rollout measures where information *could* flow by attention weights alone,
ignoring the values' norms, W_O and the feed-forward networks; docs/experiments.md compares it with what deleting
a word does.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Rollout:
    encoder: np.ndarray  # (S, S) R: row i = share of each source token in encoder output i
    per_layer: np.ndarray  # (L_dec, T, S): decoder layer l's cross-attention (mean over heads) times R
    source: np.ndarray  # (T, S): the mean over decoder layers; row t sums to 1


def residual_attention(weights: np.ndarray) -> np.ndarray:
    """One layer's A' = 0.5 · mean over heads + 0.5 · I, rows renormalised: weights (H, Q, K) with Q == K."""
    mean = np.asarray(weights, dtype=np.float64).mean(axis=0)  # (H, S, S) -> (S, S)
    mixed = 0.5 * mean + 0.5 * np.eye(mean.shape[0])
    return mixed / mixed.sum(axis=-1, keepdims=True)


def encoder_rollout(weights: np.ndarray) -> np.ndarray:
    """weights (L, H, S, S), first layer first -> R = A'_L · … · A'_1 (S, S)."""
    weights = np.asarray(weights)
    if weights.ndim != 4 or weights.shape[-1] != weights.shape[-2]:
        raise ValueError(f"expected self-attention weights (layers, heads, S, S), got shape {weights.shape}")
    rolled = np.eye(weights.shape[-1])
    for layer in weights:
        rolled = residual_attention(layer) @ rolled  # a later layer mixes what the earlier ones produced
    return rolled


def translation_rollout(maps: dict[str, np.ndarray]) -> Rollout:
    """Rollout for every target token of a translation from `attention_maps`' {"enc_self" (L, H, S, S),
    "dec_cross" (L_dec, H, T, S), ...}."""
    encoder = encoder_rollout(maps["enc_self"])
    cross = np.asarray(maps["dec_cross"], dtype=np.float64).mean(axis=1)  # (L_dec, H, T, S) -> (L_dec, T, S)
    if cross.shape[-1] != encoder.shape[0]:
        raise ValueError(f"cross-attention over {cross.shape[-1]} source tokens, encoder over {encoder.shape[0]}")
    per_layer = cross @ encoder  # (L_dec, T, S) @ (S, S) -> (L_dec, T, S)
    return Rollout(encoder, per_layer, per_layer.mean(axis=0))


def classifier_rollout(weights: np.ndarray) -> np.ndarray:
    """The classifier's rollout: the encoder's R, averaged over its output positions as the mean-pooling head
    averages them -> (S,) summing to 1. weights (L, H, S, S) of one text (no padding)."""
    return encoder_rollout(weights).mean(axis=0)
