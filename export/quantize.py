"""int8 quantisation of an exported fp32 graph: every weight MatMul as a per-row MatMulInteger (`per_row_matmuls`)
or, where the CPU has VNNI, onnxruntime's blockwise 8-bit MatMulNBits.

Weights become int8 once; activations are quantised per call, per row (per token), or per row and block of
`block_size` inputs for MatMulNBits, so no calibration data is needed, and never with one scale across the rows of
a batch: int8 is batch-independent on every CPU (a sentence translates the same alone and among others;
tests/export/test_int8_batch_independence.py). `default_scheme` is the scheme measured
the most faithful at a similar size and speed on the shipped translator by the export's own check (held-out
sentences each way, greedy int8 vs fp32); every scheme tried, with its agreement, BLEU drop, size and time, is
in docs/export-and-runtime.md#int8-schemes.
- Without VNNI: every MatMul int8, unsigned 8-bit weights with per-channel scales, activations with
  their own scale and zero point per row (`per_row_matmuls`: DynamicQuantizeLinear's rule per row) on the u8 x u8
  MatMulInteger. onnxruntime's dynamic kernels (quantize_dynamic, the default until issue 42) do the same with one
  activation scale per tensor, which spans the batch: 65 of 400 held-out greedy translations changed with their
  batch mates, against 0 per row; per row is also finer (83.3% of greedy outputs identical to fp32 instead of
  81.7% on the export's check), for 1.13-1.18x the time per decoder step: ~20 small nodes where onnxruntime fuses
  its own kernels into one (docs/export-and-runtime.md#int8-schemes). The embedding tables stay fp32 (85.9% instead
  of 82.5% on an AVX2 host; a Gather reads one row a token, so their int8 saved size, not time);
  `int8_embeddings` makes them int8 for the smallest files (the in-browser translator's, web/build.py).
  MatMulNBits is more faithful still but its int8 dot products have no fast kernel there (no faster than fp32).
- With VNNI: MatMulNBits with blocks of 64 and fp32 embeddings, the most faithful and the fastest at batch 1
  (slower than the dynamic kernels from batch 4 on: its int32 block sums are scaled to float block by block).
  It quantises activations per row and block, so it is batch-independent too. The generator alone is per row
  instead (`per_row_matmul`): no layer follows it, so its rounding does not add up, and it runs as one GEMM.
Why the weight type matters:
- without VNNI (AVX2 only, like the older AMD EPYC machines), onnxruntime's u8 x s8 kernel adds pairs of products in
  int16 (vpmaddubsw), which full-range signed 8-bit weights saturate: hence the old `reduce_range` (7-bit)
  weights, or unsigned 8-bit weights, whose u8 x u8 kernel widens to int16 and sums in int32 (no saturation,
  full resolution, asymmetric; a little slower than s8);
- with VNNI (avx512_vnni / avx_vnni in /proc/cpuinfo, `cpu_has_vnni`) the u8 x s8 kernel accumulates in int32,
  so signed 8-bit weights are safe (`--block-size 0 --weight-type int8`: per-row u8 x s8). Such files are marked
  (`tx.int8_weight_bits` = "8") and refuse to load on a CPU without VNNI instead of quietly saturating; unsigned
  files carry no such mark (`tx.int8_weight_type` = "uint8") and run the same everywhere, as do MatMulNBits
  files (`tx.int8_block_size` > 0), whose kernels sum in int32 on any CPU.
Three things the quantiser needs on our dynamo-exported graphs (measured):
- `graph.value_info` cleared first, else its shape inference fails on the exporter's symbolic dims;
- a temp working directory: it leaves ~20 MB `<uuid>.data` files in the current directory (quantize_dynamic now
  makes only the embedding tables; the MatMuls are ours);
- no initializer shared by a Gather and a MatMul (tied embeddings): it transposes the weight in
  place; `wrappers.LogSoftmaxOutput` gives the output projection its own copy.
"""
from __future__ import annotations

import ast
import contextlib
import logging
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import onnx
from onnx import helper, numpy_helper
from onnxruntime.quantization import QuantType, quantize_dynamic
from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

