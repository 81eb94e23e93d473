"""The service's front (HAProxy, "one" layout) faced with strangers (issue 42, findings 3, 4 and 9): nothing listens
beyond loopback, the admin socket is private, 4,200 half-sent requests leave /health and /translate answering, a
client past its connection cap is turned away at once, and what the front answers itself is a JSON sentence.

The first tests patch Ray's own rendered config without starting Ray (fast); the rest start the service once
(`ray.init(num_cpus=2)`, request_timeout_s=2 so the front's 504 comes within seconds) and are slow. Every client
is on loopback: 127.0.0.1 (exempt from the per-client cap, as a local reverse proxy would be) and 127.0.0.2 (Linux
routes 127/8 to lo: a second client, under the cap)."""
from __future__ import annotations

import contextlib
import http.server
import importlib.util
import ipaddress
import json
import os
import resource
import socket
import stat
import subprocess
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from serve_fixtures import (
    HealthProbe,
    chunked_post,
    endless_text,
    free_port,
    post,
    reset_peak_rss,
    rss_mb,
    service_in_its_own_process,
)

from serve import fault_injection, front, local, processes

# the shipped models, exported (test_serve_ray's fixture: exported once per module where `make run` has not)
_spec = importlib.util.spec_from_file_location("_serve_ray_tests", Path(__file__).with_name("test_serve_ray.py"))
_ray_tests = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_ray_tests)
models_root = _ray_tests.models_root
_ray_serve = _ray_tests._ray_serve  # autouse: skipped where Ray Serve is missing, imported when a test runs

TIMEOUT_S = 2.0  # the API's request timeout: the front's backstop 504 comes at 2 + 0.5 = 2.5 s
SETTINGS = {"precisions": ("fp32",), "threads": 1, "request_timeout_s": TIMEOUT_S}
SLOWLORIS = 4200


def greedy(text: str) -> dict:
    return {"text": text, "src_lang": "de", "tgt_lang": "en", "method": "greedy", "precision": "fp32"}


# --- the patch, on the config Ray itself renders (no Ray started) ---


def ray_config(tmp_path: Path, host: str = "127.0.0.1", port: int = 8000, replica_port: int = 9000,
               **ports: int) -> str:
    """What Ray 2.60's HAProxyApi writes for one app whose ingress has one replica (its template, its defaults;
    `ports`: stats_port and metrics_port, Ray's fixed 8404 and 9101 unless given)."""
    from ray.serve._private.haproxy import BackendConfig, HAProxyApi, HAProxyConfig, ServerConfig
    from ray.serve.config import HTTPOptions

    cfg = HAProxyConfig(http_options=HTTPOptions(host=host, port=port), socket_path=str(tmp_path / "admin.sock"),
                        server_state_base=str(tmp_path), server_state_file=str(tmp_path / "state"),
                        metrics_socket_path=str(tmp_path / "metrics.sock"), has_received_routes=True,
                        has_received_servers=True, **ports)
    backend = BackendConfig(name="tx", path_prefix="/", app_name="tx",
                            servers=[ServerConfig(name="r1", host="127.0.0.1", port=replica_port)])
    api = HAProxyApi(cfg, {"tx": backend}, config_file_path=str(tmp_path / "haproxy.cfg"))
    api._generate_config_file_internal()
    return (tmp_path / "haproxy.cfg").read_text()


def lines_of(config: str, header: str) -> list[str]:
    start, end = front._section(config, header)
    return [line.strip() for line in config[start:end].splitlines() if line.strip()]


