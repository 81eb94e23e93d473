"""ONNX export: graph values vs PyTorch at new shapes, attention outputs, the KV-cache step, the ONNX checker,
validation failures and the fp32 tolerance. (int8: test_quantize.py; export_report.json and staleness:
test_report.py; `python -m export`: test_cli.py; the benchmark: tests/bench/.)

The tiny model directories come from tests/export_fixtures.py (exported once per process)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
import torch
from export_fixtures import (
    build_translation_dir,
    exported,
)
from export_graph_fixtures import ATOL, GRAPHS, NEW_SHAPES, loaded, run_onnx, spec_of

import tx
from export.feeds import random_inputs
from export.graph_modules import wrapper_for
from export.onnx_export import DEFAULT_OPSET, EXAMPLE_AXES
from export.validate import GraphCheck, blank_unspecified, check_interface, enforce, validate_graph
from export.wrappers import run_wrapper
from runtime.spec import (
    BATCH,
    PAST,
    SEQ,
    SRC,
    decoder_graph,
    encoder_graph,
)

pytestmark = pytest.mark.exports


# --- values vs PyTorch ---------------------------------------------------------------------------------------------


def test_new_shapes_differ_from_the_export_example():
    for case in NEW_SHAPES:
        assert case[BATCH] != EXAMPLE_AXES[BATCH]
        assert {case[SEQ], case[SRC]} & {7, 29} and EXAMPLE_AXES[SEQ] not in (case[SEQ], case[SRC])
    assert {c[PAST] for c in NEW_SHAPES} == {0, 11} and EXAMPLE_AXES[PAST] not in (0, 11)


@pytest.mark.parametrize(("task", "graph"), GRAPHS)
def test_fp32_graph_equals_pytorch_at_new_shapes(task, graph):
    _, model, _ = loaded(task)
    spec = spec_of(task, graph)
    wrapper = wrapper_for(model, spec)
    for number, case in enumerate(NEW_SHAPES):
        inputs = random_inputs(spec, case, model.config.vocab_size, seed=1000 + number)
        got = run_onnx(task, graph, "fp32", inputs)
        want = [w.numpy() for w in run_wrapper(wrapper, [torch.from_numpy(a) for a in inputs])]
        assert len(got) == len(want) == len(spec.outputs)
        # what the spec leaves unspecified (the served encoder's padded positions) is not compared
        got, want = blank_unspecified(spec, inputs, got), blank_unspecified(spec, inputs, want)
        for tensor, g, w in zip(spec.outputs, got, want, strict=True):
            assert g.shape == w.shape == tensor.shape_for(case), (tensor.name, case)
            assert np.isfinite(g).all(), (tensor.name, case)
            np.testing.assert_allclose(g, w, rtol=0, atol=ATOL, err_msg=f"{graph}.{tensor.name} at {case}")


def padded_batch(rows: list[int], vocab: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """ids (B, max(rows)) with pad 0 after each row's length, and the matching bool mask."""
    rng = np.random.default_rng(seed)
    width = max(rows)
    mask = np.arange(width)[None, :] < np.array(rows)[:, None]
    ids = np.where(mask, rng.integers(6, vocab, size=(len(rows), width)), 0).astype(np.int64)
    return ids, mask


def test_classifier_explain_attention_equals_pytorch_weights():
    _, model, shape = loaded("sentiment")
    ids, mask = padded_batch([11, 4, 8], model.config.vocab_size, seed=3)
    logits, *weights = run_onnx("sentiment", "classifier_explain", "fp32", [ids, mask])
    with torch.inference_mode():
        want_logits, want_weights = model.classify(torch.from_numpy(ids), torch.from_numpy(mask), need_weights=True)
    assert len(weights) == len(want_weights) == shape.n_layers
    for got, want in zip(weights, want_weights, strict=True):
        assert got.shape == (3, shape.n_heads, 11, 11)
        np.testing.assert_allclose(got, want.numpy(), rtol=0, atol=1e-5)
        np.testing.assert_allclose(got.sum(-1), 1.0, atol=1e-5)  # every query row is a distribution
        assert np.abs(got[1, :, :, 4:]).max() < 1e-7  # row 1 has 4 real tokens: padded keys get nothing
    np.testing.assert_allclose(logits, want_logits.numpy(), rtol=0, atol=ATOL)
    [lean] = run_onnx("sentiment", "classifier", "fp32", [ids, mask])
    np.testing.assert_allclose(lean, logits, rtol=0, atol=1e-5)  # the explain variant changes no prediction


