"""Every ONNX graph's inputs, outputs and dynamic axes, declared once as data.

The exporter builds `dynamic_shapes` and names from these specs, validation checks the
written graphs against them, the runtime feeds them, and `export.triton` describes them
to Triton. A dim is an int (fixed size) or a string: the name of a dynamic axis, or a
sum of axis names ("past_len + tgt_len") for an output whose length grows.

Files live in `<model_dir>/onnx/` as `<graph>.<precision>.onnx`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# Dynamic axes (the names also appear in the ONNX files' dim_params).
BATCH, SEQ, SRC, TGT, PAST = "batch", "seq_len", "src_len", "tgt_len", "past_len"
DYNAMIC_AXES = (BATCH, SEQ, SRC, TGT, PAST)

PRECISIONS = ("fp32", "int8")
ONNX_DIR = "onnx"
REPORT_FILE = "export_report.json"
SPEC_VERSION = "2"  # bumped whenever a graph's interface changes; stored in every file's metadata
# 2: the decoder step graph also returns its cross-attention weights (step_attn_cross_*), so a page's map
#    comes from the search that produced the text instead of a second, teacher-forced pass.

# Why a bool mask (not int64 like Hugging Face): the text wrappers build bool masks, the model
# works on bools, and a bool input needs no cast in the graph. Triton supports TYPE_BOOL.
MASK_DTYPE = "bool"

# Keys of the metadata every exported file carries (onnx metadata_props), checked when loading.
META_GRAPH = "tx.graph"  # spec name, e.g. "decoder"
META_PRECISION = "tx.precision"  # "fp32" | "int8"
META_SPEC_VERSION = "tx.spec_version"
META_VOCAB_SIZE = "tx.vocab_size"  # the model's (source) vocabulary: what the tokenizer must match
META_MAX_LEN = "tx.max_len"  # positions the positional-encoding table covers
META_TOKENIZER_SHA256 = "tx.tokenizer_sha256"  # tokenizer.json the export was made with ("" if none)
META_INT8_WEIGHT_BITS = "tx.int8_weight_bits"  # "7" (runs well on any CPU) or "8" (needs VNNI): see quantize.py
META_INT8_WEIGHT_TYPE = "tx.int8_weight_type"  # "int8" | "uint8": which onnxruntime kernel the file runs on
META_INT8_BLOCK_SIZE = "tx.int8_block_size"  # "0": per-row MatMulInteger; else MatMulNBits' block (quantize.py)
# "per_row" | "per_row_and_block"; absent: one activation scale per tensor, spanning the batch (refused to load)
META_INT8_ACTIVATIONS = "tx.int8_activations"


@dataclass(frozen=True)
class TensorSpec:
    name: str
    dtype: str  # numpy dtype name: "int64", "bool", "float32"
    dims: tuple[int | str, ...]

    def shape_for(self, axes: dict[str, int]) -> tuple[int, ...]:
        """The concrete shape for given axis sizes, e.g. {"batch": 3, "past_len": 11, "tgt_len": 1}."""
        return tuple(d if isinstance(d, int) else sum(axes[a.strip()] for a in d.split("+")) for d in self.dims)

    def dynamic_axes(self) -> dict[int, str]:
        """{axis index: axis name} of the single-name dynamic dims (what an exporter needs)."""
        return {i: d for i, d in enumerate(self.dims) if isinstance(d, str) and "+" not in d}


@dataclass(frozen=True)
class GraphSpec:
    name: str  # "classifier", "encoder", "decoder", ... (file stem)
    inputs: tuple[TensorSpec, ...]
    outputs: tuple[TensorSpec, ...]
    explain: bool  # returns attention weights (explicit softmax path) instead of the lean SDPA path
    batchable: bool  # rows are independent and stateless: Triton may batch requests dynamically
    # A mask input whose False positions hold unspecified values in every output over its axis (the served
    # encoder computes real tokens only: export/fused_graphs.py); "" = every output value is specified.
    unspecified_at: str = ""

    @property
    def input_names(self) -> list[str]:
        return [t.name for t in self.inputs]

    @property
    def output_names(self) -> list[str]:
        return [t.name for t in self.outputs]

    def file_name(self, precision: str) -> str:
        return f"{self.name}.{precision}.onnx"


@dataclass(frozen=True)
class ModelShape:
    """The sizes a graph's fixed dims depend on, read from the model config."""

    kind: str  # "seq2seq" | "classifier"
    n_layers: int  # encoder layers
    n_decoder_layers: int  # 0 for the classifier
    n_heads: int
    d_model: int
    vocab_size: int  # target vocabulary for seq2seq (what log_probs spans)
    n_classes: int  # 0 for seq2seq
    d_ff: int = 0  # inner width of the feed-forward layers (only the walkthrough graphs show it)

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads

    @classmethod
    def from_config(cls, kind: str, config: dict[str, Any]) -> ModelShape:
        decoder_layers = config.get("n_decoder_layers") or config["n_layers"]
        return cls(
            kind=kind,
            n_layers=config["n_layers"],
            n_decoder_layers=decoder_layers if kind == "seq2seq" else 0,
            n_heads=config["n_heads"],
            d_model=config["d_model"],
            vocab_size=(config.get("tgt_vocab_size") or config["vocab_size"]) if kind == "seq2seq"
            else config["vocab_size"],
            n_classes=config.get("n_classes", 0) if kind == "classifier" else 0,
            d_ff=config.get("d_ff", 0),
        )


