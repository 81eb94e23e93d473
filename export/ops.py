"""The one-node graphs the runtime's searches run between decoder steps, built here and shipped in runtime/ops/.

`python -m export ops` rewrites them; tests/runtime/test_runtime_package.py checks the shipped files are what this
builds. Why files rather than graphs built at run time: the runtime imports onnxruntime, not onnx.
- gather_rows.onnx: data[index] along axis 0 (reordering the KV cache on the device under IOBinding);
- top_k.onnx: the k largest of each row, largest first, ties to the lower index (ONNX TopK's rule): beam search's
  shortlist (the fastest exact top-k measured here: docs/export-and-runtime.md#the-searches-in-numpy-issue-28).
"""
from __future__ import annotations

import argparse
from pathlib import Path

import onnx
from onnx import TensorProto, helper

from runtime.onnx_backend import GATHER_ROWS, OPS_DIR, TOP_K

OPSET = 20
IR_VERSION = 10  # explicitly: onnx 1.23 defaults to IR 14, which onnxruntime 1.31 refuses (it reads <= 13)


def finish(graph: onnx.GraphProto) -> bytes:
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=IR_VERSION,
                              producer_name="tx export.ops")
    onnx.checker.check_model(model, full_check=True)
    return model.SerializeToString()


def gather_rows_model() -> bytes:
    """rows = data[index] along axis 0, for (batch, heads, length, head_dim) KV-cache tensors."""
    return finish(helper.make_graph(
        [helper.make_node("Gather", ["data", "index"], ["rows"], axis=0)], "gather_rows",
        [helper.make_tensor_value_info("data", TensorProto.FLOAT, ["batch", "heads", "length", "head_dim"]),
         helper.make_tensor_value_info("index", TensorProto.INT64, ["rows"])],
        [helper.make_tensor_value_info("rows", TensorProto.FLOAT, ["rows", "heads", "length", "head_dim"])]))


def top_k_model() -> bytes:
    """(top_values, top_indices) = the k largest of each row of values (N, M), largest first, ties to the lower
    index. NaN is the caller's to handle (onnxruntime's comparisons put it anywhere): runtime.onnx_backend checks
    for it in numpy, which costs less than an IsNaN + Where pass in the graph."""
    return finish(helper.make_graph(
        [helper.make_node("TopK", ["values", "k"], ["top_values", "top_indices"], axis=-1, largest=1, sorted=1)],
        "top_k",
        [helper.make_tensor_value_info("values", TensorProto.FLOAT, ["rows", "columns"]),
         helper.make_tensor_value_info("k", TensorProto.INT64, [1])],
        [helper.make_tensor_value_info("top_values", TensorProto.FLOAT, ["rows", "k_out"]),
         helper.make_tensor_value_info("top_indices", TensorProto.INT64, ["rows", "k_out"])]))


BUILDERS = {GATHER_ROWS: gather_rows_model, TOP_K: top_k_model}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m export ops", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OPS_DIR)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for name, build in BUILDERS.items():
        (args.out / name).write_bytes(build())
        print(f"wrote {args.out / name}")
    return 0
