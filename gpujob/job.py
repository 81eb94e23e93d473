"""The GPU machine's one entry (`python -m gpujob run`): the same command each time, doing whatever is due.

Everything it writes lives in the work folder (/tmp/gpujob on the GPU machine, `gpujob.layout`), never in the
checkout, which the device lays anew before each call:

0. the job's code copied to <work>/code/ (`gpujob.code_copy`) while no run trains, so runs and later calls need no
   checkout;
1. the corpus: its pieces joined and checked, unpacked once into <work>/corpus/;
2. each planned run (<work>/runs/<name>/): started detached if it never ran, restarted from last.pt with `resume`,
   else left alone;
3. a wait of up to `wait` seconds while runs train, with a progress line every `poll` seconds;
4. once every run has ended: the best run by its selection score (each run already chose between its best and its
   averaged checkpoints, `tx.trainer.Trainer.finish`), its weights as shards with a manifest, handed back as far as
   one command may bring back, the rest by the next call.
It works the same on the CPU (the device is whatever `tx.trainer.Trainer` finds), which is how the tests prove it.
"""
from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tx.run_files import METRICS_FILE
from tx.trainer import MODEL_DIR

from .carried import piece_folders, read_pieces_manifest
from .code_copy import copy_code, is_code_copy
from .corpus import unpack_corpus
from .handback import ReturnLimits, hand_back
from .layout import CODE_DIR, CORPUS_DIR, JOINED_DIR, RESULT_DIR, check_outside
from .pieces import is_joined, join_pieces
from .runs import (
    FAILED,
    FINISHED,
    NOT_STARTED,
    RUNNING,
    STOPPED,
    PlannedRun,
    log_tail,
    read_error,
    read_result,
    start,
    state,
)
from .shards import MANIFEST, SHARD_BYTES, read_manifest, write_shards

# exit codes of `run`: every shard handed back / still training / shards left for the next call / nothing usable
DONE, TRAINING, MORE_TO_HAND_BACK, FAILED_EXIT = 0, 3, 4, 2
PROGRESS = "progress.json"
CHECK_EVERY_S = 1.0  # seconds between looks at whether a run still trains (a state file read)


@dataclass
class JobSettings:
    """One `python -m gpujob run` call."""

    root: Path  # the repository root (the GPU machine's copy of the checkout, or <work>/code in later calls)
    work: Path  # the work folder, outside the checkout: corpus, runs, shards, the code copy (kept between calls)
    out: Path  # where results are handed back ($OUT there)
    runs: list[PlannedRun]  # the planned runs (each out_dir under work/runs)
    wait: float = 480.0  # at most this many seconds waiting for runs in this call
    max_time: float | None = None  # seconds of training for runs started now (None: each config's max_time)
    resume: bool = False  # restart stopped (or finished) runs from their last.pt for max_time more seconds
    overrides: list[str] = field(default_factory=list)  # `--set key=value` for runs started now
    again: bool = False  # hand every shard back anew
    poll: float = 15.0  # seconds between progress lines
    dtype: str = "float16"  # what the shards store
    shard_bytes: int = SHARD_BYTES  # one shard's size at most
    limits: ReturnLimits = field(default_factory=ReturnLimits)  # what one call may bring back


def prepare_corpus(root: Path, work: Path) -> Path:
    """The unpacked corpus folder (in work), joined from its pieces and unpacked only when not already done."""
    manifest = read_pieces_manifest(root)
    if not manifest.wholes.get("corpus"):
        raise FileNotFoundError("configs/gpujob/pieces.json lists no corpus: run `python -m gpujob pack` first")
    [whole] = manifest.wholes["corpus"]
    archive = work / JOINED_DIR / whole.name
    folder = work / CORPUS_DIR
    marker = folder / ".archive_sha256"
    if marker.is_file() and marker.read_text().strip() == whole.sha256:
        return folder
    if not is_joined(whole, archive):
        # joined straight from this call's carry: the archive itself is what later calls keep (no copy of its pieces)
        archive.parent.mkdir(parents=True, exist_ok=True)
        join_pieces(whole, piece_folders(root, work), archive)
    unpack_corpus(archive, folder)
    marker.write_text(whole.sha256 + "\n")
    return folder


def last_metrics(run: PlannedRun) -> dict[str, str]:
    path = run.out_dir / METRICS_FILE
    if not path.is_file():
        return {}
    lines = path.read_text().splitlines()
    return dict(zip(lines[0].split(","), lines[-1].split(","), strict=False)) if len(lines) > 1 else {}


def progress(runs: list[PlannedRun]) -> dict[str, Any]:
    out = {}
    for run in runs:
        s = state(run)
        entry: dict[str, Any] = {"state": s, "last_eval": last_metrics(run)}
        if s == FINISHED:
            entry["result"] = read_result(run)
        elif s == FAILED:
            entry["error"] = read_error(run)
        if s != FINISHED:
            entry["log_tail"] = log_tail(run)
        out[run.name] = entry
    return out


def prepare_code(s: JobSettings, log: Callable[[str], None]) -> Path:
    """<work>/code, copied from this checkout unless a run is training from the copy now (it keeps the code it
    started with) or this call already runs from it."""
    if is_code_copy(s.root, s.work):
        return s.work / CODE_DIR
    if any(state(r) == RUNNING for r in s.runs) and (s.work / CODE_DIR).is_dir():
        log(f"a run is training from {s.work / CODE_DIR}: the copy is left as it is")
        return s.work / CODE_DIR
    code = copy_code(s.root, s.work)
    log(f"the job's code copied to {code} (later calls: cd there first)")
    return code