def test_the_patched_ray_config_binds_loopback_bounds_clients_and_answers_json(tmp_path):
    limits = front.FrontLimits.for_service(TIMEOUT_S)
    before = ray_config(tmp_path)
    config = front.patch_config(before, limits, front.error_files(limits, tmp_path))
    assert "bind *:8404" in before and "bind 127.0.0.1:8404" in lines_of(config, "listen stats")
    assert "bind 127.0.0.1:9101" in lines_of(config, "frontend prometheus")
    assert f"stats socket {tmp_path}/admin.sock mode 600 level admin expose-fd listeners" in lines_of(config, "global")
    defaults = lines_of(config, "defaults")
    assert "timeout http-request 10s" in defaults
    assert not any("500.http" in line for line in defaults), "Serve's text 500 page is still there"
    assert {line.split()[1] for line in defaults if line.startswith("errorfile")} >= {"400", "408", "502", "503",
                                                                                        "504"}
    assert "tcp-request connection reject if { sc0_conn_cur gt 256 } !{ src 127.0.0.1 ::1 }" in lines_of(
        config, "frontend http_frontend")
    assert front.patch_config(config, limits, {}) == config  # a reload may hand the patched file back
    answer = (tmp_path / "504.json.http").read_bytes()
    head, body = answer.split(b"\r\n\r\n")
    assert b"Content-Type: application/json" in head and f"Content-Length: {len(body)}".encode() in head
    assert json.loads(body)["detail"].startswith("No answer within 2.5 s (the service's own timeout is 2 s; /health "
                                                 "and /ready wait 1 s)")
    backend = lines_of(config, "backend tx")  # the backstop to the millisecond (Ray's own setting: whole seconds),
    timeouts = [line for line in backend if line.startswith("http-request set-timeout server")]  # then the probes'
    assert timeouts == ["http-request set-timeout server 2500ms",
                        "http-request set-timeout server 1000ms if { path /health /ready }"], backend


def test_haproxy_accepts_the_patched_config(tmp_path):
    limits = front.FrontLimits.for_service(TIMEOUT_S)
    path = tmp_path / "haproxy.cfg"
    path.write_text(ray_config(tmp_path))
    front.patch_file(path, limits)
    checked = subprocess.run([front.real_haproxy(), "-c", "-f", str(path)], capture_output=True, text=True,
                             timeout=60)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_a_changed_template_or_a_public_bind_stops_haproxy_with_a_reason(tmp_path):
    limits = front.FrontLimits.for_service(TIMEOUT_S)
    config = ray_config(tmp_path)
    with pytest.raises(front.FrontPatchError, match="the admin socket: expected one line"):
        front.patch_config(config.replace(" mode 666", ""), limits, {})
    with pytest.raises(front.FrontPatchError, match=r"binds \*, beyond loopback, without expose"):
        front.patch_config(ray_config(tmp_path, host="0.0.0.0"), limits, {})
    exposed = front.patch_config(ray_config(tmp_path, host="0.0.0.0"), front.FrontLimits(expose=True), {})
    assert "bind :9101" in lines_of(exposed, "frontend prometheus")  # Prometheus scrapes it from elsewhere
    assert "bind 127.0.0.1:8404" in lines_of(exposed, "listen stats")  # the stats page never leaves loopback


