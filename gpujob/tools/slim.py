"""python -m gpujob slim {on,off,status}

on: the shipped weights (models/*/model.pt) leave the index and are ignored, so the device tool stops sending them
(files on disk untouched); off: the same index entries come back. Between the two, commit only with paths.
"""
from __future__ import annotations

from pathlib import Path

from ..slim import is_on, removed, slim_off, slim_on, slim_paths
from . import command_parser


def main(argv: list[str] | None = None) -> int:
    parser = command_parser("slim", __doc__)
    parser.add_argument("action", choices=["on", "off", "status"])
    args = parser.parse_args(argv)
    root = Path.cwd()
    if args.action == "on":
        print(f"slim on: out of the index and ignored: {', '.join(slim_on(root)) or 'nothing to take out'}")
    elif args.action == "off":
        print(f"slim off: back in the index: {', '.join(slim_off(root)) or 'nothing (slim was off)'}")
    elif is_on(root):
        print(f"slim is on: {', '.join(e['path'] for e in removed(root))} out of the index")
    else:
        print(f"slim is off: `slim on` would take out {', '.join(slim_paths(root))}")
    return 0
