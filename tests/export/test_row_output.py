"""The generator's per-row int8 MatMul (export/quantize.py `per_row_matmul`): the arithmetic it promises (u8 rows
with their own scale, s8 columns with theirs, int32 sums), a row's result independent of its batch mates, no NaN
from an all-zero row, and the files that carry it: the one MatMulInteger of a decoder, the VNNI mark the loader
enforces, and translations that still run.

The numeric tests need VNNI: without it onnxruntime's u8 x s8 kernel sums pairs in int16, which full-range s8
weights saturate; that is why such files refuse to load there (the last test)."""
from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from export_fixtures import fresh_copy
from onnx import TensorProto, helper, numpy_helper

from export.quantize import per_row_matmul, per_row_matmuls, quantize_int8, row_quantized_weight
from runtime import ModelLoadError, OnnxTranslator
from runtime.cpu import cpu_has_vnni

needs_vnni = pytest.mark.skipif(not cpu_has_vnni(), reason="full-range u8 x s8 saturates without VNNI")
K, N = 48, 40


def one_matmul(weight: np.ndarray, opset: int) -> onnx.ModelProto:
    """x (batch, rows, K) · weight (K, N): the shape of the decoder's generator."""
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="generator")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "rows", K])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "rows", N])],
        [numpy_helper.from_array(weight, "w")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=10)


def per_row_reference(x: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """What per_row_matmul promises, in numpy: int32 sums of u8 rows and s8 columns, then both scales."""
    row_scale = np.maximum(np.abs(x).max(axis=-1, keepdims=True), 1e-30) / 127
    x_u8 = np.clip(np.round(x / row_scale) + 128, 0, 255).astype(np.int32)
    col_scale = np.abs(weight).max(axis=0) / 127
    w_s8 = np.clip(np.round(weight / col_scale), -127, 127).astype(np.int32)
    sums = (x_u8 - 128) @ w_s8  # exact in int32
    return sums.astype(np.float32) * row_scale.astype(np.float32) * col_scale.astype(np.float32)


def rewritten(weight: np.ndarray, opset: int = 20) -> ort.InferenceSession:
    model = one_matmul(weight, opset)
    per_row_matmul(model, "generator")
    onnx.checker.check_model(model)
    assert [n.op_type for n in model.graph.node].count("MatMulInteger") == 1
    assert "w" not in {i.name for i in model.graph.initializer}  # the float weight is gone
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])


@needs_vnni
@pytest.mark.parametrize("opset", [17, 20])  # ReduceMax takes its axes as an attribute before opset 18
def test_the_rewrite_computes_per_row_times_per_column_int8(opset):
    rng = np.random.default_rng(0)
    weight = rng.normal(size=(K, N)).astype(np.float32)
    x = rng.normal(size=(3, 5, K)).astype(np.float32)
    x[0, 1, 7] = 40.0  # an outlier coarsens its own row only
    out = rewritten(weight, opset).run(None, {"x": x})[0]
    assert np.allclose(out, per_row_reference(x, weight), rtol=1e-5, atol=1e-5)
    exact = x @ weight
    ordinary = np.ones(x.shape[:2], bool)
    ordinary[0, 1] = False
    error = np.abs(out - exact)[ordinary].max() / np.abs(exact).max()
    assert error < 0.02, error  # int8 of well-behaved rows stays close to fp32


@needs_vnni
def test_a_row_gets_the_same_output_whatever_its_batch_mates_and_a_zero_row_gives_zeros():
    rng = np.random.default_rng(1)
    session = rewritten(rng.normal(size=(K, N)).astype(np.float32))
    x = rng.normal(size=(4, 2, K)).astype(np.float32)
    x[1:] *= 1000  # far louder batch mates: one scale for the batch would crush row 0
    x[3] = 0.0
    together = session.run(None, {"x": x})[0]
    alone = session.run(None, {"x": x[:1]})[0]
    assert np.array_equal(together[:1], alone)  # bitwise: nothing of the batch mates reaches row 0
    assert np.array_equal(together[3], np.zeros_like(together[3]))  # no 0/0


def two_matmuls(first: np.ndarray, second: np.ndarray, opset: int) -> onnx.ModelProto:
    """x · first and x · second: two MatMuls reading one input, as Q, K and V read the LayerNorm's output."""
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w1"], ["y1"], name="q"), helper.make_node("MatMul", ["x", "w2"], ["y2"],
                                                                                  name="k")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "rows", K])],
        [helper.make_tensor_value_info(y, TensorProto.FLOAT, ["batch", "rows", N]) for y in ("y1", "y2")],
        [numpy_helper.from_array(first, "w1"), numpy_helper.from_array(second, "w2")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=10)


