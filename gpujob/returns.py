"""Returned weights, wherever they came from: which folders hold one run's complete set of shards.

The GPU machine hands back the chosen weights as `manifest.json` plus `weights.pt.000`, `.001`, ... (gpujob.shards),
a few per command, so one run's set may lie in one folder or be spread over several (one per command), and a shared
returns folder may hold several runs' sets side by side, from this session or another. Before anything is joined:

- the manifests among the folders must be of one run (the same weights sha256), or the folders are named;
- every shard the manifest lists must be found, the first copy in folder order (as `pieces.join_pieces` takes it)
  of the right size and sha256; a missing shard is named with the folders searched, a damaged one with its path.

`find_planned_set` looks through a returns folder and its sub-folders (one level down) for the complete set of a
planned run (the manifest's report.chosen.run). Pure: reads files, hashes them, returns or raises; no torch, so
that looking costs nothing before the shards are known to be whole.
"""
from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from .pieces import Piece, Whole, sha256_of

MANIFEST = "manifest.json"  # the shards' manifest (gpujob.shards writes it; its MANIFEST is this name)


class ReturnsError(ValueError):
    """The folders do not hold one run's complete, undamaged set of shards; the message says what and where."""


@dataclass(frozen=True)
class ReturnSet:
    """One run's returned weights, complete: a manifest and every shard it lists, each of the right sha256."""

    run: str  # the manifest's report.chosen.run: the planned run the weights came from ("?" when it names none)
    weights_sha256: str  # the joined weights' sha256: two manifests with the same one are the same run's
    manifest_folders: tuple[Path, ...]  # the folders holding (identical) manifests of this run
    folders: tuple[Path, ...]  # where the shards were looked up, in order: what `shards.read_shards` joins from
    shards: dict[str, Path]  # each shard's name -> the checked copy that joining will take


def read_manifest(folder: Path) -> dict | None:
    """folder/manifest.json, or None where there is none."""
    path = folder / MANIFEST
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise ReturnsError(f"{path}: not a readable manifest ({e})") from e


def run_of(manifest: dict) -> str:
    return str(manifest.get("report", {}).get("chosen", {}).get("run", "?"))


def weights_of(manifest: dict) -> Whole:
    return Whole.from_json(manifest["weights"])


def folder_list(folders: Collection[Path]) -> str:
    return ", ".join(str(f) for f in folders)


def by_weights(manifests: dict[Path, dict]) -> dict[str, list[Path]]:
    """{weights sha256: the folders whose manifest has it}: one entry per run."""
    runs: dict[str, list[Path]] = {}
    for folder, manifest in manifests.items():
        runs.setdefault(weights_of(manifest).sha256, []).append(folder)
    return runs


def manifests_in(folders: Collection[Path]) -> dict[Path, dict]:
    return {f: m for f in folders if (m := read_manifest(f)) is not None}


def one_run(manifests: dict[Path, dict]) -> str:
    """The weights sha256 all these manifests share; a ReturnsError naming the folders of each run when they differ."""
    runs = by_weights(manifests)
    if len(runs) > 1:
        named = "; ".join(f"run {run_of(manifests[folders[0]])} (weights sha256 {sha[:12]}) in {folder_list(folders)}"
                          for sha, folders in runs.items())
        raise ReturnsError(f"the folders hold manifests of different runs: {named}. Unpack one run's folders at a "
                           "time")
    return next(iter(runs))


def check_shard(piece: Piece, folders: Collection[Path]) -> Path:
    """The first copy of `piece` in `folders`, checked; a ReturnsError naming the shard (and where) otherwise."""
    path = next((folder / piece.name for folder in folders if (folder / piece.name).is_file()), None)
    if path is None:
        raise ReturnsError(f"shard {piece.name} is missing: looked in {folder_list(folders)}")
    size = path.stat().st_size
    if size != piece.bytes:
        raise ReturnsError(f"shard {piece.name} at {path} is {size:,} bytes, the manifest says {piece.bytes:,} "
                           "(cut short in transfer?)")
    if sha256_of(path) != piece.sha256:
        raise ReturnsError(f"shard {piece.name} at {path} has the wrong sha256 (damaged in transfer?)")
    return path


def check_set(folders: Collection[Path]) -> ReturnSet:
    """The complete set in `folders` (one run, spread over them or all in one); a ReturnsError saying what is wrong."""
    folders = tuple(folders)
    manifests = manifests_in(folders)
    if not manifests:
        raise ReturnsError(f"no {MANIFEST} in {folder_list(folders)} (the first command that hands back weights "
                           "brings it)")
    sha = one_run(manifests)
    manifest = next(iter(manifests.values()))
    shards = {p.name: check_shard(p, folders) for p in weights_of(manifest).pieces}
    return ReturnSet(run_of(manifest), sha, tuple(manifests), folders, shards)


def returns_folders(returns_dir: Path) -> list[Path]:
    """returns_dir itself and its sub-folders one level down (sorted: the same order on every machine)."""
    return [returns_dir, *sorted(p for p in returns_dir.iterdir() if p.is_dir())]


def sets_in(returns_dir: Path) -> list[tuple[list[Path], list[Path]]]:
    """(folders with the run's manifest, folders to look for its shards in) for each run (weights sha256) found:
    its own manifest folders first, then the folders with no manifest (a command may bring shards only); never a
    folder with another run's manifest, whose shards have the same names."""
    folders = returns_folders(returns_dir)
    manifests = manifests_in(folders)
    no_manifest = [f for f in folders if f not in manifests]
    return [(own, own + no_manifest) for own in by_weights(manifests).values()]


def find_planned_set(returns_dir: Path, planned_runs: Collection[str]) -> ReturnSet:
    """The one complete set in returns_dir (or its sub-folders) whose manifest names a planned run; a ReturnsError
    whose message says what was looked for, where, and what was found instead."""
    wanted = f"a complete set of shards (a {MANIFEST} whose report.chosen.run is {' or '.join(planned_runs)}, and " \
             f"every shard it lists with the right sha256) in {returns_dir} or its sub-folders"
    if not returns_dir.is_dir():
        raise ReturnsError(f"looked for {wanted}, but {returns_dir} does not exist")
    complete, seen = [], []
    for manifest_folders, search in sets_in(returns_dir):
        run = run_of(read_manifest(manifest_folders[0]))
        if run not in planned_runs:
            seen.append(f"run {run} in {folder_list(manifest_folders)} (not a planned run)")
            continue
        try:
            complete.append(check_set(search))
        except ReturnsError as e:
            seen.append(f"run {run} in {folder_list(manifest_folders)}, incomplete: {e}")
    if len(complete) > 1:
        raise ReturnsError(f"found {len(complete)} complete sets of different weights for the planned run: "
                           + "; ".join(f"{s.run} (weights sha256 {s.weights_sha256[:12]}) in "
                                       f"{folder_list(s.manifest_folders)}" for s in complete)
                           + ". Name the one you mean: `python -m gpujob unpack FOLDER...`")
    if not complete:
        what_was_there = "; ".join(seen) if seen else f"no {MANIFEST} at all"
        raise ReturnsError(f"looked for {wanted}, and found none: {what_was_there}")
    return complete[0]