from runtime.files import atomic_write
from runtime.spec import (
    META_INT8_ACTIVATIONS,
    META_INT8_BLOCK_SIZE,
    META_INT8_WEIGHT_BITS,
    META_INT8_WEIGHT_TYPE,
    META_PRECISION,
)

from .fused_attention import tidy_fused_outputs
from .onnx_export import set_metadata

# Only the weight-by-activation MatMuls (attention's activation-by-activation products stay fp32)
# and the embedding Gathers, whose int8 tables are what shrinks the files.
QUANTIZED_OPS = ["MatMul", "Gather"]
WEIGHT_TYPES = {"int8": QuantType.QInt8, "uint8": QuantType.QUInt8}
META_INT8_KEPT_FP32 = "tx.int8_kept_fp32"  # comma-separated module prefixes left in fp32
META_INT8_ROW_OUTPUT = "tx.int8_row_output"  # the nodes made per-row MatMulInteger (`per_row_matmul`), or ""
META_INT8_EMBEDDINGS = "tx.int8_embeddings"  # "int8" or "fp32": how the embedding tables are stored


@dataclass(frozen=True)
class Int8Scheme:
    """How the int8 weights are made (the arguments of `quantize_int8`)."""

    per_channel: bool = True  # one scale per output column (measured better than per tensor)
    weight_bits: int = 8  # 7 = reduce_range
    weight_type: str = "uint8"  # "int8": onnxruntime's u8 x s8 kernel; "uint8": its u8 x u8 kernel
    keep_fp32: tuple[str, ...] = ()  # module-path prefixes left in fp32
    # 0: every weight MatMul becomes the per-row MatMulInteger of `per_row_matmuls` (activations with their own
    # scale and zero point per row, weights as quantize_dynamic makes them), the embeddings int8 tables;
    # 16..256 (a power of 2): they become MatMulNBits with 8-bit weights, one scale per block of this many
    # input rows, activations quantised per row and block at run time (accuracy_level 4: int8 dot products),
    # and the embedding Gathers stay fp32 (int8 tables cost agreement there: docs/export-and-runtime.md);
    # per_channel / weight_bits / weight_type then do not apply.
    block_size: int = 0
    # With block_size: the generator's MatMul (module "output") as one u8 x s8 MatMulInteger, activations quantised
    # per row and weights per column (`per_row_matmul`). Its rounding feeds no later layer, so a row's own scale
    # costs nothing there (measured more faithful than blockwise), and it runs as one GEMM. Its 8-bit signed
    # weights need VNNI (the int16 sums of other CPUs saturate): such files carry the mark the loader checks.
    row_output: bool = False
    # With block_size 0: the embedding tables int8 too (quantize_dynamic's Gather: a quarter of the bytes, no
    # faster) instead of fp32. fp32 is the default: measured more faithful (module doc); int8 makes the smallest
    # files, which the in-browser translator's first load needs (web/build.py). Blockwise files keep them fp32.
    int8_embeddings: bool = False

    def as_dict(self) -> dict:
        return asdict(self) | {"keep_fp32": list(self.keep_fp32)}

    def quantize(self, src: str | Path, dst: str | Path) -> float:
        """quantize_int8 of `src` to `dst` by this scheme; seconds taken."""
        return quantize_int8(src, dst, **asdict(self))


BLOCK_SIZE_WITH_VNNI = 64  # the measured middle: 32 is more faithful and slower, 128 the reverse (module doc)


def default_scheme(vnni: bool) -> Int8Scheme:
    """The measured best scheme for this CPU (see the module doc): blockwise 8-bit MatMulNBits where the CPU has
    VNNI (its int8 dot-product kernels need it), unsigned 8-bit per-channel weights by u8 rows quantised per row
    on onnxruntime's u8 x u8 MatMulInteger (no int16 saturation, full resolution) where it lacks VNNI."""
    if vnni:
        return Int8Scheme(weight_type="int8", block_size=BLOCK_SIZE_WITH_VNNI, row_output=True)
    return Int8Scheme(weight_type="uint8")


