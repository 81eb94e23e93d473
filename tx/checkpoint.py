"""Saving and loading models: config as a plain dict + state_dict, nanoGPT style.

Two on-disk forms:
- a checkpoint file (`save_checkpoint` / `load_checkpoint`): one torch file holding
  {"kind", "config", "model", **extra}; training adds optimizer state, step, RNG, tokenizer.
- a model directory (`save_model_dir` / `load_model_dir`), what we ship: `config.json`,
  `model.pt` (state_dict only) and `tokenizer.json`.
Every load uses `torch.load(..., weights_only=True)` and turns any failure into one
`CheckpointError` that names the file and says what is wrong.
"""
from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch
from torch import nn

from runtime.files import atomic_write
from runtime.model_files import CONFIG_FILE, TOKENIZER_FILE, WEIGHTS_FILE, CheckpointError, read_model_config

from .config import ClassifierConfig, MaskedLMConfig, Seq2SeqConfig
from .model import MaskedLanguageModel, SentimentClassifier, Seq2SeqTransformer

# kind name stored in files -> (config class, model class)
MODEL_KINDS: dict[str, tuple[type, type]] = {
    "seq2seq": (Seq2SeqConfig, Seq2SeqTransformer),
    "classifier": (ClassifierConfig, SentimentClassifier),
    "mlm": (MaskedLMConfig, MaskedLanguageModel),
}
__all__ = ["CONFIG_FILE", "WEIGHTS_FILE", "TOKENIZER_FILE", "CheckpointError", "read_model_config", "MODEL_KINDS",
           "build_model", "save_checkpoint", "load_checkpoint", "load_model", "cast_state", "save_model_dir",
           "load_model_dir", "model_kind"]


def model_kind(model: nn.Module) -> str:
    for kind, (_, cls) in MODEL_KINDS.items():
        if isinstance(model, cls):
            return kind
    raise TypeError(f"not a tx model: {type(model).__name__}")


def build_model(kind: str, config: dict[str, Any], state_dict: dict | None = None, source: str = "?") -> nn.Module:
    """Rebuild `Config(**config)` and its model, loading `state_dict` if given."""
    if kind not in MODEL_KINDS:
        raise CheckpointError(f"{source}: unknown model kind {kind!r} (expected one of {sorted(MODEL_KINDS)})")
    config_cls, model_cls = MODEL_KINDS[kind]
    try:
        model = model_cls(config_cls(**config))
    except (TypeError, ValueError) as e:
        raise CheckpointError(f"{source}: config does not describe a valid {kind} model: {e}") from e
    if state_dict is not None:
        try:
            model.load_state_dict(state_dict)
        except RuntimeError as e:
            first = str(e).strip().splitlines()
            raise CheckpointError(f"{source}: weights do not match the config: {' '.join(first[:3])}") from e
    return model


def _torch_load(path: Path) -> Any:
    if not path.is_file():
        raise CheckpointError(f"{path}: file not found")
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # truncated zip, pickle of a forbidden type, not a torch file at all
        raise CheckpointError(f"{path}: not a readable PyTorch file ({type(e).__name__}: {str(e)[:200]})") from e


def save_checkpoint(path: str | Path, model: nn.Module, **extra: Any) -> None:
    """One file with kind, config, weights and whatever the caller adds (optimizer state, step, ...)."""
    payload = {"kind": model_kind(model), "config": asdict(model.config), "model": model.state_dict(), **extra}
    atomic_write(path, lambda tmp: torch.save(payload, tmp))


def load_checkpoint(path: str | Path, kind: str | None = None) -> dict[str, Any]:
    """Read and check a checkpoint file; `kind` ("seq2seq"/"classifier") rejects the other task's files."""
    path = Path(path)
    ckpt = _torch_load(path)
    if not isinstance(ckpt, dict) or not {"kind", "config", "model"} <= ckpt.keys():
        raise CheckpointError(f"{path}: not a tx checkpoint (expected keys kind, config, model)")
    if kind is not None and ckpt["kind"] != kind:
        raise CheckpointError(f"{path}: holds a {ckpt['kind']} model, expected {kind}")
    return ckpt


def load_model(path: str | Path, kind: str | None = None) -> nn.Module:
    """Rebuild the model stored in a checkpoint file, in eval mode."""
    ckpt = load_checkpoint(path, kind)
    return build_model(ckpt["kind"], ckpt["config"], ckpt["model"], source=str(path)).eval()


def cast_state(state: dict[str, torch.Tensor], dtype: torch.dtype) -> dict[str, torch.Tensor]:
    """Floating-point tensors cast to dtype; tensors that shared memory (tied embeddings) still share it,
    so the tied matrix is stored once, not once per name."""
    cast: dict[int, torch.Tensor] = {}
    out = {}
    for name, tensor in state.items():
        if not tensor.is_floating_point():
            out[name] = tensor
            continue
        key = tensor.untyped_storage().data_ptr()
        if key not in cast:
            cast[key] = tensor.to(dtype)
        out[name] = cast[key]
    return out


def save_model_dir(directory: str | Path, model: nn.Module, tokenizer_json: str | None = None,
                   meta: dict[str, Any] | None = None, weights_dtype: torch.dtype | None = None) -> None:
    """Write the shipped form: config.json, model.pt (state_dict) and optionally tokenizer.json.

    `meta` goes into config.json beside kind/config: what the text-level wrappers need to
    know (translation directions and language tags, class labels, ...).
    `weights_dtype`: store floating-point weights in this dtype (float16 halves what we ship).
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    config = {"kind": model_kind(model), "config": asdict(model.config), "meta": meta or {}}
    atomic_write(directory / CONFIG_FILE, lambda tmp: Path(tmp).write_text(json.dumps(config, indent=2) + "\n"))
    state = model.state_dict()
    if weights_dtype is not None:  # e.g. float16 to halve the shipped file; loading casts back to the model's dtype
        state = cast_state(state, weights_dtype)
    atomic_write(directory / WEIGHTS_FILE, lambda tmp: torch.save(state, tmp))
    if tokenizer_json is not None:
        atomic_write(directory / TOKENIZER_FILE, lambda tmp: Path(tmp).write_text(tokenizer_json, encoding="utf-8"))


def load_model_dir(directory: str | Path, kind: str | None = None) -> nn.Module:
    """Rebuild the model of a shipped model directory, in eval mode."""
    meta = read_model_config(directory, kind)
    weights_path = Path(directory) / WEIGHTS_FILE
    state = _torch_load(weights_path)
    if not isinstance(state, dict):
        raise CheckpointError(f"{weights_path}: expected a state_dict")
    return build_model(meta["kind"], meta["config"], state, source=str(weights_path)).eval()
