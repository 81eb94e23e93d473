"""The size check: for each planned command, the bytes the device tool will send (the tracked tree as slim leaves
it, untracked files git does not ignore, the command's carried pieces) and the bytes it will bring back (the chosen
weights' shards), against the device's limits. Pieces are measured on disk where they are, else taken from the
tracked manifest, and the report says which; the weights' size follows from the planned model shape.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import torch

from tx.config import Seq2SeqConfig
from tx.model import Seq2SeqTransformer

from .carried import PiecesManifest, read_pieces_manifest
from .handback import DEVICE_RETURN, ReturnLimits
from .layout import SEND_DIR
from .plan import LIMIT_BYTES, PLAN
from .shards import SHARD_BYTES
from .slim import is_on, removed, slim_paths
from .tree import size_of, tracked, untracked_not_ignored

MANIFEST_ALLOWANCE = 1 << 20  # manifest.json: config, tokenizer (~0.4 MiB at 16k), both runs' metrics


@dataclass
class CommandSize:
    """What one planned command sends."""

    name: str  # the planned command
    tree: int  # tracked files (less what slim takes out) + untracked files not ignored
    carried: int  # its pieces
    measured: bool  # the pieces were measured on disk (False: sizes from the manifest; absent here)

    @property
    def total(self) -> int:
        return self.tree + self.carried


@dataclass
class SizeReport:
    slim_on: bool  # slim is on now
    tracked_all: int  # every tracked file, as without slim
    slimmed: int  # what slim takes out (or took out)
    untracked: int  # untracked files git does not ignore, now
    commands: list[CommandSize]  # the planned commands in order
    weights_bytes: int  # the chosen weights as shards (fp16 of the planned shape)
    returns: list[tuple[int, int]]  # per returning command: (files, bytes), manifest included
    problems: list[str] = field(default_factory=list)  # every limit broken, in words


def planned_weights_bytes(config: Seq2SeqConfig, bytes_per_value: int = 2) -> int:
    """The shipped weights' size for a model shape (tied tensors counted once), built without memory."""
    with torch.device("meta"):
        model = Seq2SeqTransformer(config)
    return sum(p.numel() for p in model.parameters()) * bytes_per_value


def return_plan(weights: int, shard: int = SHARD_BYTES, limits: ReturnLimits = DEVICE_RETURN,
                manifest: int = MANIFEST_ALLOWANCE, others: int = 1) -> list[tuple[int, int]]:
    """(files, bytes) each returning command brings: the manifest and progress.json (`others`) each time, then as
    many shards as fit."""
    sizes = [shard] * (weights // shard) + ([weights % shard] if weights % shard else [])
    out = []
    while sizes:
        files, total = 1 + others, manifest * (1 + others)
        while sizes and files + 1 <= limits.max_files and total + sizes[0] <= limits.max_total_bytes:
            files, total = files + 1, total + sizes.pop(0)
        if files == 1 + others:
            raise ValueError(f"a shard of {shard:,} bytes never fits one command's return")
        out.append((files, total))
    return out


def measure(root: Path, weights: int, manifest: PiecesManifest | None = None) -> SizeReport:
    """The report for the checkout at root; `weights`: the chosen weights' bytes (`planned_weights_bytes`)."""
    manifest = manifest or read_pieces_manifest(root)
    on = is_on(root)
    out_paths = [e["path"] for e in removed(root)] if on else slim_paths(root)
    files = tracked(root)
    tracked_all = size_of(root, files) + (size_of(root, out_paths) if on else 0)
    slimmed = size_of(root, out_paths)
    untracked = size_of(root, [p for p in untracked_not_ignored(root) if p not in set(out_paths)])
    tree = tracked_all - slimmed + untracked
    commands = []
    for command in PLAN:
        names = [n for n, _, _ in manifest.pieces() if manifest.carried_by.get(n) == command.name]
        folder = root / SEND_DIR / command.name
        on_disk = [folder / n for n in names if (folder / n).is_file()]
        measured = len(on_disk) == len(names)
        carried = sum(p.stat().st_size for p in on_disk) if measured else manifest.carried_bytes(command.name)
        commands.append(CommandSize(command.name, tree, carried, measured))
    report = SizeReport(on, tracked_all, slimmed, untracked, commands, weights, return_plan(weights))
    for c in commands:
        if c.total > LIMIT_BYTES:
            report.problems.append(f"{c.name} sends {c.total / 2**20:.1f} MiB, over the {LIMIT_BYTES / 2**20:.0f} MiB "
                                   "a call may carry")
    returning = [c for c in PLAN if "shards" in c.brings_back]
    if len(report.returns) > len(returning):
        report.problems.append(f"the weights need {len(report.returns)} returning commands, the plan has "
                               f"{len(returning)} ({', '.join(c.name for c in returning)})")
    if weights <= 0:
        report.problems.append("the weights' size is unknown")
    if not manifest.wholes.get("corpus"):
        report.problems.append("no corpus pieces recorded: run `python -m gpujob pack` (after `make data`)")
    if not manifest.wholes.get("wheels"):
        report.problems.append("no wheel pieces recorded: run `python -m gpujob wheels`")
    return report


def render(report: SizeReport) -> str:
    mib = lambda b: f"{b / 2**20:7.1f} MiB"
    lines = [f"tracked files: {mib(report.tracked_all)}, of which slim takes out {mib(report.slimmed)} "
             f"(slim is {'on' if report.slim_on else 'off'}); untracked, not ignored: {mib(report.untracked)}",
             f"{'command':<12} {'tree':>11} {'carried':>11} {'total':>11}  limit {LIMIT_BYTES / 2**20:.0f} MiB"]
    for c in report.commands:
        state = "ok" if c.total <= LIMIT_BYTES else "OVER"
        source = "measured" if c.measured else "from configs/gpujob/pieces.json (pieces not here)"
        lines.append(f"{c.name:<12} {mib(c.tree)} {mib(c.carried)} {mib(c.total)}  {state}; pieces {source}")
    if not report.slim_on:
        worst = max(c.carried for c in report.commands)
        lines.append(f"without slim every call would also send {mib(report.slimmed)}: the fullest would be "
                     f"{mib(report.tracked_all + report.untracked + worst)}; run `python -m gpujob slim on` before "
                     "the window")
    lines.append(f"weights back: {mib(report.weights_bytes)} (fp16 of the planned shape) in "
                 f"{len(report.returns)} returning commands: "
                 + "; ".join(f"{f} files {mib(b).strip()}" for f, b in report.returns))
    lines += [f"PROBLEM: {p}" for p in report.problems] or ["every planned command fits the device's limits"]
    return "\n".join(lines)
