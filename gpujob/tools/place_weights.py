"""python -m gpujob place-weights    (on the GPU machine, in the cuda window's last call)

Joins the carried weights (every piece's and the whole's sha256 checked) into models/<model>/model.pt, where slim
left them absent.
"""
from __future__ import annotations

import sys
from pathlib import Path

from ..pieces import PieceError
from ..weights import place_weights
from . import command_parser


def main(argv: list[str] | None = None) -> int:
    command_parser("place-weights", __doc__).parse_args(argv)
    try:
        placed = place_weights(Path.cwd())
    except PieceError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"weights in place: {', '.join(placed) or 'already there'}")
    return 0
