"""onnxruntime's fused `MultiHeadAttention` (com.microsoft) in the served graphs (export/fused_graphs.py).

Traced as it is, one decoder layer's attention is ~25 small nodes per step: split heads, Concat of the KV
cache, Transpose, MatMul, scale, mask, Softmax, MatMul, merge heads. onnxruntime's contrib op does the same
work in one kernel on CPU and CUDA (concatenating the past inside), so the served graph calls it instead:
the decoder step traces two custom torch ops, `txonnx::cached_self_attention` and `txonnx::cross_attention`,
whose ONNX translation is that one node. Their PyTorch bodies are `tx.attention.attention` itself, so tracing
and the fallback both compute what the model computes; export validation compares the ONNX file with the
model's own decode (the unfused wrapper), not with these bodies. Timings: docs/export-and-runtime.md.

The projections (w_q, w_k, w_v, w_o) stay ordinary MatMuls outside the fused node, so the int8 quantiser
treats them exactly as before. The cross-attention weights a page shows come from the node's `qk` output
(scaled, masked scores) through a Softmax.
"""
from __future__ import annotations

import onnx
import onnx.defs
import torch
from onnxscript import opset20 as op
from onnxscript.values import Opset
from torch import Tensor

from tx.attention import attention

MICROSOFT = "com.microsoft"
# Added to masked scores (padding of the source) inside the fused node: exp() of it is exactly 0, as the
# model's masked_fill gives, without the inf - inf a float32 minimum could make on an added score.
MASK_FILTER = -1e30


def register_schema() -> None:
    """Teach the `onnx` package onnxruntime's MultiHeadAttention signature (onnxscript builds nodes from
    schemas; onnxruntime brings its own at load time). The inputs and outputs are onnxruntime's, in its order."""
    if onnx.defs.has("MultiHeadAttention", MICROSOFT):
        return
    schema, option = onnx.defs.OpSchema, onnx.defs.OpSchema.FormalParameterOption
    ints = ("key_padding_mask", "past_sequence_length", "cache_indirection")
    inputs = ("query", "key", "value", "bias", "key_padding_mask", "attention_bias", "past_key", "past_value",
              *ints[1:])
    outputs = ("output", "present_key", "present_value", "qk")
    attributes = {"num_heads": schema.AttrType.INT, "scale": schema.AttrType.FLOAT,
                  "unidirectional": schema.AttrType.INT, "mask_filter_value": schema.AttrType.FLOAT}
    onnx.defs.register_schema(schema(
        "MultiHeadAttention", MICROSOFT, 1, "onnxruntime contrib op (signature only)",
        inputs=[schema.FormalParameter(name, "M" if name in ints else "T",
                                       param_option=option.Single if name == "query" else option.Optional)
                for name in inputs],
        outputs=[schema.FormalParameter(name, "T", param_option=option.Single if name == "output" else option.Optional)
                 for name in outputs],
        type_constraints=[("T", ["tensor(float)", "tensor(float16)"], ""), ("M", ["tensor(int32)"], "")],
        attributes=[schema.Attribute(name, kind, "", required=False) for name, kind in attributes.items()]))


register_schema()
msft = Opset(MICROSOFT, 1)


