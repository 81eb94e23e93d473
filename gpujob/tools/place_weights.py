"""python -m gpujob place-weights    (on the GPU machine, in the cuda window's last call)

Joins the carried weights (every piece's and the whole's sha256 checked) into models/<model>/model.pt, where slim
left them absent: from the pieces earlier calls kept in the work folder (/tmp/gpujob/pieces) and this call's own.
"""
from __future__ import annotations

import sys
from pathlib import Path

from ..carried import keep_pieces
from ..layout import work_folder
from ..pieces import PieceError
from ..weights import place_weights
from . import command_parser


def main(argv: list[str] | None = None) -> int:
    parser = command_parser("place-weights", __doc__)
    parser.add_argument("--work", type=Path, help="the work folder (default $GPUJOB_WORK or /tmp/gpujob)")
    args = parser.parse_args(argv)
    root, work = Path.cwd(), work_folder(args.work)
    try:
        keep_pieces(root, work)
        placed = place_weights(root, work)
    except PieceError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"weights in place: {', '.join(placed) or 'already there'}")
    return 0