class CountingReplica(http.server.BaseHTTPRequestHandler):
    """A stand-in for the replica behind the front: answers how many body bytes reached it (chunked or not)."""
    protocol_version = "HTTP/1.1"

    def do_GET(self):  # HAProxy's health check
        self.answer({"status": "ok"})

    def do_POST(self):
        got = 0
        if self.headers.get("Transfer-Encoding") == "chunked":
            while size := int(self.rfile.readline().split(b";")[0], 16):
                got += len(self.rfile.read(size))
                self.rfile.readline()
            self.rfile.readline()
        else:
            got = len(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        type(self).received.append(got)
        self.answer({"got": got})

    def answer(self, found: dict):
        body = json.dumps(found).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_the_front_refuses_bodies_over_the_cap_chunked_ones_before_they_reach_the_replica(tmp_path):
    """Ray's config, patched, run by the real HAProxy in front of a counting stand-in replica (no Ray): a body sent
    in chunks that does not fit the front's buffer, and a Content-Length over the API's cap, get the front's own
    413 sentence at once, and the replica sees nothing of them; a small chunked body passes whole."""
    limits = front.FrontLimits.for_service(TIMEOUT_S)
    assert limits.body_bytes == 128 * 1024 and limits.chunked_bytes < 14_860  # a full buffer always passes the mark
    replica = http.server.ThreadingHTTPServer(("127.0.0.1", 0), type("Counting", (CountingReplica,), {"received": []}))
    threading.Thread(target=replica.serve_forever, daemon=True).start()
    port = free_port()
    path = tmp_path / "haproxy.cfg"
    path.write_text(ray_config(tmp_path, port=port, replica_port=replica.server_address[1], stats_port=free_port(),
                               metrics_port=free_port()))
    front.patch_file(path, limits)
    haproxy = subprocess.Popen([front.real_haproxy(), "-f", str(path)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                break
            time.sleep(0.1)
        small = json.dumps(greedy("Guten Morgen!")).encode()
        passed = chunked_post(port, "/translate", [small[i:i + 5] for i in range(0, len(small), 5)])
        assert passed.status == 200 and json.loads(passed.detail) == {"got": len(small)}, passed  # the body whole
        endless = chunked_post(port, "/translate", endless_text(48 * 1024 * 1024), wait_s=20)
        assert endless.status == 413 and endless.closed, endless
        assert endless.detail.startswith("The request body came in chunks (no Content-Length) and with the headers "
                                         "reached 12288 bytes"), endless
        assert endless.answer_s < 2 and endless.body_sent < 12 * 1024 * 1024, endless
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(b"POST /translate HTTP/1.1\r\nHost: x\r\nContent-Length: 50331648\r\n\r\n" + b"a" * 20_000)
            raw = fault_injection.read_until_closed(sock, 5)
        assert raw and fault_injection.parse_answer(raw)[0] == 413, raw
        assert json.loads(fault_injection.parse_answer(raw)[2])["detail"].startswith(
            "The request body is over 131072 bytes (its Content-Length)")
        assert replica.RequestHandlerClass.received == [len(small)]  # nothing of the refused bodies reached it
        assert f"http-request deny deny_status 413 errorfile {tmp_path}/413-chunked.json.http if " \
               "{ req.hdr_cnt(transfer-encoding) gt 0 } { req.body_len,add(txn.tx_headers) ge 12288 }" in lines_of(
                   path.read_text(), "frontend http_frontend")
    finally:
        haproxy.kill()
        haproxy.wait(10)
        replica.shutdown()


# --- the running service ---


@pytest.fixture(scope="module")
def url(models_root, tmp_path_factory):
    # in a process of its own (serve_fixtures), so that it may share a pytest process with test_serve_ray's service;
    # tests/conftest.py keeps the two files on one worker, one after the other: the fault checks below freeze or
    # count this machine's Serve processes, and must not find test_serve_ray's
    settings = {"models_dir": str(models_root), "port": free_port(), **SETTINGS}  # ServeSettings' fields
    log = tmp_path_factory.mktemp("front") / "service.log"
    with service_in_its_own_process(settings, 2, log) as found:
        yield found


def answers_quickly(url: str, path: str, body: dict | None = None, within_s: float = 2.0) -> tuple[int, dict]:
    """(status, JSON) of a GET or POST that must answer within `within_s` (a bound on a hang, not a speed test)."""
    try:
        if body is None:
            return local.get_json(f"{url}{path}", timeout=within_s)
        return post(f"{url}{path}", body, timeout=within_s)
    except OSError as e:
        raise AssertionError(f"{path} got no answer within {within_s:g} s: {e}") from e


def loopback(address: str) -> bool:
    found = ipaddress.ip_address(address)
    return found.is_loopback or bool(getattr(found, "ipv4_mapped", None) and found.ipv4_mapped.is_loopback)


@pytest.mark.slow
@pytest.mark.front
def test_nothing_listens_beyond_loopback(url):
    found = processes.service_listeners()
    assert any(port == int(url.rsplit(":", 1)[1]) for _, port, _, _ in found), found  # the list is real
    public = [f"{address}:{port} ({name}, pid {pid})" for address, port, pid, name in found if not loopback(address)]
    assert not public, f"listening beyond loopback: {', '.join(public)}"


@pytest.mark.slow
@pytest.mark.front
def test_the_haproxy_admin_socket_is_private(url):
    haproxy = [pid for pid, name in processes.serve_processes().items() if name == "HAProxy"]
    assert haproxy
    args = Path(f"/proc/{haproxy[0]}/cmdline").read_bytes().decode().split("\0")
    config = Path(args[args.index("-f") + 1]).read_text()
    socket_path = Path(next(line.split()[2] for line in config.splitlines() if line.strip().startswith("stats socket")))
    mode = stat.S_IMODE(os.stat(socket_path).st_mode)
    assert mode & 0o077 == 0, f"{socket_path} is mode {mode:o}: other users can drive HAProxy at admin level"


@pytest.mark.slow
@pytest.mark.front
def test_4200_half_sent_requests_leave_health_and_translate_answering(url):
    port, limits = int(url.rsplit(":", 1)[1]), front.FrontLimits()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    count = min(SLOWLORIS, hard - 200)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, count + 400)), hard))
    idle = socket.create_connection(("127.0.0.1", port))  # a keep-alive client that goes quiet after one answer
    idle.sendall(b"GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n")
    assert idle.recv(65536).startswith(b"HTTP/1.1 200")
    # a slowloris: most stop inside the headers, some inside the body
    held, refused = fault_injection.half_sent_requests(port, count - 100)
    held_body, refused_body = fault_injection.half_sent_requests(port, 100, first=fault_injection.HALF_BODY)
    try:
        assert not refused + refused_body, f"{len(refused + refused_body)} of {count} connections were not taken"
        assert answers_quickly(url, "/health")[0] == 200
        status, found = answers_quickly(url, "/translate", greedy("Guten Morgen!"))
        assert status == 200 and found["text"], found
        # the front drops each after its http-request timeout; a request whose headers arrived gets a sentence
        raw = fault_injection.read_until_closed(held_body[0], limits.http_request_s + 5)
        assert raw, f"a request without its body was still held {limits.http_request_s + 5} s after it began"
        status, headers, body = fault_injection.parse_answer(raw)
        assert status == 408 and headers["content-type"] == "application/json", raw
        assert json.loads(body)["detail"].startswith("The request's headers and body did not arrive within 10 s")
        raw = fault_injection.read_until_closed(held[0], 2)  # HAProxy's parser answers these itself (docs/serving.md)
        assert raw is not None and fault_injection.parse_answer(raw)[0] == 408, raw
        assert fault_injection.read_until_closed(idle, 1) is not None, \
            "an idle keep-alive connection was kept past 10 s"
    finally:
        for s in held + refused + held_body + refused_body + [idle]:
            s.close()


