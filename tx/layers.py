"""The building blocks of the paper's encoder and decoder (§3.1-3.5).

Axis letters as in `tx.attention`. A decoder KV cache is a list with one entry
per decoder layer, each a tuple `(self_k, self_v, cross_k, cross_v)` of (B, H, *, K)
tensors: self-attention keys/values of every target position so far, and the
encoder memory's keys/values for cross-attention (computed once per source).
"""
from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor, nn

from .attention import MultiHeadAttention
from .masks import key_mask

LayerCache = tuple[Tensor, Tensor, Tensor, Tensor]  # (self_k, self_v, cross_k, cross_v), each (B, H, *, K)


class PositionalEncoding(nn.Module):
    """Adds the fixed sinusoids PE(pos, 2i) = sin(pos / 10000^(2i/D)), PE(pos, 2i+1) = cos(same)."""

    def __init__(self, d_model: int, max_len: int, dropout: float = 0.0):
        super().__init__()
        pos = torch.arange(max_len, dtype=torch.float32)[:, None]  # (max_len, 1)
        inv_freq = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float32) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, d_model)
        pe[:, 0::2] = torch.sin(pos * inv_freq)
        pe[:, 1::2] = torch.cos(pos * inv_freq)
        # Not persistent: it is a pure function of the config, so checkpoints need not carry it.
        self.register_buffer("pe", pe, persistent=False)
        self.dropout = nn.Dropout(dropout)
        # False: positions are not added (EncoderConfig.positional=False, the ablation); the dropout still applies
        self.enabled = True

    def forward(self, x: Tensor, offset: int | Tensor = 0) -> Tensor:
        """x (B, T, D) at absolute positions offset..offset+T-1 (offset > 0 when decoding with a cache)."""
        if not self.enabled:
            return self.dropout(x)
        positions = torch.arange(x.size(1), device=x.device) + offset
        return self.dropout(x + self.pe[positions])  # pe[positions]: (T, D) broadcast over B


class Embeddings(nn.Module):
    """Token embeddings scaled by √d_model so they are not drowned by the positional encoding."""

    def __init__(self, vocab_size: int, d_model: int):
        super().__init__()
        self.table = nn.Embedding(vocab_size, d_model)
        self.scale = math.sqrt(d_model)

    def forward(self, ids: Tensor) -> Tensor:
        return self.table(ids) * self.scale  # (B, T) -> (B, T, D)


class FeedForward(nn.Module):
    """Position-wise FFN(x) = max(0, x W1 + b1) W2 + b2, with dropout after the max (not in the paper's formula:
    tensor2tensor's and the Annotated Transformer's choice; see EncoderConfig.dropout)."""

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Dropout(dropout), nn.Linear(d_ff, d_model))

    def forward(self, x: Tensor) -> Tensor:
        return self.net(x)


class Residual(nn.Module):
    """The residual connection around a sublayer, with its dropout and LayerNorm, in two halves so that a layer
    calls its sublayer itself and keeps everything the sublayer returns (weights, keys, values):

        h = residual.sublayer_input(x)
        out, weights = sublayer(h)
        x = residual.merge(x, out)

    post-LN (paper): LayerNorm(x + Dropout(sublayer(x)))
    pre-LN:          x + Dropout(sublayer(LayerNorm(x)))  -- trains without warm-up tricks, needs a final norm
    """

    def __init__(self, d_model: int, dropout: float, pre_norm: bool):
        super().__init__()
        self.norm = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)
        self.pre_norm = pre_norm

    def sublayer_input(self, x: Tensor) -> Tensor:
        return self.norm(x) if self.pre_norm else x

    def merge(self, x: Tensor, out: Tensor) -> Tensor:
        """x: the residual stream; out: what the sublayer computed from `sublayer_input(x)`."""
        if self.pre_norm:
            return x + self.dropout(out)
        return self.norm(x + self.dropout(out))

    def forward(self, x: Tensor, sublayer: Callable[[Tensor], Tensor]) -> Tensor:
        """For a sublayer that returns one tensor (the feed-forward network)."""
        return self.merge(x, sublayer(self.sublayer_input(x)))


class EncoderLayer(nn.Module):
    """Self-attention then feed-forward, each wrapped in `Residual`."""

    def __init__(self, d_model: int, n_heads: int, d_ff: int, dropout: float, pre_norm: bool):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, n_heads, dropout)
        self.feed_forward = FeedForward(d_model, d_ff, dropout)
        self.res_attn = Residual(d_model, dropout, pre_norm)
        self.res_ff = Residual(d_model, dropout, pre_norm)

    def forward(self, x: Tensor, mask: Tensor, need_weights: bool = False) -> tuple[Tensor, Tensor | None]:
        """x (B, S, D) -> ((B, S, D), self-attention weights (B, H, S, S) or None)."""
        h = self.res_attn.sublayer_input(x)
        attended, weights = self.self_attn(h, h, h, mask, need_weights)
        x = self.res_attn.merge(x, attended)
        return self.res_ff(x, self.feed_forward), weights


