"""A trained toy model -> a model directory in the shipped layout (config.json with translation meta, model.pt,
tokenizer.json), so `python -m export DIR` exports it and `runtime.OnnxTranslator` serves it like the translator.

Also writes heldout.tsv (source<TAB>target, tokens space-separated): the examples the run never trained on,
which `tx.toy.serving` translates through PyTorch and onnxruntime after the export.
"""
from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from ..checkpoint import save_model_dir
from .engine import RunConfig, RunResult
from .vocab import DIRECTION

HELD_OUT_FILE = "heldout.tsv"


def ship(result: RunResult, config: RunConfig, directory: Path) -> Path:
    positions = result.model.config.max_len
    meta = {"task": "translate", "directions": [list(DIRECTION)], "max_src_len": positions,
            "toy": {"run": asdict(config), "reason": result.reason, "step": result.step,
                    "seconds": round(result.seconds, 2), "held_out_accuracy": result.accuracy}}
    save_model_dir(directory, result.model, result.tokenizer.to_str(), meta)
    rows = [f"{' '.join(src)}\t{' '.join(tgt)}" for src, tgt in result.source.held_out]
    (directory / HELD_OUT_FILE).write_text("\n".join(rows) + "\n", encoding="utf-8")
    return directory


def read_held_out(directory: Path) -> list[tuple[str, str]]:
    lines = (directory / HELD_OUT_FILE).read_text(encoding="utf-8").splitlines()
    return [tuple(line.split("\t")) for line in lines if line]  # type: ignore[misc]