def _kv(prefix: str, layers: int, length: str, shape: ModelShape) -> tuple[TensorSpec, ...]:
    """prefix_k_0, prefix_v_0, prefix_k_1, ...: per-layer keys and values (B, H, length, K)."""
    dims = (BATCH, shape.n_heads, length, shape.head_dim)
    return tuple(TensorSpec(f"{prefix}_{kv}_{i}", "float32", dims) for i in range(layers) for kv in "kv")


def _attn(prefix: str, layers: int, q_len: str, k_len: str, shape: ModelShape) -> tuple[TensorSpec, ...]:
    return tuple(TensorSpec(f"{prefix}_{i}", "float32", (BATCH, shape.n_heads, q_len, k_len)) for i in range(layers))


def classifier_graph(shape: ModelShape, explain: bool = False) -> GraphSpec:
    inputs = (TensorSpec("input_ids", "int64", (BATCH, SEQ)), TensorSpec("attention_mask", MASK_DTYPE, (BATCH, SEQ)))
    outputs = (TensorSpec("logits", "float32", (BATCH, shape.n_classes)),)
    if explain:
        outputs += _attn("attn_encoder", shape.n_layers, SEQ, SEQ, shape)
    return GraphSpec("classifier_explain" if explain else "classifier", inputs, outputs, explain, batchable=True)


def encoder_graph(shape: ModelShape) -> GraphSpec:
    """Source -> memory and every decoder layer's cross-attention K/V (computed once per source). Their values at
    padded source positions are unspecified: nothing reads them (attention masks those keys)."""
    inputs = (TensorSpec("src_ids", "int64", (BATCH, SRC)), TensorSpec("src_mask", MASK_DTYPE, (BATCH, SRC)))
    outputs = (TensorSpec("memory", "float32", (BATCH, SRC, shape.d_model)),
               *_kv("cross", shape.n_decoder_layers, SRC, shape))
    return GraphSpec("encoder", inputs, outputs, explain=False, batchable=True, unspecified_at="src_mask")


def decoder_graph(shape: ModelShape) -> GraphSpec:
    """New target tokens + KV cache -> log-probabilities, the cache extended by the new positions, and the
    new positions' cross-attention weights (computed anyway; fetched only by searches that record them)."""
    layers = shape.n_decoder_layers
    inputs = (TensorSpec("tokens", "int64", (BATCH, TGT)), TensorSpec("src_mask", MASK_DTYPE, (BATCH, SRC)),
              *_kv("past_self", layers, PAST, shape), *_kv("cross", layers, SRC, shape))
    outputs = (TensorSpec("log_probs", "float32", (BATCH, TGT, shape.vocab_size)),
               *_kv("present_self", layers, f"{PAST} + {TGT}", shape),
               *_attn("step_attn_cross", layers, TGT, SRC, shape))
    return GraphSpec("decoder", inputs, outputs, explain=False, batchable=False)