# The scheme whose files run the same on every CPU and are the smallest: unsigned per-row MatMulIntegers (exact
# int32 sums without VNNI) and int8 embedding tables. The in-browser translator ships these (web/build.py), whatever
# the CPU that built it would choose for itself (blockwise files are twice the size).
PORTABLE_SCHEME = Int8Scheme(weight_type="uint8", int8_embeddings=True)


def check_block_size(block_size: int) -> None:
    if block_size and not (16 <= block_size <= 256 and block_size & (block_size - 1) == 0):
        raise ValueError(f"block_size must be 0 (per-row MatMulInteger) or a power of 2 from 16 to 256, "
                         f"got {block_size}")


def blockwise_matmuls(model: onnx.ModelProto, block_size: int, excluded: list[str]) -> onnx.ModelProto:
    """Every MatMul by a constant weight (but `excluded`) as MatMulNBits: 8-bit symmetric weights with one scale
    per `block_size` input rows; accuracy_level 4 quantises the activations per row and block to int8 at run
    time, so one outlier channel coarsens only its own block, not the whole tensor as the dynamic kernels do."""
    quantizer = MatMulNBitsQuantizer(model, bits=8, block_size=block_size, is_symmetric=True, accuracy_level=4,
                                     nodes_to_exclude=excluded, op_types_to_quantize=("MatMul",))
    quantizer.process()
    return quantizer.model.model


ROW_OUTPUT_MODULE = "output"  # the generator: d_model -> vocabulary logits, the last MatMul of the decoder


def per_row_matmul(model: onnx.ModelProto, node_name: str) -> None:
    """Replace the MatMul `node_name` (activations x a float weight initializer) in place by int8 arithmetic that
    a whole batch runs as one GEMM and no row's result depends on another row:
    - each activation row r gets its own scale s_r = max|x_r| / 127 and becomes u8 (zero point 128);
    - each weight column c gets its own scale t_c = max|W_c| / 127 and becomes s8 (symmetric);
    - MatMulInteger sums in int32, then y = int32 · s_r · t_c.
    The elementwise ops are cheap beside the GEMM at every batch size (the shipped vocabulary has 10k columns)."""
    node = next(n for n in model.graph.node if n.name == node_name and n.op_type == "MatMul")
    inits = {i.name: i for i in model.graph.initializer}
    weight = numpy_helper.to_array(inits[node.input[1]]).astype(np.float32)  # (K, N)
    col_scale = np.abs(weight).max(axis=0) / 127.0  # (N,)
    col_scale[col_scale == 0] = 1.0  # an all-zero column: any scale gives zeros
    weight_s8 = np.clip(np.round(weight / col_scale), -127, 127).astype(np.int8)
    x, y, p = node.input[0], node.output[0], f"{node_name}_rowq"
    constants = {"weight": weight_s8, "col_scale": col_scale.astype(np.float32), "axes": np.array([-1], np.int64),
                 "tiny": np.array(1e-30, np.float32), "inv127": np.array(1 / 127, np.float32),
                 "zero_point_f": np.array(128, np.float32), "low": np.array(0, np.float32),
                 "high": np.array(255, np.float32), "zero_point": np.array(128, np.uint8)}
    opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    reduce_max = (helper.make_node("ReduceMax", [f"{p}_abs", f"{p}_axes"], [f"{p}_max"], keepdims=1) if opset >= 18
                  else helper.make_node("ReduceMax", [f"{p}_abs"], [f"{p}_max"], axes=[-1], keepdims=1))
    nodes = [
        helper.make_node("Abs", [x], [f"{p}_abs"]),
        reduce_max,  # (..., 1): each row's largest magnitude
        helper.make_node("Max", [f"{p}_max", f"{p}_tiny"], [f"{p}_max_safe"]),  # an all-zero row: no 0/0
        helper.make_node("Mul", [f"{p}_max_safe", f"{p}_inv127"], [f"{p}_row_scale"]),
        helper.make_node("Div", [x, f"{p}_row_scale"], [f"{p}_scaled"]),
        helper.make_node("Round", [f"{p}_scaled"], [f"{p}_rounded"]),  # half to even, as QuantizeLinear
        helper.make_node("Add", [f"{p}_rounded", f"{p}_zero_point_f"], [f"{p}_shifted"]),
        helper.make_node("Clip", [f"{p}_shifted", f"{p}_low", f"{p}_high"], [f"{p}_clipped"]),
        helper.make_node("Cast", [f"{p}_clipped"], [f"{p}_u8"], to=onnx.TensorProto.UINT8),
        helper.make_node("MatMulInteger", [f"{p}_u8", f"{p}_weight", f"{p}_zero_point"], [f"{p}_int32"]),
        helper.make_node("Cast", [f"{p}_int32"], [f"{p}_float"], to=onnx.TensorProto.FLOAT),
        helper.make_node("Mul", [f"{p}_float", f"{p}_row_scale"], [f"{p}_by_row"]),
        helper.make_node("Mul", [f"{p}_by_row", f"{p}_col_scale"], [y]),
    ]
    at = list(model.graph.node).index(node)
    model.graph.node.remove(node)
    for offset, new in enumerate(nodes):
        new.name = f"{p}_{offset}_{new.op_type}"
        model.graph.node.insert(at + offset, new)
    if not any(node.input[1] in n.input for n in model.graph.node):  # the float weight, unless shared
        model.graph.initializer.remove(inits[node.input[1]])
    model.graph.initializer.extend(numpy_helper.from_array(value, f"{p}_{name}") for name, value in constants.items())


