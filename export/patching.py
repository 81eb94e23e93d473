"""The patching graphs' modules (`runtime.spec`'s "patching graphs"): the model with a patch point on the residual
stream before the first layer and after each layer, and on every head's output.

Each sublayer is computed by the model's own submodules (its Linear layers, `Residual` halves,
`tx.attention.attention`); the only change is the patch, at each point

    x = where · value + (1 − where) · x

with `value` one clean run's activation (no batch axis) and `where` (batch axis) saying which rows patch which
positions. With every where 0 they compute what the experiment graphs compute (tests/export/test_patching.py).

Axis letters as in `tx.attention`; L = layers, P = L + 1 residual points. Per-layer outputs are stacked on axis 1
(batch first: a row's outputs are the values of a later call).
"""
from __future__ import annotations

import torch
from torch import Tensor, nn

from tx.attention import MultiHeadAttention, attention
from tx.layers import Residual
from tx.masks import causal_mask, key_mask

from .experiments import ExperimentGraph


def blend(x: Tensor, value: Tensor, where: Tensor) -> Tensor:
    """x (B, T, D), value (T, D), where (B, T) -> where · value + (1 − where) · x, per row and position."""
    w = where[:, :, None]  # (B, T) -> (B, T, 1)
    return x * (1.0 - w) + value[None] * w


def patched_attention(mha: MultiHeadAttention, residual: Residual, x: Tensor, memory: Tensor | None,
                      allowed: Tensor, value: Tensor, where: Tensor) -> tuple[Tensor, Tensor]:
    """One attention sublayer with its residual and norm, each head's output patched. x (B, T, D) is the residual
    stream; keys and values come from `memory` (B, S, D) for cross-attention, else from the sublayer input.
    value (H, T, K), where (B, H, T). Returns the new stream (B, T, D) and the heads' outputs before the patch
    (B, H, T, K)."""
    h = residual.sublayer_input(x)  # pre-LN: LayerNorm(x); post-LN: x itself
    q = mha.split_heads(mha.w_q(h))  # (B, T, D) -> (B, H, T, K)
    k, v = mha.project_kv(h if memory is None else memory)  # (B, H, S, K) each
    context, _ = attention(q, k, v, allowed, 0.0, mha.scale)  # the model's own function
    w = where[..., None]  # (B, H, T) -> (B, H, T, 1)
    patched = context * (1.0 - w) + value[None] * w  # value (H, T, K) -> (1, H, T, K)
    b, _, t, _ = context.shape
    concat = patched.transpose(1, 2).reshape(b, t, mha.n_heads * mha.d_k)  # (B, H, T, K) -> (B, T, D)
    return residual.merge(x, mha.w_o(concat)), context


def patched_encoder(encoder: nn.Module, x: Tensor, keep: Tensor, resid_value: Tensor, resid_where: Tensor,
                    head_value: Tensor, head_where: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """The encoder stack (its final norm included) with its patch points: x (B, S, D) embedded source, keep (B, S),
    resid_value (P, S, D), resid_where (B, P, S), head_value (L, H, S, K), head_where (B, L, H, S) ->
    (the output (B, S, D), the stream at every point (B, P, S, D), the heads' outputs (B, L, H, S, K))."""
    allowed = key_mask(keep)  # (B, 1, 1, S)
    x = blend(x, resid_value[0], resid_where[:, 0])
    points, heads = [x], []
    for i, layer in enumerate(encoder.layers):
        x, context = patched_attention(layer.self_attn, layer.res_attn, x, None, allowed, head_value[i],
                                       head_where[:, i])
        x = blend(layer.res_ff(x, layer.feed_forward), resid_value[i + 1], resid_where[:, i + 1])
        points.append(x)
        heads.append(context)
    return encoder.norm(x), torch.stack(points, 1), torch.stack(heads, 1)


class EncoderPatch(ExperimentGraph):
    """(src_ids, src_mask, resid_value, resid_where, enc_self_value, enc_self_where) -> memory, resid,
    enc_self_heads."""

    def forward(self, src_ids: Tensor, src_mask: Tensor, resid_value: Tensor, resid_where: Tensor,
                head_value: Tensor, head_where: Tensor):
        m = self.model
        return patched_encoder(m.encoder, m.positional(m.src_embed(src_ids)), src_mask, resid_value, resid_where,
                               head_value, head_where)


class ClassifierPatch(ExperimentGraph):
    """(input_ids, attention_mask, resid_value, resid_where, enc_self_value, enc_self_where) -> the calibrated
    logits (as the served classifier returns them), resid, enc_self_heads."""

    def forward(self, input_ids: Tensor, attention_mask: Tensor, resid_value: Tensor, resid_where: Tensor,
                head_value: Tensor, head_where: Tensor):
        m = self.model
        encoded, points, heads = patched_encoder(m.encoder, m.positional(m.embed(input_ids)), attention_mask,
                                                 resid_value, resid_where, head_value, head_where)
        logits = m.head(m.pool(encoded, attention_mask)) / m.config.temperature  # dropout: identity in eval
        return logits, points, heads


class DecoderPatch(ExperimentGraph):
    """(tgt_ids, memory, src_mask, resid_value, resid_where, dec_self_value, dec_self_where, dec_cross_value,
    dec_cross_where) -> the last layer's states (before the final norm of a pre-LN model), resid, dec_self_heads,
    dec_cross_heads."""

    def forward(self, tgt_ids: Tensor, memory: Tensor, src_mask: Tensor, resid_value: Tensor, resid_where: Tensor,
                self_value: Tensor, self_where: Tensor, cross_value: Tensor, cross_where: Tensor):
        m = self.model
        causal = causal_mask(tgt_ids.size(1), 0, device=tgt_ids.device)  # (1, 1, T, T)
        cross_allowed = key_mask(src_mask)  # (B, 1, 1, S)
        x = blend(m.positional(m.tgt_embed(tgt_ids)), resid_value[0], resid_where[:, 0])
        points, self_heads, cross_heads = [x], [], []
        for i, layer in enumerate(m.decoder.layers):
            x, context = patched_attention(layer.self_attn, layer.res_self, x, None, causal, self_value[i],
                                           self_where[:, i])
            self_heads.append(context)
            x, context = patched_attention(layer.cross_attn, layer.res_cross, x, memory, cross_allowed,
                                           cross_value[i], cross_where[:, i])
            cross_heads.append(context)
            x = blend(layer.res_ff(x, layer.feed_forward), resid_value[i + 1], resid_where[:, i + 1])
            points.append(x)
        return x, torch.stack(points, 1), torch.stack(self_heads, 1), torch.stack(cross_heads, 1)


PATCHING_MODULES = {"encoder_patch": EncoderPatch, "decoder_patch": DecoderPatch, "classifier_patch": ClassifierPatch}
