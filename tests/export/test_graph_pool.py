"""Graphs exported side by side (export/graph_pool.py): every job is done once, results and console lines keep the
jobs' order whoever finished first, a helper that fails to start, hangs or dies costs no graph, and a real helper
process makes byte for byte the files this process makes."""
from __future__ import annotations

import hashlib
import os
import re
import signal
import threading
import time

import pytest
from export_fixtures import exported

from export.graph_job import all_graphs, export_one
from export.graph_pool import GraphPool, Helper, default_processes, usable_cores
from export.pipeline import ExportOptions, int8_scheme
from runtime.cpu import cpu_has_vnni
from runtime.spec import ModelShape
from tx import load_model_dir, read_model_config


class FakeHelper:
    """Stands in for a helper process: `delays[job]` seconds per graph; `ready_after` None = never ready."""

    def __init__(self, setup: dict, delays: dict | None = None, ready_after: float | None = 0.0, dies: bool = False):
        self.busy, self.done, self.lost, self.stopped = False, [], [], threading.Event()
        self.delays, self.ready_after, self.dies = delays or {}, ready_after, dies

    def ready(self) -> bool:
        if self.ready_after is None:
            self.stopped.wait(timeout=30)  # as a real one's readline: until it is stopped
            return False
        time.sleep(self.ready_after)
        return not self.stopped.is_set()

    def export(self, job: dict) -> dict | None:
        time.sleep(self.delays.get(job["graph"], 0.01))
        if self.dies:  # on its first graph
            self.lost.append(job["graph"])
            return None
        self.done.append(job["graph"])
        return {"entries": [{"graph": job["graph"], "by": "helper"}], "problems": [], "line": f"line {job['graph']}"}

    def stop(self) -> None:
        self.stopped.set()


def run_pool(names: list[str], helpers: list[FakeHelper], here_delay: float = 0.05):
    """The pool over jobs `names` with these fake helpers; returns (results, emitted lines, graphs done here,
    the threads emit ran on)."""
    done_here, lines, threads = [], [], set()

    def export_here(index: int) -> dict:
        time.sleep(here_delay)
        done_here.append(names[index])
        return {"entries": [{"graph": names[index], "by": "here"}], "problems": [], "line": f"line {names[index]}"}

    def emit(result: dict) -> None:
        threads.add(threading.current_thread())
        lines.append(result["line"])

    pool = GraphPool(len(names), export_here, lambda i: {"graph": names[i], "precisions": ["fp32"]}, emit)
    queue = iter(helpers)
    results = pool.run({}, len(helpers), start=lambda setup: next(queue))
    return results, lines, done_here, threads


NAMES = [f"g{i}" for i in range(8)]


def test_every_job_is_done_once_and_emitted_in_order_from_this_thread():
    # the helper's first graph is slow, so later graphs finish before it: the lines still come in the jobs' order
    helper = FakeHelper({}, delays={"g1": 0.25})
    results, lines, done_here, threads = run_pool(NAMES, [helper])
    assert lines == [f"line {n}" for n in NAMES]
    assert [r["entries"][0]["graph"] for r in results] == NAMES
    assert sorted(done_here + helper.done) == NAMES and not set(done_here) & set(helper.done)
    assert helper.done and done_here  # both worked
    assert threads == {threading.main_thread()}  # the exporter swaps sys.stdout: emit only where it is not swapped


def test_a_helper_that_fails_to_start_leaves_every_graph_to_this_process():
    helper = FakeHelper({}, ready_after=0.0)
    helper.stopped.set()  # ready() is False: its process ended before it loaded the model
    results, lines, done_here, _ = run_pool(NAMES, [helper])
    assert done_here == NAMES and lines == [f"line {n}" for n in NAMES] and not helper.done


def test_a_helper_that_cannot_be_started_leaves_every_graph_to_this_process():
    def refused(setup: dict) -> FakeHelper:
        raise OSError(11, "Resource temporarily unavailable")  # fork refused

    done_here, lines = [], []
    pool = GraphPool(3, lambda i: done_here.append(i) or {"line": str(i)}, lambda i: {}, lambda r: lines.append(r))
    pool.run({}, 2, start=refused)
    assert done_here == [0, 1, 2] and [r["line"] for r in lines] == ["0", "1", "2"]


