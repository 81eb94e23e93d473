"""The one atomic file write of the project: readers see the old file or the new one, never half of one."""
from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from pathlib import Path


def atomic_write(path: str | Path, write: Callable[[Path], object]) -> None:
    """Call write(tmp) on a temporary file beside `path`, then rename it into place.

    The temporary file is created by os.open with mode 0666, so the kernel applies the process umask itself:
    the result has the usual permissions (mkstemp would give 0600), and the umask is never read by setting
    it, which would race with other threads (the Streamlit server writes from several)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    for _ in range(100):
        tmp = path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp"
        try:
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            break
        except FileExistsError:
            continue
    else:
        raise OSError(f"cannot create a temporary file beside {path}")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    atomic_write(path, lambda tmp: tmp.write_bytes(data))
