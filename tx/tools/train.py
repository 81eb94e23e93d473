"""python -m tx train {translate,sentiment,pretrain} [--config FILE.json] [--set key=value ...] [--resume]

Trains on the prepared data (`python -m tx.data prepare`), writing to the run's out_dir:
last.pt / best.pt (full training state), metrics.csv, tensorboard/ (when installed), and at
the end model/ — the shipped form (config.json, model.pt, tokenizer.json, metrics.csv).
Several processes: `torchrun --nproc_per_node=N -m tx train ...` (gloo on CPU, nccl on GPU).

Examples:
    python -m tx train translate --set max_time=2700 --set d_model=256
    python -m tx train translate --resume --set max_time=3600     # continue the same run
    python -m tx train sentiment --set out_dir=runs/sent-small --set n_layers=1
"""
from __future__ import annotations

import json
import sys
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

import torch

from ..checkpoint import CheckpointError, build_model, load_checkpoint
from ..data import DataError
from ..tasks import TASKS
from ..tokenizer import Tokenizer
from ..trainer import TrainConfig, Trainer
from . import tool_parser
from .settings import apply_overrides, load_config_file


def build_run(task_name: str, config: TrainConfig, resume: bool, quiet: bool = False):
    """(task, model) for a fresh run, or rebuilt from out_dir/last.pt when resuming."""
    _, task_cls = TASKS[task_name]
    if resume:
        ckpt = load_checkpoint(Path(config.out_dir) / "last.pt")
        task = task_cls(config, tokenizer=Tokenizer.from_str(ckpt["tokenizer"]), quiet=quiet)
        model = build_model(ckpt["kind"], ckpt["config"], source=str(Path(config.out_dir) / "last.pt"))
        return task, model
    torch.manual_seed(config.seed)
    task = task_cls(config, quiet=quiet)
    torch.manual_seed(config.seed)  # the same initial weights whatever the tokenizer training consumed
    return task, task.build_model()


def make_config(task_name: str, config_file: Path | None, overrides: list[str], resume: bool) -> TrainConfig:
    config_cls, _ = TASKS[task_name]
    values: dict[str, Any] = {}
    if config_file is not None:
        values.update(load_config_file(config_cls, config_file))
    out_dir = apply_overrides(config_cls, values, overrides).get("out_dir", config_cls.out_dir)
    if resume:  # the run's own settings, then what this command line changes (e.g. a longer max_time)
        saved = load_checkpoint(Path(out_dir) / "last.pt").get("train_config", {})
        values = {**saved, **values}
    return config_cls(**apply_overrides(config_cls, values, overrides))


def main(argv: list[str] | None = None) -> int:
    parser = tool_parser("train", __doc__)
    parser.add_argument("task", choices=sorted(TASKS))
    parser.add_argument("--config", type=Path, help="JSON file of settings (then --set on top)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override one setting (repeatable); see --list for the settings")
    parser.add_argument("--resume", action="store_true", help="continue the run in out_dir from last.pt")
    parser.add_argument("--list", action="store_true", help="print the settings with their defaults and exit")
    args = parser.parse_args(argv)
    config_cls, _ = TASKS[args.task]
    if args.list:
        for f in fields(config_cls):
            print(f"{f.name} = {f.default!r}")
        return 0
    try:
        config = make_config(args.task, args.config, args.set, args.resume)
        task, model = build_run(args.task, config, args.resume)
        trainer = Trainer(config, model, task, asdict(config), resume=args.resume)
        n_params = sum(p.numel() for p in model.parameters())
        if trainer.rank == 0:
            print(f"{args.task}: {n_params / 1e6:.2f}M parameters on {trainer.device} "
                  f"({trainer.world} process{'es' if trainer.world > 1 else ''}); writing to {config.out_dir}",
                  flush=True)
        result = trainer.fit()
    except (ValueError, FileNotFoundError, CheckpointError, DataError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if trainer.rank == 0:
        print(json.dumps(result, indent=2))
        print(f"model directory: {Path(config.out_dir) / 'model'}")
    return 0
