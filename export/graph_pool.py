"""A model's graphs exported side by side: this process and helper processes, one per spare core.

torch.export traces a graph on one thread, whatever the model's size (the tiny test translator's 12 graphs take 48 s
one after another, 1-6 s each), so where cores are spare `python -m export` hands graphs to helpers. Each helper
(`python -m export graph_pool`, started at once so that its imports overlap the first graph here) loads the model
from its directory and takes the next graph whenever it is free; this process exports too. Every file is made by the
same code from the same weights, so it is the same file whichever process made it (tests/export/test_graph_pool.py
compares the bytes). The results, and the one console line per graph, keep the jobs' order.

A helper that fails to start or dies hands its graph back, and so does one whose export of a graph raised; that
helper gets no more graphs. Another process exports the graph again (this one, once the helpers are done), so a real
error is raised here, as it would be without helpers.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import traceback
from collections import deque
from collections.abc import Callable
from pathlib import Path

MAX_PROCESSES = 4  # each process holds torch and the model (~0.5 GB for a tiny one): more cores give little more
PACKAGE_ROOT = Path(__file__).resolve().parents[1]  # where `export`, `tx` and `runtime` are importable from

# One graph's result: its report entries, its problems and its console line (JSON between processes).
Result = dict


def usable_cores(cpu_max: Path = Path("/sys/fs/cgroup/cpu.max")) -> int:
    """The cores this process may use: its CPU affinity, and a container's CPU quota where one is set."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    try:
        quota, period = cpu_max.read_text().split()[:2]  # "max 100000" (no quota) or "200000 100000" (2 cores)
        if quota != "max":
            cores = min(cores, max(1, int(quota) // int(period)))
    except (OSError, ValueError):
        pass
    return cores


def default_processes(jobs: int) -> int:
    """One process per usable core, at most MAX_PROCESSES and no more than there are graphs."""
    return max(1, min(jobs, usable_cores(), MAX_PROCESSES))


class Helper:
    """One helper process: a JSON line per graph in on its stdin, a JSON line per result out on its stdout."""

    def __init__(self, setup: dict):
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(PACKAGE_ROOT),
                                                                         os.environ.get("PYTHONPATH")]))}
        # stderr is this process's: a helper's warnings reach the console as this process's would
        self.process = subprocess.Popen([sys.executable, "-m", "export", "graph_pool"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True, encoding="utf-8", env=env)
        self.busy = False  # a graph is out with it (read and written under the pool's lock)
        self._send(setup)

    def _send(self, message: dict) -> bool:
        try:
            self.process.stdin.write(json.dumps(message) + "\n")
            self.process.stdin.flush()
            return True
        except (BrokenPipeError, OSError, ValueError):  # it died (or was stopped)
            return False

    def _receive(self) -> dict | None:
        try:
            line = self.process.stdout.readline()
        except (OSError, ValueError):
            return None
        return json.loads(line) if line.strip() else None  # end of file: it died or was stopped

    def ready(self) -> bool:
        """Whether it loaded the model (False: it failed to start, or was stopped first)."""
        message = self._receive()
        return bool(message and message.get("ready"))

    def export(self, job: dict) -> Result | None:
        """The result of one graph, or None when the helper died or its export raised (the graph is then redone)."""
        if not self._send(job):
            return None
        result = self._receive()
        return result if result and "error" not in result else None

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            try:
                stream.close()
            except OSError:  # a flush into a dead helper's pipe
                pass


class GraphPool:
    """Runs jobs 0..n-1 on this process (`export_here(i)`) and on helpers (`job_message(i)` sent to each).
    Results are emitted in the jobs' order, from this thread only: `emit` may print, and the exporter swaps
    sys.stdout while it traces (export/onnx_export.py), so a line printed from another thread could be lost."""

    def __init__(self, count: int, export_here: Callable[[int], Result], job_message: Callable[[int], dict],
                 emit: Callable[[Result], None]):
        self.export_here, self.job_message, self.emit = export_here, job_message, emit
        self.pending = deque(range(count))
        self.results: list[Result | None] = [None] * count
        self.emitted = 0
        self.lock = threading.Lock()
        self.changed = threading.Condition(self.lock)  # a result arrived, or a helper's thread ended

    def run_here(self) -> list[Result]:
        """Every job in this process, in order (no helpers)."""
        self._export_pending_here()
        return self.results

    def run(self, setup: dict, helpers: int, start: Callable[[dict], Helper] = Helper) -> list[Result]:
        """Every job, on this process and on `helpers` helper processes started with `setup`."""
        started = []
        for _ in range(helpers):
            try:
                started.append(start(setup))
            except OSError:  # no process to be had (out of memory or processes): the graphs are exported here
                break
        threads = [threading.Thread(target=self._feed, args=(helper,), daemon=True) for helper in started]
        try:
            for thread in threads:
                thread.start()
            self._export_pending_here()
            with self.lock:  # every graph is out: a helper still starting, or idle, has nothing left to do
                idle = [helper for helper in started if not helper.busy]
            for helper in idle:
                helper.stop()
            while any(thread.is_alive() for thread in threads):
                with self.changed:
                    self.changed.wait(timeout=1.0)
                self._emit_ready()
            self._export_pending_here()  # what a helper handed back after this process had finished its share
        finally:
            for helper in started:
                helper.stop()
        return self.results

    def _take(self, helper: Helper | None = None) -> int | None:
        with self.lock:
            if not self.pending:
                return None
            if helper is not None:
                helper.busy = True
            return self.pending.popleft()

    def _export_pending_here(self) -> None:
        while (index := self._take()) is not None:
            result = self.export_here(index)
            with self.lock:
                self.results[index] = result
            self._emit_ready()

    def _feed(self, helper: Helper) -> None:
        try:
            if not helper.ready():
                return
            while (index := self._take(helper)) is not None:
                result = helper.export(self.job_message(index))
                with self.lock:
                    helper.busy = False
                    if result is None:  # handed back: another process exports it again
                        self.pending.appendleft(index)
                        return
                    self.results[index] = result
                    self.changed.notify_all()
        finally:
            with self.changed:
                self.changed.notify_all()

    def _emit_ready(self) -> None:
        while True:
            with self.lock:
                if self.emitted == len(self.results) or self.results[self.emitted] is None:
                    return
                result = self.results[self.emitted]
                self.emitted += 1
            self.emit(result)


def main(argv: list[str]) -> int:
    """`python -m export graph_pool`: a helper, started by an export. Reads the setup line, then one graph per line
    until its stdin closes; writes a JSON line per result."""
    if argv or sys.stdin.isatty():
        print("python -m export graph_pool takes no arguments: an export starts it and talks to it on its stdin",
              file=sys.stderr)
        return 2
    # The exporting process stops its helpers: a Ctrl-C in the terminal reaches them too (one process group), and
    # would print a traceback each. (Killed, it closes their stdin: each ends after the graph it is on.)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    results = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # the libraries' prints go to stderr: stdout carries only results

    import torch

    from runtime.spec import ModelShape
    from tx import load_model_dir, read_model_config

    from .graph_job import all_graphs, export_one
    from .quantize import Int8Scheme

    setup = json.loads(sys.stdin.readline())
    torch.set_num_threads(setup["threads"])
    model_dir = Path(setup["model_dir"])
    stored = read_model_config(model_dir)
    specs = {spec.name: spec for spec in all_graphs(ModelShape.from_config(stored["kind"], stored["config"]))}
    scheme = setup["scheme"] and Int8Scheme(**(setup["scheme"] | {"keep_fp32": tuple(setup["scheme"]["keep_fp32"])}))
    model = load_model_dir(model_dir)
    try:
        results.write(json.dumps({"ready": True}) + "\n")
        results.flush()
        for line in sys.stdin:  # until the exporting process closes it (or dies)
            job = json.loads(line)
            try:
                result = export_one(model, stored["config"], Path(setup["onnx_dir"]), specs[job["graph"]],
                                    job["precisions"], scheme, setup["tokenizer_sha"], setup["opset"],
                                    setup["fused_attention"])
            except Exception:  # said here (stderr is the export's): the graph is exported again elsewhere
                result = {"error": traceback.format_exc()}
                print(f"a graph_pool helper could not export {job.get('graph')!r}; another process exports it again:\n"
                      f"{result['error']}", file=sys.stderr, flush=True)
            results.write(json.dumps(result) + "\n")
            results.flush()
    except BrokenPipeError:  # the exporting process is gone: nobody wants the result
        return 0
    return 0
