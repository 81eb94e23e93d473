"""python -m gpujob weights

Here, before the cuda window (once the translator v2 is shipped): the shipped weights (models/translate and
models/sentiment model.pt) cut into pieces carried by the cuda window's calls after the wheel's, recorded in
configs/gpujob/pieces.json (commit it). `place-weights` puts them back in models/ on the GPU machine.
"""
from __future__ import annotations

import sys
from pathlib import Path

from ..carried import store
from ..slim import removed, slim_paths
from ..weights import staged_weights
from . import command_parser


def main(argv: list[str] | None = None) -> int:
    command_parser("weights", __doc__).parse_args(argv)
    root = Path.cwd()
    try:
        files = staged_weights(root)
        manifest = store(root, "weights", files, {"weights": [f.name for f in files]},
                         slim_paths(root) + [e["path"] for e in removed(root)])
    except (ValueError, FileNotFoundError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for whole in manifest.wholes["weights"]:
        print(f"{whole.name}: {whole.bytes / 2**20:.1f} MiB in {len(whole.pieces)} pieces, carried by "
              f"{sorted({manifest.carried_by[p.name] for p in whole.pieces})}")
    return 0
