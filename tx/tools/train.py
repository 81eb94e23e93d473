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

from runtime.tsv import DataError

from ..checkpoint import CheckpointError
from ..run_setup import build_run, make_config
from ..settings import flatten
from ..tasks import TASKS
from ..trainer import MODEL_DIR, Trainer, exit_worker
from . import tool_parser


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
    if trainer.world > 1:
        exit_worker(0)
    return 0
