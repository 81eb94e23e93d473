"""Serving a built folder on this machine, as any static host would: `python -m http.server` on a free 127.0.0.1
port (what `make run`, the tests and `python -m bench web` use)."""
from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def static_server(folder: Path):
    """`python -m http.server` on the folder, on a free 127.0.0.1 port; yields its URL once it answers."""
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "-b", "127.0.0.1", "-d", str(folder)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            with contextlib.suppress(OSError):
                urllib.request.urlopen(url + "/config.json", timeout=1).close()
                break
            time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        process.wait(10)