def encoder_explain_graph(shape: ModelShape) -> GraphSpec:
    inputs = (TensorSpec("src_ids", "int64", (BATCH, SRC)), TensorSpec("src_mask", MASK_DTYPE, (BATCH, SRC)))
    outputs = (TensorSpec("memory", "float32", (BATCH, SRC, shape.d_model)),
               *_attn("attn_encoder", shape.n_layers, SRC, SRC, shape))
    return GraphSpec("encoder_explain", inputs, outputs, explain=True, batchable=True)


def decoder_explain_graph(shape: ModelShape) -> GraphSpec:
    """Teacher-forced decoder over a whole target prefix, with self- and cross-attention weights."""
    layers = shape.n_decoder_layers
    inputs = (TensorSpec("tgt_ids", "int64", (BATCH, TGT)),
              TensorSpec("memory", "float32", (BATCH, SRC, shape.d_model)),
              TensorSpec("src_mask", MASK_DTYPE, (BATCH, SRC)))
    outputs = (TensorSpec("log_probs", "float32", (BATCH, TGT, shape.vocab_size)),
               *_attn("attn_self", layers, TGT, TGT, shape), *_attn("attn_cross", layers, TGT, SRC, shape))
    return GraphSpec("decoder_explain", inputs, outputs, explain=True, batchable=False)


def graphs_for(shape: ModelShape) -> list[GraphSpec]:
    """Every graph exported for a model: the lean ones first, then their explain variants."""
    if shape.kind == "classifier":
        return [classifier_graph(shape), classifier_graph(shape, explain=True)]
    if shape.kind == "seq2seq":
        return [encoder_graph(shape), decoder_graph(shape), encoder_explain_graph(shape), decoder_explain_graph(shape)]
    raise ValueError(f"no ONNX graphs for model kind {shape.kind!r}")


# ---------------------------------------------------------------- the walkthrough graphs
# One input through the model with every intermediate tensor as an output, for the Walkthrough page
# (fp32 only: they show the numbers, they are not served). Per-layer tensors are stacked on a leading
# layer axis, so a graph has the same outputs whatever the depth.
WALKTHROUGH_PRECISION = "fp32"
EMBEDDING_STEPS = ("embed", "embed_scaled", "positions", "x0")  # token rows, × √d_model, the sinusoids, the sum
ATTENTION_STEPS = ("in", "q", "k", "v", "scores", "scaled", "masked", "weights", "context", "concat", "out",
                   "sum", "stream")  # sublayer input .. W_O output, residual sum, the stream after Add & Norm
FEED_FORWARD_STEPS = ("in", "hidden", "out", "sum", "stream")


def _embedding_outputs(prefix: str, length: str, shape: ModelShape) -> tuple[TensorSpec, ...]:
    d = shape.d_model
    return (TensorSpec(f"{prefix}_embed", "float32", (BATCH, length, d)),
            TensorSpec(f"{prefix}_embed_scaled", "float32", (BATCH, length, d)),
            TensorSpec(f"{prefix}_positions", "float32", (length, d)),
            TensorSpec(f"{prefix}_x0", "float32", (BATCH, length, d)))


def _attention_outputs(prefix: str, layers: int, q_len: str, k_len: str, shape: ModelShape) -> tuple[TensorSpec, ...]:
    """prefix_in .. prefix_stream: one attention sublayer's every step, (L, ...) each."""
    h, k, d = shape.n_heads, shape.head_dim, shape.d_model
    dims = {"in": (q_len, d), "q": (h, q_len, k), "k": (h, k_len, k), "v": (h, k_len, k),
            "scores": (h, q_len, k_len), "scaled": (h, q_len, k_len), "masked": (h, q_len, k_len),
            "weights": (h, q_len, k_len), "context": (h, q_len, k), "concat": (q_len, d), "out": (q_len, d),
            "sum": (q_len, d), "stream": (q_len, d)}
    return tuple(TensorSpec(f"{prefix}_{step}", "float32", (layers, BATCH, *dims[step])) for step in ATTENTION_STEPS)


