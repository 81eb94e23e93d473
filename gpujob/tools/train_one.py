"""python -m gpujob train-one --config FILE [--set key=value ...] [--resume]

One planned run on a packed corpus (data_dir = the unpacked corpus folder): `python -m tx train translate`'s
settings and resume, over `gpujob.packed_task`. `python -m gpujob run` starts it detached, one per planned config.
"""
from __future__ import annotations

import sys
from pathlib import Path

from runtime.tsv import DataError
from tx.checkpoint import CheckpointError
from tx.run_setup import make_config

from ..training import train_packed
from . import command_parser


def main(argv: list[str] | None = None) -> int:
    parser = command_parser("train-one", __doc__)
    parser.add_argument("--config", type=Path, required=True)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--resume", action="store_true", help="continue from out_dir/last.pt")
    args = parser.parse_args(argv)
    try:
        config, last = make_config("translate", args.config, args.set, args.resume)
        result = train_packed(config, last)
    except (ValueError, FileNotFoundError, CheckpointError, DataError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"finished: {result}")
    return 0
