"""Export one graph spec of a tx model to a single-file ONNX model (fp32).

torch.onnx's dynamo exporter (torch.export underneath), opset 20: opset 23 turns SDPA into
the ONNX Attention op, which onnxruntime 1.31 on CPU rejects with a (B, 1, 1, S) padding mask.
The example inputs have batch 2 and lengths >= 2: an example dim of 1 gets specialised to 1.
"""
from __future__ import annotations

import contextlib
import io
import logging
import tempfile
import time
import warnings
from pathlib import Path

import onnx
import torch
from torch import nn
from torch.export import Dim

from runtime.spec import (
    BATCH,
    DYNAMIC_AXES,
    META_GRAPH,
    META_MAX_LEN,
    META_PRECISION,
    META_SPEC_VERSION,
    META_TOKENIZER_SHA256,
    META_VOCAB_SIZE,
    PAST,
    SEQ,
    SPEC_VERSION,
    SRC,
    TGT,
    GraphSpec,
)
from tx.checkpoint import atomic_write

from .feeds import random_inputs
from .fused_attention import TRANSLATIONS as FUSED_TRANSLATIONS
from .fused_attention import tidy_fused_outputs
from .graph_modules import wrapper_for
from .torchlib_registry import built_once

DEFAULT_OPSET = 20
EXPORTER = "torch.onnx.export(dynamo=True)"
# Distinct sizes >= 2 so no dynamic axis is specialised or unified with another by accident.
EXAMPLE_AXES = {BATCH: 2, SEQ: 9, SRC: 9, TGT: 3, PAST: 5}


def graph_metadata(spec: GraphSpec, precision: str, config: dict, tokenizer_sha256: str) -> dict[str, str]:
    """What the runtime checks before trusting a file (see spec.META_*)."""
    return {
        META_GRAPH: spec.name,
        META_PRECISION: precision,
        META_SPEC_VERSION: SPEC_VERSION,
        META_VOCAB_SIZE: str(config["vocab_size"]),
        META_MAX_LEN: str(config["max_len"]),
        META_TOKENIZER_SHA256: tokenizer_sha256,
    }


def set_metadata(model: onnx.ModelProto, metadata: dict[str, str]) -> None:
    kept = [p for p in model.metadata_props if p.key not in metadata]
    del model.metadata_props[:]
    model.metadata_props.extend(kept)
    for key, value in metadata.items():
        model.metadata_props.add(key=key, value=value)


# Library loggers held back while a graph is exported: torch's exporter warns per graph, and onnxscript's optimiser
# and onnx_ir's passes log every rewrite at INFO (72 lines for the sentiment model, 331 for both shipped models),
# which reach the console because importing onnxruntime's MatMulNBits quantiser calls logging.basicConfig(INFO).
QUIET_LOGGERS = {"torch": logging.ERROR, "onnxscript": logging.WARNING, "onnx_ir": logging.WARNING}


@contextlib.contextmanager
def quiet_exporter():
    """The dynamo exporter prints progress lines and warnings per graph; keep the CLI's output readable."""
    loggers = {logging.getLogger(name): level for name, level in QUIET_LOGGERS.items()}
    previous = {logger: logger.level for logger in loggers}
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        for logger, level in loggers.items():
            logger.setLevel(level)
        try:
            yield
        finally:
            for logger, level in previous.items():  # the caller's logging is not ours to change
                logger.setLevel(level)


def export_graph(model: nn.Module, spec: GraphSpec, path: str | Path, metadata: dict[str, str],
                 opset: int = DEFAULT_OPSET, fused_attention: bool = True) -> float:
    """Write `spec`'s graph of `model` to `path` (weights inside the file); returns seconds taken.
    fused_attention: the served graphs as export/fused_graphs.py rebuilds them (False: traced as they are)."""
    start = time.perf_counter()
    wrapper = wrapper_for(model, spec, fused_attention)
    vocab = model.config.vocab_size
    example = [torch.from_numpy(a) for a in random_inputs(spec, EXAMPLE_AXES, vocab, seed=0)]
    dims = {name: Dim(name) for name in DYNAMIC_AXES}  # one object per axis name: equal names = equal sizes
    dynamic = wrapper.pack([{i: dims[a] for i, a in t.dynamic_axes().items()} for t in spec.inputs])
    with tempfile.TemporaryDirectory() as tmp, quiet_exporter(), built_once():  # its ATen table: built once
        raw = Path(tmp) / "graph.onnx"
        torch.onnx.export(wrapper, wrapper.pack(example), str(raw), dynamo=True, external_data=False,
                          opset_version=opset, dynamic_shapes=dynamic, input_names=spec.input_names,
                          output_names=spec.output_names, optimize=True, verbose=False,
                          custom_translation_table=FUSED_TRANSLATIONS)
        exported = onnx.load(str(raw))
    tidy_fused_outputs(exported)
    set_metadata(exported, metadata)
    exported.doc_string = f"tx {spec.name}: inputs {spec.input_names} -> outputs {spec.output_names}"
    atomic_write(path, lambda tmp_path: onnx.save(exported, tmp_path))
    return time.perf_counter() - start
