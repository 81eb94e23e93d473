"""Where the models are: the root (`models/`, or TX_MODELS_DIR, which the tests point at tiny exported models), each
task's directory and a version stamp of its files. Pure (no Streamlit): `inputs` and the feature packages' pure
modules read models through it; `models` re-exports it beside the loading and the messages."""
from __future__ import annotations

import os
from pathlib import Path

from runtime.model_files import CONFIG_FILE, TOKENIZER_FILE, WEIGHTS_FILE
from runtime.spec import ONNX_DIR, REPORT_FILE

MODELS_ENV = "TX_MODELS_DIR"


def models_root() -> Path:
    return Path(os.environ.get(MODELS_ENV) or "models")


def model_dir(task: str) -> Path:
    return models_root() / task


def has_model(task: str) -> bool:
    """Whether the task's directory holds a model (its config.json), exported or not."""
    return (model_dir(task) / CONFIG_FILE).is_file()


def export_report_path(task: str) -> Path:
    return model_dir(task) / ONNX_DIR / REPORT_FILE


def stamp(task: str, *names: str) -> tuple[int, ...]:
    """Changes whenever the model, its export, or the named files of its directory change: a cache key."""
    d = model_dir(task)
    files = [d / CONFIG_FILE, d / WEIGHTS_FILE, d / TOKENIZER_FILE, export_report_path(task),
             *(d / name for name in names)]
    return tuple(p.stat().st_mtime_ns if p.exists() else 0 for p in files)


def first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0][:500] if text else type(e).__name__
