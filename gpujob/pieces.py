"""Files cut into pieces of at most N bytes, each with its sha256, and put back together with every hash checked.

Why: the GPU machine takes at most 64 MiB of files per command and gives back at most 16 MiB per file, so the
corpus, the CUDA wheels and the trained weights all travel as pieces; a piece that arrives damaged or not at all
must be named, never silently glued into a broken whole.
"""
from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

MiB = 1 << 20
BLOCK = 4 * MiB  # read size while hashing and copying: large enough to be fast, small enough to stay in memory


class PieceError(ValueError):
    """A piece is missing, of the wrong size or of the wrong hash: the whole cannot be trusted."""


@dataclass(frozen=True)
class Piece:
    """One piece of a whole, as a manifest records it."""

    name: str  # file name of the piece (no folder): "<whole>.000", "<whole>.001", ...
    bytes: int  # its exact size
    sha256: str  # hex sha256 of its bytes


@dataclass(frozen=True)
class Whole:
    """A file cut into pieces: what putting it back together must give."""

    name: str  # file name of the whole once put back together
    bytes: int  # its exact size
    sha256: str  # hex sha256 of the whole
    pieces: tuple[Piece, ...]  # in order

    def to_json(self) -> dict:
        return {**asdict(self), "pieces": [asdict(p) for p in self.pieces]}

    @classmethod
    def from_json(cls, d: dict) -> Whole:
        return cls(d["name"], int(d["bytes"]), d["sha256"], tuple(Piece(**p) for p in d["pieces"]))


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(BLOCK), b""):
            h.update(block)
    return h.hexdigest()


def _chunks(f, size: int) -> Iterator[bytes]:
    """The next `size` bytes of f, read BLOCK at a time."""
    left = size
    while left:
        block = f.read(min(BLOCK, left))
        if not block:
            return
        left -= len(block)
        yield block


def split_file(path: Path, out_dir: Path, max_bytes: int) -> Whole:
    """Cut `path` into out_dir/<name>.000, .001, ... of at most max_bytes each; returns what was written."""
    if max_bytes <= 0:
        raise ValueError(f"max_bytes must be positive, got {max_bytes}")
    out_dir.mkdir(parents=True, exist_ok=True)
    total, pieces, whole_hash = path.stat().st_size, [], hashlib.sha256()
    with open(path, "rb") as f:
        for index in range(max(1, -(-total // max_bytes))):
            name = f"{path.name}.{index:03d}"
            h, written = hashlib.sha256(), 0
            with open(out_dir / name, "wb") as piece:
                for block in _chunks(f, max_bytes):
                    piece.write(block)
                    h.update(block)
                    whole_hash.update(block)
                    written += len(block)
            pieces.append(Piece(name, written, h.hexdigest()))
    return Whole(path.name, total, whole_hash.hexdigest(), tuple(pieces))


def check_pieces(whole: Whole, folders: Iterable[Path]) -> dict[str, Path]:
    """Each piece's path (looked up in `folders`, first found wins), every size and hash checked."""
    folders = list(folders)
    paths: dict[str, Path] = {}
    problems = []
    for piece in whole.pieces:
        path = next((d / piece.name for d in folders if (d / piece.name).is_file()), None)
        if path is None:
            problems.append(f"{piece.name}: missing")
        elif path.stat().st_size != piece.bytes:
            problems.append(f"{piece.name}: {path.stat().st_size:,} bytes, expected {piece.bytes:,}")
        elif sha256_of(path) != piece.sha256:
            problems.append(f"{piece.name}: sha256 differs (damaged in transfer?)")
        else:
            paths[piece.name] = path
    if problems:
        raise PieceError(f"{whole.name}: " + "; ".join(problems))
    return paths


def join_pieces(whole: Whole, folders: Iterable[Path], out_path: Path) -> Path:
    """Check every piece, write them one after another to out_path (atomically) and check the whole's hash."""
    paths = check_pieces(whole, folders)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = out_path.with_name(out_path.name + ".partial")
    h = hashlib.sha256()
    with open(tmp, "wb") as out:
        for piece in whole.pieces:
            with open(paths[piece.name], "rb") as f:
                for block in iter(lambda: f.read(BLOCK), b""):  # noqa: B023 (f is the loop's own file)
                    out.write(block)
                    h.update(block)
    if h.hexdigest() != whole.sha256:
        tmp.unlink()
        raise PieceError(f"{whole.name}: the joined pieces' sha256 differs from the whole's")
    os.replace(tmp, out_path)
    return out_path


def is_joined(whole: Whole, path: Path) -> bool:
    """Is `path` already the checked whole (so a repeated command need not join it again)?"""
    return path.is_file() and path.stat().st_size == whole.bytes and sha256_of(path) == whole.sha256