def test_translation_explain_attention_equals_pytorch_weights():
    _, model, shape = loaded("translate")
    src, src_mask = padded_batch([9, 5, 13], model.config.vocab_size, seed=4)
    tgt, _ = padded_batch([6, 6, 6], model.config.vocab_size, seed=5)
    memory, *encoder_weights = run_onnx("translate", "encoder_explain", "fp32", [src, src_mask])
    log_probs, *decoder_weights = run_onnx("translate", "decoder_explain", "fp32", [tgt, memory, src_mask])
    with torch.inference_mode():
        want_memory, want_encoder = model.encode(torch.from_numpy(src), torch.from_numpy(src_mask), need_weights=True)
        hidden, _, want_decoder = model.decode(torch.from_numpy(tgt), want_memory, torch.from_numpy(src_mask),
                                               need_weights=True)
        want_log_probs = model.generator(hidden).log_softmax(-1)
    np.testing.assert_allclose(memory, want_memory.numpy(), rtol=0, atol=ATOL)
    np.testing.assert_allclose(log_probs, want_log_probs.numpy(), rtol=0, atol=ATOL)
    layers = shape.n_decoder_layers
    groups = {"encoder": (encoder_weights, want_encoder, (3, shape.n_heads, 13, 13)),
              "self": (decoder_weights[:layers], want_decoder["self"], (3, shape.n_heads, 6, 6)),
              "cross": (decoder_weights[layers:], want_decoder["cross"], (3, shape.n_heads, 6, 13))}
    for name, (got_list, want_list, dims) in groups.items():
        assert len(got_list) == len(want_list) > 0, name
        for got, want in zip(got_list, want_list, strict=True):
            assert got.shape == dims, name
            np.testing.assert_allclose(got, want.numpy(), rtol=0, atol=1e-5, err_msg=name)
            np.testing.assert_allclose(got.sum(-1), 1.0, atol=1e-5, err_msg=name)
    for got in decoder_weights[:layers]:
        assert np.abs(np.triu(got[0, 0], k=1)).max() < 1e-7  # causal: no attention to later targets
    for got in decoder_weights[layers:]:
        assert np.abs(got[1, :, :, 5:]).max() < 1e-7  # source row 1 has 5 real tokens


def test_kv_cache_decoder_steps_equal_the_full_decode():
    """Encoder graph + decoder step graph, one token (and one 4-token chunk) at a time, gives the
    log-probs of one teacher-forced pass, in ONNX (decoder_explain) and in PyTorch (no cache)."""
    _, model, shape = loaded("translate")
    src, src_mask = padded_batch([9, 5, 13], model.config.vocab_size, seed=6)
    tgt, _ = padded_batch([12, 12, 12], model.config.vocab_size, seed=7)
    enc, dec = encoder_graph(shape), decoder_graph(shape)
    memory, *cross = run_onnx("translate", "encoder", "fp32", [src, src_mask])
    empty = np.zeros((3, shape.n_heads, 0, shape.head_dim), dtype=np.float32)
    assert len(cross) == len(enc.outputs) - 1 == 2 * shape.n_decoder_layers

    def steps(chunks: list[int]) -> np.ndarray:
        past, start, out = [empty] * (2 * shape.n_decoder_layers), 0, []
        for size in chunks:
            log_probs, *rest = run_onnx("translate", "decoder", "fp32",
                                        [tgt[:, start:start + size], src_mask, *past, *cross])
            present, weights = rest[:2 * shape.n_decoder_layers], rest[2 * shape.n_decoder_layers:]
            assert log_probs.shape == (3, size, shape.vocab_size)
            assert all(p.shape == (3, shape.n_heads, start + size, shape.head_dim) for p in present)
            assert len(weights) == shape.n_decoder_layers  # the new positions' cross-attention, per layer
            assert all(w.shape == (3, shape.n_heads, size, src.shape[1]) for w in weights)
            np.testing.assert_allclose(weights[0].sum(-1), 1.0, atol=1e-5)
            past, start = present, start + size
            out.append(log_probs)
        assert len(past) == len([t for t in dec.outputs if t.name.startswith("present_self_")])
        return np.concatenate(out, axis=1)

    one_by_one = steps([1] * 12)
    chunked = steps([4] + [1] * 8)
    full, *_ = run_onnx("translate", "decoder_explain", "fp32", [tgt, memory, src_mask])
    with torch.inference_mode():
        torch_memory = model.encode(torch.from_numpy(src), torch.from_numpy(src_mask)).memory
        hidden, _, _ = model.decode(torch.from_numpy(tgt), torch_memory, torch.from_numpy(src_mask))
        torch_full = model.generator(hidden).log_softmax(-1).numpy()
    np.testing.assert_allclose(one_by_one, full, rtol=0, atol=ATOL)
    np.testing.assert_allclose(chunked, full, rtol=0, atol=ATOL)
    np.testing.assert_allclose(one_by_one, torch_full, rtol=0, atol=ATOL)