def row_quantized_weight(weight: np.ndarray, weight_type: str, weight_bits: int,
                         per_channel: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(quantised weight, scale per column (or one), zero point per column (or one) or None): quantize_dynamic's
    weights. uint8: asymmetric over [min(W, 0), max(W, 0)], 0..255 (0..127 with 7 bits); int8: symmetric,
    ±127 (±63 with 7 bits), zero point 0 (left out of the MatMulInteger)."""
    axis = 0 if per_channel else None  # over the inputs K: one scale per output column c
    if weight_type == "uint8":
        qmax = 2 ** weight_bits - 1
        low = np.minimum(weight.min(axis=axis), 0.0)
        high = np.maximum(weight.max(axis=axis), 0.0)
        scale = (high - low) / qmax
        scale = np.where(scale == 0, 1.0, scale)  # an all-zero column: any scale gives zeros
        zero_point = np.clip(np.round(-low / scale), 0, qmax)
        quantized = np.clip(np.round(weight / scale) + zero_point, 0, qmax).astype(np.uint8)
        return quantized, np.atleast_1d(scale).astype(np.float32), np.atleast_1d(zero_point).astype(np.uint8)
    qmax = 2 ** (weight_bits - 1) - 1
    scale = np.abs(weight).max(axis=axis) / qmax
    scale = np.where(scale == 0, 1.0, scale)
    quantized = np.clip(np.round(weight / scale), -qmax, qmax).astype(np.int8)
    return quantized, np.atleast_1d(scale).astype(np.float32), None


def per_row_matmuls(model: onnx.ModelProto, node_names: list[str], weight_type: str = "uint8",
                    weight_bits: int = 8, per_channel: bool = True) -> None:
    """Replace each MatMul of `node_names` (activations x a float weight initializer) in place by the arithmetic of
    onnxruntime's dynamic int8 kernels with the activation scale taken per row (per token) instead of per tensor,
    so that no row's result depends on the other rows of its batch (padding rows included):
    - each activation row r: scale s_r = (max(x_r, 0) - min(x_r, 0)) / 255 and zero point z_r = round(-min / s_r),
      u8 (DynamicQuantizeLinear's rule, per row); computed once per input tensor, shared by the MatMuls reading
      it (Q, K and V);
    - each weight column c as quantize_dynamic makes it (`row_quantized_weight`): scale t_c, zero point zb_c;
    - MatMulInteger takes no per-row zero point in onnxruntime (only one per tensor), so it multiplies the raw u8
      rows and the row's zero point comes off after: int32 sums - z_r · Σ_k (W_kc - zb_c) (exact in int32),
      then y = sums · s_r · t_c.
    u8 x u8 (weight_type "uint8") widens to int16 and sums in int32 on any CPU; u8 x s8 needs VNNI (module doc)."""
    nodes = {n.name: n for n in model.graph.node if n.name in node_names and n.op_type == "MatMul"}
    inits = {i.name: i for i in model.graph.initializer}
    opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    added: list[onnx.TensorProto] = []
    row_inputs: dict[str, str] = {}  # activation tensor -> the prefix of its quantised row tensors

    def constant(name: str, value: np.ndarray) -> str:
        added.append(numpy_helper.from_array(value, name))
        return name

    def reduce(op: str, x: str, out: str) -> onnx.NodeProto:
        return (helper.make_node(op, [x, f"{out}_axes"], [out], keepdims=1) if opset >= 18
                else helper.make_node(op, [x], [out], axes=[-1], keepdims=1))

    def quantize_rows(x: str, p: str) -> list[onnx.NodeProto]:
        if opset >= 18:  # ReduceMin/Max take their axes as an input from opset 18 on, an attribute before
            for name in (f"{p}_min_axes", f"{p}_max_axes"):
                constant(name, np.array([-1], np.int64))
        zero, tiny = constant(f"{p}_zero", np.array(0, np.float32)), constant(f"{p}_tiny", np.array(1e-30, np.float32))
        return [
            reduce("ReduceMin", x, f"{p}_min"), reduce("ReduceMax", x, f"{p}_max"),  # (..., 1): each row's own
            helper.make_node("Min", [f"{p}_min", zero], [f"{p}_low"]),  # the range holds 0: zero stays exact
            helper.make_node("Max", [f"{p}_max", zero], [f"{p}_high"]),
            helper.make_node("Sub", [f"{p}_high", f"{p}_low"], [f"{p}_range"]),
            helper.make_node("Max", [f"{p}_range", tiny], [f"{p}_range_safe"]),  # an all-zero row: no 0/0
            helper.make_node("Mul", [f"{p}_range_safe", constant(f"{p}_inv255", np.array(1 / 255, np.float32))],
                             [f"{p}_scale"]),
            helper.make_node("Div", [f"{p}_low", f"{p}_scale"], [f"{p}_low_q"]),
            helper.make_node("Round", [f"{p}_low_q"], [f"{p}_minus_zp"]),  # -z_r, half to even as DynamicQuantize
            helper.make_node("Div", [x, f"{p}_scale"], [f"{p}_scaled"]),
            helper.make_node("Round", [f"{p}_scaled"], [f"{p}_rounded"]),
            helper.make_node("Sub", [f"{p}_rounded", f"{p}_minus_zp"], [f"{p}_shifted"]),
            helper.make_node("Clip", [f"{p}_shifted", zero, constant(f"{p}_255", np.array(255, np.float32))],
                             [f"{p}_clipped"]),
            helper.make_node("Cast", [f"{p}_clipped"], [f"{p}_u8"], to=onnx.TensorProto.UINT8),
            helper.make_node("Cast", [f"{p}_minus_zp"], [f"{p}_minus_zp_i32"], to=onnx.TensorProto.INT32),
        ]

    for name, node in nodes.items():
        weight = numpy_helper.to_array(inits[node.input[1]]).astype(np.float32)  # (K, N)
        quantized, col_scale, col_zero_point = row_quantized_weight(weight, weight_type, weight_bits, per_channel)
        sums = quantized.astype(np.int32) - (col_zero_point.astype(np.int32) if col_zero_point is not None else 0)
        x, y, p = node.input[0], node.output[0], f"{name}_rowq"
        new: list[onnx.NodeProto] = []
        if x not in row_inputs:
            row_inputs[x] = f"{p}_rows"
            new += quantize_rows(x, row_inputs[x])
        r = row_inputs[x]
        integer_inputs = [f"{r}_u8", constant(f"{p}_weight", quantized)]
        if col_zero_point is not None:
            integer_inputs += ["", constant(f"{p}_zero_point", col_zero_point)]  # "": the rows' zero point is 0
        new += [
            helper.make_node("MatMulInteger", integer_inputs, [f"{p}_int32"]),
            helper.make_node("Mul", [f"{r}_minus_zp_i32", constant(f"{p}_col_sums", sums.sum(axis=0, dtype=np.int32))],
                             [f"{p}_zp_term"]),  # -z_r · Σ_k (W_kc - zb_c)
            helper.make_node("Add", [f"{p}_int32", f"{p}_zp_term"], [f"{p}_centred"]),
            helper.make_node("Cast", [f"{p}_centred"], [f"{p}_float"], to=onnx.TensorProto.FLOAT),
            helper.make_node("Mul", [f"{p}_float", f"{r}_scale"], [f"{p}_by_row"]),
            helper.make_node("Mul", [f"{p}_by_row", constant(f"{p}_col_scale", col_scale)], [y]),
        ]
        at = list(model.graph.node).index(node)
        model.graph.node.remove(node)
        for offset, made in enumerate(new):
            made.name = f"{p}_{offset}_{made.op_type}"
            model.graph.node.insert(at + offset, made)
    used = {i for n in model.graph.node for i in n.input}
    for init in list(model.graph.initializer):  # the float weights, unless another node still reads one
        if init.name in {n.input[1] for n in nodes.values()} and init.name not in used:
            model.graph.initializer.remove(init)
    model.graph.initializer.extend(added)


def modules_of(node: onnx.NodeProto) -> list[str]:
    """The torch module paths a dynamo-exported node came from (its `pkg.torch.onnx.name_scopes`)."""
    for prop in node.metadata_props:
        if prop.key == "pkg.torch.onnx.name_scopes":
            with contextlib.suppress(ValueError, SyntaxError):  # a Python list literal, e.g. "['', 'output']"
                return [m for m in ast.literal_eval(prop.value) if m]
    return []


def nodes_in(model: onnx.ModelProto, module_prefixes: tuple[str, ...]) -> list[str]:
    """Names of the quantisable nodes that belong to a module starting with one of `module_prefixes`
    (e.g. "output": the generator; "model.decoder.layers.2": the last decoder layer)."""
    return [n.name for n in model.graph.node if n.op_type in QUANTIZED_OPS
            and any(m == p or m.startswith(p + ".") for m in modules_of(n) for p in module_prefixes)]



def weight_matmuls(model: onnx.ModelProto, excluded: list[str]) -> list[str]:
    """The MatMuls by a float weight initializer (attention's activation-by-activation products stay fp32)."""
    inits = {i.name for i in model.graph.initializer}
    return [n.name for n in model.graph.node if n.op_type == "MatMul" and n.input[1] in inits
            and n.name not in excluded]

def quantize_int8(src: str | Path, dst: str | Path, per_channel: bool = True, weight_bits: int = 8,
                  weight_type: str = "uint8", keep_fp32: tuple[str, ...] = (), block_size: int = 0,
                  row_output: bool = False, int8_embeddings: bool = False) -> float:
    """Write the int8 version of the fp32 graph `src` to `dst`; returns seconds taken.

    per_channel: one scale per output column instead of per tensor; weight_bits: 7 (reduce_range) or 8;
    weight_type: "int8" (onnxruntime's u8 x s8 kernel: 8 bits need VNNI) or "uint8" (its u8 x u8 kernel, which
    sums in int32 on any CPU); keep_fp32: module-path prefixes whose MatMuls/Gathers stay fp32 (`nodes_in`);
    block_size: 0 makes every other weight MatMul per-row (`per_row_matmuls`), and with int8_embeddings the
    embeddings int8 tables (quantize_dynamic; else they stay fp32); > 0 makes the MatMuls blockwise MatMulNBits
    (`blockwise_matmuls`), leaves the embedding Gathers fp32 and the other arguments unused; row_output (with
    block_size): the generator's MatMul, unless kept fp32, becomes the per-row MatMulInteger of `per_row_matmul`
    instead. The module doc says why each; docs/export-and-runtime.md has the measurements.
    """
    if weight_bits not in (7, 8):
        raise ValueError(f"weight_bits must be 7 or 8, got {weight_bits}")
    if weight_type not in WEIGHT_TYPES:
        raise ValueError(f"weight_type must be one of {', '.join(WEIGHT_TYPES)}, got {weight_type!r}")
    check_block_size(block_size)
    start = time.perf_counter()
    model = onnx.load(str(src))
    del model.graph.value_info[:]
    excluded = nodes_in(model, keep_fp32)
    op_types = {n.name: n.op_type for n in model.graph.node}
    per_row = [name for name in nodes_in(model, (ROW_OUTPUT_MODULE,)) if op_types[name] == "MatMul"
               and name not in excluded] if row_output and block_size else []
    root = logging.getLogger()
    previous_level = root.level
    with tempfile.TemporaryDirectory() as tmp, contextlib.chdir(tmp):
        root.setLevel(logging.ERROR)  # the quantiser logs a line per skipped node at INFO (on the root logger)
        try:
            if block_size:
                quantized = blockwise_matmuls(model, block_size, excluded + per_row)
                for name in per_row:
                    per_row_matmul(quantized, name)
            else:
                # the embedding tables by quantize_dynamic (a Gather's rows dequantised one by one: no activation
                # scale), the MatMuls per row by our own rewrite (its activation scale spans the batch)
                quantized = onnx.ModelProto()
                if int8_embeddings:
                    onnx.save(model, "fp32.onnx")
                    quantize_dynamic("fp32.onnx", "int8.onnx", weight_type=WEIGHT_TYPES[weight_type],
                                     per_channel=per_channel,
                                     reduce_range=weight_bits == 7,  # the module doc: int16 saturation w/o VNNI
                                     op_types_to_quantize=["Gather"], nodes_to_exclude=excluded,
                                     # DefaultTensorType: the fused attention's outputs have no type that onnx's
                                     # shape inference knows (a contrib op); they are float
                                     extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
                    quantized = onnx.load("int8.onnx")
                else:  # the tables stay fp32
                    quantized.CopyFrom(model)
                per_row_matmuls(quantized, weight_matmuls(quantized, excluded), weight_type, weight_bits,
                                per_channel)
        finally:
            root.setLevel(previous_level)  # the caller's logging is not ours to change
    tidy_fused_outputs(quantized)  # the types of the fused attention's outputs, cleared above
    scheme = {META_PRECISION: "int8", META_INT8_WEIGHT_TYPE: weight_type, META_INT8_KEPT_FP32: ",".join(keep_fp32),
              META_INT8_BLOCK_SIZE: str(block_size),
              META_INT8_EMBEDDINGS: "int8" if int8_embeddings and not block_size else "fp32",
              # the loader refuses int8 files without it: their one activation scale per tensor spans the batch
              META_INT8_ACTIVATIONS: "per_row_and_block" if block_size else "per_row"}
    # The loader refuses 8-bit signed weights without VNNI, where the dynamic u8 x s8 kernel saturates; unsigned
    # ones never saturate, and blockwise files run MatMulNBits (exact int32 sums everywhere): they load anywhere.
    if weight_type == "int8" and not block_size:
        scheme[META_INT8_WEIGHT_BITS] = str(weight_bits)
    if per_row:  # its s8 weights take the u8 x s8 kernel: full range needs VNNI, as above
        scheme[META_INT8_WEIGHT_BITS] = "8"
    scheme[META_INT8_ROW_OUTPUT] = ",".join(per_row)
    set_metadata(quantized, {p.key: p.value for p in model.metadata_props if p.key != META_INT8_WEIGHT_BITS} | scheme)
    atomic_write(dst, lambda tmp_path: onnx.save(quantized, tmp_path))
    return time.perf_counter() - start
