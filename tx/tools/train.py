"""python -m tx train {translate,sentiment,pretrain} [--config FILE.json] [--set key=value ...] [--resume]

Trains on the prepared data (`python -m corpus prepare`), writing to the run's out_dir:
last.pt / best.pt (full training state), metrics.csv, tensorboard/ (when installed), and at
the end model/ — the shipped form (config.json, model.pt, tokenizer.json, metrics.csv).
Several processes: `torchrun --nproc_per_node=N -m tx train ...` (gloo on CPU, nccl on GPU).

Settings: `--set key=value` (the model's as model.key), or a JSON file of them (`--config`, the model's
nested: {"lr": 5e-4, "model": {"d_model": 512}}); `--list` prints them with their defaults.

Examples:
    python -m tx train translate --set max_time=2700 --set model.d_model=256
    python -m tx train translate --resume --set max_time=3600     # continue the same run
    python -m tx train sentiment --set out_dir=runs/sent-small --set model.n_layers=1
"""
from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch

from runtime.tsv import DataError

from ..checkpoint import CheckpointError, build_model
from ..tasks import TASKS
from ..tokenizer import Tokenizer
from ..trainer import LAST, MODEL_DIR, TrainConfig, Trainer, read_last
from . import tool_parser
from .settings import command_line, flatten, nest


def make_config(task_name: str, config_file: Path | None, overrides: list[str], resume: bool = False
                ) -> tuple[TrainConfig, dict[str, Any] | None]:
    """The run's settings, and out_dir/last.pt when resuming (read once here; build_run and the Trainer take
    the rest of it): the run's own settings, then what this command line changes (e.g. a longer max_time)."""
    config_cls, _ = TASKS[task_name]
    values = command_line(config_cls, config_file, overrides)
    out_dir = values.get("out_dir", config_cls.out_dir)
    last = read_last(out_dir) if resume else None
    if last is not None:
        values = {**flatten(last["train_config"]), **values}
    try:
        return config_cls(**nest(values)), last
    except TypeError as e:  # only a checkpoint's settings can hold names the command line would have refused
        raise ValueError(f"{Path(out_dir) / LAST}: its settings are not this version's ({e})") from e


def build_run(task_name: str, config: TrainConfig, last: dict[str, Any] | None = None, quiet: bool = False):
    """(task, model) for a fresh run, or rebuilt from the run's last checkpoint (`last`) when resuming."""
    _, task_cls = TASKS[task_name]
    if last is not None:
        task = task_cls(config, tokenizer=Tokenizer.from_str(last["tokenizer"]), quiet=quiet)
        return task, build_model(last["kind"], last["config"], source=str(Path(config.out_dir) / LAST))
    torch.manual_seed(config.seed)
    task = task_cls(config, quiet=quiet)
    torch.manual_seed(config.seed)  # the same initial weights whatever the tokenizer training consumed
    return task, task.build_model()


def main(argv: list[str] | None = None) -> int:
    parser = tool_parser("train", __doc__)
    parser.add_argument("task", choices=sorted(TASKS))
    parser.add_argument("--config", type=Path, help="JSON file of settings (then --set on top)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override one setting (repeatable); see --list for the settings")
    parser.add_argument("--resume", action="store_true", help="continue the run in out_dir from last.pt")
    parser.add_argument("--list", action="store_true", help="print the settings with their defaults and exit")
    args = parser.parse_args(argv)
    if args.list:
        config_cls, _ = TASKS[args.task]
        for name, value in flatten(asdict(config_cls())).items():
            print(f"{name} = {value!r}")
        return 0
    try:
        config, last = make_config(args.task, args.config, args.set, args.resume)
        task, model = build_run(args.task, config, last)
        trainer = Trainer(config, model, task, resume=last)
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
        print(f"model directory: {Path(config.out_dir) / MODEL_DIR}")
    return 0
