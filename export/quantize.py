"""int8 dynamic quantisation of an exported fp32 graph (onnxruntime.quantization.quantize_dynamic).

Weights become int8 once; activations are quantised per call, so no calibration data is needed.
Four things the quantiser needs on our dynamo-exported graphs (measured):
- `reduce_range=True` (7-bit weights): on CPUs without VNNI (AVX2 only, like the AMD EPYC
  test machines) onnxruntime's u8 x s8 MatMulInteger kernel adds pairs of products in int16
  (vpmaddubsw), which saturates with full-range 8-bit weights. On the random-weight test models
  log-probs moved by up to 0.9 (classifier logits by 1.6) and greedy int8 translations matched
  PyTorch's for 0 of 18 sentences; with 7-bit weights the worst difference was 0.05 and 16 of 18
  matched. On the trained sentiment model (d_model 64) the worst logit difference at 8 x 128
  tokens fell from 0.19 to 0.035 and the accuracy delta on 1249 test reviews went from -0.32 to
  +0.16 pt (label agreement 99.4% both). 7-bit weights behave the same on VNNI machines, so an
  export made on one CPU serves well on any. The price is resolution, which per-channel scales
  buy back; measured int8 vs fp32 (same machine, greedy agreement / BLEU delta de-en, en-de on
  100 test sentences each way, and label agreement / accuracy delta on 1249 reviews):
      translate d512:  8-bit 0.74 / -0.51, +0.93   7-bit 0.625 / -1.16, +0.91
                       8-bit per-channel 0.645 / -0.73, +1.22   7-bit per-channel 0.685 / -0.19, -0.09
      sentiment d64:   8-bit 99.36% / -0.32 pt   7-bit 99.36% / +0.16 pt
                       8-bit per-channel 98.80% / -0.24 pt   7-bit per-channel 99.76% / -0.08 pt
  so per-channel 7-bit is the default where the CPU lacks VNNI. On the export's own 500-sentence check (each
  way, greedy, 2026-11-24, no VNNI): per-channel 7-bit agrees with fp32 on 75.5% of outputs (per tensor: ~63%)
  and loses 0.24 / 0.13 BLEU (de-en / en-de; the export fails past 0.5). Keeping the 20 MB output projection
  in fp32 (`nodes_to_exclude`) raised agreement on 200 test sentences from 72.8% to 75.8% for +15.6 MB and
  +14% time: not taken. Where it has VNNI (avx512_vnni / avx_vnni in
  /proc/cpuinfo) the kernel accumulates in int32 and full 8-bit weights are safe, so the export uses them there
  (`cpu_has_vnni`) and marks the files (`tx.int8_weight_bits` = "8"): such a file refuses to load on a CPU
  without VNNI instead of quietly saturating (the ONNX files are made on the machine that serves them);
- `graph.value_info` cleared first, else its shape inference fails on the exporter's symbolic dims;
- a temp working directory: it leaves ~20 MB `<uuid>.data` files in the current directory;
- no initializer shared by a Gather and a MatMul (tied embeddings): it transposes the weight in
  place; `wrappers.LogSoftmaxOutput` gives the output projection its own copy.
"""
from __future__ import annotations

import contextlib
import logging
import tempfile
import time
from pathlib import Path

import onnx
from onnxruntime.quantization import QuantType, quantize_dynamic

from tx.files import atomic_write

from .cpu import cpu_has_vnni  # noqa: F401  (re-exported: the export and the loader both ask)
from .onnx_export import set_metadata
from .spec import META_INT8_WEIGHT_BITS, META_PRECISION

# Only the weight-by-activation MatMuls (attention's activation-by-activation products stay fp32)
# and the embedding Gathers, whose int8 tables are what shrinks the files.
QUANTIZED_OPS = ["MatMul", "Gather"]


def quantize_int8(src: str | Path, dst: str | Path, per_channel: bool = True, weight_bits: int = 7) -> float:
    """Write the int8 version of the fp32 graph `src` to `dst`; returns seconds taken.

    per_channel: one scale per output column instead of per tensor; weight_bits: 7 (reduce_range, any CPU) or
    8 (needs VNNI). See the module doc for the measurements behind both.
    """
    if weight_bits not in (7, 8):
        raise ValueError(f"weight_bits must be 7 or 8, got {weight_bits}")
    start = time.perf_counter()
    model = onnx.load(str(src))
    del model.graph.value_info[:]
    root = logging.getLogger()
    previous_level = root.level
    with tempfile.TemporaryDirectory() as tmp, contextlib.chdir(tmp):
        root.setLevel(logging.ERROR)  # the quantiser logs a line per skipped node at INFO (on the root logger)
        try:
            onnx.save(model, "fp32.onnx")
            quantize_dynamic("fp32.onnx", "int8.onnx", weight_type=QuantType.QInt8, per_channel=per_channel,
                             reduce_range=weight_bits == 7,  # see the module doc: int16 saturation without VNNI
                             op_types_to_quantize=QUANTIZED_OPS, extra_options={"MatMulConstBOnly": True})
            quantized = onnx.load("int8.onnx")
        finally:
            root.setLevel(previous_level)  # the caller's logging is not ours to change
    set_metadata(quantized, {p.key: p.value for p in model.metadata_props}
                 | {META_PRECISION: "int8", META_INT8_WEIGHT_BITS: str(weight_bits)})
    atomic_write(dst, lambda tmp_path: onnx.save(quantized, tmp_path))
    return time.perf_counter() - start