@pytest.mark.slow
@pytest.mark.front
def test_a_client_over_its_connection_cap_is_turned_away_at_once(url):
    port, cap = int(url.rsplit(":", 1)[1]), front.FrontLimits().conns_per_client
    held, refused = fault_injection.half_sent_requests(port, cap + 50, source="127.0.0.2")
    try:
        # well inside the front's 10 s http-request timeout, which would close them all anyway
        closed = fault_injection.closed_by_peer(held, wait_s=3, at_least=50 - len(refused))
        assert len(refused) + closed >= 50 and len(held) - closed <= cap, (len(held), closed)
        assert answers_quickly(url, "/health")[0] == 200  # other clients are not affected
    finally:
        for s in held + refused:
            s.close()


@pytest.mark.slow
@pytest.mark.front
def test_a_stopped_replica_gets_the_fronts_json_504_not_a_bare_500(url):
    """The replica frozen (SIGSTOP) past the front's backstop: the API cannot answer its own 504, HAProxy must."""
    limits = front.FrontLimits.for_service(TIMEOUT_S)
    resume = fault_injection.stop_replica("Service")
    try:
        probes = []
        for path in ("/health", "/ready"):  # a probe learns within about a second that nobody answers
            start = time.monotonic()
            try:
                with urllib.request.urlopen(f"{url}{path}", timeout=10) as response:
                    probes.append((path, response.status, time.monotonic() - start))
            except urllib.error.HTTPError as e:
                probes.append((path, e.code, time.monotonic() - start, json.loads(e.read())["detail"]))
        request = urllib.request.Request(f"{url}/translate", json.dumps(greedy("Guten Morgen!")).encode(),
                                         {"Content-Type": "application/json"})
        sent = time.monotonic()
        try:
            with urllib.request.urlopen(request, timeout=limits.server_s + 10) as response:
                status, kind, body = response.status, response.headers["Content-Type"], response.read()
        except urllib.error.HTTPError as e:
            status, kind, body = e.code, e.headers["Content-Type"], e.read()
        waited = time.monotonic() - sent
    finally:
        resume()
    assert (status, kind) == (504, "application/json"), (status, kind, body[:200])
    assert json.loads(body)["detail"].startswith(f"No answer within {limits.server_s:g} s"), body
    # at the request's deadline, ± 1 s (issue 42): HAProxy's own timer, which no load on the replica delays
    assert abs(waited - TIMEOUT_S) <= 1, f"the front's 504 came after {waited:.2f} s ({TIMEOUT_S} s timeout)"
    # the probes' own 1 s timeout fired, not the 2.5 s backstop
    assert [p[:2] for p in probes] == [("/health", 504), ("/ready", 504)], probes
    assert all(p[2] < limits.server_s for p in probes), probes
    local.wait_ready(url, timeout_s=60)


