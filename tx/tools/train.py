"""python -m tx.train {translate,sentiment} [--config FILE.json] [--set key=value ...] [--resume]

Trains on the prepared data (`python -m tx.data prepare`), writing to the run's out_dir:
last.pt / best.pt (full training state), metrics.csv, tensorboard/ (when installed), and at
the end model/ — the shipped form (config.json, model.pt, tokenizer.json, metrics.csv).
Several processes: `torchrun --nproc_per_node=N -m tx.train ...` (gloo on CPU, nccl on GPU).

Examples:
    python -m tx.train translate --set max_time=2700 --set d_model=256
    python -m tx.train translate --resume --set max_time=3600     # continue the same run
    python -m tx.train sentiment --set out_dir=runs/sent-small --set n_layers=1
"""
from __future__ import annotations

import argparse
import json
import sys
import typing
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

import torch

from .checkpoint import CheckpointError, build_model, load_checkpoint
from .data import DataError
from .tasks import TASKS
from .tokenizer import Tokenizer
from .trainer import TrainConfig, Trainer


def parse_value(text: str, kind: Any, key: str) -> Any:
    """'--set key=value' text -> the field's declared type, or a clear error."""
    if kind is bool:
        lowered = text.strip().lower()
        if lowered in ("1", "true", "yes", "on"):
            return True
        if lowered in ("0", "false", "no", "off"):
            return False
        raise ValueError(f"{key} is a bool: use true or false, not {text!r}")
    if kind in (int, float):
        try:
            return kind(float(text)) if kind is int and float(text).is_integer() else kind(text)
        except ValueError:
            raise ValueError(f"{key} is {kind.__name__}: {text!r} is not a number") from None
    return text


def apply_overrides(config_cls: type, values: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    hints = typing.get_type_hints(config_cls)
    names = [f.name for f in fields(config_cls)]
    out = dict(values)
    for item in overrides:
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep:
            raise ValueError(f"--set takes key=value, got {item!r}")
        if key not in names:
            raise ValueError(f"unknown setting {key!r}; settings are: {', '.join(names)}")
        out[key] = parse_value(raw, hints[key], key)
    return out


def load_config_file(config_cls: type, path: Path) -> dict[str, Any]:
    try:
        values = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise ValueError(f"{path}: cannot read the config file ({e})") from e
    hints, names = typing.get_type_hints(config_cls), {f.name for f in fields(config_cls)}
    unknown = set(values) - names
    if unknown:
        raise ValueError(f"{path}: unknown settings {sorted(unknown)}")
    for key, value in values.items():
        kind = hints[key]
        ok = (isinstance(value, kind) or (kind is float and isinstance(value, int))) \
            and (kind is bool or not isinstance(value, bool))  # JSON true is a Python int: not a number here
        if not ok:
            raise ValueError(f"{path}: {key} must be {kind.__name__}, got {value!r}")
    return values


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
    parser = argparse.ArgumentParser(prog="python -m tx.train", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
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


if __name__ == "__main__":
    sys.exit(main())
