"""The experiment graphs' modules: the model with a gate on every attention head, and its output layer alone.

Each attention sublayer is computed by the model's own submodules (its Linear layers, `Residual` halves,
`tx.attention.attention`), with one change where the heads meet W_O: head h's output (its context vector,
weights @ v) becomes  gate[h] · context + (1 − gate[h]) · fill[h]  (`runtime.spec`'s experiment graphs say why).
With every gate 1 the graphs compute what the served ones do (the tests compare them, and compare a knock-out with
the same knock-out done by hooks on the unchanged model).

Axis letters as in `tx.attention`; L = layers. Per-layer outputs are stacked on a leading layer axis.
"""
from __future__ import annotations

import torch
from torch import Tensor, nn

from tx import Seq2SeqTransformer
from tx.attention import MultiHeadAttention, attention
from tx.layers import Residual
from tx.masks import causal_mask, key_mask

from .shown_graph import ShownGraph
from .wrappers import LogSoftmaxOutput


def gated_attention(mha: MultiHeadAttention, residual: Residual, x: Tensor, memory: Tensor | None, allowed: Tensor,
                    gate: Tensor, fill: Tensor, past: tuple[Tensor, Tensor] | None = None
                    ) -> tuple[Tensor, Tensor, Tensor, tuple[Tensor, Tensor]]:
    """One attention sublayer with its residual and norm, its heads gated. x (B, T, D) is the residual stream;
    keys and values come from `memory` (B, S, D) for cross-attention, else from the sublayer input, after the
    `past` keys and values (B, H, P, K) of a KV cache when given. gate (B, H), fill (H, K). Returns the new stream
    (B, T, D), the weights (B, H, T, S), the heads' outputs before the gate (B, H, T, K) and the keys and values."""
    h = residual.sublayer_input(x)  # pre-LN: LayerNorm(x); post-LN: x itself
    q = mha.split_heads(mha.w_q(h))  # (B, T, D) -> (B, H, T, K)
    k, v = mha.project_kv(h if memory is None else memory)  # (B, H, S, K) each
    if past is not None:
        k, v = torch.cat([past[0], k], dim=2), torch.cat([past[1], v], dim=2)  # (B, H, P + T, K)
    context, weights = attention(q, k, v, allowed, 0.0, mha.scale)  # the model's own function
    g = gate[:, :, None, None]  # (B, H) -> (B, H, 1, 1)
    gated = context * g + (1.0 - g) * fill[None, :, None, :]  # fill (H, K) -> (1, H, 1, K)
    b, _, t, _ = context.shape
    concat = gated.transpose(1, 2).reshape(b, t, mha.n_heads * mha.d_k)  # (B, H, T, K) -> (B, T, D)
    return residual.merge(x, mha.w_o(concat)), weights, context, (k, v)


class ExperimentGraph(ShownGraph):
    """An experiment graph: gated heads, and the tensors the experiments read, as outputs."""


def gated_encoder(encoder: nn.Module, x: Tensor, keep: Tensor, gate: Tensor, fill: Tensor):
    """The encoder stack (its final norm included) with its heads gated: ((B, S, D), weights, head outputs)."""
    allowed = key_mask(keep)  # (B, 1, 1, S)
    weights, contexts = [], []
    for i, layer in enumerate(encoder.layers):
        x, w, c, _ = gated_attention(layer.self_attn, layer.res_attn, x, None, allowed, gate[:, i], fill[i])
        x = layer.res_ff(x, layer.feed_forward)
        weights.append(w)
        contexts.append(c)
    return encoder.norm(x), torch.stack(weights), torch.stack(contexts)


class EncoderExperiment(ExperimentGraph):
    """(src_ids, src_mask, enc_self_gate (B, L, H), enc_self_fill (L, H, K)) -> memory, weights, head outputs."""

    def forward(self, src_ids: Tensor, src_mask: Tensor, gate: Tensor, fill: Tensor):
        m = self.model
        return gated_encoder(m.encoder, m.positional(m.src_embed(src_ids)), src_mask, gate, fill)


