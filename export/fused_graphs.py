"""The served graphs, faster: the same inputs, outputs and values as their plain wrappers in export/wrappers.py
(the reference every exported file is checked against), rebuilt from the model's own submodules with three
changes:
- each layer's attention core is one onnxruntime `MultiHeadAttention` node (export/fused_attention.py);
- projections that read the same input are one MatMul (`PackedLinear`);
- the encoders run their per-token work (projections, feed-forward, norms) on the real tokens only, packed
  into one row: a batch of sentences of unequal length pads a third of its positions or more, and that work
  is most of an encoder's time. Outputs at padded positions are therefore unspecified (`GraphSpec.unspecified_at`).
Timings: docs/export-and-runtime.md#graph-layout."""
from __future__ import annotations

import torch
from torch import Tensor, nn

from tx import SentimentClassifier, Seq2SeqTransformer
from tx.layers import Encoder

from .fused_attention import split_heads
from .wrappers import DecoderStepGraph, GraphModule


class PackedLinear(nn.Module):
    """Several nn.Linear reading the same input as one wider MatMul, its output split back: one (D, 3D)
    MatMul for a layer's Q, K and V runs faster than three (D, D) ones, int8 included (per-column scales
    are unchanged by packing). Timings: docs/export-and-runtime.md#graph-layout."""

    def __init__(self, *linears: nn.Linear):
        super().__init__()
        self.sizes = [linear.out_features for linear in linears]
        weight_t = torch.cat([linear.weight.detach() for linear in linears]).t().contiguous()  # (D, ΣN)
        self.weight_t = nn.Parameter(weight_t, requires_grad=False)
        biases = [linear.bias for linear in linears]
        self.bias = None if any(b is None for b in biases) else \
            nn.Parameter(torch.cat([b.detach() for b in biases]), requires_grad=False)

    def joint(self, x: Tensor) -> Tensor:
        y = x @ self.weight_t  # (..., D) @ (D, ΣN) -> (..., ΣN)
        return y if self.bias is None else y + self.bias

    def split(self, y: Tensor) -> tuple[Tensor, ...]:
        return y.split(self.sizes, dim=-1)

    def forward(self, x: Tensor) -> tuple[Tensor, ...]:
        return self.split(self.joint(x))


def packed_qkv(attn: nn.Module) -> PackedLinear:
    return PackedLinear(attn.w_q, attn.w_k, attn.w_v)


class FusedEncoderStack(nn.Module):
    """`Encoder.forward` (its layers, then its final norm) with each layer's attention as one fused node and
    Q/K/V as one MatMul."""

    def __init__(self, encoder: Encoder):
        super().__init__()
        self.encoder = encoder
        self.qkv = nn.ModuleList(packed_qkv(layer.self_attn) for layer in encoder.layers)

    def forward(self, x: Tensor, keep: Tensor) -> tuple[Tensor, Tensor]:
        """x (B, S, D) embedded, keep (B, S) True at real tokens -> (the real tokens' states (1, N, D), their
        flat positions (N,)). Everything but attention works token by token, so it runs on the real tokens only.
        (1, N, D), not (N, D): 2-D inputs would export as Gemm, which the int8 quantiser leaves in fp32.)"""
        b, s, d = x.shape
        index = keep.reshape(-1).nonzero().squeeze(1)  # (N,) flat positions of real tokens
        x = pack(x, index)
        for layer, qkv in zip(self.encoder.layers, self.qkv, strict=True):
            attn = layer.self_attn
            h = layer.res_attn.sublayer_input(x)
            q, k, v = qkv.split(unpack(qkv.joint(h), index, b, s))  # (1, N, 3D) -> 3 x (B, S, D)
            out = pack(torch.ops.txonnx.padded_self_attention(q, k, v, keep, attn.n_heads, attn.score_scale), index)
            x = layer.res_ff(layer.res_attn.merge(x, attn.w_o(out)), layer.feed_forward)
        return self.encoder.norm(x), index