def _feed_forward_outputs(prefix: str, layers: int, length: str, shape: ModelShape) -> tuple[TensorSpec, ...]:
    dims = {"in": shape.d_model, "hidden": shape.d_ff, "out": shape.d_model, "sum": shape.d_model,
            "stream": shape.d_model}
    return tuple(TensorSpec(f"{prefix}_{step}", "float32", (layers, BATCH, length, dims[step]))
                 for step in FEED_FORWARD_STEPS)


def _encoder_outputs(shape: ModelShape, length: str, final: str) -> tuple[TensorSpec, ...]:
    return (*_embedding_outputs("src", length, shape),
            *_attention_outputs("enc_self", shape.n_layers, length, length, shape),
            *_feed_forward_outputs("enc_ff", shape.n_layers, length, shape),
            TensorSpec(final, "float32", (BATCH, length, shape.d_model)))


def encoder_walkthrough_graph(shape: ModelShape) -> GraphSpec:
    """Source -> the embedding steps, every encoder layer's steps, and the memory."""
    inputs = (TensorSpec("src_ids", "int64", (BATCH, SRC)), TensorSpec("src_mask", MASK_DTYPE, (BATCH, SRC)))
    outputs = _encoder_outputs(shape, SRC, "memory")
    return GraphSpec("encoder_walkthrough", inputs, outputs, explain=True, batchable=True)


def decoder_walkthrough_graph(shape: ModelShape) -> GraphSpec:
    """A teacher-forced target prefix over the memory -> every decoder step, the output layer's logits and
    log-probabilities at every position."""
    layers = shape.n_decoder_layers
    inputs = (TensorSpec("tgt_ids", "int64", (BATCH, TGT)),
              TensorSpec("memory", "float32", (BATCH, SRC, shape.d_model)),
              TensorSpec("src_mask", MASK_DTYPE, (BATCH, SRC)))
    outputs = (*_embedding_outputs("tgt", TGT, shape),
               *_attention_outputs("dec_self", layers, TGT, TGT, shape),
               *_attention_outputs("dec_cross", layers, TGT, SRC, shape),
               *_feed_forward_outputs("dec_ff", layers, TGT, shape),
               TensorSpec("hidden", "float32", (BATCH, TGT, shape.d_model)),
               TensorSpec("logits", "float32", (BATCH, TGT, shape.vocab_size)),
               TensorSpec("log_probs", "float32", (BATCH, TGT, shape.vocab_size)))
    return GraphSpec("decoder_walkthrough", inputs, outputs, explain=True, batchable=False)


def classifier_walkthrough_graph(shape: ModelShape) -> GraphSpec:
    """Input -> the encoder's steps, the pooled vector, the head's raw logits, the calibrated logits and
    probabilities."""
    inputs = (TensorSpec("input_ids", "int64", (BATCH, SEQ)), TensorSpec("attention_mask", MASK_DTYPE, (BATCH, SEQ)))
    outputs = (*_encoder_outputs(shape, SEQ, "encoded"),
               TensorSpec("pooled", "float32", (BATCH, shape.d_model)),
               TensorSpec("head_logits", "float32", (BATCH, shape.n_classes)),
               TensorSpec("logits", "float32", (BATCH, shape.n_classes)),
               TensorSpec("probs", "float32", (BATCH, shape.n_classes)))
    return GraphSpec("classifier_walkthrough", inputs, outputs, explain=True, batchable=True)


def walkthrough_graphs(shape: ModelShape) -> list[GraphSpec]:
    if shape.kind == "classifier":
        return [classifier_walkthrough_graph(shape)]
    if shape.kind == "seq2seq":
        return [encoder_walkthrough_graph(shape), decoder_walkthrough_graph(shape)]
    raise ValueError(f"no walkthrough graphs for model kind {shape.kind!r}")


