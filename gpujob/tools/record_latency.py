"""python -m gpujob record-latency OUT [--into README.md]

Here, after the cuda window: the latency section the proof wrote (OUT/latency.md) put under "## Latency on a GPU"
in --into (replacing an earlier one).
"""
from __future__ import annotations

import sys
from pathlib import Path

from ..cuda_proof import record_section
from . import command_parser
from .cuda_proof import LATENCY


def main(argv: list[str] | None = None) -> int:
    parser = command_parser("record-latency", __doc__)
    parser.add_argument("out", type=Path, help="the folder the proof's call brought back")
    parser.add_argument("--into", type=Path, default=Path("README.md"))
    args = parser.parse_args(argv)
    if not (args.out / LATENCY).is_file():
        print(f"error: {args.out / LATENCY} not found (the cuda window's last call writes it)", file=sys.stderr)
        return 2
    record_section(args.into, (args.out / LATENCY).read_text(encoding="utf-8"))
    print(f"{args.into}: latency section written")
    return 0