def start_due(s: JobSettings, corpus: Path, code: Path, log: Callable[[str], None]) -> None:
    """Start the runs that never ran; with `resume`, restart from last.pt those that ended (stopped, finished, or
    failed after a checkpoint); leave running ones alone."""
    for run in s.runs:
        now = state(run)
        fresh = now == NOT_STARTED
        has_checkpoint = (run.out_dir / "last.pt").is_file()
        again = s.resume and has_checkpoint and now in (STOPPED, FINISHED, FAILED)
        if fresh or again:
            process = start(run, corpus, s.max_time, resume=not fresh, overrides=s.overrides, code=code)
            log(f"{run.name}: {'started' if fresh else 'resumed'} (pid {process.pid}, detached), "
                f"writing {run.out_dir}")
        elif now == STOPPED:
            log(f"{run.name}: stopped before its end; `--resume --max-time S` continues it")
        elif now == FAILED:
            log(f"{run.name}: failed: {read_error(run)}")


def wait_for_runs(s: JobSettings, log: Callable[[str], None], check_every: float = CHECK_EVERY_S) -> None:
    """Until no run is training or `s.wait` is over: the runs' state looked at every `check_every` seconds, so the
    call goes on to its shards as soon as a run ends (sleeping the whole `poll` between looks spent up to 30 s of
    device time after the end: the CLI's default poll), and a progress line every `poll` seconds and at the end."""
    started = last_line = time.monotonic()
    running = any(state(r) == RUNNING for r in s.runs)
    while running and time.monotonic() - started < s.wait:
        time.sleep(max(0.0, min(check_every, s.poll, s.wait - (time.monotonic() - started))))
        running = any(state(r) == RUNNING for r in s.runs)
        if running and time.monotonic() - started < s.wait and time.monotonic() - last_line < s.poll:
            continue
        last_line = time.monotonic()
        shown = []
        for run in s.runs:
            row = last_metrics(run)
            shown.append(f"{run.name} {state(run)} step {row.get('step', '-')} {row.get('mean_bleu', '')}".rstrip())
        log(f"[{last_line - started:.0f} s] " + "; ".join(shown))


def choose(runs: list[PlannedRun]) -> tuple[PlannedRun, dict[str, Any]]:
    """The finished run with the highest selection score (all planned runs must select by the same metric)."""
    finished = {r.name: (r, read_result(r)) for r in runs if state(r) == FINISHED}
    if not finished:
        raise RuntimeError("no planned run finished")
    names = {result["score_name"] for _, result in finished.values()}
    if len(names) > 1:
        raise ValueError(f"the runs select by different metrics ({sorted(names)}): their scores do not compare")
    return max(finished.values(), key=lambda rr: rr[1]["score"])


def stage_result(s: JobSettings, log: Callable[[str], None]) -> Path:
    """RESULT_DIR holding the chosen run's shards and manifest (written again only when the choice changed)."""
    run, result = choose(s.runs)
    result_dir = s.work / RESULT_DIR
    chosen = {"run": run.name, "result": result}
    if (result_dir / MANIFEST).is_file() and read_manifest(result_dir)["report"].get("chosen") == chosen:
        return result_dir
    for old in result_dir.glob("*") if result_dir.is_dir() else []:
        old.unlink()
    report = {"chosen": chosen, "runs": progress(s.runs),
              "metrics_csv": {r.name: (r.out_dir / METRICS_FILE).read_text()
                              for r in s.runs if (r.out_dir / METRICS_FILE).is_file()}}
    manifest = write_shards(run.out_dir / MODEL_DIR, result_dir, s.dtype, s.shard_bytes, report)
    log(f"chosen: {run.name} ({result['score_name']} {result['score']:.2f}, {result.get('chosen')}); "
        f"{len(manifest['weights']['pieces'])} shards of {manifest['weights']['bytes'] / 2**20:.1f} MiB ({s.dtype})")
    return result_dir


def run_job(s: JobSettings, log: Callable[[str], None] = print) -> int:
    if not is_code_copy(s.root, s.work):
        check_outside(s.work, s.root)
    s.out.mkdir(parents=True, exist_ok=True)
    code = prepare_code(s, log)
    corpus = prepare_corpus(s.root, s.work)
    start_due(s, corpus, code, log)
    wait_for_runs(s, log)
    states = progress(s.runs)
    (s.out / PROGRESS).write_text(json.dumps(states, indent=1) + "\n")
    if any(v["state"] == RUNNING for v in states.values()):
        log(f"still training: call `python -m gpujob run` again at once (exit {TRAINING})")
        return TRAINING
    if not any(v["state"] == FINISHED for v in states.values()):
        for name, v in states.items():
            log(f"{name}: {v['state']}{': ' + v['error'] if 'error' in v else ''}")
        log("no run finished")
        return FAILED_EXIT
    result_dir = stage_result(s, log)
    copied, left = hand_back(result_dir, s.out, s.limits, again=s.again)
    log(f"handed back: {', '.join(copied)}" + (f"; still to come: {', '.join(left)} (call again)" if left else ""))
    return MORE_TO_HAND_BACK if left else DONE