# ---------------------------------------------------------------- the experiment graphs
# The Experiments page's graphs (fp32, shown not served, like the walkthrough's): the translator's encoder and
# teacher-forced decoder with a gate per layer × head on every attention kind, and its output layer on its own (the
# logit lens); the classifier with a gate per encoder head.
# A head's output (its context vector weights @ v, before W_O mixes the heads) becomes
#     gate · context + (1 − gate) · fill
# so gate 1 keeps the head, gate 0 with fill 0 knocks it out, gate 0 with fill = the head's mean context over a
# reference set mean-ablates it (runtime.experiments.reference). Gates carry the batch axis, so one run can try many
# knock-outs at once; fills are per call.
EXPERIMENT_PRECISION = "fp32"
HEAD_KINDS = ("enc_self", "dec_self", "dec_cross")  # encoder self-attention, decoder self-, cross-attention


def _head_inputs(kind: str, layers: int, shape: ModelShape) -> tuple[TensorSpec, TensorSpec]:
    """kind_gate (B, L, H): 1 keeps a head, 0 removes it; kind_fill (L, H, K): what a removed head outputs."""
    return (TensorSpec(f"{kind}_gate", "float32", (BATCH, layers, shape.n_heads)),
            TensorSpec(f"{kind}_fill", "float32", (layers, shape.n_heads, shape.head_dim)))


def _head_outputs(kind: str, layers: int, q_len: str, k_len: str, shape: ModelShape) -> tuple[TensorSpec, ...]:
    """kind_weights (L, B, H, T, S) and kind_context (L, B, H, T, K): each head's output before its gate."""
    h, k = shape.n_heads, shape.head_dim
    return (TensorSpec(f"{kind}_weights", "float32", (layers, BATCH, h, q_len, k_len)),
            TensorSpec(f"{kind}_context", "float32", (layers, BATCH, h, q_len, k)))


def encoder_experiment_graph(shape: ModelShape) -> GraphSpec:
    """Source + encoder head gates -> memory, every layer's attention weights and head outputs."""
    layers = shape.n_layers
    inputs = (TensorSpec("src_ids", "int64", (BATCH, SRC)), TensorSpec("src_mask", MASK_DTYPE, (BATCH, SRC)),
              *_head_inputs("enc_self", layers, shape))
    outputs = (TensorSpec("memory", "float32", (BATCH, SRC, shape.d_model)),
               *_head_outputs("enc_self", layers, SRC, SRC, shape))
    return GraphSpec("encoder_experiment", inputs, outputs, explain=True, batchable=True)


def decoder_experiment_graph(shape: ModelShape) -> GraphSpec:
    """A teacher-forced target prefix over the memory, with decoder head gates -> every decoder layer's output
    (L, B, T, D: the residual stream after the layer, before the final LayerNorm of a pre-LN model), the
    attention weights and head outputs. The output layer is `logit_lens_graph`, so a search step projects only
    its newest position and the logit lens projects every layer with the same weights."""
    layers = shape.n_decoder_layers
    inputs = (TensorSpec("tgt_ids", "int64", (BATCH, TGT)),
              TensorSpec("memory", "float32", (BATCH, SRC, shape.d_model)),
              TensorSpec("src_mask", MASK_DTYPE, (BATCH, SRC)),
              *_head_inputs("dec_self", layers, shape), *_head_inputs("dec_cross", layers, shape))
    outputs = (TensorSpec("layer_states", "float32", (layers, BATCH, TGT, shape.d_model)),
               *_head_outputs("dec_self", layers, TGT, TGT, shape),
               *_head_outputs("dec_cross", layers, TGT, SRC, shape))
    return GraphSpec("decoder_experiment", inputs, outputs, explain=True, batchable=False)


