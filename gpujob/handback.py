"""Handing results back through one command's output folder, within what one command may return (at most 8 files,
16 MiB each, 64 MiB together): the manifest every time (so each command's output describes itself), then the shards
not yet handed back, in order, as many as fit. What was handed back is recorded beside the shards, so the next
command hands back the rest; `again` hands everything back anew (after a transfer that broke off).
"""
from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from .pieces import MiB, Whole
from .shards import MANIFEST, read_manifest

SENT = "handed_back.json"


@dataclass(frozen=True)
class ReturnLimits:
    """What one command of the GPU machine may bring back (device README, Limits)."""

    max_files: int = 8  # files per command
    max_file_bytes: int = 16 * MiB  # one file
    max_total_bytes: int = 64 * MiB  # all files together


DEVICE_RETURN = ReturnLimits()  # the device's own limits


def whole_names(whole: Whole) -> set[str]:
    return {p.name for p in whole.pieces}


def hand_back(result_dir: Path, out_dir: Path, limits: ReturnLimits = DEVICE_RETURN, again: bool = False
              ) -> tuple[list[str], list[str]]:
    """Copy the manifest and the next shards into out_dir; returns (names copied, shard names still to come)."""
    manifest = read_manifest(result_dir)
    whole = Whole.from_json(manifest["weights"])
    sent_path = result_dir / SENT
    sent = set() if again or not sent_path.is_file() else set(json.loads(sent_path.read_text()))
    out_dir.mkdir(parents=True, exist_ok=True)
    manifest_bytes = (result_dir / MANIFEST).stat().st_size
    if manifest_bytes > limits.max_file_bytes:
        raise ValueError(f"{MANIFEST} is {manifest_bytes:,} bytes, over the {limits.max_file_bytes:,} a file may have")
    # what this command already put in out_dir (progress.json) counts against the same limits
    others = [p for p in out_dir.iterdir() if p.is_file() and p.name != MANIFEST and p.name not in whole_names(whole)]
    shutil.copyfile(result_dir / MANIFEST, out_dir / MANIFEST)
    copied, files, total = [MANIFEST], 1 + len(others), manifest_bytes + sum(p.stat().st_size for p in others)
    for piece in whole.pieces:
        if piece.name in sent:
            continue
        if piece.bytes > limits.max_file_bytes:
            raise ValueError(f"{piece.name} is {piece.bytes:,} bytes, over the {limits.max_file_bytes:,} a file may "
                             "have")
        if files + 1 > limits.max_files or total + piece.bytes > limits.max_total_bytes:
            break
        shutil.copyfile(result_dir / piece.name, out_dir / piece.name)
        copied.append(piece.name)
        sent.add(piece.name)
        files, total = files + 1, total + piece.bytes
    sent_path.write_text(json.dumps(sorted(sent)) + "\n")
    return copied, [p.name for p in whole.pieces if p.name not in sent]
