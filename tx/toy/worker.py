"""The page's training process: `python -m tx toy_worker warm`, `python -m tx toy_worker train SPEC.json RUN_DIR`
and `python -m tx toy_worker serve MODEL_DIR`.

Why a process of its own: the server never imports torch for it, a Stop is a signal whose effect the OS
guarantees (SIGTERM: the loop ends after its step and keeps the model; SIGKILL if it does not), its threads and
priority are its own (SCHED_IDLE: a Translate request from another tab gets the CPU first), and it dies with the
server (the parent's pid is checked every step).

warm: the page's ready worker. It imports torch and tx and trains a tiny model for two steps (the first forward,
backward, optimizer step and greedy decode pay their one-time costs here), prints "ready", then waits on its stdin
for one job, a JSON line {"spec", "run_dir", "log"}, and runs it as `train` does, its output moved to "log". Started
before the click, it turns the click's 5 s of starting a process and importing torch into a line written to a pipe.
It ends without a job when its stdin closes (the server is gone or let it go), its parent changes, or after
TX_TOY_WARM_IDLE_S seconds (default 1800) idle, and a SIGTERM ends it at once while it waits.

train: SPEC.json is {"config": RunConfig fields, "data": optional path of the checked upload}; the events of
`tx.toy.engine` go to RUN_DIR/events.jsonl, one JSON object a line, flushed as they come; the model directory
(tx.toy.ship) to RUN_DIR/model. serve: prints tx.toy.serving's report as one JSON line.
"""
from __future__ import annotations

import json
import os
import select
import signal
import sys
import threading
import time
from pathlib import Path

from runtime.toy import EVENTS_FILE, MODEL_DIR, DataError, parse

from .engine import RunConfig, train
from .serving import serve_check
from .ship import ship

WARM_IDLE_S = float(os.environ.get("TX_TOY_WARM_IDLE_S", "1800"))  # a warm worker never given a job ends after this
# A training worker's priority until its first step: nice 10, below every request of the app, yet not SCHED_IDLE,
# which on a busy box gets next to no CPU and would leave the click unanswered. Measured under a load average of 13
# on 2 cores (python -m bench training_page): the first step came 14.9 s after the click under SCHED_IDLE from the
# start; nice 10 until step 1, 0.42-0.65 s under a load average of 10-11. Then SCHED_IDLE (lower_priority): one-way,
# as an unprivileged process may lower its priority, never raise it back.
STARTUP_NICE = 10


class StopWhen:
    """Set by SIGTERM, or when the process that started this one is gone (its pid is no longer our parent)."""

    def __init__(self):
        self.flag = threading.Event()
        self.parent = os.getppid()
        signal.signal(signal.SIGTERM, lambda *_: self.flag.set())

    def is_set(self) -> bool:
        return self.flag.is_set() or os.getppid() != self.parent


def run_training(spec_path: Path, run_dir: Path) -> int:
    spec = json.loads(spec_path.read_text(encoding="utf-8"))
    config = RunConfig(**spec["config"])
    events = open(run_dir / EVENTS_FILE, "a", encoding="utf-8")

    def emit(event: dict) -> None:
        events.write(json.dumps(event) + "\n")
        events.flush()
        if event["event"] == "step" and event["step"] == 1 and idle_after_start():
            lower_priority()  # the run has begun and been shown: from here on, only the CPU nobody else wants

    try:
        data = parse(Path(spec["data"]).read_bytes(), Path(spec["data"]).name) if spec.get("data") else None
        result = train(config, data, emit, StopWhen())
        ship(result, config, run_dir / MODEL_DIR)
        emit({"event": "saved", "model_dir": str(run_dir / MODEL_DIR)})
    except (ValueError, DataError) as e:  # a setting out of range or a file the page's check let through
        emit({"event": "error", "message": str(e)})
        return 2
    finally:
        events.close()
    return 0


def warm_up() -> None:
    """Two steps of a tiny copy model with a snapshot and an evaluation each: what a run does first, paid now."""
    tiny = RunConfig(task="copy", length=4, vocab=3, d_model=8, n_heads=1, n_layers=1, n_decoder_layers=1, d_ff=8,
                     batch_size=2, max_steps=2, eval_every=1, snapshot_every=1, log_every=1, samples=1,
                     target_accuracy=1.01, threads=int(os.environ.get("OMP_NUM_THREADS", "1")))
    train(tiny)


def wait_for_job(parent: int) -> dict | None:
    """The job line from stdin; None at its end (the server let this worker go or is gone), when the parent
    changes, or after WARM_IDLE_S."""
    deadline = time.monotonic() + WARM_IDLE_S
    while time.monotonic() < deadline and os.getppid() == parent:
        if select.select([sys.stdin], [], [], 1.0)[0]:
            line = sys.stdin.readline()
            return json.loads(line) if line.strip() else None
    return None


def run_warm() -> int:
    parent = os.getppid()
    warm_up()
    print("ready", flush=True)
    job = wait_for_job(parent)
    if job is None:
        return 0
    log = os.open(job["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    for stream in (1, 2):  # the run's output goes to its own folder, as a worker started for it writes there
        os.dup2(log, stream)
    os.close(log)
    return run_training(Path(job["spec"]), Path(job["run_dir"]))


def lower_priority() -> None:
    """TX_TOY_NICE: "idle" (SCHED_IDLE: the CPU only when nothing else wants it), a nice value, or "0" (as is)."""
    how = os.environ.get("TX_TOY_NICE", "idle")
    if how == "idle" and hasattr(os, "SCHED_IDLE"):
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    elif how not in ("0", "idle"):
        os.nice(int(how))


def idle_after_start() -> bool:
    return os.environ.get("TX_TOY_NICE", "idle") == "idle"


def main(argv: list[str]) -> int:
    if argv and argv[0] in ("warm", "train") and idle_after_start():
        os.nice(STARTUP_NICE)  # SCHED_IDLE comes with the first step (run_training): a busy box starves it before
    else:
        lower_priority()
    if argv == ["warm"]:
        return run_warm()
    if len(argv) == 3 and argv[0] == "train":
        return run_training(Path(argv[1]), Path(argv[2]))
    if len(argv) in (2, 3) and argv[0] == "serve":
        print(json.dumps(serve_check(Path(argv[1]), threads=int(argv[2]) if len(argv) == 3 else 2)))
        return 0
    print(__doc__, file=sys.stderr)
    return 2

