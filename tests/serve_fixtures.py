"""The service's HTTP API on this process (uvicorn in a thread, the workers in-process: no Ray), over the tiny
exported models: what tests/serve/test_serve_api.py and the playground client's tests talk to."""
from __future__ import annotations

import contextlib
import json
import math
import os
import queue
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import uvicorn
from export_fixtures import exported

from serve.api import build_api
from serve.inprocess import InProcessBackend
from serve.settings import ServeSettings


def tiny_models_root() -> Path:
    """A models root whose translate/ and sentiment/ are the tiny exported models (links, read-only)."""
    root = Path(tempfile.mkdtemp(prefix="tx-serve-models-"))
    for kind in ("translate", "sentiment"):
        (root / kind).symlink_to(exported(kind), target_is_directory=True)
    return root


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def own_haproxy_ports() -> Iterator[None]:
    """Free ports for the HAProxy that Ray starts (the "one" layout) instead of Ray's fixed stats 8404 and metrics
    9101: two services on one machine (test_serve_ray and test_serve_front on the two workers of `make test`, or
    another checkout's tests) otherwise crash the second at startup ("cannot bind socket ... 127.0.0.1:8404").
    Ray's processes read them from the environment they inherit at `ray.init`; this process keeps Ray's defaults."""
    names = ("RAY_SERVE_HAPROXY_STATS_PORT", "RAY_SERVE_HAPROXY_METRICS_PORT")
    before = {name: os.environ.get(name) for name in names}
    os.environ.update({name: str(free_port()) for name in names})
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


# The service of `service_in_its_own_process`: started from settings given as JSON, its URL printed once ready, stopped
# when its stdin closes (the test process closed it or died).
SERVICE_CHILD = """
import json, sys
from serve import local
from serve.settings import ServeSettings
given = json.loads(sys.argv[1])
num_cpus = given.pop("num_cpus")
settings = ServeSettings(**{k: tuple(v) if isinstance(v, list) else v for k, v in given.items()})
print("SERVING", local.start(settings, num_cpus=num_cpus), flush=True)
try:
    sys.stdin.read()
finally:
    local.stop()
"""
REPO = Path(__file__).resolve().parent.parent


@contextlib.contextmanager
def service_in_its_own_process(settings: dict[str, Any], num_cpus: int, log: Path,
                               timeout_s: float = 300) -> Iterator[str]:
    """`local.start(ServeSettings(**settings), num_cpus)` in a child process, on free HAProxy ports; yields its URL,
    stops it after. Ray 2.60 cannot start a second HAProxy-fronted service in a process that already ran one (its new
    HAProxy's admin socket is never found): in a child of its own, the service's tests may share a pytest process
    with test_serve_ray's (make test's first phase) instead of needing a process of their own. Ray's processes are
    the child's: `processes.service_listeners()` still finds them among this process' descendants. The child's output
    goes to `log`."""
    with own_haproxy_ports(), open(log, "w") as said:
        child = subprocess.Popen([sys.executable, "-c", SERVICE_CHILD, json.dumps({**settings, "num_cpus": num_cpus})],
                                 cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=said, text=True)
    lines: queue.Queue[str] = queue.Queue()  # the child's stdout, read to its end (a full pipe would stall it)
    threading.Thread(target=lambda: [*map(lines.put, child.stdout), lines.put("")], daemon=True).start()
    try:
        deadline, line = time.monotonic() + timeout_s, ""
        while not line.startswith("SERVING "):
            try:
                line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise RuntimeError(f"the service did not start within {timeout_s:.0f} s: see {log}") from None
            if not line:  # the child ended
                raise RuntimeError(f"the service's process ended (exit {child.wait()}) before it served:\n"
                                   f"{log.read_text(errors='replace')[-3000:]}")
        yield line.split()[1]
    finally:
        child.stdin.close()
        try:
            child.wait(timeout=120)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


@contextlib.contextmanager
def running_api(settings: ServeSettings) -> Iterator[str]:
    """build_api over InProcessBackend, served on a free port; yields its URL."""
    api = build_api(InProcessBackend.load(settings), settings)
    server = uvicorn.Server(uvicorn.Config(api, host="127.0.0.1", port=free_port(), log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{server.config.port}"
    finally:
        server.should_exit = True
        thread.join(10)


def post(url: str, body: dict[str, Any], headers: dict[str, str] | None = None,
         timeout: float = 120) -> tuple[int, dict[str, Any]]:
    """(status, JSON body) of a POST, errors included."""
    request = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json",
                                                                       **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def concurrently(url: str, bodies: list[dict[str, Any]], concurrency: int,
                 during=None) -> list[tuple[int, dict[str, Any]]]:
    """POST every body to `url`, `concurrency` in flight at a time (aiohttp, one thread); (status, JSON) in order,
    status 0 for a connection failure. during: an async callable run beside the load (a replica kill)."""
    import asyncio

    import aiohttp

    async def run() -> list[tuple[int, dict[str, Any]]]:
        found: list[tuple[int, dict[str, Any]] | None] = [None] * len(bodies)
        waiting = iter(range(len(bodies)))

        async def client(session):
            for i in waiting:
                try:
                    async with session.post(url, json=bodies[i]) as response:
                        payload = await response.read()
                        try:
                            found[i] = response.status, json.loads(payload or b"{}")
                        except ValueError:  # Serve's proxy answers its own 503s and 408s in plain text
                            found[i] = response.status, {"detail": payload.decode(errors="replace")}
                except aiohttp.ClientError as e:
                    found[i] = 0, {"detail": str(e)}

        connector = aiohttp.TCPConnector(limit=concurrency)
        async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=300)) as session:
            await asyncio.gather(*[client(session) for _ in range(concurrency)],
                                 *([during()] if during is not None else []))
        return found  # type: ignore[return-value]

    return asyncio.run(run())


