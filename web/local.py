"""Serving a built folder on this machine, as a static host would: `python -m web serve` (web/serve.py) on a free
127.0.0.1 port, cross-origin isolated or not (what the tests and `python -m bench web` use)."""
from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def static_server(folder: Path, isolated: bool = False):
    """`python -m web serve` on the folder, on a free 127.0.0.1 port; yields its URL once it answers. isolated: send
    the cross-origin isolation headers, so the page runs onnxruntime-web on several threads (else one, as under
    `python -m http.server` or most free hosts)."""
    port = free_port()
    command = [sys.executable, "-m", "web", "serve", str(Path(folder).resolve()), "--port", str(port)]
    errors = tempfile.TemporaryFile()  # a file, not a pipe: a pipe nobody reads would block the server when full
    process = subprocess.Popen(command + ["--isolated"] * isolated, stdout=subprocess.DEVNULL, stderr=errors,
                               cwd=Path(__file__).resolve().parents[1])  # this `web`
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and process.poll() is None:
            with contextlib.suppress(OSError):
                urllib.request.urlopen(url + "/config.json", timeout=1).close()
                break
            time.sleep(0.1)
        if process.poll() is not None:
            errors.seek(0)
            raise RuntimeError(f"`{' '.join(command)}` stopped: {errors.read().decode().strip()}")
        yield url
    finally:
        process.terminate()
        process.wait(10)
        errors.close()
