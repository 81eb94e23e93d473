"""The logit lens: what the decoder would say after each of its layers.

    lens = logit_lens(model, model.sentence("Wo ist der Bahnhof?"), k=5)
    lens.top_pieces[layer][t]  # the k most probable next pieces if the decoder stopped after `layer`
    lens.chosen_rank[:, t]     # where the finally chosen token ranks after each layer (1 = first)

Each decoder layer's output at target position t goes through the model's own output layer: the tied output
projection (the embedding matrix, transposed) and a log-softmax, after the normalisation that layer expects:

- post-LN (the paper's layout, and the shipped translator's: config "pre_norm": false): every layer ends in the
  LayerNorm of its feed-forward sublayer's Add & Norm, so each layer's output is already normalised like the last
  layer's, which is what the projection was trained on. No norm is added (the model has no final LayerNorm).
- pre-LN: the residual stream is never normalised inside the stack (each sublayer normalises its own input), and
  the model applies one final LayerNorm before the projection. Its intermediate streams are at another scale, so
  the final LayerNorm is applied to every layer's output first (as nostalgebraist's logit lens does for GPT-2).

Either way the last layer goes through exactly the served computation, so its distribution is the served one.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..decoding import top_k_numpy
from .model import ExperimentModel, Sentence, one_source

POST_LN_NOTE = ("post-LN model: each decoder layer's output already leaves a LayerNorm (its Add & Norm), as the last "
                "one does, so it goes through the tied output projection as it is (the model has no final norm)")
PRE_LN_NOTE = ("pre-LN model: the residual stream between layers is not normalised, so the decoder's final "
               "LayerNorm, which the tied output projection was trained behind, is applied to every layer's output")


@dataclass(frozen=True)
class LogitLens:
    """Per decoder layer and target position: the top-k next pieces, and the finally chosen token's standing."""

    sentence: Sentence
    normalisation: str  # which normalisation was applied before the projection, and why
    top_ids: np.ndarray  # (L, T, k) int64, most probable first
    top_pieces: list[list[list[str]]]  # [layer][position][rank]
    top_probs: np.ndarray  # (L, T, k)
    chosen_rank: np.ndarray  # (L, T) int64: 1 + how many pieces were more probable than the finally chosen one
    chosen_prob: np.ndarray  # (L, T)
    log_probs: np.ndarray  # (L, T, V): every layer's whole distribution (the last = the served one)

    @property
    def layers(self) -> int:
        return self.top_ids.shape[0]


def logit_lens(model: ExperimentModel, sentence: Sentence, k: int = 5) -> LogitLens:
    """The logit lens over `sentence`'s translation, teacher-forced (position t's input is <s> + the translation
    before t, as when greedy chose its token t)."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    src, mask = one_source(sentence)
    memory = model.encode(src, mask)["memory"]
    states = model.decode(np.array([sentence.tgt_in_ids], dtype=np.int64), memory, mask)["layer_states"]
    log_probs = model.project(states[:, 0])  # (L, T, D) -> (L, T, V)
    layers, positions, vocab = log_probs.shape
    k = min(k, vocab)
    top_lp, top_ids = top_k_numpy(log_probs.reshape(-1, vocab), k)
    top_ids, top_probs = top_ids.reshape(layers, positions, k), np.exp(top_lp).reshape(layers, positions, k)
    chosen = np.array(sentence.output_ids, dtype=np.int64)
    chosen_lp = np.take_along_axis(log_probs, np.broadcast_to(chosen[None, :, None], (layers, positions, 1)), 2)
    rank = 1 + (log_probs > chosen_lp).sum(axis=2)
    pieces = [[model.tokenizer.tokens(row.tolist()) for row in layer] for layer in top_ids]
    return LogitLens(sentence, PRE_LN_NOTE if model.pre_norm else POST_LN_NOTE, top_ids, pieces, top_probs,
                     rank.astype(np.int64), np.exp(chosen_lp[..., 0]), log_probs)
