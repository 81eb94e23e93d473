"""The tiny exported models (export_fixtures.py) opened for graph-level checks: the PyTorch model and its shape,
a graph's spec, an onnxruntime session per file, one graph run; and the shapes none of the export examples had.
Shared by tests/export/test_export.py (fp32 values) and test_quantize.py (int8)."""
from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import onnxruntime as ort
import torch
from export_fixtures import exported

import tx
from runtime import spec

GRAPHS = [("sentiment", "classifier"), ("sentiment", "classifier_explain"), ("translate", "encoder"),
          ("translate", "decoder"), ("translate", "encoder_explain"), ("translate", "decoder_explain")]
# Batch 3 and lengths 7 / 29, past 0 / 11: none of them the export example's (batch 2, lengths 9/3, past 5).
NEW_SHAPES = [
    {spec.BATCH: 3, spec.SEQ: 7, spec.SRC: 7, spec.TGT: 1, spec.PAST: 0},
    {spec.BATCH: 3, spec.SEQ: 29, spec.SRC: 29, spec.TGT: 1, spec.PAST: 11},
    {spec.BATCH: 3, spec.SEQ: 29, spec.SRC: 7, spec.TGT: 29, spec.PAST: 11},
    {spec.BATCH: 3, spec.SEQ: 7, spec.SRC: 29, spec.TGT: 7, spec.PAST: 0},
]
ATOL = 1e-4


@functools.cache
def loaded(task: str) -> tuple[Path, torch.nn.Module, spec.ModelShape]:
    model_dir = exported(task)
    stored = tx.read_model_config(model_dir)
    return model_dir, tx.load_model_dir(model_dir), spec.ModelShape.from_config(stored["kind"], stored["config"])


def spec_of(task: str, graph: str):
    _, _, shape = loaded(task)
    return next(s for s in spec.graphs_for(shape) if s.name == graph)


@functools.cache
def session(path: Path) -> ort.InferenceSession:
    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])


def run_onnx(task: str, graph: str, precision: str, inputs: list[np.ndarray]) -> list[np.ndarray]:
    model_dir, _, _ = loaded(task)
    graph_spec = spec_of(task, graph)
    sess = session(model_dir / "onnx" / graph_spec.file_name(precision))
    return sess.run(graph_spec.output_names, dict(zip(graph_spec.input_names, inputs, strict=True)))
