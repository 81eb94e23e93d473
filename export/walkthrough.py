"""The walkthrough graphs' modules: one input through the model, every intermediate tensor an output.

Each step is computed by the model's own submodules (its Linear layers, LayerNorms, `Residual` halves,
`tx.attention.attention`), so what the Walkthrough page shows is what the served model computes; the only
tensors computed here and nowhere in the model are the ones the model never materialises on its own: the raw
scores q·kᵀ, the scaled scores and the masked scores (−∞ where the mask forbids). Output order and names are
`runtime.spec`'s walkthrough specs; per-layer tensors are stacked on a leading layer axis.

Axis letters as in `tx.attention`; L = layers, F = the feed-forward width.
"""
from __future__ import annotations

import torch
from torch import Tensor, nn

from runtime.spec import ATTENTION_STEPS, FEED_FORWARD_STEPS
from tx.attention import MultiHeadAttention, attention
from tx.layers import Embeddings, FeedForward, PositionalEncoding, Residual
from tx.masks import causal_mask, key_mask

from .shown_graph import ShownGraph


def attention_steps(mha: MultiHeadAttention, residual: Residual, x: Tensor, memory: Tensor | None,
                    allowed: Tensor) -> dict[str, Tensor]:
    """One attention sublayer with its residual and norm, step by step. x (B, T, D) is the residual stream;
    keys and values come from `memory` (B, S, D) for cross-attention, else from the sublayer input."""
    h = residual.sublayer_input(x)  # pre-LN: LayerNorm(x); post-LN: x itself
    q = mha.split_heads(mha.w_q(h))  # (B, T, D) -> (B, H, T, K)
    k, v = mha.project_kv(h if memory is None else memory)  # (B, H, S, K) each
    scores = q @ k.transpose(-2, -1)  # (B, H, T, S): the raw dot products
    scaled = scores * mha.score_scale
    masked = scaled.masked_fill(~allowed, float("-inf"))  # what the softmax sees (the model uses finfo.min)
    context, weights = attention(q, k, v, allowed, 0.0, mha.scale)  # the model's own function: (B, H, T, K)
    b, _, t, _ = context.shape
    concat = context.transpose(1, 2).reshape(b, t, mha.n_heads * mha.d_k)  # (B, H, T, K) -> (B, T, D)
    out = mha.w_o(concat)
    stream = residual.merge(x, out)
    steps = dict(zip(ATTENTION_STEPS, (h, q, k, v, scores, scaled, masked, weights, context, concat, out, x + out,
                                       stream), strict=True))
    return steps


def feed_forward_steps(ff: FeedForward, residual: Residual, x: Tensor) -> dict[str, Tensor]:
    """FFN(x) = max(0, x W1 + b1) W2 + b2 with its residual and norm, step by step."""
    first, relu, _, second = ff.net  # Linear, ReLU, Dropout (identity in eval), Linear
    h = residual.sublayer_input(x)
    hidden = relu(first(h))  # (B, T, F)
    out = second(hidden)
    return dict(zip(FEED_FORWARD_STEPS, (h, hidden, out, x + out, residual.merge(x, out)), strict=True))


def embedding_steps(embed: Embeddings, positional: PositionalEncoding, ids: Tensor) -> list[Tensor]:
    rows = embed.table(ids)  # (B, T) -> (B, T, D)
    scaled = rows * embed.scale
    x0 = positional(scaled)  # the model's own sum (and its own switch, if positions are off)
    positions = x0[0] - scaled[0]  # (T, D): what the positional encoding added
    return [rows, scaled, positions, x0]


def stacked(per_layer: list[dict[str, Tensor]], names: tuple[str, ...]) -> list[Tensor]:
    return [torch.stack([layer[name] for layer in per_layer]) for name in names]  # L × (B, ...) -> (L, B, ...)


def encoder_steps(encoder: nn.Module, x: Tensor, keep: Tensor) -> tuple[list[Tensor], Tensor]:
    """Every encoder layer's steps (stacked) and the encoder's output (final LayerNorm included when pre-LN)."""
    allowed = key_mask(keep)  # (B, 1, 1, S)
    attn, ff = [], []
    for layer in encoder.layers:
        attn.append(attention_steps(layer.self_attn, layer.res_attn, x, None, allowed))
        ff.append(feed_forward_steps(layer.feed_forward, layer.res_ff, attn[-1]["stream"]))
        x = ff[-1]["stream"]
    return stacked(attn, ATTENTION_STEPS) + stacked(ff, FEED_FORWARD_STEPS), encoder.norm(x)


class WalkthroughGraph(ShownGraph):
    """A walkthrough graph: every intermediate tensor of a forward pass is an output."""


class EncoderWalkthrough(WalkthroughGraph):
    """(src_ids, src_mask) -> embedding steps, encoder steps, memory."""

    def forward(self, src_ids: Tensor, src_mask: Tensor):
        m = self.model
        embedded = embedding_steps(m.src_embed, m.positional, src_ids)
        steps, memory = encoder_steps(m.encoder, embedded[-1], src_mask)
        return (*embedded, *steps, memory)


class DecoderWalkthrough(WalkthroughGraph):
    """(tgt_ids, memory, src_mask) -> embedding steps, decoder steps, hidden, logits, log_probs (teacher-forced)."""

    def forward(self, tgt_ids: Tensor, memory: Tensor, src_mask: Tensor):
        m = self.model
        embedded = embedding_steps(m.tgt_embed, m.positional, tgt_ids)
        x = embedded[-1]
        causal = causal_mask(tgt_ids.size(1), 0, device=tgt_ids.device)  # (1, 1, T, T)
        cross_allowed = key_mask(src_mask)  # (B, 1, 1, S)
        own, cross, ff = [], [], []
        for layer in m.decoder.layers:
            own.append(attention_steps(layer.self_attn, layer.res_self, x, None, causal))
            cross.append(attention_steps(layer.cross_attn, layer.res_cross, own[-1]["stream"], memory, cross_allowed))
            ff.append(feed_forward_steps(layer.feed_forward, layer.res_ff, cross[-1]["stream"]))
            x = ff[-1]["stream"]
        hidden = m.decoder.norm(x)
        logits = m.generator(hidden)  # (B, T, D) @ (D, V): the tied embedding matrix when share_embeddings
        return (*embedded, *stacked(own, ATTENTION_STEPS), *stacked(cross, ATTENTION_STEPS),
                *stacked(ff, FEED_FORWARD_STEPS), hidden, logits, logits.log_softmax(dim=-1))


class ClassifierWalkthrough(WalkthroughGraph):
    """(input_ids, attention_mask) -> embedding steps, encoder steps, encoded, pooled, head logits, calibrated
    logits, probabilities."""

    def forward(self, input_ids: Tensor, attention_mask: Tensor):
        m = self.model
        embedded = embedding_steps(m.embed, m.positional, input_ids)
        steps, encoded = encoder_steps(m.encoder, embedded[-1], attention_mask)
        pooled = m.pool(encoded, attention_mask)  # (B, S, D) -> (B, D)
        head_logits = m.head(pooled)
        logits = head_logits / m.config.temperature
        return (*embedded, *steps, encoded, pooled, head_logits, logits, logits.softmax(dim=-1))


WALKTHROUGH_MODULES = {"encoder_walkthrough": EncoderWalkthrough, "decoder_walkthrough": DecoderWalkthrough,
                       "classifier_walkthrough": ClassifierWalkthrough}