def per_row_u8_reference(x: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """What per_row_matmuls promises for u8 weights, in numpy: each row its own asymmetric u8 scale and zero point
    (DynamicQuantizeLinear's rule per row), exact integer sums against the centred u8 columns, then both scales."""
    low, high = np.minimum(x.min(-1, keepdims=True), 0), np.maximum(x.max(-1, keepdims=True), 0)
    scale = np.maximum(high - low, 1e-30).astype(np.float32) * np.float32(1 / 255)
    zero_point = -np.round(low / scale)
    rows = np.clip(np.round(x / scale) + zero_point, 0, 255) - zero_point
    columns, col_scale, col_zero_point = row_quantized_weight(weight, "uint8", 8, True)
    sums = rows.astype(np.int64) @ (columns.astype(np.int64) - col_zero_point.astype(np.int64))
    return sums.astype(np.float32) * scale * col_scale


@pytest.mark.parametrize("opset", [17, 20])
def test_per_row_u8_matmuls_compute_what_they_promise_on_any_cpu_and_ignore_batch_mates(opset):
    """The non-VNNI scheme's MatMuls (u8 x u8: no saturation without VNNI, so no skip): the arithmetic, one row
    quantisation shared by two MatMuls reading one input, bitwise batch independence, and no NaN from a zero row."""
    rng = np.random.default_rng(2)
    first, second = rng.normal(size=(K, N)).astype(np.float32), rng.normal(size=(K, N)).astype(np.float32) + 0.3
    model = two_matmuls(first, second, opset)
    per_row_matmuls(model, ["q", "k"], weight_type="uint8")
    onnx.checker.check_model(model)
    ops = [n.op_type for n in model.graph.node]
    assert ops.count("MatMulInteger") == 2 and ops.count("ReduceMin") == 1 and "MatMul" not in ops
    assert not {"w1", "w2"} & {i.name for i in model.graph.initializer}  # the float weights are gone
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    x = rng.normal(size=(4, 3, K)).astype(np.float32)
    x[0, 1, 7] = -40.0  # a one-sided outlier: its row's range only
    x[1:3] *= 1000  # far louder batch mates: one scale for the batch would crush row 0
    x[3] = 0.0
    together = session.run(None, {"x": x})
    for out, weight in zip(together, (first, second), strict=True):
        assert np.allclose(out, per_row_u8_reference(x, weight), rtol=1e-5, atol=1e-4)
        exact = x[0] @ weight
        assert np.abs(out[0] - exact).max() / np.abs(exact).max() < 0.03  # close to fp32 despite the outlier
        assert np.array_equal(out[3], np.zeros_like(out[3]))  # no 0/0
    alone = session.run(None, {"x": x[:1]})
    assert all(np.array_equal(t[:1], a) for t, a in zip(together, alone, strict=True))  # bitwise


def test_the_decoder_file_has_one_per_row_matmul_and_refuses_to_load_without_vnni(monkeypatch):
    import runtime.model_files as model_files

    model_dir = fresh_copy("translate", "row-output")
    onnx_dir = model_dir / "onnx"
    quantize_int8(onnx_dir / "decoder.fp32.onnx", onnx_dir / "decoder.int8.onnx", weight_type="int8",
                  block_size=64, row_output=True)
    decoder = onnx.load(str(onnx_dir / "decoder.int8.onnx"))
    ops = [n.op_type for n in decoder.graph.node]
    meta = {p.key: p.value for p in decoder.metadata_props}
    assert ops.count("MatMulInteger") == 1 and ops.count("MatMulNBits") > 1 and "MatMul" not in ops
    (integer,) = [n for n in decoder.graph.node if n.op_type == "MatMulInteger"]
    assert integer.name.startswith(meta["tx.int8_row_output"])  # the generator's node, named in the metadata
    assert meta["tx.int8_weight_bits"] == "8"
    monkeypatch.setattr(model_files, "cpu_has_vnni", lambda: False)
    with pytest.raises(ModelLoadError, match="made for a CPU with VNNI"):
        OnnxTranslator(model_dir, provider="cpu", precision="int8")
    if cpu_has_vnni():
        monkeypatch.setattr(model_files, "cpu_has_vnni", lambda: True)
        translator = OnnxTranslator(model_dir, provider="cpu", precision="int8")
        assert translator.translate(["Guten Morgen"], src_lang="de", tgt_lang="en", method="greedy")[0].token_ids


def test_without_row_output_the_generator_stays_blockwise(tmp_path):
    model_dir = fresh_copy("translate", "no-row-output")
    path = tmp_path / "decoder.int8.onnx"
    quantize_int8(model_dir / "onnx" / "decoder.fp32.onnx", path, weight_type="int8", block_size=64)
    decoder = onnx.load(str(path))
    meta = {p.key: p.value for p in decoder.metadata_props}
    assert "MatMulInteger" not in [n.op_type for n in decoder.graph.node]
    assert meta["tx.int8_row_output"] == "" and "tx.int8_weight_bits" not in meta
