"""One training at a time per server, first come first served: the "Train your own" page's slot and its queue.
Only session ids are kept here (random ones, from playground.training.files.SessionFiles): nothing of a user is
shared."""
from __future__ import annotations

import subprocess
import threading
import time

import streamlit as st


class TrainingSlot:
    """The server's one training slot and its queue of waiting sessions (ids only: nothing of a user is shared)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.holder: str | None = None
        self.process: subprocess.Popen | None = None  # the holder's worker, to free a slot whose run died
        self.since = 0.0
        self.cap_s = 0.0  # the holder's time cap: how long the others may have to wait at most
        self.queue: list[str] = []

    def try_enter(self, session: str, cap_s: float) -> int:
        """0 when `session` now holds the slot; else its place in the queue (1 = next)."""
        with self.lock:
            if self.holder is not None and self.process is not None and self.process.poll() is not None \
                    and self.holder != session:
                self.holder = None  # its run ended without leaving (the session vanished): free the slot
            if session not in self.queue and self.holder != session:
                self.queue.append(session)
            if self.holder in (None, session) and self.queue and self.queue[0] == session:
                self.queue.pop(0)
                self.holder, self.since, self.cap_s, self.process = session, time.monotonic(), cap_s, None
            return 0 if self.holder == session else self.queue.index(session) + 1

    def attach(self, session: str, process: subprocess.Popen) -> None:
        with self.lock:
            if self.holder == session:
                self.process = process

    def leave(self, session: str) -> None:
        with self.lock:
            if session in self.queue:
                self.queue.remove(session)
            if self.holder == session:
                self.holder, self.process = None, None

    def wait_left(self) -> float:
        """Seconds the current run may still take at most (its time cap), for the waiting sessions' message."""
        with self.lock:
            return max(0.0, self.since + self.cap_s - time.monotonic()) if self.holder else 0.0


@st.cache_resource(show_spinner=False)
def slot() -> TrainingSlot:
    return TrainingSlot()
