"""Scaled dot-product attention and multi-head attention (paper §3.2).

Tensor-axis letters used in shape comments throughout `tx`:
    B  batch                      H  attention heads
    T  query positions            S  key/value positions (source, or past + new target)
    D  model width (d_model)      K  width of one head (d_k = D / H)
    V  vocabulary size            L  layers

Masks are boolean, True = may attend (see `tx.masks`), broadcastable to (B, H, T, S).
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn


def attention(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None,
              dropout_p: float = 0.0, scale: float | None = None) -> tuple[Tensor, Tensor]:
    """softmax(q kᵀ · scale) v, returning the output and the attention weights.

    q (B, H, T, K), k and v (B, H, S, K), mask broadcastable to (B, H, T, S).
    scale: None = 1/√d_k (the paper); 1.0 is the unscaled ablation.
    A query whose keys are all masked gets zero weights and a zero output
    instead of the NaN a plain softmax over -inf would give.
    """
    scale = 1.0 / math.sqrt(q.size(-1)) if scale is None else scale
    scores = q @ k.transpose(-2, -1) * scale  # (B, H, T, S)
    if mask is not None:
        # finfo.min, not -inf: a fully masked row then softmaxes to finite values,
        # which the second masked_fill zeroes.
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = scores.softmax(dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    if dropout_p > 0.0:
        weights = F.dropout(weights, dropout_p)
    return weights @ v, weights  # (B, H, T, K), (B, H, T, S)


def fast_attention(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, dropout_p: float = 0.0,
                   scale: float | None = None) -> Tensor:
    """Same output as `attention` through PyTorch's fused kernel; no weights returned."""
    if mask is None:
        return F.scaled_dot_product_attention(q, k, v, dropout_p=dropout_p, scale=scale)
    # The fused kernels disagree on fully masked rows (NaN on some backends), so give such
    # rows one harmless key and zero their output afterwards, matching `attention`.
    has_key = mask.any(dim=-1, keepdim=True)  # (B, 1|H, T|1, 1)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask | ~has_key, dropout_p=dropout_p, scale=scale)
    return out * has_key


class MultiHeadAttention(nn.Module):
    """h parallel attention heads over learned projections, concatenated and projected by W^O."""

    def __init__(self, d_model: int, n_heads: int, dropout: float = 0.0):
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"d_model={d_model} is not divisible by n_heads={n_heads}")
        self.n_heads = n_heads
        self.d_k = d_model // n_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)
        self.dropout = dropout
        # None: scores scaled by 1/√d_k as in the paper; 1.0: unscaled (EncoderConfig.scale_scores=False sets it)
        self.scale: float | None = None

    @property
    def score_scale(self) -> float:
        """The factor the scores q·k are multiplied by (what `scale` None stands for, spelled out for the
        graphs that compute attention outside `attention`)."""
        return self.d_k ** -0.5 if self.scale is None else float(self.scale)

    def split_heads(self, x: Tensor) -> Tensor:
        b, t, _ = x.shape
        return x.view(b, t, self.n_heads, self.d_k).transpose(1, 2)  # (B, T, D) -> (B, H, T, K)

    def project_kv(self, key: Tensor, value: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """Keys and values split into heads, (B, H, S, K) each: what a KV cache stores."""
        value = key if value is None else value
        return self.split_heads(self.w_k(key)), self.split_heads(self.w_v(value))

    def attend(self, query: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None,
               need_weights: bool = False) -> tuple[Tensor, Tensor | None]:
        """Attend from raw queries (B, T, D) to already projected keys/values (B, H, S, K)."""
        q = self.split_heads(self.w_q(query))
        p = self.dropout if self.training else 0.0
        if need_weights:
            out, weights = attention(q, k, v, mask, p, self.scale)
        else:
            out, weights = fast_attention(q, k, v, mask, p, self.scale), None
        b, _, t, _ = out.shape
        out = out.transpose(1, 2).reshape(b, t, self.n_heads * self.d_k)  # (B, H, T, K) -> (B, T, D)
        return self.w_o(out), weights

    def forward(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None,
                need_weights: bool = False) -> tuple[Tensor, Tensor | None]:
        """(B, T, D) queries over (B, S, D) keys/values -> ((B, T, D), weights (B, H, T, S) or None)."""
        k, v = self.project_kv(key, value)
        return self.attend(query, k, v, mask, need_weights)
