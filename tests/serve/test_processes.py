"""serve.processes' CPU reading (also bench clicks' measure of the Streamlit server): a process's user + system
seconds from /proc, the same figure the kernel gives os.times() for this process."""
from __future__ import annotations

import os

import pytest

from serve.processes import process_cpu_s


def test_process_cpu_s_is_this_processs_user_plus_system_time():
    sum(i * i for i in range(2_000_000))  # some CPU of our own, so the figure is not 0
    before = os.times()
    measured = process_cpu_s(os.getpid())
    after = os.times()
    tick = 1 / os.sysconf("SC_CLK_TCK")  # /proc counts whole clock ticks
    assert measured > 0
    assert before.user + before.system - tick <= measured <= after.user + after.system + tick


def test_a_process_that_is_gone_is_an_oserror():
    with pytest.raises(OSError):
        process_cpu_s(2**22 + 12345)  # above the kernel's pid_max
