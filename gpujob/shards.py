"""The chosen weights as shards small enough to come back from the GPU machine (≤ 16 MiB a file), and back.

A model directory (config.json, model.pt, tokenizer.json, metrics.csv) becomes `manifest.json` (config, meta,
tokenizer, every tensor's shape, the weights' sha256 and each shard's, plus what the job wants to report) and
`weights.pt.000`, `.001`, ...: the state_dict, stored in `dtype` (float16 halves what travels and what ships), cut
by `gpujob.pieces`. Reading them back checks every hash, the shapes against the manifest and against a model built
from the config, and runs one forward pass.
"""
from __future__ import annotations

import io
import json
import tempfile
from pathlib import Path
from typing import Any

import torch
from torch import nn

from runtime.model_files import CONFIG_FILE, TOKENIZER_FILE, WEIGHTS_FILE
from tx.checkpoint import build_model, cast_state
from tx.run_files import METRICS_FILE

from .pieces import MiB, Whole, join_pieces, split_file
from .returns import MANIFEST  # defined there, so that finding returned sets needs no torch; still shards.MANIFEST

SHARD_BYTES = 15 * MiB  # under the 16 MiB a returned file may have, so that 4 shards + the manifest fit 64 MiB
DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32}


class ShardError(ValueError):
    """The shards do not give back the model their manifest describes."""


def write_shards(model_dir: Path, out_dir: Path, dtype: str = "float16", shard_bytes: int = SHARD_BYTES,
                 report: dict[str, Any] | None = None) -> dict[str, Any]:
    """Shard model_dir's weights into out_dir with manifest.json; returns the manifest."""
    config = json.loads((model_dir / CONFIG_FILE).read_text())
    state = torch.load(model_dir / WEIGHTS_FILE, map_location="cpu", weights_only=True)
    state = cast_state(state, DTYPES[dtype])
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out_dir) as tmp:
        whole_path = Path(tmp) / WEIGHTS_FILE
        buffer = io.BytesIO()
        torch.save(state, buffer)
        whole_path.write_bytes(buffer.getvalue())
        whole = split_file(whole_path, out_dir, shard_bytes)
    metrics = model_dir / METRICS_FILE
    manifest = {"format": 1, "kind": config["kind"], "config": config["config"], "meta": config.get("meta", {}),
                "dtype": dtype, "shapes": {k: list(v.shape) for k, v in state.items()}, "weights": whole.to_json(),
                "tokenizer": (model_dir / TOKENIZER_FILE).read_text(encoding="utf-8"),
                "metrics_csv": metrics.read_text() if metrics.is_file() else "", "report": report or {}}
    (out_dir / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest


def read_manifest(folder: Path) -> dict[str, Any]:
    path = folder / MANIFEST
    if not path.is_file():
        raise ShardError(f"{path}: not found (the first command that hands back weights brings it)")
    return json.loads(path.read_text())


def check_shapes(manifest: dict[str, Any], state: dict[str, torch.Tensor]) -> nn.Module:
    """The state's shapes against the manifest's and against the model its config builds; returns that model."""
    shapes = {k: list(v.shape) for k, v in state.items()}
    if shapes != manifest["shapes"]:
        wrong = sorted(k for k in set(shapes) | set(manifest["shapes"]) if shapes.get(k) != manifest["shapes"].get(k))
        raise ShardError(f"tensor shapes differ from the manifest's: {wrong[:5]}")
    try:
        return build_model(manifest["kind"], manifest["config"], state, source="the shards").eval()
    except ValueError as e:  # CheckpointError is a ValueError: the config and the weights disagree
        raise ShardError(str(e)) from e


@torch.no_grad()
def forward_check(model: nn.Module) -> None:
    """One teacher-forced pass on a few ids: the logits must be finite and of the vocabulary's width."""
    src = torch.tensor([[4, 7, 9, 2]]) % model.config.vocab_size
    tgt = torch.tensor([[1, 8, 5]]) % model.config.vocab_size
    logits = model(src, tgt)
    if logits.shape[-1] != model.config.tgt_vocab_size or not torch.isfinite(logits).all():
        raise ShardError(f"forward pass gave logits of shape {tuple(logits.shape)}, finite: "
                         f"{bool(torch.isfinite(logits).all())}")


def read_shards(folders: list[Path]) -> tuple[dict[str, Any], dict[str, torch.Tensor], nn.Module]:
    """(manifest, state_dict, model) from shards spread over `folders` (one per command that brought some back)."""
    manifest = next((read_manifest(f) for f in folders if (f / MANIFEST).is_file()), None)
    if manifest is None:
        raise ShardError(f"no {MANIFEST} in {', '.join(map(str, folders))}")
    whole = Whole.from_json(manifest["weights"])
    with tempfile.TemporaryDirectory() as tmp:
        try:
            path = join_pieces(whole, folders, Path(tmp) / whole.name)
        except ValueError as e:
            raise ShardError(str(e)) from e
        state = torch.load(path, map_location="cpu", weights_only=True)
    model = check_shapes(manifest, state)
    forward_check(model)
    return manifest, state, model