def decoder_experiment_step_graph(shape: ModelShape) -> GraphSpec:
    """`decoder_experiment_graph` one step at a time with a self-attention KV cache (what a knock-out's greedy
    search runs): new tokens at positions past_len.. -> the last layer's states of the new positions, the cache
    extended by them (stacked over layers: (L, B, H, past + new, K)), their cross-attention weights."""
    layers, h, k = shape.n_decoder_layers, shape.n_heads, shape.head_dim
    inputs = (TensorSpec("tokens", "int64", (BATCH, TGT)),
              TensorSpec("memory", "float32", (BATCH, SRC, shape.d_model)),
              TensorSpec("src_mask", MASK_DTYPE, (BATCH, SRC)),
              TensorSpec("past_k", "float32", (layers, BATCH, h, PAST, k)),
              TensorSpec("past_v", "float32", (layers, BATCH, h, PAST, k)),
              *_head_inputs("dec_self", layers, shape), *_head_inputs("dec_cross", layers, shape))
    outputs = (TensorSpec("states", "float32", (BATCH, TGT, shape.d_model)),
               TensorSpec("present_k", "float32", (layers, BATCH, h, f"{PAST} + {TGT}", k)),
               TensorSpec("present_v", "float32", (layers, BATCH, h, f"{PAST} + {TGT}", k)),
               TensorSpec("dec_cross_weights", "float32", (layers, BATCH, h, TGT, SRC)))
    return GraphSpec("decoder_experiment_step", inputs, outputs, explain=True, batchable=False)


def logit_lens_graph(shape: ModelShape) -> GraphSpec:
    """Decoder states (B, T, D) -> log-probabilities (B, T, V): the decoder's final LayerNorm (pre-LN; post-LN has
    none), the tied output projection, log-softmax. On the last layer's states: the served distribution."""
    inputs = (TensorSpec("states", "float32", (BATCH, TGT, shape.d_model)),)
    outputs = (TensorSpec("log_probs", "float32", (BATCH, TGT, shape.vocab_size)),)
    return GraphSpec("logit_lens", inputs, outputs, explain=False, batchable=True)


def classifier_experiment_graph(shape: ModelShape) -> GraphSpec:
    """Input + encoder head gates -> the calibrated logits (what the served classifier returns), every layer's
    attention weights and head outputs."""
    layers = shape.n_layers
    inputs = (TensorSpec("input_ids", "int64", (BATCH, SEQ)), TensorSpec("attention_mask", MASK_DTYPE, (BATCH, SEQ)),
              *_head_inputs("enc_self", layers, shape))
    outputs = (TensorSpec("logits", "float32", (BATCH, shape.n_classes)),
               *_head_outputs("enc_self", layers, SEQ, SEQ, shape))
    return GraphSpec("classifier_experiment", inputs, outputs, explain=True, batchable=True)


def experiment_graphs(shape: ModelShape) -> list[GraphSpec]:
    if shape.kind == "seq2seq":
        return [encoder_experiment_graph(shape), decoder_experiment_graph(shape), decoder_experiment_step_graph(shape),
                logit_lens_graph(shape)]
    if shape.kind == "classifier":
        return [classifier_experiment_graph(shape)]
    raise ValueError(f"no experiment graphs for model kind {shape.kind!r}")


# ---------------------------------------------------------------- the patching graphs
# Activation patching (runtime.experiments.patching): run one source (the corrupted one) with some activations
# replaced by another run's (the clean one's). A patched activation becomes
#     where · value + (1 − where) · x
# at each patch point: the residual stream at point 0 (the embeddings after the positional encoding) and after
# each layer (points 1..L), and each head's output (its context vector, before W_O mixes the heads, as the gates).
# Values carry no batch axis (one clean run's, laid out at the corrupted run's positions); where-masks do, so one
# run tries a whole grid of patches, one row each. With every where 0 the graphs compute what the experiment graphs
# do. Outputs are batch-first ((B, L + 1, ...)): the clean run's outputs are the next call's values.


