"""What a training run writes into its out_dir besides the checkpoints: metrics.csv (one row per evaluation),
TensorBoard scalars (when tensorboard is installed), and the weight snapshots of the last evaluations that
checkpoint averaging reads at the end. Only rank 0 calls these.
"""
from __future__ import annotations

import csv
import os
from pathlib import Path
from typing import Any

import torch
from torch import nn

METRICS_FILE = "metrics.csv"
METRICS_FIELDS = ["step", "epoch", "train_loss", "lr", "tokens_per_s", "wall_time"]  # first, then the task's metrics
SNAPSHOTS = "snapshots"


def append_metrics(out: Path, row: dict[str, Any]) -> None:
    """Add one evaluation's row to out/metrics.csv, dropping the rows from its step on (a resume redoes them)."""
    path = out / METRICS_FILE
    old_rows: list[dict[str, Any]] = []
    if path.is_file():
        with open(path, newline="") as f:
            old_rows = [r for r in csv.DictReader(f) if int(r["step"]) < row["step"]]
    fields = list(dict.fromkeys([*METRICS_FIELDS, *(k for r in old_rows for k in r), *row]))
    tmp = path.with_suffix(".csv.tmp")
    with open(tmp, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        writer.writerows([*old_rows, row])
    os.replace(tmp, path)


class TensorBoard:
    """The numbers of each metrics row as TensorBoard scalars in out/tensorboard; nothing when it is not installed."""

    def __init__(self, out: Path):
        self.out, self.writer, self.tried = out, None, False

    def log(self, row: dict[str, Any], step: int) -> None:
        if not self.tried:
            self.tried = True
            try:
                from torch.utils.tensorboard import SummaryWriter

                self.writer = SummaryWriter(str(self.out / "tensorboard"))
            except ImportError:  # tensorboard is optional
                pass
        if self.writer is not None:
            for k, v in row.items():
                if k != "step" and isinstance(v, int | float):
                    self.writer.add_scalar(k, v, step)


def keep_snapshot(out: Path, model: nn.Module, step: int, keep: int) -> None:
    """Save the weights of this evaluation and keep only the last `keep` (for averaging at the end)."""
    folder = out / SNAPSHOTS
    folder.mkdir(exist_ok=True)
    torch.save({k: v.detach().cpu() for k, v in model.state_dict().items()}, folder / f"{step:08d}.pt")
    for old in sorted(folder.glob("*.pt"))[:-keep]:
        old.unlink()


def averaged_weights(out: Path, reference: dict[str, torch.Tensor]) -> dict[str, torch.Tensor] | None:
    """The mean of the kept snapshots in the dtypes of `reference` (a state_dict), or None with fewer than two."""
    files = sorted((out / SNAPSHOTS).glob("*.pt"))
    if len(files) < 2:
        return None
    total: dict[str, torch.Tensor] = {}
    for f in files:
        for k, v in torch.load(f, map_location="cpu", weights_only=True).items():
            total[k] = total.get(k, 0) + v.float()
    return {k: (v / len(files)).to(reference[k].dtype) for k, v in total.items()}