def pack(x: Tensor, index: Tensor) -> Tensor:
    """(B, S, E) -> (1, N, E): the rows at flat positions `index`."""
    b, s, e = x.shape
    return x.reshape(1, b * s, e).index_select(1, index)


def unpack(packed: Tensor, index: Tensor, b: int, s: int) -> Tensor:
    """(1, N, E) rows of real tokens -> (B, S, E), zeros at padding."""
    e = packed.size(-1)
    return packed.new_zeros(b * s, e).index_copy(0, index, packed.reshape(-1, e)).view(b, s, e)


class FusedEncoderGraph(GraphModule):
    """`EncoderGraph` (served, not explaining) with a `FusedEncoderStack` and every decoder layer's cross
    K/V as one MatMul: the same inputs and outputs, the same values at real tokens (zeros at padding)."""

    def __init__(self, model: Seq2SeqTransformer):
        super().__init__(model)
        self.stack = FusedEncoderStack(model.encoder)
        self.cross_kv = PackedLinear(*(w for layer in model.decoder.layers
                                       for w in (layer.cross_attn.w_k, layer.cross_attn.w_v)))

    def forward(self, src_ids: Tensor, src_mask: Tensor):
        model = self.model
        memory, index = self.stack(model.positional(model.src_embed(src_ids)), src_mask)  # (1, N, D)
        b, s = src_ids.shape
        cross = self.cross_kv.split(unpack(self.cross_kv.joint(memory), index, b, s))  # 2L x (B, S, D)
        heads = model.config.n_heads
        return (unpack(memory, index, b, s), *(split_heads(t, heads) for t in cross))


class FusedClassifierGraph(GraphModule):
    """`ClassifierGraph` (served, not explaining) with a `FusedEncoderStack`: `SentimentClassifier.classify`
    otherwise as it is. Pooling never reads padded positions, so their skipped states change no logit."""

    def __init__(self, model: SentimentClassifier):
        super().__init__(model)
        self.stack = FusedEncoderStack(model.encoder)

    def forward(self, input_ids: Tensor, attention_mask: Tensor):
        model = self.model
        keep = attention_mask.bool()
        x, index = self.stack(model.positional(model.embed(input_ids)), keep)  # (1, N, D)
        x = unpack(x, index, *input_ids.shape)  # (B, S, D), zeros at padding (which pooling never reads)
        return model.head(model.dropout(model.pool(x, keep))) / model.config.temperature


class FusedDecoderStepGraph(DecoderStepGraph):
    """`DecoderStepGraph` with each layer's attention as one onnxruntime `MultiHeadAttention` node and Q/K/V
    as one MatMul (export/fused_attention.py): the same inputs, outputs and values, fewer and faster nodes."""

    def __init__(self, model: Seq2SeqTransformer):
        super().__init__(model)
        self.qkv = nn.ModuleList(packed_qkv(layer.self_attn) for layer in model.decoder.layers)

    def forward(self, tokens: Tensor, src_mask: Tensor, past: list[Tensor], cross: list[Tensor]):
        model = self.model
        x = model.positional(model.tgt_embed(tokens), offset=past[0].size(2))  # (B, T) -> (B, T, D)
        present, cross_weights = [], []
        for i, (layer, qkv) in enumerate(zip(model.decoder.layers, self.qkv, strict=True)):
            me, other = layer.self_attn, layer.cross_attn
            h = layer.res_self.sublayer_input(x)
            out, k, v = torch.ops.txonnx.cached_self_attention(*qkv(h), past[2 * i], past[2 * i + 1], me.n_heads,
                                                               me.score_scale)
            x = layer.res_self.merge(x, me.w_o(out))
            h = layer.res_cross.sublayer_input(x)
            out, weights = torch.ops.txonnx.cross_attention(other.w_q(h), cross[2 * i], cross[2 * i + 1], src_mask,
                                                            other.n_heads, other.score_scale)
            x = layer.res_ff(layer.res_cross.merge(x, other.w_o(out)), layer.feed_forward)
            present += [k, v]
            cross_weights.append(weights)
        return (self.output(model.decoder.norm(x)), *present, *cross_weights)