# --- files and report ----------------------------------------------------------------------------------------------


def onnx_files() -> list[Path]:
    files = sorted(p for task in ("translate", "sentiment") for p in (exported(task) / "onnx").glob("*.onnx"))
    # 4 translation + 2 classifier graphs, fp32 and int8 each; 3 walkthrough, 5 experiment and 3 patching graphs, fp32
    assert len(files) == 23
    return files


def test_onnx_checker_full_check_passes_on_every_file():
    for path in onnx_files():
        onnx.checker.check_model(str(path), full_check=True)
        model = onnx.load(str(path))
        # single-file: every weight inline, no external-data companions
        assert all(i.data_location == onnx.TensorProto.DEFAULT for i in model.graph.initializer), path.name
        assert {o.version for o in model.opset_import if o.domain in ("", "ai.onnx")} == {DEFAULT_OPSET}
    leftovers = [p.name for task in ("translate", "sentiment") for p in (exported(task) / "onnx").iterdir()
                 if p.suffix not in (".onnx", ".json")]
    assert leftovers == []


def test_check_interface_and_validation_catch_mismatches(tmp_path):
    model_dir, _, shape = loaded("translate")
    spec = encoder_graph(shape)
    path = model_dir / "onnx" / spec.file_name("fp32")
    assert check_interface(onnx.load(str(path)), spec) == []
    renamed = onnx.load(str(path))
    renamed.graph.output[0].name = "hidden"
    assert any("outputs are" in p for p in check_interface(renamed, spec))
    fixed = onnx.load(str(path))
    fixed.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 2  # batch frozen to the example's 2
    assert any("fixed to 2" in p for p in check_interface(fixed, spec))
    # The same file checked against other weights fails, with the max difference in the message.
    other = tx.load_model_dir(build_translation_dir(tmp_path / "other", seed=1))
    check = validate_graph(other, spec, path, "fp32")
    assert not check.ok
    assert any("max |onnx - torch| =" in p and "(atol 0.0001" in p for p in check.problems), check.problems
    assert max(check.max_diff.values()) > 1e-2
    mine = validate_graph(tx.load_model_dir(model_dir), spec, path, "fp32")
    assert mine.ok and max(mine.max_diff.values()) <= ATOL
    assert {c[BATCH] for c in mine.cases} == {3} and {c[PAST] for c in mine.cases} == {0, 11}


def test_fp32_tolerance_is_absolute_for_small_outputs_and_relative_for_large_ones():
    check = GraphCheck("g", "fp32", "g.fp32.onnx", max_diff={"probs": 2e-4, "scores": 5e-4, "logits": 5e-4},
                       magnitude={"probs": 1.0, "scores": 90.0, "logits": 20.0})
    enforce(check, atol=1e-4, rtol=1e-5)
    # probs: 2e-4 > 1e-4; scores: 5e-4 <= 1e-5 x 90 = 9e-4; logits: 5e-4 > 1e-5 x 20 = 2e-4
    assert [p.split(":")[0] for p in check.problems] == ["probs", "logits"]
    nan = GraphCheck("g", "fp32", "g.fp32.onnx", max_diff={"x": float("nan")}, magnitude={"x": 1e9})
    enforce(nan, atol=1e-4, rtol=1e-5)
    assert nan.problems