def _patch_inputs(prefix: str, layers: int, length: str, shape: ModelShape) -> tuple[TensorSpec, ...]:
    """resid_value (L + 1, T, D), resid_where (B, L + 1, T), then per head kind kind_value (L, H, T, K) and
    kind_where (B, L, H, T); `prefix` names the head kinds ("enc_self" or "dec_self", "dec_cross")."""
    h, k = shape.n_heads, shape.head_dim
    inputs = (TensorSpec("resid_value", "float32", (layers + 1, length, shape.d_model)),
              TensorSpec("resid_where", "float32", (BATCH, layers + 1, length)))
    for kind in prefix.split():
        inputs += (TensorSpec(f"{kind}_value", "float32", (layers, h, length, k)),
                   TensorSpec(f"{kind}_where", "float32", (BATCH, layers, h, length)))
    return inputs


def _patch_outputs(kinds: str, layers: int, length: str, shape: ModelShape) -> tuple[TensorSpec, ...]:
    """resid (B, L + 1, T, D): the stream at every patch point (after its patch); kind_heads (B, L, H, T, K): each
    head's output before its patch."""
    outputs = (TensorSpec("resid", "float32", (BATCH, layers + 1, length, shape.d_model)),)
    return outputs + tuple(TensorSpec(f"{kind}_heads", "float32", (BATCH, layers, shape.n_heads, length,
                                                                    shape.head_dim)) for kind in kinds.split())


def encoder_patch_graph(shape: ModelShape) -> GraphSpec:
    """Source + patches -> memory (after the final norm of a pre-LN model), the residual stream at every point,
    every encoder head's output."""
    inputs = (TensorSpec("src_ids", "int64", (BATCH, SRC)), TensorSpec("src_mask", MASK_DTYPE, (BATCH, SRC)),
              *_patch_inputs("enc_self", shape.n_layers, SRC, shape))
    outputs = (TensorSpec("memory", "float32", (BATCH, SRC, shape.d_model)),
               *_patch_outputs("enc_self", shape.n_layers, SRC, shape))
    return GraphSpec("encoder_patch", inputs, outputs, explain=True, batchable=True)


def decoder_patch_graph(shape: ModelShape) -> GraphSpec:
    """A teacher-forced target over the memory (B, S, D: patching the memory is done outside) + patches -> the
    last layer's states (B, T, D) (before the final norm of a pre-LN model: `logit_lens_graph` projects them), the
    residual stream at every point, every self- and cross-attention head's output."""
    layers = shape.n_decoder_layers
    inputs = (TensorSpec("tgt_ids", "int64", (BATCH, TGT)),
              TensorSpec("memory", "float32", (BATCH, SRC, shape.d_model)),
              TensorSpec("src_mask", MASK_DTYPE, (BATCH, SRC)),
              *_patch_inputs("dec_self dec_cross", layers, TGT, shape))
    outputs = (TensorSpec("states", "float32", (BATCH, TGT, shape.d_model)),
               *_patch_outputs("dec_self dec_cross", layers, TGT, shape))
    return GraphSpec("decoder_patch", inputs, outputs, explain=True, batchable=False)


def classifier_patch_graph(shape: ModelShape) -> GraphSpec:
    """Input + patches -> the calibrated logits (as the served classifier), the residual stream at every point,
    every head's output."""
    inputs = (TensorSpec("input_ids", "int64", (BATCH, SEQ)), TensorSpec("attention_mask", MASK_DTYPE, (BATCH, SEQ)),
              *_patch_inputs("enc_self", shape.n_layers, SEQ, shape))
    outputs = (TensorSpec("logits", "float32", (BATCH, shape.n_classes)),
               *_patch_outputs("enc_self", shape.n_layers, SEQ, shape))
    return GraphSpec("classifier_patch", inputs, outputs, explain=True, batchable=True)


def patching_graphs(shape: ModelShape) -> list[GraphSpec]:
    """The patching graphs (beside the experiment graphs; the translator's also needs `logit_lens_graph`)."""
    if shape.kind == "seq2seq":
        return [encoder_patch_graph(shape), decoder_patch_graph(shape)]
    if shape.kind == "classifier":
        return [classifier_patch_graph(shape)]
    raise ValueError(f"no patching graphs for model kind {shape.kind!r}")
