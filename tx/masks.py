"""Attention masks, built in one place.

Convention everywhere in `tx`: a boolean mask, True = this query may attend to
this key. Masks broadcast against attention scores of shape (B, H, Tq, Tk).
Only `arange` comparisons are used (no `triu`), so masks trace into ONNX with
dynamic lengths.
"""
from __future__ import annotations

import torch
from torch import Tensor


def padding_mask(ids: Tensor, pad_id: int) -> Tensor:
    """(B, S) token ids -> (B, S) bool, True at real tokens."""
    return ids != pad_id


def key_mask(keep: Tensor) -> Tensor:
    """(B, S) bool keep-mask over keys -> (B, 1, 1, S), broadcastable over heads and queries."""
    return keep[:, None, None, :]  # (B, S) -> (B, 1, 1, S)


def causal_mask(q_len: int | Tensor, past_len: int | Tensor = 0, device=None) -> Tensor:
    """(1, 1, Tq, P+Tq) bool: query i (absolute position P+i) sees keys 0..P+i.

    `past_len` is the number of cached positions before the new queries, so the
    same function serves full-prefix decoding (P=0) and KV-cache steps.
    """
    q_pos = torch.arange(q_len, device=device) + past_len  # absolute positions of the queries
    k_pos = torch.arange(past_len + q_len, device=device)
    return (k_pos[None, :] <= q_pos[:, None])[None, None]  # (Tq, Tk) -> (1, 1, Tq, Tk)