def test_a_helper_that_never_gets_ready_is_stopped_once_the_graphs_are_done():
    helper = FakeHelper({}, ready_after=None)
    started = time.monotonic()
    _, lines, done_here, _ = run_pool(NAMES[:3], [helper])
    assert done_here == NAMES[:3] and len(lines) == 3
    assert helper.stopped.is_set() and time.monotonic() - started < 10  # not the 30 s it would hang


def test_the_graph_of_a_helper_that_dies_is_exported_by_another():
    dying = FakeHelper({}, dies=True)
    working = FakeHelper({}, delays={name: 0.03 for name in NAMES})
    results, lines, done_here, _ = run_pool(NAMES, [dying, working], here_delay=0.1)
    assert len(dying.lost) == 1 and (done_here + working.done).count(dying.lost[0]) == 1
    assert sorted(done_here + dying.done + working.done) == NAMES
    assert lines == [f"line {n}" for n in NAMES] and all(r is not None for r in results)


def test_default_processes_is_one_per_core_at_most_four_and_no_more_than_the_graphs():
    assert default_processes(1) == 1
    assert 1 <= default_processes(100) <= 4


def test_usable_cores_heeds_a_container_quota(tmp_path):
    cpu_max = tmp_path / "cpu.max"
    cpu_max.write_text("max 100000\n")
    unlimited = usable_cores(cpu_max)
    assert unlimited >= 1
    cpu_max.write_text("100000 100000\n")
    assert usable_cores(cpu_max) == 1
    cpu_max.write_text("50000 100000\n")  # half a core: still one process
    assert usable_cores(cpu_max) == 1
    assert usable_cores(tmp_path / "missing") == unlimited


def without_seconds(entry: dict) -> dict:
    return {k: v for k, v in entry.items() if k != "seconds_to_make"}


@pytest.mark.slow
@pytest.mark.exports
def test_a_helper_process_makes_the_same_files_as_this_process(tmp_path, capfd):
    model_dir = exported("translate")
    stored = read_model_config(model_dir)
    specs = {s.name: s for s in all_graphs(ModelShape.from_config(stored["kind"], stored["config"]))}
    scheme = int8_scheme(ExportOptions(), cpu_has_vnni())
    here_dir, helper_dir = tmp_path / "here", tmp_path / "helper"
    here_dir.mkdir()
    helper_dir.mkdir()
    helper = Helper({"model_dir": str(model_dir), "onnx_dir": str(helper_dir), "scheme": scheme.as_dict(),
                     "tokenizer_sha": "abc", "opset": 20, "fused_attention": True, "threads": 1})
    try:
        assert helper.ready()
        os.kill(helper.process.pid, signal.SIGINT)  # a Ctrl-C is the exporting process's to act on
        jobs = [("logit_lens", ["fp32"]), ("decoder", ["fp32", "int8"])]  # shown fp32; served fp32 + int8
        from_helper = [helper.export({"graph": name, "precisions": precisions}) for name, precisions in jobs]
        assert helper.export({"graph": "no_such_graph", "precisions": ["fp32"]}) is None  # its error: redone here
        said = capfd.readouterr().err  # the helper's stderr is this process's
        assert "could not export 'no_such_graph'" in said and "KeyError" in said, said[-2000:]
        assert helper.export({"graph": "logit_lens", "precisions": ["fp32"]}) is not None  # and it goes on
    finally:
        helper.stop()
    assert helper.process.returncode is not None
    model = load_model_dir(model_dir)
    for (name, precisions), theirs in zip(jobs, from_helper, strict=True):
        here = export_one(model, stored["config"], here_dir, specs[name], precisions, scheme, "abc", 20)
        entries, problems, line = here["entries"], here["problems"], here["line"]
        assert not problems and not theirs["problems"]
        assert [without_seconds(e) for e in theirs["entries"]] == [without_seconds(e) for e in entries]
        seconds = re.compile(r" in [0-9.]+s$")
        assert seconds.sub("", theirs["line"]) == seconds.sub("", line)
        for precision in precisions:
            file_name = specs[name].file_name(precision)
            assert hashlib.sha256((helper_dir / file_name).read_bytes()).digest() == \
                hashlib.sha256((here_dir / file_name).read_bytes()).digest(), file_name
