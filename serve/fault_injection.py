"""Faults injected into a running service, for its fault checks (tests/serve, `python -m bench serve_load
--faults`): slow clients that never finish a request, a replica killed as a crash would or frozen with SIGSTOP, and
reading what the front answered on a raw socket. Nothing of the service itself uses them."""
from __future__ import annotations

import os
import time

from .processes import serve_processes, stat_fields


def kill_replica(deployment: str) -> str:
    """Kill one replica of `deployment` (e.g. "Translator") as a crash would, not gracefully; Serve's controller
    sees it die and starts another. Returns the killed actor's name. For the fault checks (tests, benchmark)."""
    import ray

    names = [a for a in ray.util.list_named_actors(all_namespaces=True)
             if a["namespace"] == "serve" and f"#{deployment}#" in a["name"]]
    if not names:
        raise RuntimeError(f"no replica of {deployment} is running")
    ray.kill(ray.get_actor(names[0]["name"], namespace="serve"), no_restart=True)
    return names[0]["name"]


# Slow clients, for the front's fault checks (tests, benchmark): the first bytes of a request, never the rest.
HALF_HEADERS = (b"POST /translate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                b"Content-Length: 200\r\n")
HALF_BODY = HALF_HEADERS + b'\r\n{"text": "Guten'


def half_sent_requests(port: int, count: int, source: str = "127.0.0.1", first: bytes = HALF_HEADERS,
                       wait_s: float = 5.0) -> tuple[list, list]:
    """`count` connections from `source` (any 127/8 address is this machine) to 127.0.0.1:port, each sending
    `first` and nothing more: (connected, refused) sockets, for the caller to close. Non-blocking connects, so a front
    that stops accepting leaves the rest refused after wait_s instead of hanging the caller."""
    import select
    import socket

    pending = []
    for _ in range(count):
        s = socket.socket()
        s.bind((source, 0))
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", port))
        pending.append(s)
    poller, writable = select.poll(), set()
    for s in pending:
        poller.register(s, select.POLLOUT)
    deadline = time.monotonic() + wait_s
    while len(writable) < len(pending) and time.monotonic() < deadline:
        for fd, _ in poller.poll(200):
            poller.unregister(fd)
            writable.add(fd)
    connected, refused = [], []
    for s in pending:
        try:
            if s.fileno() not in writable or s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR):
                raise OSError("not connected")
            s.send(first)
            connected.append(s)
        except OSError:
            refused.append(s)
    return connected, refused


def read_until_closed(sock, wait_s: float) -> bytes | None:
    """What the other end sent before it closed `sock` within wait_s (b"" for a bare close or a reset), or None
    if it is still open after wait_s."""
    sock.setblocking(True)
    sock.settimeout(wait_s)
    received = b""
    try:
        while chunk := sock.recv(65536):
            received += chunk
        return received
    except (ConnectionResetError, BrokenPipeError):
        return received
    except TimeoutError:
        return None


def closed_by_peer(socks: list, wait_s: float, at_least: int) -> int:
    """How many of `socks` the other end has closed (or answered), polled together until at_least are or wait_s
    passes (one wait for all: waiting on each in turn would outlast the front's own timeouts)."""
    import select

    poller = select.poll()
    for s in socks:
        poller.register(s, select.POLLIN)
    deadline, ready = time.monotonic() + wait_s, 0
    while True:
        ready = len(poller.poll(0))
        if ready >= at_least or time.monotonic() >= deadline:
            return ready
        time.sleep(0.1)


def parse_answer(raw: bytes) -> tuple[int, dict[str, str], bytes]:
    """(status, headers with lower-case names, body) of a raw HTTP/1.1 answer."""
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:] if ": " in line)
    return int(lines[0].split()[1]), {k.lower(): v for k, v in headers.items()}, body


def stop_replica(deployment: str):
    """SIGSTOP one replica of `deployment` (a frozen process: alive, answering nothing); returns the function that
    resumes it (SIGCONT). For the fault checks: call it in a `finally`."""
    import signal

    pids = [pid for pid, name in serve_processes().items() if name.startswith("ServeReplica") and
            name.endswith(f":{deployment}")]
    if not pids:
        raise RuntimeError(f"no replica of {deployment} is running: {serve_processes()}")
    os.kill(pids[0], signal.SIGSTOP)
    # A signal is delivered when each of the process's threads next runs: on a busy machine a request sent right
    # after kill() was still answered (a /health 200 in 1.6 ms). Return once every thread is really stopped.
    wait_stopped(pids[0])
    return lambda: os.kill(pids[0], signal.SIGCONT)


def thread_states(pid: int) -> list[str]:
    """The scheduler state of each of a process's threads (/proc/PID/task/TID/stat: R, S, D, T, t, Z, ...)."""
    states = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            states.append(stat_fields(f"/proc/{pid}/task/{tid}/stat")[0])
        except OSError:  # the thread ended meanwhile
            continue
    return states


def wait_stopped(pid: int, timeout_s: float = 10.0) -> None:
    """Wait until every thread of `pid` is stopped (state T) after a SIGSTOP; RuntimeError past `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while set(states := thread_states(pid)) != {"T"}:
        if time.monotonic() > deadline:
            raise RuntimeError(f"process {pid} did not stop within {timeout_s:g} s: its threads are {states}")
        time.sleep(0.005)
