"""runtime.files.atomic_write: the one atomic write (checkpoints, model dirs, TSVs, reports, Triton files)."""
from __future__ import annotations

import os
import stat

import pytest

from runtime.files import atomic_write, atomic_write_bytes


def test_atomic_write_gets_umask_permissions_without_touching_the_umask(tmp_path, monkeypatch):
    old = os.umask(0o027)
    try:
        monkeypatch.setattr(os, "umask", lambda *_: pytest.fail("atomic_write must not set the umask (a race)"))
        atomic_write_bytes(tmp_path / "a" / "f.bin", b"x")
    finally:
        monkeypatch.undo()
        os.umask(old)
    assert (tmp_path / "a" / "f.bin").read_bytes() == b"x"
    assert stat.S_IMODE((tmp_path / "a" / "f.bin").stat().st_mode) == 0o640
    assert list((tmp_path / "a").iterdir()) == [tmp_path / "a" / "f.bin"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "f.txt"
    path.write_text("old")

    def boom(tmp):
        tmp.write_text("half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        atomic_write(path, boom)
    assert path.read_text() == "old" and list(tmp_path.iterdir()) == [path]
