"""The shipped weights carried to the GPU machine for the CUDA proof, and put back in place there.

Slim keeps `models/*/model.pt` out of what every call sends (they alone would fill a call), so the cuda window
carries them as pieces like the wheel: each as a whole named `<model>.model.pt` (piece names stay unique), joined on
the machine into `models/<model>/model.pt`, every hash checked.
"""
from __future__ import annotations

import shutil
from pathlib import Path

from runtime.model_files import WEIGHTS_FILE

from .carried import piece_folders, read_pieces_manifest
from .layout import BUILD_DIR, JOINED_DIR
from .pieces import join_pieces, sha256_of

MODELS = ("translate", "sentiment")  # the shipped models the CUDA proof runs
SUFFIX = "." + WEIGHTS_FILE


def staged_weights(root: Path, models_dir: Path = Path("models")) -> list[Path]:
    """Copies named <model>.model.pt under the build folder, ready to be cut."""
    out = []
    for name in MODELS:
        source = root / models_dir / name / WEIGHTS_FILE
        if not source.is_file():
            raise FileNotFoundError(f"{source}: not found (the CUDA proof runs the shipped models)")
        target = root / BUILD_DIR / "weights" / f"{name}{SUFFIX}"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        out.append(target)
    return out


def place_weights(root: Path, work: Path) -> list[str]:
    """Join each carried weights whole (its pieces kept in `work` by earlier calls, or carried now) into
    models/<model>/model.pt (left alone when already the same bytes)."""
    placed = []
    for whole in read_pieces_manifest(root).wholes.get("weights", []):
        model = whole.name[:-len(SUFFIX)]
        target = root / "models" / model / WEIGHTS_FILE
        if target.is_file() and target.stat().st_size == whole.bytes and sha256_of(target) == whole.sha256:
            continue
        joined = join_pieces(whole, piece_folders(root, work), work / JOINED_DIR / "weights" / whole.name)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(joined, target)
        placed.append(str(target.relative_to(root)))
    return placed
