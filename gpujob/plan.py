"""The GPU window's commands, in order, and which pieces each one carries.

Every command is a `run` call of the device tool with one carry path, `runs/gpujob/send/<name>`, holding its pieces
(the device tool takes at most 8 carry paths and 64 MiB per call, tracked tree included). The corpus rides with
the first command, which starts training; the CUDA wheel's pieces ride with the commands that follow, which would
be issued anyway to keep the machine held while the runs train (it is given back 30 s after a command ends).
configs/README.md is the checklist that explains these steps; tests check that it names each one.
"""
from __future__ import annotations

from dataclasses import dataclass

from .layout import SEND_DIR
from .pieces import MiB

LIMIT_BYTES = 64 * MiB  # what one call may carry in all (device README, Limits)
MARGIN_BYTES = 4 * MiB  # kept free per command for what the tree gains before the window (code, docs, others' files)
PIECE_BYTES = 8 * MiB  # small enough to fill each command's room closely (the wheel alone needs ~5 commands)


@dataclass(frozen=True)
class PlannedCommand:
    """One call of the device tool's `run`."""

    name: str  # also its carry folder: runs/gpujob/send/<name>
    command: str  # the command line given to `run` (in the repository root there)
    timeout_s: int  # the `timeout_s` to give (the command ends well inside it)
    carries: tuple[str, ...]  # which wholes' pieces it may carry: "corpus", "wheels"
    brings_back: str  # what comes back in $OUT
    if_it_fails: str  # what to do when it fails or the machine is lost

    @property
    def carry(self) -> str:
        return str(SEND_DIR / self.name)


RUN = "PYTHONUNBUFFERED=1 python3 -m gpujob run --out $OUT"
PLAN: tuple[PlannedCommand, ...] = (
    PlannedCommand(
        "c1-start", f"nvidia-smi -L; {RUN} --wait 480", 540, ("corpus", "wheels"),
        "progress.json (each run's state and last metrics row), the environment in the output",
        "machine lost: call c1 again (a fresh machine, everything re-sent); an error before the runs start: fix, "
        "commit, call c1 again at once"),
    PlannedCommand(
        "c2-wait", f"{RUN} --wait 540", 600, ("wheels",),
        "progress.json; the runs keep training detached",
        "machine lost: nothing of the training survives it; call c1 again with `--max-time` shortened to the time "
        "left"),
    PlannedCommand(
        "c3-collect", f"{RUN} --wait 540", 600, ("wheels",),
        "once both runs ended: manifest.json (config, tokenizer, both runs' metrics) and the first 4 weight shards",
        "still training when it returns (exit 3): call it again; machine lost: as c2"),
    PlannedCommand(
        "c4-rest", f"{RUN} --wait 60", 120, ("wheels",),
        "manifest.json and the remaining shards (run `unpack` here on every folder that came back)",
        "a transfer broke off: call it again with `--again` (every shard is handed back anew)"),
    PlannedCommand(
        "c5-cuda", "python3 -m gpujob install-wheels && export PYTHONPATH=/tmp/site && "
        "python3 -c 'import onnxruntime as o; print(o.__version__, o.get_available_providers())'", 300, ("wheels",),
        "the onnxruntime-gpu version and providers (issue 26 part 2 starts from here)",
        "a piece missing or damaged: install-wheels names it; carry that command's folder again"),
)
COMMANDS = {c.name: c for c in PLAN}


def assign(pieces: list[tuple[str, int, str]], budget: int) -> dict[str, str]:
    """{piece name: command name}: each piece (name, bytes, kind "corpus"/"wheels"), in the order given (the corpus
    first: the first command needs it whole), to the first command, from the last one used on, that may carry its
    kind and still has room within `budget` bytes of pieces."""
    used: dict[str, int] = {c.name: 0 for c in PLAN}
    out: dict[str, str] = {}
    start = 0
    for name, size, kind in pieces:
        for index in range(start, len(PLAN)):
            command = PLAN[index]
            if kind in command.carries and used[command.name] + size <= budget:
                used[command.name] += size
                out[name] = command.name
                start = index
                break
        else:
            raise ValueError(f"{name} ({size / MiB:.1f} MiB of {kind}) fits no planned command: the plan carries "
                             f"at most {budget / MiB:.1f} MiB of pieces per command")
    return out
