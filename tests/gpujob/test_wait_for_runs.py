"""gpujob.job.wait_for_runs: a call goes on to its shards as soon as its runs end, not at the next progress line (the
CLI's default poll is 30 s of device time), and it still prints a line every poll and one at the end."""
from __future__ import annotations

import time
from pathlib import Path
from types import SimpleNamespace

from gpujob import job
from gpujob.runs import FINISHED, RUNNING


def fake_runs(monkeypatch, ends_after: float):
    """One run that trains for `ends_after` seconds from now (its state and metrics as job reads them)."""
    end = time.monotonic() + ends_after
    monkeypatch.setattr(job, "state", lambda run: RUNNING if time.monotonic() < end else FINISHED)
    monkeypatch.setattr(job, "last_metrics", lambda run: {"step": "200" if time.monotonic() >= end else "100"})
    return [SimpleNamespace(name="translate-v2", out_dir=Path("/nonexistent"))]


def test_a_run_that_ends_is_noticed_at_once_not_a_poll_later(monkeypatch):
    runs = fake_runs(monkeypatch, ends_after=0.3)
    lines: list[str] = []
    started = time.monotonic()
    job.wait_for_runs(SimpleNamespace(runs=runs, wait=120.0, poll=30.0), lines.append, check_every=0.05)
    assert time.monotonic() - started < 10, "waited for the next progress line instead of the run's end"
    assert len(lines) == 1 and lines[0].endswith(f"translate-v2 {FINISHED} step 200"), lines


def test_a_line_every_poll_while_training_and_one_at_the_end(monkeypatch):
    runs = fake_runs(monkeypatch, ends_after=0.6)
    lines: list[str] = []
    job.wait_for_runs(SimpleNamespace(runs=runs, wait=120.0, poll=0.15), lines.append, check_every=0.05)
    assert len(lines) >= 3, lines  # about 0.15, 0.3 and 0.45 s, then the end
    assert all(f"{RUNNING} step 100" in line for line in lines[:-1]), lines
    assert lines[-1].endswith(f"{FINISHED} step 200"), lines


def test_the_wait_ends_the_call_while_the_run_still_trains(monkeypatch):
    runs = fake_runs(monkeypatch, ends_after=60.0)
    lines: list[str] = []
    started = time.monotonic()
    job.wait_for_runs(SimpleNamespace(runs=runs, wait=0.4, poll=30.0), lines.append, check_every=0.05)
    assert time.monotonic() - started < 10
    assert len(lines) == 1 and f"{RUNNING} step 100" in lines[0], lines
