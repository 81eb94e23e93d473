"""The "Train your own" page's child processes, without torch: the training (a warm `python -m tx toy_worker warm`
given the job), the export (`python -m export`) and the onnxruntime check (`python -m tx toy_worker serve`), each
started as a module (`python -m`), never by a file's path, and each ended by a Stop, a closed tab or the server's exit.

The server keeps one spare worker warm (`Spare`): started when the page is drawn and none is alive (so again after
each training), it has imported torch and run two tiny steps before anyone clicks Train, so the click only writes the
job to its stdin. Measured by `python -m bench training_page` on a busy 2-core box: the first step 0.42-0.65 s after
the click, against 7-8 s for a process started at the click. Still one training
per server (the slot), and the worker that trains is stopped (SIGTERM, then SIGKILL) as a worker started for the
run was; the spare itself ends with the server (its stdin closes), after TX_TOY_WARM_IDLE_S idle, or on SIGTERM.

Why processes: training in the server would take its GIL and its torch thread settings from every other page;
a child process runs at the lowest priority (SCHED_IDLE) with its own thread cap, and killing it frees the CPU at once.
"""
from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from runtime.toy import SPEC_FILE

ROOT = Path(__file__).resolve().parents[2]  # the project: children run from it, `python -m` finds tx and export
LOG_FILE = "worker.log"  # in the run folder: the worker's own output, for a post-mortem
SPARE_LOG = Path(tempfile.gettempdir()) / "tx-train-spare.log"  # a spare worker's output before it has a run
# torch threads of a training. 1, measured on this 2-core machine (python -m bench training_page): the default
# model took 32 ms a step on 1 thread and 44 ms on 2, and a Translate request during a training took 1.32x its idle
# time with 1 thread and 1.50x with 2. Never more than the machine has.
THREADS = max(1, min(int(os.environ.get("TX_TRAIN_THREADS", "1")), os.cpu_count() or 1))
# The worker's priority (tx.toy.worker.lower_priority): "idle" = SCHED_IDLE, the CPU only when no other process wants
# it. Measured: a Translate request during a training took 1.32x its idle time under SCHED_IDLE, 2.16x under nice 10.
NICE = os.environ.get("TX_TRAIN_NICE", "idle")
STOP_GRACE_S = 1.0  # after SIGTERM a worker ends its step and saves; past this it is killed
# "0": no spare worker; each training starts its own process (and pays ~5 s of importing torch after the click).
WARM = os.environ.get("TX_TRAIN_WARM", "1") != "0"


def child_env() -> dict[str, str]:
    # PASSIVE: OpenMP threads sleep instead of spinning when they wait. Measured here: with the other core busy, a
    # spinning 2-thread step took 1.1-1.4 s instead of 35 ms.
    return {**os.environ, "OMP_WAIT_POLICY": "PASSIVE", "OMP_NUM_THREADS": str(THREADS), "TX_TOY_NICE": NICE,
            "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def start_warm() -> subprocess.Popen:
    """A worker that gets ready (torch imported, two tiny steps run) and then waits on its stdin for a job."""
    with open(SPARE_LOG, "w") as log:  # until a job moves its output to the run's folder
        return subprocess.Popen([sys.executable, "-m", "tx", "toy_worker", "warm"], cwd=ROOT, env=child_env(),
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True,
                                start_new_session=True)


class Spare:
    """The server's one warm worker, waiting for the next training; the slot lets one training run at a time, so
    one spare is enough. `keep` starts it (each time the page is drawn and none is alive), `take` hands it to a
    training and forgets it: from then on it is that run's worker, stopped like any other."""

    def __init__(self):
        self.lock = threading.Lock()
        self.process: subprocess.Popen | None = None

    def keep(self) -> None:
        if not WARM:
            return
        with self.lock:
            if self.process is None or self.process.poll() is not None:
                self.process = start_warm()

    def take(self) -> subprocess.Popen:
        """The spare if it is alive (ready, or still getting ready: the job then waits in its stdin), else a new one."""
        with self.lock:
            process, self.process = self.process, None
        return process if process is not None and process.poll() is None else start_warm()

    def ready(self, timeout_s: float) -> bool:
        """Whether the spare has printed "ready" within `timeout_s` (for the benchmark: a click on a warm page)."""
        process = self.process
        if process is None or process.stdout is None:
            return False
        return bool(select.select([process.stdout], [], [], timeout_s)[0]) and process.stdout.readline() == "ready\n"

    def close(self) -> None:
        with self.lock:
            process, self.process = self.process, None
        stop(process)


SPARE = Spare()  # per server process: the page module is rerun, this module is imported once


def start_training(run_dir: Path, config: dict[str, Any], data: Path | None) -> subprocess.Popen:
    """Write the run's spec and hand it to the spare worker (a new one if there is none); its process trains."""
    (run_dir / SPEC_FILE).write_text(json.dumps({"config": {**config, "threads": THREADS},
                                                 "data": str(data) if data else None}), encoding="utf-8")
    job = json.dumps({"spec": str(run_dir / SPEC_FILE), "run_dir": str(run_dir), "log": str(run_dir / LOG_FILE)})
    process = SPARE.take()
    try:
        send(process, job)
    except OSError:  # it died between its check and the write (killed from outside): a new one
        stop(process)
        process = start_warm()
        send(process, job)
    return process


def send(process: subprocess.Popen, job: str) -> None:
    process.stdin.write(job + "\n")
    process.stdin.close()  # one job a worker: it ends with its run


def stop(process: subprocess.Popen | None) -> None:
    """SIGTERM (the worker finishes its step and saves), then SIGKILL if it is still there after STOP_GRACE_S."""
    if process is None or process.poll() is not None:
        return
    try:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=STOP_GRACE_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=5)
    except ProcessLookupError:
        pass


def run_child(command: list[str], cwd: Path, on_wait: Callable[[float], None], timeout_s: float) -> tuple[int, str]:
    """Run a short child (export, serve) while calling on_wait(seconds) every ~0.5 s: a Streamlit call there lets a
    Stop or a closed tab interrupt the page, and the finally kills the child."""
    process = subprocess.Popen(command, cwd=cwd, env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, start_new_session=True)
    started = time.monotonic()
    try:
        while process.poll() is None:
            if time.monotonic() - started > timeout_s:
                raise TimeoutError(f"{' '.join(command[1:3])} took more than {timeout_s:.0f} s")
            on_wait(time.monotonic() - started)
            time.sleep(0.5)
        return process.returncode, process.stdout.read()
    finally:
        stop(process)


def export_command(model_dir: Path) -> list[str]:
    """The project's exporter as `make run` uses it: fp32 + int8, every graph validated against PyTorch. No text-level
    check: it reads the translator's German/English test set (tx.toy.serving checks the toy outputs instead). No
    walkthrough or experiment graphs: those pages work on the shipped models, and they would cost a toy export
    ~10 s and ~20 s. As many processes as the training had threads: the app's other users keep the other cores."""
    return [sys.executable, "-m", "export", str(model_dir), "--precision", "fp32,int8", "--no-quality",
            "--no-walkthrough", "--no-experiments", "--processes", str(THREADS)]


def serve_command(model_dir: Path) -> list[str]:
    return [sys.executable, "-m", "tx", "toy_worker", "serve", str(model_dir), str(THREADS)]
