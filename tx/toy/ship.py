"""A trained toy model -> a model directory in the shipped layout (config.json with translation meta, model.pt,
tokenizer.json), so `python -m export DIR` exports it and `runtime.OnnxTranslator` serves it like the translator.

Also writes heldout.tsv (runtime.toy.HELD_OUT_FILE: source<TAB>target, tokens space-separated): the examples the
run never trained on, which `tx.toy.serving` translates through PyTorch and onnxruntime after the export.
"""
from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from runtime.toy import DIRECTION, write_held_out

from ..checkpoint import save_model_dir
from .engine import RunConfig, RunResult


def ship(result: RunResult, config: RunConfig, directory: Path) -> Path:
    positions = result.model.config.max_len
    meta = {"task": "translate", "directions": [list(DIRECTION)], "max_src_len": positions,
            "toy": {"run": asdict(config), "reason": result.reason, "step": result.step,
                    "seconds": round(result.seconds, 2), "held_out_accuracy": result.accuracy}}
    save_model_dir(directory, result.model, result.tokenizer.to_str(), meta)
    write_held_out(directory, result.source.held_out)
    return directory
