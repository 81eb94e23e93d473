"""The served graphs' fused attention (export/fused_graphs.py): the same values as the model's
own code, in PyTorch and through onnxruntime, for every layout the configs allow."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
import torch
from export_fixtures import exported

import tx
from export.feeds import random_inputs
from export.graph_modules import wrapper_for
from export.onnx_export import export_graph, graph_metadata
from export.validate import blank_unspecified, validate_graph
from export.wrappers import run_wrapper
from runtime.spec import (
    BATCH,
    PAST,
    SEQ,
    SRC,
    TGT,
    ModelShape,
    classifier_graph,
    decoder_graph,
    encoder_graph,
    graphs_for,
)

VARIANTS = {  # what a checkpoint's config may change about the layers the fused graphs rebuild
    "paper": {},
    "pre-LN": {"pre_norm": True},
    "unscaled, no positions": {"scale_scores": False, "positional": False},
    "untied embeddings, fewer decoder layers": {"share_embeddings": False, "n_decoder_layers": 1},
}
CASES = [{BATCH: 3, SRC: 7, TGT: 1, PAST: 0}, {BATCH: 2, SRC: 5, TGT: 1, PAST: 6}, {BATCH: 1, SRC: 4, TGT: 3, PAST: 2}]


def tiny_model(**changes) -> tx.Seq2SeqTransformer:
    torch.manual_seed(0)
    config = tx.Seq2SeqConfig(**{"vocab_size": 31, "d_model": 16, "n_heads": 4, "n_layers": 2, "d_ff": 24,
                                 "dropout": 0.0, "max_len": 32} | changes)
    model = tx.Seq2SeqTransformer(config).eval()
    with torch.no_grad():  # LayerNorm's default 1 / 0 would hide a norm applied in the wrong place
        for module in model.modules():
            if isinstance(module, torch.nn.LayerNorm):
                module.weight.uniform_(0.5, 1.5)
                module.bias.uniform_(-0.5, 0.5)
    return model


def shape_of(model: tx.Seq2SeqTransformer) -> ModelShape:
    from dataclasses import asdict

    return ModelShape.from_config("seq2seq", asdict(model.config))


@pytest.mark.parametrize("variant", VARIANTS)
def test_fused_wrappers_compute_what_the_model_computes(variant):
    """PyTorch only: the fused ops' bodies, the packed projections and the layer wiring against the model."""
    model = tiny_model(**VARIANTS[variant])
    shape = shape_of(model)
    for spec in (encoder_graph(shape), decoder_graph(shape)):
        fused, plain = wrapper_for(model, spec, fused_attention=True), wrapper_for(model, spec)
        assert type(fused) is not type(plain)
        for number, case in enumerate(CASES):
            inputs = [torch.from_numpy(a) for a in random_inputs(spec, case, model.config.vocab_size, seed=number)]
            inputs[1][0, -1:] = False  # a padded source position (src_mask is the second input of both graphs)
            arrays = [a.numpy() for a in inputs]
            got = blank_unspecified(spec, arrays, [t.numpy() for t in run_wrapper(fused, inputs)])
            want = blank_unspecified(spec, arrays, [t.numpy() for t in run_wrapper(plain, inputs)])
            for name, g, w in zip(spec.output_names, got, want, strict=True):
                np.testing.assert_allclose(g, w, rtol=0, atol=2e-6, err_msg=f"{spec.name}.{name} at {case}")


def tiny_classifier(**changes) -> tx.SentimentClassifier:
    torch.manual_seed(0)
    return tx.SentimentClassifier(tx.ClassifierConfig(vocab_size=31, d_model=16, n_heads=4, n_layers=2, d_ff=24,
                                                      dropout=0.0, max_len=32, temperature=1.7, **changes)).eval()


@pytest.mark.parametrize("pooling", ["mean", "max"])
@pytest.mark.parametrize("variant", ["paper", "pre-LN", "unscaled, no positions"])
def test_the_fused_classifier_computes_what_the_model_computes(variant, pooling):
    model = tiny_classifier(pooling=pooling, **VARIANTS[variant])
    spec = classifier_graph(ModelShape.from_config("classifier", vars(model.config)))
    fused, plain = wrapper_for(model, spec, fused_attention=True), wrapper_for(model, spec)
    assert type(fused) is not type(plain)
    ids, mask = (torch.from_numpy(a) for a in random_inputs(spec, {BATCH: 4, SEQ: 9}, 31, seed=3))
    mask[1, 5:] = False  # padding
    mask[2] = False  # an all-pad row: pooled to zeros either way
    torch.testing.assert_close(run_wrapper(fused, [ids, mask])[0], run_wrapper(plain, [ids, mask])[0], rtol=0,
                               atol=2e-6)


