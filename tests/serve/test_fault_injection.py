"""serve.fault_injection's freeze: a process counts as stopped only once every one of its threads is, since a
request sent between the SIGSTOP and the stop was still answered (test_serve_front's 504 check saw /health 200)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from serve.fault_injection import thread_states, wait_stopped

# a process with several busy threads: each must be stopped, not only the one that takes the signal
SPINNING_THREADS = ("import threading\n"
                    "def spin():\n    while True: pass\n"
                    "for _ in range(3): threading.Thread(target=spin, daemon=True).start()\n"
                    "spin()\n")


@pytest.fixture
def spinning():
    process = subprocess.Popen([sys.executable, "-c", SPINNING_THREADS])
    try:
        deadline = time.monotonic() + 30
        while len(thread_states(process.pid)) < 4 and time.monotonic() < deadline:
            time.sleep(0.01)
        yield process
    finally:
        process.kill()
        process.wait()


def test_after_wait_stopped_every_thread_is_stopped(spinning):
    os.kill(spinning.pid, signal.SIGSTOP)
    wait_stopped(spinning.pid)
    states = thread_states(spinning.pid)
    assert len(states) >= 4 and set(states) == {"T"}, states
    os.kill(spinning.pid, signal.SIGCONT)


def test_a_process_that_was_not_stopped_is_a_runtimeerror_naming_its_threads(spinning):
    with pytest.raises(RuntimeError, match=rf"process {spinning.pid} did not stop within 0.2 s: its threads are \["):
        wait_stopped(spinning.pid, timeout_s=0.2)
