"""The pieces' manifest (configs/gpujob/pieces.json, tracked) and the send folders built from it.

Storing a kind of whole ("corpus": the packed corpus; "wheels": what the GPU machine lacks; "weights": the shipped
models' weights for the CUDA proof) cuts each file into
`runs/gpujob/pieces/<kind>/`, assigns every piece to a planned command (`gpujob.plan.assign`) with the room
measured now, and hard-links each piece into that command's carry folder `runs/gpujob/send/<command>/`. The manifest
is tracked so a clean clone (CI) can check the plan's sizes without the pieces, and the GPU machine can check each
piece it got.
"""
from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from .layout import JOB_DIR, KEPT_PIECES_DIR, PIECES_MANIFEST, SEND_DIR, ensure_job_dir
from .pieces import Whole, sha256_of, split_file
from .plan import LIMIT_BYTES, MARGIN_BYTES, PIECE_BYTES, assign
from .tree import size_of, tracked, untracked_not_ignored

# in the order their pieces are assigned: the corpus rides whole with the translate window's first call; the wheels,
# then the shipped weights (models/*/model.pt, which slim keeps out of the tree), with the cuda window's calls
KINDS = ("corpus", "wheels", "weights")
PIECES_DIR = JOB_DIR / "pieces"


@dataclass
class PiecesManifest:
    """configs/gpujob/pieces.json."""

    wholes: dict[str, list[Whole]] = field(default_factory=dict)  # kind -> its wholes
    carried_by: dict[str, str] = field(default_factory=dict)  # piece name -> the planned command that carries it
    budget_bytes: int = 0  # room for pieces per command when they were assigned
    info: dict = field(default_factory=dict)  # kind -> what made it (the pack's settings and counts, wheel names)

    def pieces(self) -> list[tuple[str, int, str]]:
        """(piece name, bytes, kind) in assignment order."""
        return [(p.name, p.bytes, kind) for kind in KINDS for w in self.wholes.get(kind, []) for p in w.pieces]

    def carried_bytes(self, command: str) -> int:
        return sum(size for name, size, _ in self.pieces() if self.carried_by.get(name) == command)

    def to_json(self) -> dict:
        return {"wholes": {k: [w.to_json() for w in ws] for k, ws in self.wholes.items()},
                "carried_by": self.carried_by, "budget_bytes": self.budget_bytes, "info": self.info}


def read_pieces_manifest(root: Path) -> PiecesManifest:
    path = root / PIECES_MANIFEST
    if not path.is_file():
        return PiecesManifest()
    d = json.loads(path.read_text())
    return PiecesManifest({k: [Whole.from_json(w) for w in ws] for k, ws in d["wholes"].items()}, d["carried_by"],
                          d["budget_bytes"], d.get("info", {}))


def travelling_tree_bytes(root: Path, slim_paths: list[str]) -> int:
    """What every call sends besides its carry: tracked files (less those slim takes out) and untracked files not
    ignored."""
    return size_of(root, [p for p in tracked(root) if p not in set(slim_paths)]) + \
        size_of(root, untracked_not_ignored(root))


def piece_budget(root: Path, slim_paths: list[str]) -> int:
    return LIMIT_BYTES - MARGIN_BYTES - travelling_tree_bytes(root, slim_paths)


def store(root: Path, kind: str, files: list[Path], info: dict, slim_paths: list[str],
          piece_bytes: int = PIECE_BYTES) -> PiecesManifest:
    """Cut `files` as the wholes of `kind` (replacing that kind's earlier ones), reassign every piece, rebuild the
    send folders and write the manifest."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    ensure_job_dir(root)
    manifest = read_pieces_manifest(root)
    folder = root / PIECES_DIR / kind
    shutil.rmtree(folder, ignore_errors=True)
    manifest.wholes[kind] = [split_file(f, folder, piece_bytes) for f in files]
    manifest.info[kind] = info
    manifest.budget_bytes = piece_budget(root, slim_paths)
    manifest.carried_by = assign(manifest.pieces(), manifest.budget_bytes)
    link_send_folders(root, manifest)
    path = root / PIECES_MANIFEST
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(manifest.to_json(), indent=1) + "\n")
    return manifest


def link_send_folders(root: Path, manifest: PiecesManifest) -> None:
    """runs/gpujob/send/<command>/ holds exactly the pieces that command carries (hard links to runs/gpujob/pieces/)."""
    send = root / SEND_DIR
    shutil.rmtree(send, ignore_errors=True)
    for kind in KINDS:
        for whole in manifest.wholes.get(kind, []):
            for piece in whole.pieces:
                source = root / PIECES_DIR / kind / piece.name
                if not source.is_file():
                    continue  # cut on another machine: `check` says which pieces are absent here
                target = send / manifest.carried_by[piece.name] / piece.name
                target.parent.mkdir(parents=True, exist_ok=True)
                try:
                    os.link(source, target)
                except OSError:  # a file system without hard links
                    shutil.copyfile(source, target)


def piece_folders(root: Path, work: Path | None = None) -> list[Path]:
    """Where pieces may lie: the work folder's kept pieces (on the GPU machine, what earlier calls carried), every
    send folder (what this call carried) and, here, the folders they were cut into."""
    send = root / SEND_DIR
    folders = sorted(p for p in send.iterdir() if p.is_dir()) if send.is_dir() else []
    kept = [work / KEPT_PIECES_DIR] if work is not None else []
    return kept + folders + [root / PIECES_DIR / kind for kind in KINDS]


def keep_pieces(root: Path, work: Path) -> list[str]:
    """Copy every sound piece this call carried into work/pieces/ (the next call's tree will not have it); returns
    the names newly kept. A damaged piece is left out: its check names it, and a later call carries it again."""
    manifest, kept_dir = read_pieces_manifest(root), work / KEPT_PIECES_DIR
    sizes = {name: size for name, size, _ in manifest.pieces()}
    hashes = {p.name: p.sha256 for ws in manifest.wholes.values() for w in ws for p in w.pieces}
    send = root / SEND_DIR
    kept = []
    for path in sorted(send.glob("*/*")) if send.is_dir() else []:
        target = kept_dir / path.name
        if path.name not in sizes or (target.is_file() and target.stat().st_size == sizes[path.name]):
            continue
        if path.stat().st_size != sizes[path.name] or sha256_of(path) != hashes[path.name]:
            continue
        kept_dir.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target.with_suffix(target.suffix + ".part"))
        target.with_suffix(target.suffix + ".part").replace(target)  # whole or absent, never half a piece
        kept.append(path.name)
    return kept
