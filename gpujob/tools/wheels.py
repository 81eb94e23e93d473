"""python -m gpujob wheels [--dir .whl]

Cuts the wheels the GPU machine lacks into pieces carried by the window's commands (after the corpus's). Fetch them
first, for the GPU machine's Python 3.12 (the device README's command; KINDS.md lists what it already has):
    python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \\
        --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \\
        --platform manylinux2014_x86_64 -d .whl onnxruntime-gpu==1.31.1
onnxruntime-gpu's other needs (flatbuffers, numpy, packaging, protobuf, and for CUDA nvidia-cuda-runtime/-nvrtc,
-cufft, -curand, -cudnn-cu13, -cublas) are all in the GPU machine's image. Each wheel travels repacked (stored, then
xz: `gpujob.repack`; 244 -> ~170 MiB for onnxruntime-gpu, minutes of one core here) unless --no-xz.
"""
from __future__ import annotations

import sys
from pathlib import Path

from ..carried import store
from ..layout import BUILD_DIR
from ..plan import PIECE_BYTES
from ..repack import repack_wheel
from ..slim import removed, slim_paths
from . import command_parser


def main(argv: list[str] | None = None) -> int:
    parser = command_parser("wheels", __doc__)
    parser.add_argument("--dir", type=Path, default=Path(".whl"), help="folder of the wheels (default .whl)")
    parser.add_argument("--piece-mib", type=float, default=PIECE_BYTES / 2**20, help="piece size in MiB")
    parser.add_argument("--no-xz", action="store_true", help="carry the wheels as they are (deflate only)")
    args = parser.parse_args(argv)
    root = Path.cwd()
    wheels = sorted(args.dir.glob("*.whl"))
    if not wheels:
        print(f"error: no .whl file in {args.dir}; fetch them first (see --help)", file=sys.stderr)
        return 2
    try:
        names = [w.name for w in wheels]
        if not args.no_xz:
            wheels = [repack_wheel(w, root / BUILD_DIR / "wheels") for w in wheels]
        manifest = store(root, "wheels", wheels, {"wheels": names},
                         slim_paths(root) + [e["path"] for e in removed(root)], int(args.piece_mib * 2**20))
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for whole in manifest.wholes["wheels"]:
        print(f"{whole.name}: {whole.bytes / 2**20:.1f} MiB in {len(whole.pieces)} pieces, carried by "
              f"{sorted({manifest.carried_by[p.name] for p in whole.pieces})}")
    return 0
