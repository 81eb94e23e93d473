"""serve/front.py's private folder per service started: every start in one process gets a folder of its own, with a
name as short as HAProxy's socket path budget allows, even when the random byte repeats (it did in the suite, where
one test process starts many services); a full set of 256 is refused with a sentence. No Ray, no HAProxy."""
from __future__ import annotations

import os

import pytest

from serve import front


@pytest.fixture
def base(tmp_path):
    folder = tmp_path / "tx-serve"
    folder.mkdir(mode=0o700)
    return folder


def test_the_same_random_byte_twice_still_gives_two_folders(base, monkeypatch):
    monkeypatch.setattr(os, "urandom", lambda n: b"\xff" * n)
    first, second = front.service_folder(base), front.service_folder(base)
    pid = f"{os.getpid():x}"
    assert (first.name, second.name) == (f"{pid}-ff", f"{pid}-00")  # counts on, wrapping past ff
    assert first.stat().st_mode & 0o777 == second.stat().st_mode & 0o777 == 0o700


def test_a_257th_folder_of_one_process_is_refused_with_a_sentence(base):
    folders = {front.service_folder(base) for _ in range(256)}
    assert len(folders) == 256 and max(len(f.name) for f in folders) == len(f"{os.getpid():x}") + 3
    with pytest.raises(RuntimeError, match="holds 256 service folders of process"):
        front.service_folder(base)
