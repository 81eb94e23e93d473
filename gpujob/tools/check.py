"""python -m gpujob check [--config FILE]

Prints the bytes each planned command will carry (the tracked tree as slim leaves it, untracked files not ignored,
its pieces) and bring back (the chosen weights' shards, fp16 of the planned shape), and exits 1 when one breaks the
device's limits (64 MiB carried per call; 8 files, 16 MiB each, 64 MiB back); with --window, also when slim is
off (the tree as it is now would travel). Works on a clean clone: pieces that
are not here are counted from configs/gpujob/pieces.json, and the report says so.
"""
from __future__ import annotations

from pathlib import Path

from tx.run_setup import make_config

from ..runs import PLANNED_CONFIGS
from ..sizes import measure, planned_weights_bytes, render
from . import command_parser


def main(argv: list[str] | None = None) -> int:
    parser = command_parser("check", __doc__)
    parser.add_argument("--config", type=Path, default=Path(PLANNED_CONFIGS[0]), help="the planned model shape")
    parser.add_argument("--window", action="store_true",
                        help="the last check before the window: slim must be on (else every call is over)")
    args = parser.parse_args(argv)
    weights = planned_weights_bytes(make_config("translate", args.config, [])[0].model)
    report = measure(Path.cwd(), weights)
    if args.window and not report.slim_on:
        report.problems.append("slim is off: `python -m gpujob slim on` first")
    print(render(report))
    return 1 if report.problems else 0
