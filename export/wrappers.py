"""nn.Module wrappers that give each ONNX graph flat tensor inputs and outputs, in spec order.

Each wrapper's `pack(flat)` turns the spec-ordered list of inputs into its `forward`
arguments; the exporter applies the same `pack` to the per-input dynamic-axes dicts, so
names, tensors and dynamic shapes can never drift apart.

The served graphs (classifier, encoder, decoder step) are rebuilt for speed in export/fused_graphs.py
(onnxruntime's fused `MultiHeadAttention`, packed projections, encoders on real tokens only). Every other
graph traces the model's explicit-softmax attention (`need_weights=True`; lean ones drop the weights). Why not SDPA: the
exporter decomposes `F.scaled_dot_product_attention` into reshape-to-3D, Transpose(K), scale both Q
and K, MatMul; the scaling between Transpose and MatMul blocks onnxruntime's Transpose+MatMul fusion,
so every layer would copy its whole K at every call. The timings: docs/export-and-runtime.md#graph-layout.
The plain wrappers are also the reference every exported file is validated against.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch import Tensor, nn

from tx import SentimentClassifier, Seq2SeqTransformer


class LogSoftmaxOutput(nn.Module):
    """The generator as its own (D, V) initializer, followed by log-softmax.

    Why a copy: with tied embeddings the exported graph shares one initializer between the
    embedding Gather and the output MatMul, and onnxruntime's quantiser transposes it in place,
    breaking the Gather. D-major is also the layout a MatMul reads fastest.
    """

    def __init__(self, generator: nn.Linear):
        super().__init__()
        weight_t = generator.weight.detach().t().contiguous()  # (V, D) -> (D, V)
        self.weight_t = nn.Parameter(weight_t, requires_grad=False)
        bias = generator.bias
        self.bias = None if bias is None else nn.Parameter(bias.detach().clone(), requires_grad=False)

    def forward(self, hidden: Tensor) -> Tensor:
        logits = hidden @ self.weight_t  # (B, T, D) @ (D, V) -> (B, T, V)
        if self.bias is not None:
            logits = logits + self.bias
        return logits.log_softmax(dim=-1)


class GraphModule(nn.Module):
    """What every graph module holds: the model in eval mode, and whether the graph adds attention outputs.

    `pack` here is for graphs whose spec-ordered inputs are `forward`'s arguments as they are."""

    def __init__(self, model: SentimentClassifier | Seq2SeqTransformer, explain: bool = False):
        super().__init__()
        self.model, self.explain = model.eval(), explain

    @staticmethod
    def pack(flat: Sequence[Any]) -> tuple:
        return tuple(flat)


class ClassifierGraph(GraphModule):
    """(input_ids, attention_mask) -> logits [, attn_encoder_0..L-1]."""

    def forward(self, input_ids: Tensor, attention_mask: Tensor):
        # need_weights=True: the explicit-softmax path (module doc)
        logits, weights = self.model.classify(input_ids, attention_mask, need_weights=True)
        return (logits, *weights) if self.explain else logits


class EncoderGraph(GraphModule):
    """(src_ids, src_mask) -> memory, then cross_k_0, cross_v_0, ... (all a decoder step needs from the source)
    or, explaining, attn_encoder_0..L-1."""

    def forward(self, src_ids: Tensor, src_mask: Tensor):
        memory, weights = self.model.encode(src_ids, src_mask, need_weights=True)  # explicit-softmax path: module doc
        if self.explain:
            return (memory, *weights)
        cross = [t for layer in self.model.decoder.layers for t in layer.cross_attn.project_kv(memory)]
        return (memory, *cross)


class DecoderStepGraph(GraphModule):
    """(tokens, src_mask, past self K/V..., cross K/V...) -> log_probs, present self K/V..., cross weights...

    tokens (B, T) are the new target tokens at positions P..P+T-1, P = the past length.
    """

    def __init__(self, model: Seq2SeqTransformer):
        super().__init__(model)
        self.layers = model.config.n_decoder_layers
        self.output = LogSoftmaxOutput(model.generator)

    def pack(self, flat: Sequence[Any]) -> tuple:
        n = 2 * self.layers
        return flat[0], flat[1], list(flat[2:2 + n]), list(flat[2 + n:2 + 2 * n])

    def forward(self, tokens: Tensor, src_mask: Tensor, past: list[Tensor], cross: list[Tensor]):
        cache = [(past[2 * i], past[2 * i + 1], cross[2 * i], cross[2 * i + 1]) for i in range(self.layers)]
        hidden, present, weights = self.model.decode(tokens, None, src_mask, cache=cache,
                                                     need_weights=True)  # explicit-softmax path: module doc
        return (self.output(hidden), *(t for layer in present for t in layer[:2]), *weights["cross"])


class DecoderExplainGraph(GraphModule):
    """(tgt_ids, memory, src_mask) -> log_probs, attn_self_0.., attn_cross_0..: one teacher-forced pass."""

    def __init__(self, model: Seq2SeqTransformer):
        super().__init__(model, explain=True)
        self.output = LogSoftmaxOutput(model.generator)

    def forward(self, tgt_ids: Tensor, memory: Tensor, src_mask: Tensor):
        hidden, _, weights = self.model.decode(tgt_ids, memory, src_mask, need_weights=True)
        return (self.output(hidden), *weights["self"], *weights["cross"])


@torch.inference_mode()
def run_wrapper(wrapper: nn.Module, flat_inputs: Sequence[Tensor]) -> list[Tensor]:
    """PyTorch's outputs for spec-ordered inputs, flattened in spec order (the reference for validation)."""
    out = wrapper(*wrapper.pack(list(flat_inputs)))
    return list(out) if isinstance(out, tuple | list) else [out]