def replica_http_port(url: str) -> tuple[int, int]:
    """(pid, port) of the Service replica and the port it answers HTTP on itself (Serve's direct ingress, behind
    the front): its one listening port that answers /health."""
    [pid] = [pid for pid, name in processes.serve_processes().items() if name.startswith("ServeReplica")
             and name.endswith(":Service")]
    for _, port, _, _ in processes.listening_sockets([pid]):
        with contextlib.suppress(OSError, ValueError):
            if local.get_json(f"http://127.0.0.1:{port}/health", timeout=1) == (200, {"status": "ok"}):
                return pid, port
    raise AssertionError(f"the replica {pid} answers HTTP on none of its ports")


@pytest.mark.slow
@pytest.mark.front
def test_chunked_bodies_over_the_cap_are_refused_at_once_by_the_front_and_the_replica_memory_bounded(url):
    """The issue's six 48 MiB chunked bodies, at once, to the front, then to the replica's own port (the API's cap,
    where the front is not in the way): each a 413 within a second or two, /health fast meanwhile, and the memory of
    the replica (the serving process) and of HAProxy bounded; a chunked body under the cap is translated."""
    body, attackers, mib = 48 * 1024 * 1024, 6, 1024 * 1024
    replica, replica_port = replica_http_port(url)
    haproxy = [pid for pid, name in processes.serve_processes().items() if name == "HAProxy"]
    watched = {"replica": replica, **{f"HAProxy {pid}": pid for pid in haproxy}}
    for pid in watched.values():
        reset_peak_rss(pid)
    before = {name: rss_mb(pid) for name, pid in watched.items()}
    answers = {}

    def attack(port: int) -> list:
        found = [None] * attackers
        threads = [threading.Thread(target=lambda i=i: found.__setitem__(
            i, chunked_post(port, "/translate", endless_text(body), wait_s=60))) for i in range(attackers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(90)
        return found

    start = time.monotonic()
    with HealthProbe(url, every_s=0.1) as probe:
        time.sleep(0.5)
        answers["front"] = attack(int(url.rsplit(":", 1)[1]))
        answers["replica"] = attack(replica_port)
        time.sleep(0.5)
    took = time.monotonic() - start
    grew = {name: rss_mb(pid, peak=True) - before[name] for name, pid in watched.items()}
    health = [seconds for status, seconds in probe.found if status == 200]
    for where, found in answers.items():
        print(f"\n{where}: 413 after {[round(a.answer_s, 3) for a in found]} s, body sent by then "
              f"{[round(a.body_sent / mib, 2) for a in found]} MiB")
    print(f"/health: {len(health)} of {len(probe.found)} probes 200, max {max(health):.3f} s, median "
          f"{sorted(health)[len(health) // 2]:.3f} s; RSS before {before} MiB, peak growth "
          f"{ {name: round(mb, 1) for name, mb in grew.items()} } MiB; {took:.1f} s in all")
    says = {"front": "The request body came in chunks (no Content-Length)",
            "replica": "the request body passed 131072 bytes as it arrived (sent in chunks, without a Content-Length)"}
    for where, found in answers.items():
        for answer in found:
            assert answer.status == 413 and answer.detail.startswith(says[where]) and answer.closed, (where, answer)
            assert answer.answer_s < 5 and answer.body_sent < body / 4, (where, answer)
    assert len(health) == len(probe.found) >= 5 and max(health) < 1.0, probe.found
    assert all(mb < 64 for mb in grew.values()), grew
    small = json.dumps(greedy("Guten Morgen!")).encode()
    answer = chunked_post(int(url.rsplit(":", 1)[1]), "/translate", [small[i:i + 9] for i in range(0, len(small), 9)])
    assert answer.status == 200, answer
