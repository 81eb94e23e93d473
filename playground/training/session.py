"""One browser session's training, as one object: its files, its runs, its checked upload, and each run's lifecycle
slot -> worker -> export -> serve -> stop -> cleanup, which the "Train your own" page asks for and never runs itself.

Every wait (for the slot, for the worker, for the export) calls into Streamlit: that is where a Stop click, any other
click or a closed tab interrupts the page's script, and the `finally` here then ends the child process and leaves the
slot. A session's files go with it (SessionFiles), and only KEPT_RUNS runs are kept.
"""
from __future__ import annotations

import json
import threading
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import streamlit as st

from runtime import toy

from . import live, processes
from .files import SessionFiles, save_upload
from .runs import RunRecord, run_label
from .slot import slot

STATE_KEY = "train_session"  # where the page's session state keeps a browser session's TrainingSession
KEPT_RUNS = 3  # a session's finished runs kept for comparing; older ones are deleted with their files
CHILD_TIMEOUT_S = 300  # the export, and then the onnxruntime check, each end here at the latest
EXPORT_SLOT_CAP_S = 120  # what the waiting sessions are told an export may take at most
# How long a new script run waits for the one a click interrupted to end its worker and read its last events: the
# interrupted run reaches its `finally` within a poll (0.4 s), SIGTERM lets the worker save for STOP_GRACE_S, then
# SIGKILL; the rest is margin for a busy machine.
FINISH_WAIT_S = processes.STOP_GRACE_S + 2.0


@dataclass
class CheckedUpload:
    """An upload and runtime.toy's verdict on it, kept so a rerun with the same file does not check it again."""

    key: tuple[str, int, int]  # (name, bytes, hash): the same file uploaded again is the same key
    verdict: dict[str, Any]  # runtime.toy.check's {"ok": true, rows, vocabulary, ...} or {"ok": false, error}
    path: str | None = None  # where it was saved in the session's folder, when it is good


class TrainingSession:
    """A browser session's training: files, runs and the checked upload, and the lifecycle of each run."""

    def __init__(self):
        self.files = SessionFiles()
        self.records: list[RunRecord] = []
        self.upload: CheckedUpload | None = None
        # run number -> set once that run's train() has stopped its worker and read its last events. A click during
        # a training starts the next script run at once, in another thread (Streamlit's fast reruns), while the
        # interrupted one is still in its `finally`: the new run waits on this before it shows the run.
        self.ended: dict[int, threading.Event] = {}
        # run number -> the page's widget values when that run started, kept while it trains and dropped when it ends
        # by itself: a run still listed here was ended by a click, which the next script run names (ended_by).
        self.watching: dict[int, dict[str, Any]] = {}

    @classmethod
    def of(cls, state: MutableMapping) -> TrainingSession:
        """The session kept in Streamlit's session state (a new one, the first time or once its folder is gone)."""
        session = state.get(STATE_KEY)
        if session is None or not session.files.root.is_dir():
            session = state[STATE_KEY] = cls()
        return session

    @property
    def id(self) -> str:
        """The random id the server's slot and queue know this session by (nothing of the user's)."""
        return self.files.id

    def check_upload(self, name: str, raw: bytes) -> CheckedUpload:
        """runtime.toy's verdict on an upload, in this process (no torch); a good file is saved for the worker."""
        key = (name, len(raw), hash(raw))
        if self.upload is None or self.upload.key != key:
            verdict = toy.check(raw, name)
            path = str(save_upload(self.files, name, raw)) if verdict["ok"] else None
            self.upload = CheckedUpload(key, verdict, path)
        return self.upload

    def finalize(self, state: Mapping[str, Any] | None = None) -> None:
        """A run interrupted while this session watched it (Stop, another click): wait (at most FINISH_WAIT_S) for
        the interrupted script run to end its worker, which saves its model and writes `done` and `saved` on a
        SIGTERM, then read what it wrote. Read too early, a saved run would say it saved nothing. `state`: the
        page's session state in the script run the click started, whose changed widget names the click."""
        for record in self.records:
            ended = self.ended.get(record.number)
            if ended is not None:
                ended.wait(FINISH_WAIT_S)
            if not record.finished:
                record.read_events()
                record.finished = True
            if state is not None and record.number in self.watching and (ended is None or ended.is_set()):
                record.ended_by = ended_by(self.watching.pop(record.number), state)

    def new_run(self, config: dict[str, Any]) -> RunRecord:
        """The next run's record and folder; the oldest runs' files go, so that a session keeps KEPT_RUNS."""
        number = (self.records[-1].number if self.records else 0) + 1
        dropped = max(0, len(self.records) - (KEPT_RUNS - 1))
        for old in self.records[:dropped]:
            self.files.forget(old.run_dir)
            self.ended.pop(old.number, None)
        del self.records[:dropped]
        record = RunRecord(number, config, str(self.files.new_run_dir()), run_label(number, config))
        self.records.append(record)
        return record

    def train(self, record: RunRecord, data_path: str | None, cap_s: float) -> None:
        """Wait for the server's slot, start the worker, watch it until it ends; whatever ends the watch (its end,
        a Stop, another click, a closed tab), the worker is stopped, the slot left and its last events read."""
        process, ended = None, self.ended.setdefault(record.number, threading.Event())
        self.watching[record.number] = widget_values(st.session_state)
        try:
            live.wait_for_the_slot(self.id, cap_s, "train")
            process = processes.start_training(Path(record.run_dir), record.config,
                                               Path(data_path) if data_path else None)
            slot().attach(self.id, process)
            live.watch(record, process, cap_s)
            self.watching.pop(record.number, None)  # it ended by itself: no click to name
        finally:
            processes.stop(process)
            slot().leave(self.id)
            record.read_events()
            record.finished = True
            ended.set()

    def export(self, record: RunRecord, progress) -> None:
        """Export the run's model (`python -m export`), then check it through onnxruntime (the worker's serve); the
        queue, the Stop button, the progress and a failure are drawn in `progress`, the page's one st.empty() slot
        that it draws on every run, so nothing below it moves between the export's run and the next."""
        try:
            with progress.container():
                live.wait_for_the_slot(self.id, EXPORT_SLOT_CAP_S, "export")
                st.button("Stop", key="train_export_stop")  # any click ends the export: run_child's finally kills it
                status = st.empty()
            code, output = processes.run_child(
                processes.export_command(record.model_dir), processes.ROOT,
                lambda s: status.info(f"Exporting with `python -m export` ({s:.0f} s)…"), timeout_s=CHILD_TIMEOUT_S)
            if code != 0:
                progress.error(f"The export failed validation:\n\n```\n{output[-1500:]}\n```")
                return
            record.exported = {"log": output}
            code, output = processes.run_child(
                processes.serve_command(record.model_dir), processes.ROOT,
                lambda s: status.info(f"Translating the held-out set with PyTorch and onnxruntime, then timing "
                                      f"({s:.0f} s)…"), timeout_s=CHILD_TIMEOUT_S)
            if code != 0:
                progress.error(f"The onnxruntime check failed:\n\n```\n{output[-1500:]}\n```")
                return
            record.served = json.loads(output.strip().splitlines()[-1])
            progress.empty()
        finally:
            slot().leave(self.id)