class ClassifierExperiment(ExperimentGraph):
    """(input_ids, attention_mask, enc_self_gate, enc_self_fill) -> the calibrated logits (as the served classifier
    returns them), weights, head outputs."""

    def forward(self, input_ids: Tensor, attention_mask: Tensor, gate: Tensor, fill: Tensor):
        m = self.model
        encoded, weights, contexts = gated_encoder(m.encoder, m.positional(m.embed(input_ids)), attention_mask, gate,
                                                   fill)
        logits = m.head(m.pool(encoded, attention_mask)) / m.config.temperature  # dropout: identity in eval
        return logits, weights, contexts


class DecoderExperiment(ExperimentGraph):
    """(tgt_ids, memory, src_mask, dec_self_gate, dec_self_fill, dec_cross_gate, dec_cross_fill) -> every layer's
    output (before the final norm of a pre-LN model), self- and cross-attention weights and head outputs."""

    def forward(self, tgt_ids: Tensor, memory: Tensor, src_mask: Tensor, self_gate: Tensor, self_fill: Tensor,
                cross_gate: Tensor, cross_fill: Tensor):
        m = self.model
        x = m.positional(m.tgt_embed(tgt_ids))
        causal = causal_mask(tgt_ids.size(1), 0, device=tgt_ids.device)  # (1, 1, T, T)
        cross_allowed = key_mask(src_mask)  # (B, 1, 1, S)
        states, self_w, self_c, cross_w, cross_c = [], [], [], [], []
        for i, layer in enumerate(m.decoder.layers):
            x, w, c, _ = gated_attention(layer.self_attn, layer.res_self, x, None, causal, self_gate[:, i],
                                         self_fill[i])
            self_w.append(w)
            self_c.append(c)
            x, w, c, _ = gated_attention(layer.cross_attn, layer.res_cross, x, memory, cross_allowed,
                                         cross_gate[:, i], cross_fill[i])
            cross_w.append(w)
            cross_c.append(c)
            x = layer.res_ff(x, layer.feed_forward)
            states.append(x)
        return tuple(torch.stack(t) for t in (states, self_w, self_c, cross_w, cross_c))


class DecoderExperimentStep(ExperimentGraph):
    """(tokens, memory, src_mask, past_k, past_v (L, B, H, P, K), gates and fills) -> the last layer's states of the
    new positions, present_k, present_v (L, B, H, P + T, K), cross-attention weights: `DecoderExperiment` with a KV
    cache, for a knock-out's search."""

    def forward(self, tokens: Tensor, memory: Tensor, src_mask: Tensor, past_k: Tensor, past_v: Tensor,
                self_gate: Tensor, self_fill: Tensor, cross_gate: Tensor, cross_fill: Tensor):
        m = self.model
        past = past_k.size(3)
        x = m.positional(m.tgt_embed(tokens), offset=past)
        causal = causal_mask(tokens.size(1), past, device=tokens.device)  # (1, 1, T, P + T)
        cross_allowed = key_mask(src_mask)
        keys, values, cross_w = [], [], []
        for i, layer in enumerate(m.decoder.layers):
            x, _, _, (k, v) = gated_attention(layer.self_attn, layer.res_self, x, None, causal, self_gate[:, i],
                                              self_fill[i], (past_k[i], past_v[i]))
            keys.append(k)
            values.append(v)
            x, w, _, _ = gated_attention(layer.cross_attn, layer.res_cross, x, memory, cross_allowed,
                                         cross_gate[:, i], cross_fill[i])
            cross_w.append(w)
            x = layer.res_ff(x, layer.feed_forward)
        return x, torch.stack(keys), torch.stack(values), torch.stack(cross_w)


class LogitLens(ExperimentGraph):
    """states (B, T, D) -> log_probs (B, T, V): the decoder's final norm (Identity when post-LN), the tied output
    projection (as the served decoder step holds it: `LogSoftmaxOutput`), log-softmax."""

    def __init__(self, model: Seq2SeqTransformer):
        super().__init__(model)
        self.output = LogSoftmaxOutput(model.generator)

    def forward(self, states: Tensor):
        return self.output(self.model.decoder.norm(states))


EXPERIMENT_MODULES = {"encoder_experiment": EncoderExperiment, "decoder_experiment": DecoderExperiment,
                      "decoder_experiment_step": DecoderExperimentStep, "logit_lens": LogitLens,
                      "classifier_experiment": ClassifierExperiment}