def split_heads(x: Tensor, heads: int) -> Tensor:
    b, t, d = x.shape
    return x.view(b, t, heads, d // heads).transpose(1, 2)  # (B, T, D) -> (B, H, T, K)


def merge_heads(x: Tensor) -> Tensor:
    b, h, t, k = x.shape
    return x.transpose(1, 2).reshape(b, t, h * k)  # (B, H, T, K) -> (B, T, D)


@torch.library.custom_op("txonnx::cached_self_attention", mutates_args=())
def cached_self_attention(q: Tensor, k: Tensor, v: Tensor, past_k: Tensor, past_v: Tensor, heads: int,
                          scale: float) -> tuple[Tensor, Tensor, Tensor]:
    """q, k, v (B, T, D) projected new positions; past_k/v (B, H, P, K) -> (out (B, T, D) before W_O,
    present k and v (B, H, P+T, K)). Position P+i sees positions 0..P+i (causal)."""
    keys = torch.cat([past_k, split_heads(k, heads)], dim=2)  # (B, H, P+T, K)
    values = torch.cat([past_v, split_heads(v, heads)], dim=2)
    t, p = q.size(1), past_k.size(2)
    causal = torch.arange(p + t)[None, :] <= torch.arange(p, p + t)[:, None]  # (T, P+T)
    out, _ = attention(split_heads(q, heads), keys, values, causal, scale=scale)
    return merge_heads(out), keys, values


@cached_self_attention.register_fake
def _(q, k, v, past_k, past_v, heads, scale):
    b, t, d = q.shape
    present = past_k.new_empty(b, heads, past_k.size(2) + t, d // heads)
    return q.new_empty(b, t, d), present, torch.empty_like(present)


def cached_self_attention_onnx(q, k, v, past_k, past_v, heads: int, scale: float):
    out, present_k, present_v, _unused_qk = msft.MultiHeadAttention(
        q, k, v, None, None, None, past_k, past_v, num_heads=heads, scale=scale, unidirectional=1)
    return out, present_k, present_v


@torch.library.custom_op("txonnx::padded_self_attention", mutates_args=())
def padded_self_attention(q: Tensor, k: Tensor, v: Tensor, keep: Tensor, heads: int, scale: float) -> Tensor:
    """q, k, v (B, S, D) projected; keep (B, S) True at real tokens -> out (B, S, D) before W_O: every position
    attends to the real ones (the encoder's self-attention)."""
    out, _ = attention(split_heads(q, heads), split_heads(k, heads), split_heads(v, heads), keep[:, None, None, :],
                       scale=scale)
    return merge_heads(out)


@padded_self_attention.register_fake
def _(q, k, v, keep, heads, scale):
    return torch.empty_like(q)


def padded_self_attention_onnx(q, k, v, keep, heads: int, scale: float):
    mask = op.Cast(keep, to=onnx.TensorProto.INT32)  # (B, S): 1 = may attend
    out, _unused_k, _unused_v, _unused_qk = msft.MultiHeadAttention(
        q, k, v, None, mask, num_heads=heads, scale=scale, mask_filter_value=MASK_FILTER)
    return out


@torch.library.custom_op("txonnx::cross_attention", mutates_args=())
def cross_attention(q: Tensor, cross_k: Tensor, cross_v: Tensor, src_keep: Tensor, heads: int,
                    scale: float) -> tuple[Tensor, Tensor]:
    """q (B, T, D) projected queries; cross_k/v (B, H, S, K) the source's keys and values; src_keep (B, S)
    True at real tokens -> (out (B, T, D) before W_O, weights (B, H, T, S))."""
    out, weights = attention(split_heads(q, heads), cross_k, cross_v, src_keep[:, None, None, :], scale=scale)
    return merge_heads(out), weights


@cross_attention.register_fake
def _(q, cross_k, cross_v, src_keep, heads, scale):
    b, t, d = q.shape
    return q.new_empty(b, t, d), q.new_empty(b, heads, t, cross_k.size(2))


def cross_attention_onnx(q, cross_k, cross_v, src_keep, heads: int, scale: float):
    """The node sees every query twice and the second copy is dropped: a decoder step has one query, and
    onnxruntime's CPU kernel multiplies a single query's weights by V (a sum over the source, padding included)
    with its one-row GEMM, whose last 3 of 4k+3 terms are summed in an order that changes once the source is
    padded longer; a sentence's scores then moved in the last bit with the length its batch padded it to (and
    int8 rounding turned a few into other tokens). With two or more query rows it takes the GEMM kernel that sums
    term by term, so trailing padding (weight 0) leaves every sum bitwise the same: measured over sources of 1 to
    130 tokens padded to up to 256, 1 and 2 threads (docs/export-and-runtime.md#int8-schemes)."""
    mask = op.Cast(src_keep, to=onnx.TensorProto.INT32)  # (B, S): 1 = may attend
    queries = op.Shape(q, start=1, end=2)  # [T]
    out, _unused_k, _unused_v, scores = msft.MultiHeadAttention(
        op.Concat(q, q, axis=1), cross_k, cross_v, None, mask, num_heads=heads, scale=scale,
        mask_filter_value=MASK_FILTER)  # (B, 2T, D), (B, H, 2T, S)
    zero = op.Constant(value_ints=[0])
    out = op.Slice(out, zero, queries, op.Constant(value_ints=[1]))  # the first copy: (B, T, D)
    scores = op.Slice(scores, zero, queries, op.Constant(value_ints=[2]))  # scaled, masked q·k (B, H, T, S)
    return out, op.Softmax(scores, axis=-1)


TRANSLATIONS = {torch.ops.txonnx.cached_self_attention.default: cached_self_attention_onnx,
                torch.ops.txonnx.padded_self_attention.default: padded_self_attention_onnx,
                torch.ops.txonnx.cross_attention.default: cross_attention_onnx}


def tidy_fused_outputs(model: onnx.ModelProto) -> int:
    """Cut the optional outputs of contrib nodes that nothing reads (onnxscript names them all; an unread `qk`
    would still be computed and copied every step), and declare the type of those read: onnxruntime cannot
    infer `qk`'s from the inputs. Returns how many outputs were cut."""
    read = {name for node in model.graph.node for name in node.input} | {o.name for o in model.graph.output}
    cut = 0
    for node in model.graph.node:
        if node.domain != MICROSOFT:
            continue
        outputs = list(node.output)
        while len(outputs) > 1 and outputs[-1] not in read:
            outputs.pop()
            cut += 1
        outputs = [name if name in read or i == 0 else "" for i, name in enumerate(outputs)]
        del node.output[:]
        node.output.extend(outputs)
    produced = {name for node in model.graph.node for name in node.output}
    kept = [info for info in model.graph.value_info if info.name in produced]
    typed = {info.name for info in kept} | {o.name for o in model.graph.output}
    for node in model.graph.node:
        if node.domain == MICROSOFT:
            kept += [onnx.helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None)
                     for name in node.output[1:] if name and name not in typed]
    del model.graph.value_info[:]
    model.graph.value_info.extend(kept)
    return cut