# A widget's key (or its start) -> what a click on it did, as the run's summary says it ("stopped ... because you
# changed the task"). The knobs are disabled while a run trains; what can still be clicked is Stop, the queue's
# button and the elements the page drew before the run, below it (the run's view, Export, Try it, the comparison).
CLICKS = (("train_stop", "you pressed Stop"), ("train_leave_queue", "you left the queue"),
          ("train_task", "you changed the task"), ("train_export", "you clicked Export"),
          ("train_run_", "you picked another run"), ("train_map_", "you changed the attention map's view"),
          ("train_compare_", "you changed the runs compared"), ("train_input", "you typed in Try it"),
          ("train_precision", "you changed Try it's precision"), ("train_download", "you clicked a download"),
          ("train_upload", "you changed the uploaded file"), ("train_", "you changed a setting"))
ELSEWHERE = "a click elsewhere (another page, a control outside the page's own) ended it"
# Train is disabled while its run trains, but a second click sent before the browser drew it disabled (a double
# click) still reaches the server: it reruns the page, which ends the run, and Streamlit drops the disabled
# button's click, so no new run starts.
TRAIN_AGAIN = "you pressed Train again while it trained (Train is disabled during a run: press it once a run ended)"
TRAIN_REQUEST = "train_requested"  # set by Train's callback: the next script run is the one that trains


def request_training(state: MutableMapping) -> None:
    """Train's on_click: it runs before the script run the click starts, and only while Train is enabled."""
    state[TRAIN_REQUEST] = True


def training_requested(state: MutableMapping) -> bool:
    """Whether this script run is the one a Train click started (once: a later rerun is not)."""
    return state.pop(TRAIN_REQUEST, False) is True


def widget_values(state: Mapping[str, Any]) -> dict[str, Any]:
    """The page's widget values ("train_…" keys) as plain values, to compare after a click."""
    values = {}
    for key in list(state.keys()):
        if key.startswith("train_") and key not in (STATE_KEY, "train_go", TRAIN_REQUEST):
            value = state.get(key)
            values[key] = value if isinstance(value, (str, int, float, bool, tuple, type(None))) else repr(value)
    return values


def ended_by(before: dict[str, Any], state: Mapping[str, Any]) -> str:
    """Which click ended a run: the first widget whose value changed since the run started (a button clicked is
    True), in words (CLICKS)."""
    if state.get("train_go") is True:  # widget_values leaves Train out: a click that started a run is no ender
        return TRAIN_AGAIN
    now = widget_values(state)
    changed = [key for key, value in now.items() if value != before.get(key, False if value is True else value)]
    changed.sort(key=lambda key: key != "train_stop")  # Stop first: it is the one that says what the user meant
    for key in changed:
        for start, words in CLICKS:
            if key.startswith(start):
                return words
    return ELSEWHERE
