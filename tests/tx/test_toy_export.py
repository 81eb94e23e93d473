"""A toy model with both ablation knobs off (no positional encoding, unscaled attention) goes through the project's
exporter like any other: every graph validated against PyTorch at fp32 and int8, and onnxruntime gives PyTorch's
outputs on the held-out sequences (tx.toy.serving), so the knobs live in the traced graphs, not only in PyTorch."""
import json

import pytest

from export.pipeline import ExportOptions, export_model_dir
from runtime import OnnxTranslator
from runtime.toy import DIRECTION
from tx.toy.engine import RunConfig, train
from tx.toy.serving import serve_check
from tx.toy.ship import ship

pytestmark = pytest.mark.slow


def test_a_model_with_the_knobs_off_exports_and_runs_as_pytorch_does(tmp_path):
    config = RunConfig(task="reverse", length=5, vocab=5, positional=False, scale_scores=False, max_steps=60,
                       threads=1, snapshot_every=0)
    model_dir = ship(train(config), config, tmp_path / "model")
    stored = json.loads((model_dir / "config.json").read_text())
    assert stored["config"]["positional"] is False and stored["config"]["scale_scores"] is False
    # fp32 + int8, served graphs only: what the Train page's export makes (--no-walkthrough --no-experiments)
    options = ExportOptions(precisions=("fp32", "int8"), check_quality=False, walkthrough=False, experiments=False)
    report = export_model_dir(model_dir, options, log=lambda line: None)
    assert report.ok, report.failures
    checked = serve_check(model_dir, threads=1, runs=2, warmup=0)
    assert checked["systems"]["onnxruntime fp32"]["same_as_pytorch"] == 1.0
    # without positions the encoder sees a bag of symbols: a source and its reverse give the same output
    translator = OnnxTranslator(model_dir, provider="cpu")
    forward, backward = translator.translate(["0 1 2 3 4", "4 3 2 1 0"], *DIRECTION, method="greedy")
    assert forward.token_ids == backward.token_ids