class DecoderLayer(nn.Module):
    """Masked self-attention, encoder-decoder (cross) attention, feed-forward.

    Takes the cached self-attention keys/values of earlier positions (possibly
    empty) and returns them extended by the new positions.
    """

    def __init__(self, d_model: int, n_heads: int, d_ff: int, dropout: float, pre_norm: bool):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, n_heads, dropout)
        self.cross_attn = MultiHeadAttention(d_model, n_heads, dropout)
        self.feed_forward = FeedForward(d_model, d_ff, dropout)
        self.res_self = Residual(d_model, dropout, pre_norm)
        self.res_cross = Residual(d_model, dropout, pre_norm)
        self.res_ff = Residual(d_model, dropout, pre_norm)

    def forward(self, x: Tensor, cache: LayerCache, src_mask: Tensor, tgt_mask: Tensor,
                need_weights: bool = False) -> tuple[Tensor, LayerCache, tuple[Tensor | None, Tensor | None]]:
        """x (B, T, D) new target positions; src_mask (B, 1, 1, S); tgt_mask (1|B, 1, T, P+T).

        Returns (x (B, T, D), the layer's cache extended by the T new positions, (self weights, cross weights))."""
        past_k, past_v, cross_k, cross_v = cache
        h = self.res_self.sublayer_input(x)
        k, v = self.self_attn.project_kv(h)
        k = torch.cat([past_k, k], dim=2)  # (B, H, P, K) + (B, H, T, K) -> (B, H, P+T, K)
        v = torch.cat([past_v, v], dim=2)
        attended, self_weights = self.self_attn.attend(h, k, v, tgt_mask, need_weights)
        x = self.res_self.merge(x, attended)

        h = self.res_cross.sublayer_input(x)
        attended, cross_weights = self.cross_attn.attend(h, cross_k, cross_v, src_mask, need_weights)
        x = self.res_cross.merge(x, attended)

        x = self.res_ff(x, self.feed_forward)
        return x, (k, v, cross_k, cross_v), (self_weights, cross_weights)


class Encoder(nn.Module):
    """A stack of `EncoderLayer`s (plus a final LayerNorm when pre-LN)."""

    def __init__(self, n_layers: int, d_model: int, n_heads: int, d_ff: int, dropout: float, pre_norm: bool):
        super().__init__()
        self.layers = nn.ModuleList(EncoderLayer(d_model, n_heads, d_ff, dropout, pre_norm) for _ in range(n_layers))
        self.norm = nn.LayerNorm(d_model) if pre_norm else nn.Identity()

    def forward(self, x: Tensor, keep: Tensor, need_weights: bool = False) -> tuple[Tensor, list[Tensor] | None]:
        """x (B, S, D) embedded source, keep (B, S) True at real tokens -> ((B, S, D), L × (B, H, S, S) or None)."""
        mask = key_mask(keep)
        weights = []
        for layer in self.layers:
            x, w = layer(x, mask, need_weights)
            weights.append(w)
        return self.norm(x), (weights if need_weights else None)


class Decoder(nn.Module):
    """A stack of `DecoderLayer`s working on a KV cache (plus a final LayerNorm when pre-LN)."""

    def __init__(self, n_layers: int, d_model: int, n_heads: int, d_ff: int, dropout: float, pre_norm: bool):
        super().__init__()
        self.layers = nn.ModuleList(DecoderLayer(d_model, n_heads, d_ff, dropout, pre_norm) for _ in range(n_layers))
        self.norm = nn.LayerNorm(d_model) if pre_norm else nn.Identity()

    def forward(self, x: Tensor, cache: list[LayerCache], src_keep: Tensor, tgt_mask: Tensor,
                need_weights: bool = False) -> tuple[Tensor, list[LayerCache], dict[str, list[Tensor]] | None]:
        src_mask = key_mask(src_keep)
        new_cache, self_w, cross_w = [], [], []
        for layer, layer_cache in zip(self.layers, cache, strict=True):
            x, present, (sw, cw) = layer(x, layer_cache, src_mask, tgt_mask, need_weights)
            new_cache.append(present)
            self_w.append(sw)
            cross_w.append(cw)
        weights = {"self": self_w, "cross": cross_w} if need_weights else None
        return self.norm(x), new_cache, weights
