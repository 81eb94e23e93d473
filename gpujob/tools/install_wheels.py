"""python -m gpujob install-wheels [--target /tmp/site]    (on the GPU machine)

Joins each carried wheel from its pieces (every piece's size and sha256, then the whole's, checked against
configs/gpujob/pieces.json), then installs them with pip, offline and without dependencies, into --target. Then
`export PYTHONPATH=/tmp/site` in each later command puts them before the image's own packages (its CPU-only
onnxruntime included).
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from ..carried import piece_folders, read_pieces_manifest
from ..layout import SITE_DIR, WORK_DIR
from ..pieces import PieceError, is_joined, join_pieces
from . import command_parser


def main(argv: list[str] | None = None) -> int:
    parser = command_parser("install-wheels", __doc__)
    parser.add_argument("--target", type=Path, default=SITE_DIR)
    parser.add_argument("--join-only", action="store_true", help="join and check, install nothing")
    args = parser.parse_args(argv)
    root = Path.cwd()
    wholes = read_pieces_manifest(root).wholes.get("wheels", [])
    if not wholes:
        print("error: configs/gpujob/pieces.json lists no wheels (python -m gpujob wheels)", file=sys.stderr)
        return 2
    joined = []
    try:
        for whole in wholes:
            path = root / WORK_DIR / "wheels" / whole.name  # the wheel's own name: pip reads its tags from it
            if not is_joined(whole, path):
                join_pieces(whole, piece_folders(root), path)
            joined.append(path)
            print(f"{whole.name}: joined, sha256 ok")
    except PieceError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.join_only:
        return 0
    command = [sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile",
               "--no-cache-dir", "--upgrade", "--target", str(args.target), *map(str, joined)]
    done = subprocess.run(command)
    if done.returncode == 0:
        print(f"installed into {args.target}: export PYTHONPATH={args.target} in each later command")
    return done.returncode
