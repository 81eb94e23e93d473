"""python -m gpujob install-wheels [--target /tmp/site] [--join-only | --check-only]    (on the GPU machine)

Joins each carried wheel from its pieces (every piece's size and sha256, then the whole's, checked against
configs/gpujob/pieces.json), decompresses a repacked one (.whl.xz, `gpujob.repack`), then installs them with pip,
offline and without dependencies, into --target. Then `export PYTHONPATH=/tmp/site` in each later command puts them
before the image's own packages (its CPU-only onnxruntime included). --check-only, on the calls that only carry
pieces: checks the pieces that have arrived so far (of every kind) and names those still to come. Every call keeps
its sound pieces in the work folder (/tmp/gpujob/pieces, `--work`): the device deletes a carried folder from the
checkout once a later call does not name it, so the last call joins from there.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from ..carried import KINDS, keep_pieces, piece_folders, read_pieces_manifest
from ..layout import JOINED_DIR, SITE_DIR, work_folder
from ..pieces import PieceError, is_joined, join_pieces, sha256_of
from ..repack import unpack_wheel
from . import command_parser


def check_arrived(root: Path, work: Path) -> int:
    """Every piece found so far checked (the sound ones this call carried kept first); 2 when one is damaged."""
    keep_pieces(root, work)
    manifest = read_pieces_manifest(root)
    folders = piece_folders(root, work)
    arrived, missing, damaged = 0, [], []
    for kind in KINDS:
        for whole in manifest.wholes.get(kind, []):
            for piece in whole.pieces:
                path = next((d / piece.name for d in folders if (d / piece.name).is_file()), None)
                if path is None:
                    missing.append(piece.name)
                elif path.stat().st_size != piece.bytes or sha256_of(path) != piece.sha256:
                    damaged.append(f"{piece.name} (carried by {manifest.carried_by.get(piece.name)})")
                else:
                    arrived += 1
    print(f"{arrived} pieces here and sound; {len(missing)} still to come" +
          (f"; DAMAGED: {', '.join(damaged)}: carry those calls' folders again" if damaged else ""))
    return 2 if damaged else 0


def main(argv: list[str] | None = None) -> int:
    parser = command_parser("install-wheels", __doc__)
    parser.add_argument("--target", type=Path, default=SITE_DIR)
    parser.add_argument("--join-only", action="store_true", help="join and check, install nothing")
    parser.add_argument("--check-only", action="store_true", help="check the pieces that arrived so far")
    parser.add_argument("--work", type=Path, help="the work folder (default $GPUJOB_WORK or /tmp/gpujob)")
    args = parser.parse_args(argv)
    root, work = Path.cwd(), work_folder(args.work)
    if args.check_only:
        return check_arrived(root, work)
    keep_pieces(root, work)
    wholes = read_pieces_manifest(root).wholes.get("wheels", [])
    if not wholes:
        print("error: configs/gpujob/pieces.json lists no wheels (python -m gpujob wheels)", file=sys.stderr)
        return 2
    joined = []
    try:
        for whole in wholes:
            path = work / JOINED_DIR / "wheels" / whole.name
            if not is_joined(whole, path):
                join_pieces(whole, piece_folders(root, work), path)
            joined.append(unpack_wheel(path, path.parent))
            print(f"{whole.name}: joined, sha256 ok")
    except (PieceError, ValueError, OSError) as e:
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