# --- bodies sent in chunks, probes and memory: the body-cap checks (test_serve_body.py, test_serve_front.py) ---


@dataclass
class ChunkedAnswer:
    status: int  # 0: the connection closed without an answer
    detail: str  # the JSON body's "detail", or its first bytes
    body_sent: int  # bytes of the body sent before the answer came (or sending failed)
    answer_s: float  # seconds from the connection to the answer's first bytes (inf: none)
    closed: bool  # the server closed the connection after answering


def chunked_post(port: int, path: str, chunks: Iterable[bytes], wait_s: float = 30.0) -> ChunkedAnswer:
    """POST `chunks` to 127.0.0.1:port as one body in HTTP/1.1 chunked transfer encoding (no Content-Length), reading
    the answer while sending: sending stops as soon as an answer arrives, the connection fails, or wait_s passes."""
    from serve.fault_injection import parse_answer

    sock = socket.create_connection(("127.0.0.1", port), timeout=wait_s)
    start, received, first = time.monotonic(), bytearray(), [math.inf]
    answered, whole, closed = threading.Event(), threading.Event(), threading.Event()

    def read():
        try:
            while chunk := sock.recv(65536):
                if not received:
                    first[0] = time.monotonic() - start
                received.extend(chunk)
                answered.set()
                head, _, body = bytes(received).partition(b"\r\n\r\n")
                length = re.search(rb"(?im)^content-length:\s*(\d+)", head)
                if _ and length and len(body) >= int(length[1]):
                    whole.set()
        except OSError:
            pass
        closed.set()
        answered.set()
        whole.set()

    reader = threading.Thread(target=read, daemon=True)
    sent = 0
    try:
        sock.sendall(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     "Transfer-Encoding: chunked\r\n\r\n".encode())
        reader.start()
        for chunk in chunks:
            if answered.is_set() or time.monotonic() - start > wait_s:
                break
            sock.sendall(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
            sent += len(chunk)
        else:
            sock.sendall(b"0\r\n\r\n")
    except OSError:  # the server closed the connection (after its answer, or without one)
        pass
    whole.wait(max(0.0, wait_s - (time.monotonic() - start)))
    closed.wait(0.5 if whole.is_set() else 0)  # a server that refuses closes at once after its answer
    closed_by_server = closed.is_set()  # read before our own shutdown below ends the reader too
    # shutdown wakes the reader's recv on a connection the server keeps open (close alone does not: its join waited
    # out its whole 2 s after every answer kept alive, 4 of test_serve_body's 5 s chunked-body test)
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()
    reader.join(2)
    if not received:
        return ChunkedAnswer(0, "", sent, math.inf, closed_by_server)
    status, _, body = parse_answer(bytes(received))
    try:
        detail = json.loads(body)["detail"]
    except (ValueError, KeyError, TypeError):
        detail = body[:200].decode(errors="replace")
    return ChunkedAnswer(status, detail, sent, first[0], closed_by_server)


def endless_text(total: int, chunk: int = 64 * 1024) -> Iterator[bytes]:
    """A JSON body that opens a text and goes on for `total` bytes, in `chunk`-byte pieces: never valid JSON."""
    yield b'{"text": "'
    for _ in range(total // chunk):
        yield b"a" * chunk


class HealthProbe:
    """GET url/health every `every_s` in a thread until stopped: each probe's (status, seconds)."""

    def __init__(self, url: str, every_s: float = 0.05, timeout_s: float = 5.0):
        self.url, self.every_s, self.timeout_s = url, every_s, timeout_s
        self.found: list[tuple[int, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            start = time.monotonic()
            try:
                with urllib.request.urlopen(f"{self.url}/health", timeout=self.timeout_s) as response:
                    status = response.status
            except urllib.error.HTTPError as e:
                status = e.code
            except OSError:
                status = 0
            self.found.append((status, time.monotonic() - start))
            self._stop.wait(self.every_s)

    def __enter__(self) -> HealthProbe:
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(self.timeout_s + 1)


def reset_peak_rss(pid: int | str = "self") -> None:
    """Start the process' peak resident memory (VmHWM) afresh from its current size (Linux: clear_refs 5)."""
    Path(f"/proc/{pid}/clear_refs").write_text("5")


def rss_mb(pid: int | str = "self", peak: bool = False) -> float:
    """The process' resident memory now (VmRSS), or its peak since the last reset (VmHWM), in MiB."""
    field = "VmHWM" if peak else "VmRSS"
    line = next(line for line in Path(f"/proc/{pid}/status").read_text().splitlines() if line.startswith(field))
    return int(line.split()[1]) / 1024