def fused_nodes(path: Path) -> int:
    graph = onnx.load(str(path)).graph
    return sum(n.op_type == "MultiHeadAttention" and n.domain == "com.microsoft" for n in graph.node)


def test_served_graphs_are_fused_and_explaining_ones_are_not():
    layers = 2  # export_fixtures.build_translation_dir and build_sentiment_dir
    translate, sentiment = exported("translate") / "onnx", exported("sentiment") / "onnx"
    for precision in ("fp32", "int8"):
        assert fused_nodes(translate / f"encoder.{precision}.onnx") == layers
        assert fused_nodes(translate / f"decoder.{precision}.onnx") == 2 * layers  # self and cross, per layer
        assert fused_nodes(sentiment / f"classifier.{precision}.onnx") == layers
        explaining = [translate / f"{graph}_explain.{precision}.onnx" for graph in ("encoder", "decoder")]
        for path in [*explaining, sentiment / f"classifier_explain.{precision}.onnx"]:
            assert fused_nodes(path) == 0


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["pre-LN", "unscaled, no positions", "untied embeddings, fewer decoder layers"])
def test_fused_graphs_match_the_model_through_onnxruntime(variant, tmp_path: Path):
    """The export's own validation (onnxruntime vs the model's unfused code at several shapes, past 0 and 11
    included) passes for the layouts the shipped models do not have; the paper layout is the fixtures'."""
    model = tiny_model(**VARIANTS[variant])
    config = {k: v for k, v in vars(model.config).items()}
    for spec in graphs_for(shape_of(model)):
        if spec.name not in ("encoder", "decoder"):
            continue
        path = tmp_path / spec.file_name("fp32")
        export_graph(model, spec, path, graph_metadata(spec, "fp32", config, ""))
        check = validate_graph(model, spec, path, "fp32")
        assert check.ok, check.problems
        assert max(check.max_diff.values()) < 1e-5
        assert np.isfinite(list(check.max_diff.values())).all()


@pytest.mark.slow
def test_a_pre_ln_unscaled_classifier_matches_through_onnxruntime(tmp_path: Path):
    model = tiny_classifier(pooling="mean", pre_norm=True, scale_scores=False)
    spec = classifier_graph(ModelShape.from_config("classifier", vars(model.config)))
    path = tmp_path / spec.file_name("fp32")
    export_graph(model, spec, path, graph_metadata(spec, "fp32", vars(model.config), ""))
    assert fused_nodes(path) == 2
    check = validate_graph(model, spec, path, "fp32")
    assert check.ok, check.problems


@pytest.mark.slow
def test_the_traced_fallback_exports_plain_ops_and_if_stale_keeps_it(tmp_path: Path):
    model = tiny_model()
    spec = decoder_graph(shape_of(model))
    path = tmp_path / spec.file_name("fp32")
    export_graph(model, spec, path, graph_metadata(spec, "fp32", vars(model.config), ""), fused_attention=False)
    assert not [n for n in onnx.load(str(path)).graph.node if n.domain == "com.microsoft"]
    assert validate_graph(model, spec, path, "fp32").ok


def test_if_stale_asks_for_the_layout_it_was_given(tmp_path: Path):
    import json
    import shutil

    from export.report import FUSED_LAYOUT, TRACED_LAYOUT, stale_reason
    from runtime.spec import REPORT_FILE

    model_dir = tmp_path / "m"
    shutil.copytree(exported("translate"), model_dir)
    files = [p.name for p in (model_dir / "onnx").glob("*.onnx")]
    assert stale_reason(model_dir, ["fp32", "int8"], files) is None
    assert "now 'traced attention'" in stale_reason(model_dir, ["fp32"], files, TRACED_LAYOUT)
    report_path = model_dir / "onnx" / REPORT_FILE
    report_path.write_text(json.dumps(json.loads(report_path.read_text()) | {"graph_layout": TRACED_LAYOUT}))
    assert stale_reason(model_dir, ["fp32"], files, TRACED_LAYOUT) is None
    assert f"now {FUSED_LAYOUT!r}" in stale_reason(model_dir, ["fp32"], files)
