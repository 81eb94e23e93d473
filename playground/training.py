"""The "Train your own" page's server side, without torch: one training at a time per server, each session's
files in a temporary folder of its own, and the work done by child processes (`tx.toy.worker`, `python -m export`)
that a Stop, a closed tab or the server's exit ends.

Why processes: training in the server would take its GIL and its torch thread settings from every other page;
a child process runs at the lowest priority (SCHED_IDLE) with its own thread cap, and killing it frees the CPU at once.
"""
from __future__ import annotations

import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
import weakref
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import streamlit as st

from runtime import providers

ROOT = Path(__file__).resolve().parent.parent
USERDATA_SCRIPT = ROOT / "tx" / "toy" / "userdata.py"  # stdlib only: checks an upload without importing torch
EVENTS_FILE, MODEL_DIR, SPEC_FILE, LOG_FILE = "events.jsonl", "model", "spec.json", "worker.log"
# torch threads of a training. 1, measured on this 2-core machine (python -m playground.bench_training): the default
# model took 32 ms a step on 1 thread and 44 ms on 2, and a Translate request during a training took 1.32x its idle
# time with 1 thread and 1.50x with 2. Never more than the machine has.
THREADS = max(1, min(int(os.environ.get("TX_TRAIN_THREADS", "1")), os.cpu_count() or 1))
# The worker's priority (tx.toy.worker.lower_priority): "idle" = SCHED_IDLE, the CPU only when no other process wants
# it. Measured: a Translate request during a training took 1.32x its idle time under SCHED_IDLE, 2.16x under nice 10.
NICE = os.environ.get("TX_TRAIN_NICE", "idle")
KEPT_RUNS = 3  # a session's finished runs kept for comparing; older ones are deleted with their files
STOP_GRACE_S = 1.0  # after SIGTERM a worker ends its step and saves; past this it is killed
# tx/toy/userdata.py's limits, said before the upload (tests/app/test_training_parts.py checks they agree)
UPLOAD_MAX_BYTES = 1_000_000
UPLOAD_LIMITS = "At most 5,000 rows, 30 tokens a side, 2,000 distinct tokens, 1 MB"
UPLOAD_NAMES = {"tsv": "upload.tsv", "csv": "upload.csv", "txt": "upload.tsv"}  # never the uploader's own name


# ---------------------------------------------------------------- each session's own folder

def remove_folder(folder: str) -> None:
    """A session's folder and, with it, runtime's shared onnxruntime sessions of its files: runtime keeps every
    session for the life of the process (right for the shipped models), a toy model's are dead weight once it goes."""
    providers.clear_sessions(under=folder)
    shutil.rmtree(folder, ignore_errors=True)


class SessionFiles:
    """A temporary folder for one browser session; deleted when the session object is collected (the session
    ended) or the server exits, and runs beyond KEPT_RUNS deleted as new ones start."""

    def __init__(self):
        self.id = uuid.uuid4().hex
        self.root = Path(tempfile.mkdtemp(prefix="tx-train-"))
        self._cleanup = weakref.finalize(self, remove_folder, str(self.root))
        self.counter = 0

    def new_run_dir(self) -> Path:
        self.counter += 1
        path = self.root / f"run-{self.counter}"
        path.mkdir()
        return path

    def forget(self, run_dir: str | Path) -> None:
        path = Path(run_dir).resolve()
        if path.parent == self.root.resolve():
            remove_folder(str(path))

    def remove(self) -> None:
        self._cleanup()


def session_files() -> SessionFiles:
    files = st.session_state.get("train_files")
    if files is None or not files.root.is_dir():
        files = st.session_state["train_files"] = SessionFiles()
    return files


# ---------------------------------------------------------------- uploads

def save_upload(files: SessionFiles, name: str, raw: bytes) -> Path:
    """The upload under a fixed name in the session's folder (its own name is never used as a path)."""
    suffix = name.rsplit(".", 1)[-1].lower() if "." in name else "tsv"
    path = files.root / UPLOAD_NAMES.get(suffix, "upload.tsv")
    path.write_bytes(raw)
    return path


def check_upload(path: Path) -> dict[str, Any]:
    """tx/toy/userdata.py's verdict on the saved file: {"ok": true, rows, vocabulary, kind} or {"ok": false, error}."""
    done = subprocess.run([sys.executable, str(USERDATA_SCRIPT), str(path)], capture_output=True, text=True,
                          timeout=30, cwd=ROOT)
    try:
        return json.loads(done.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        return {"ok": False, "error": f"the file could not be checked ({done.stderr.strip()[-300:] or 'no output'})"}


# ---------------------------------------------------------------- the child processes

def child_env() -> dict[str, str]:
    # PASSIVE: OpenMP threads sleep instead of spinning when they wait. Measured here: with the other core busy, a
    # spinning 2-thread step took 1.1-1.4 s instead of 35 ms.
    return {**os.environ, "OMP_WAIT_POLICY": "PASSIVE", "OMP_NUM_THREADS": str(THREADS), "TX_TOY_NICE": NICE,
            "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def start_training(run_dir: Path, config: dict[str, Any], data: Path | None) -> subprocess.Popen:
    (run_dir / SPEC_FILE).write_text(json.dumps({"config": {**config, "threads": THREADS},
                                                 "data": str(data) if data else None}), encoding="utf-8")
    log = open(run_dir / LOG_FILE, "w")
    return subprocess.Popen([sys.executable, "-m", "tx.toy.worker", "train", str(run_dir / SPEC_FILE), str(run_dir)],
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


@dataclass
class EventReader:
    """Reads the complete new lines of a run's events.jsonl (a line being written stays for the next read)."""

    path: Path
    offset: int = 0
    events: list[dict] = field(default_factory=list)

    def read(self) -> list[dict]:
        if not self.path.is_file():
            return []
        with open(self.path, "rb") as f:
            f.seek(self.offset)
            chunk = f.read()
        complete = chunk[:chunk.rfind(b"\n") + 1]
        self.offset += len(complete)
        new = [json.loads(line) for line in complete.decode("utf-8").splitlines() if line.strip()]
        self.events += new
        return new


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
    walkthrough graphs: the Walkthrough page walks the shipped models, and they cost a toy export ~10 s."""
    return [sys.executable, "-m", "export", str(model_dir), "--precision", "fp32,int8", "--no-quality",
            "--no-walkthrough"]


def serve_command(model_dir: Path) -> list[str]:
    return [sys.executable, "-m", "tx.toy.worker", "serve", str(model_dir), str(THREADS)]


# ---------------------------------------------------------------- downloads

def model_zip(model_dir: Path) -> bytes:
    """The model directory as a zip, paths relative to it (what `python -m export` and OnnxTranslator read)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        for path in sorted(model_dir.rglob("*")):
            if path.is_file():
                z.write(path, Path("model") / path.relative_to(model_dir))
    return buffer.getvalue()


def held_out_first(model_dir: Path) -> str:
    """The first held-out source (tx.toy.ship's heldout.tsv): the Try-it box's first input, never trained on."""
    path = model_dir / "heldout.tsv"
    lines = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
    return lines[0].split("\t")[0] if lines else ""


def onnx_files(model_dir: Path) -> list[Path]:
    return sorted((model_dir / "onnx").glob("*.onnx"))
