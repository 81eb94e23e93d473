"""The "Train your own" page's child processes, without torch: the training (`python -m tx toy_worker train`), the
export (`python -m export`) and the onnxruntime check (`python -m tx toy_worker serve`), each started as a module
(`python -m`), never by a file's path, and each ended by a Stop, a closed tab or the server's exit.

Why processes: training in the server would take its GIL and its torch thread settings from every other page;
a child process runs at the lowest priority (SCHED_IDLE) with its own thread cap, and killing it frees the CPU at once.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from runtime.toy import SPEC_FILE

ROOT = Path(__file__).resolve().parents[2]  # the project: children run from it, `python -m` finds tx and export
LOG_FILE = "worker.log"  # in the run folder: the worker's own output, for a post-mortem
# torch threads of a training. 1, measured on this 2-core machine (python -m bench training_page): the default
# model took 32 ms a step on 1 thread and 44 ms on 2, and a Translate request during a training took 1.32x its idle
# time with 1 thread and 1.50x with 2. Never more than the machine has.
THREADS = max(1, min(int(os.environ.get("TX_TRAIN_THREADS", "1")), os.cpu_count() or 1))
# The worker's priority (tx.toy.worker.lower_priority): "idle" = SCHED_IDLE, the CPU only when no other process wants
# it. Measured: a Translate request during a training took 1.32x its idle time under SCHED_IDLE, 2.16x under nice 10.
NICE = os.environ.get("TX_TRAIN_NICE", "idle")
STOP_GRACE_S = 1.0  # after SIGTERM a worker ends its step and saves; past this it is killed


def child_env() -> dict[str, str]:
    # PASSIVE: OpenMP threads sleep instead of spinning when they wait. Measured here: with the other core busy, a
    # spinning 2-thread step took 1.1-1.4 s instead of 35 ms.
    return {**os.environ, "OMP_WAIT_POLICY": "PASSIVE", "OMP_NUM_THREADS": str(THREADS), "TX_TOY_NICE": NICE,
            "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def start_training(run_dir: Path, config: dict[str, Any], data: Path | None) -> subprocess.Popen:
    (run_dir / SPEC_FILE).write_text(json.dumps({"config": {**config, "threads": THREADS},
                                                 "data": str(data) if data else None}), encoding="utf-8")
    log = open(run_dir / LOG_FILE, "w")
    return subprocess.Popen([sys.executable, "-m", "tx", "toy_worker", "train", str(run_dir / SPEC_FILE), str(run_dir)],
                            cwd=ROOT, env=child_env(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


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
    ~10 s and ~20 s."""
    return [sys.executable, "-m", "export", str(model_dir), "--precision", "fp32,int8", "--no-quality",
            "--no-walkthrough", "--no-experiments"]


def serve_command(model_dir: Path) -> list[str]:
    return [sys.executable, "-m", "tx", "toy_worker", "serve", str(model_dir), str(THREADS)]
