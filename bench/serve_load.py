"""The service under load (serve/): requests/s, p50/p90/p99, errors and server memory at several concurrencies,
against the in-process API called serially and at batch 16; then, with --faults, a replica killed under load, a
request past its timeout, a burst over the queue, and the front's faults (4,200 half-sent requests, a client over
its connection cap, a replica frozen past the front's timeout).

    python -m bench serve_load [--models models] [--concurrency 1 4 16 64] [--requests 2500] [--precision int8]
        [--method greedy] [--max-batch-size 16] [--batch-wait-s 0.01] [--threads N] [--sweep] [--faults]
        [--timeout-s 30] [--json out.json]

Starts Ray + Serve on this machine (`ray.init(num_cpus=2)`), the load generator (aiohttp, one thread) in this
process: generator, HTTP proxy, ingress and replicas share the cores, as the issue's targets assume. Requests
cycle over the translator's held-out samples (models/translate/samples.tsv). Server memory: the resident memory of
every Serve process (replicas, proxy, controller), after the warm-up and after each concurrency level (4 levels x
2,500 requests = 10,000). --sweep first runs concurrency 16 for several (max_batch_size, batch_wait_timeout_s)
pairs: how the defaults were chosen. Nothing here is a test: the numbers depend on what else runs on the machine.
"""
from __future__ import annotations

import asyncio
import json
import os
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from runtime import OnnxTranslator
from runtime.tsv import read_tsv
from serve import fault_injection, local, processes
from serve.settings import ServeSettings

from . import bench_parser

# (max_batch_size, batch_wait_timeout_s)
SWEEP = [(1, 0.0), (8, 0.005), (16, 0.002), (16, 0.005), (16, 0.01), (16, 0.02), (32, 0.005)]
SERIAL_REQUESTS = 300
WARMUP_REQUESTS = 300


def held_out(models: Path) -> list[str]:
    return [row["de"] for row in read_tsv(models / "translate" / "samples.tsv")]


def in_process_model(models: Path, texts: list[str], precision: str, method: str,
                     threads: int | None) -> OnnxTranslator:
    """The in-process baseline's model, warmed up once (its first calls allocate)."""
    model = OnnxTranslator(models / "translate", provider="cpu", precision=precision, threads=threads)
    for text in texts[:10]:
        model.translate([text], src_lang="de", tgt_lang="en", method=method)
    return model


def in_process(model: OnnxTranslator, texts: list[str], method: str, n: int = SERIAL_REQUESTS) -> dict[str, float]:
    """The baseline: the runtime in this process, n sentences one per call (serial), then n 16 per call."""
    kw = {"src_lang": "de", "tgt_lang": "en", "method": method}
    start = time.perf_counter()
    for i in range(n):
        model.translate([texts[i % len(texts)]], **kw)
    serial = n / (time.perf_counter() - start)
    start = time.perf_counter()
    calls = -(-n // 16)
    for i in range(calls):
        model.translate([texts[(16 * i + j) % len(texts)] for j in range(16)], **kw)
    return {"serial_rps": serial, "batch16_rps": calls * 16 / (time.perf_counter() - start)}


def side_by_side(url: str, model: OnnxTranslator, texts: list[str], bodies: list[dict[str, Any]], method: str,
                 rounds: int) -> dict[str, Any]:
    """Rounds of [in-process serial and batch 16, then the service at concurrency 16], one after the other: this
    machine's speed moved by a third within minutes, so each round's ratios compare numbers taken a few seconds
    apart, and the targets are judged on the median ratio."""
    rows = []
    for _ in range(rounds):
        base = in_process(model, texts, method, n=160)
        level = asyncio.run(load(url, bodies[:480], 16))
        rows.append({**base, "served_rps": level["rps"], "p50_ms": level["p50_ms"], "p99_ms": level["p99_ms"],
                      "x_serial": level["rps"] / base["serial_rps"], "of_batch16": level["rps"] / base["batch16_rps"]})
    median = {key: float(np.median([r[key] for r in rows])) for key in rows[0]}
    return {"rounds": rows, "median": median}


async def load(url: str, bodies: list[dict[str, Any]], concurrency: int, headers: dict[str, str] | None = None,
               at_start=None) -> dict[str, Any]:
    """`len(bodies)` POST /translate requests, `concurrency` in flight at a time: rate, latencies, failures."""
    import aiohttp

    latencies, statuses, details = [], Counter(), Counter()
    next_i = 0
    connector = aiohttp.TCPConnector(limit=concurrency, force_close=False)
    timeout = aiohttp.ClientTimeout(total=120)

    async def client(session):
        nonlocal next_i
        while next_i < len(bodies):
            body, next_i = bodies[next_i], next_i + 1
            start = time.perf_counter()
            try:
                async with session.post(f"{url}/translate", json=body, headers=headers) as response:
                    payload = await response.read()
                    status = response.status
            except (aiohttp.ClientError, TimeoutError) as e:
                status, payload = 0, str(e).encode()
            latencies.append(time.perf_counter() - start)
            statuses[status] += 1
            if status != 200:
                try:
                    details[f"{status}: {json.loads(payload)['detail']}"[:160]] += 1
                except (ValueError, KeyError, TypeError):
                    details[f"{status}: {payload[:120]!r}"] += 1

    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        start = time.perf_counter()
        tasks = [asyncio.create_task(client(session)) for _ in range(concurrency)]
        if at_start is not None:
            await at_start()
        await asyncio.gather(*tasks)
        elapsed = time.perf_counter() - start
    ms = np.array(latencies) * 1000
    return {"concurrency": concurrency, "requests": len(bodies), "seconds": elapsed, "rps": len(bodies) / elapsed,
            "p50_ms": float(np.percentile(ms, 50)), "p90_ms": float(np.percentile(ms, 90)),
            "p99_ms": float(np.percentile(ms, 99)), "errors": len(bodies) - statuses[200],
            "statuses": dict(statuses), "details": dict(details.most_common(5))}


def server_mb() -> float:
    return sum(processes.serve_processes_rss_mb().values())


def batch_sizes(url: str) -> Counter:
    return Counter({int(k): v for k, v in local.get_json(f"{url}/stats")[1]["translate"]["batch_sizes"].items()})


def mean_batch(before: Counter, after: Counter) -> float:
    seen = after - before
    return sum(k * v for k, v in seen.items()) / max(1, sum(seen.values()))


def run_level(url: str, bodies: list[dict[str, Any]], concurrency: int) -> dict[str, Any]:
    before, cpu_before, client_before = batch_sizes(url), processes.serve_processes_cpu_s(), time.process_time()
    results = asyncio.run(load(url, bodies, concurrency))
    results["mean_batch"] = mean_batch(before, batch_sizes(url))
    # CPU milliseconds per request in each process: where serving costs besides the model (Translator's row).
    cpu_after = processes.serve_processes_cpu_s()
    results["cpu_ms_per_request"] = {name: (cpu_after[name] - cpu_before.get(name, 0.0)) * 1000 / len(bodies)
                                   for name in cpu_after} | {
        "load generator": (time.process_time() - client_before) * 1000 / len(bodies)}
    results["server_mb"] = server_mb()
    return results


def targets(level: dict[str, Any], baseline: dict[str, float], memory_start: float, memory_end: float,
            side: dict[str, float] | None = None) -> list[tuple[str, bool, str]]:
    """The issue's targets at concurrency 16: (target, met, the numbers). Throughput: the median ratios of the
    side-by-side rounds when there are some, else the level against the baseline. Memory: after every level."""
    x_serial = side["x_serial"] if side else level["rps"] / baseline["serial_rps"]
    of_batch16 = side["of_batch16"] if side else level["rps"] / baseline["batch16_rps"]
    how = " (median of the side-by-side rounds)" if side else ""
    growth = (memory_end - memory_start) / memory_start * 100
    return [(f"throughput >= 1.5x serial in-process{how}", x_serial >= 1.5, f"{x_serial:.2f}x"),
            (f"throughput >= 70% of in-process batch 16{how}", of_batch16 >= 0.7, f"{of_batch16:.0%}"),
            ("p99 <= 4x p50", level["p99_ms"] <= 4 * level["p50_ms"], f"{level['p99_ms'] / level['p50_ms']:.1f}x"),
            ("0 errors", level["errors"] == 0, str(level["errors"])),
            ("memory growth <= 5% after warm-up (all levels)", growth <= 5, f"{growth:+.1f}%")]


def table(levels: list[dict[str, Any]], baseline: dict[str, float]) -> str:
    lines = ["| concurrency | requests/s | × serial | p50 ms | p90 ms | p99 ms | errors | mean batch "
             "| server MB after |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
             f"| in-process, serial | {baseline['serial_rps']:.0f} | 1.00 | | | | | 1 | |",
             f"| in-process, batch 16 | {baseline['batch16_rps']:.0f} | "
             f"{baseline['batch16_rps'] / baseline['serial_rps']:.2f} | | | | | 16 | |"]
    for lv in levels:
        lines.append(f"| {lv['concurrency']} | {lv['rps']:.0f} | {lv['rps'] / baseline['serial_rps']:.2f} | "
                     f"{lv['p50_ms']:.0f} | {lv['p90_ms']:.0f} | {lv['p99_ms']:.0f} | {lv['errors']} | "
                     f"{lv['mean_batch']:.1f} | {lv['server_mb']:.0f} |")
    return "\n".join(lines)


def faults(url: str, bodies: list[dict[str, Any]], long_text: str, deployment: str) -> dict[str, Any]:
    """A replica killed under load; a request past its timeout; a burst over the queue."""
    outcome: dict[str, Any] = {}

    async def kill_soon():
        await asyncio.sleep(1.0)
        outcome["killed"] = await asyncio.to_thread(fault_injection.kill_replica, deployment)
        outcome["killed_at_s"] = 1.0

    pid = local.get_json(f"{url}/stats")[1]["translate"]["pid"]
    start = time.perf_counter()
    outcome["kill"] = asyncio.run(load(url, bodies[:1500], 16, at_start=kill_soon))
    local.wait_ready(url)
    outcome["recovered_s"] = time.perf_counter() - start
    outcome["new_pid"] = local.get_json(f"{url}/stats")[1]["translate"]["pid"] != pid
    slow = {**bodies[0], "text": long_text, "method": "beam", "beam": 16, "truncate": True}
    outcome["timeout"] = asyncio.run(load(url, [slow], 1, headers={"X-Request-Timeout": "0.05"}))
    outcome["heavy"] = heavy_neighbours(url, bodies, long_text)
    before = server_mb()
    outcome["burst"] = asyncio.run(load(url, (bodies * 2)[:1000], 1000))
    outcome["burst_server_mb"] = (before, server_mb())
    return outcome


def heavy_neighbours(url: str, bodies: list[dict[str, Any]], long_text: str, heavy: int = 4,
                     light: int = 40) -> dict[str, Any]:
    """Issue 42's finding 2: `heavy` sampled requests (temperature 10: they never end early, max_len at the cost
    limit, attention="all") on a long text, sent together, while one client sends `light` greedy requests one after
    another: the light ones' latency beside them, and the heavy ones' time and answer size."""
    heavy_body = {**bodies[0], "text": long_text, "method": "sample", "temperature": 10.0, "attention": "all",
                  "truncate": True}  # the precision the service loaded (the run's)
    info = local.get_json(f"{url}/info")[1]["translate"]
    limits = info["limits"]
    # The longest target the limits allow for this text: 2 × its tokens + 50, cut to what attention="all" may answer.
    heavy_body["max_len"] = 2 * (len(long_text) // 4) + limits["max_len_extra"]

    async def run() -> dict[str, Any]:
        import aiohttp

        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=120)) as session:
            async def one(body):
                start = time.perf_counter()
                async with session.post(f"{url}/translate", json=body) as response:
                    data = await response.read()
                    return response.status, time.perf_counter() - start, len(data), json.loads(data or b"{}")

            status, _, _, detail = await one(heavy_body)  # the limit may refuse it: lower max_len until it fits
            while status == 422 and heavy_body["max_len"] > 20:
                heavy_body["max_len"] = int(heavy_body["max_len"] * 0.8)
                status, _, _, detail = await one(heavy_body)
            alone = [(await one(bodies[i % len(bodies)]))[1] for i in range(10)]
            heavies = [asyncio.create_task(one(heavy_body)) for _ in range(heavy)]
            await asyncio.sleep(0.05)
            beside = []
            for i in range(light):
                beside.append((await one(bodies[i % len(bodies)]))[1])
                if all(h.done() for h in heavies):
                    break
            done = await asyncio.gather(*heavies)
        return {"heavy_max_len": heavy_body["max_len"], "heavy_statuses": [d[0] for d in done],
                "heavy_refused": detail.get("detail") if status != 200 else None,
                "heavy_s": [d[1] for d in done], "heavy_mb": max(d[2] for d in done) / 2**20,
                "light_alone_ms": 1000 * float(np.median(alone)), "light_beside_ms": [1000 * t for t in beside]}

    return asyncio.run(run())


def timed(call) -> tuple[Any, float]:
    start = time.perf_counter()
    try:
        result = call()
    except OSError as e:  # a timeout: no answer
        result = (0, {"detail": str(e)})
    return result, time.perf_counter() - start


def front_faults(url: str, request_timeout_s: float, slowloris: int = 4200) -> dict[str, Any]:
    """The front (HAProxy) against slow clients and a frozen replica: `slowloris` half-sent requests from 127.0.0.1
    (most stop inside the headers, 100 inside the body) with /health and /translate timed meanwhile, and how long
    the front holds them; 50 connections over the per-client cap from 127.0.0.2; a request to a replica frozen
    (SIGSTOP) until the front's backstop answers."""
    import resource

    from serve.front import FrontLimits

    port, limits = int(url.rsplit(":", 1)[1]), FrontLimits.for_service(request_timeout_s)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    slowloris = min(slowloris, hard - 400)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, slowloris + 400)), hard))
    body = {"text": "Guten Morgen!", "src_lang": "de", "tgt_lang": "en", "method": "greedy"}
    outcome: dict[str, Any] = {"slowloris": slowloris}
    start = time.perf_counter()
    held, refused = fault_injection.half_sent_requests(port, slowloris - 100)
    held_body, refused_body = fault_injection.half_sent_requests(port, 100, first=fault_injection.HALF_BODY)
    opened = time.perf_counter()
    outcome["open_s"], outcome["refused"] = opened - start, len(refused) + len(refused_body)
    try:
        (status, _), seconds = timed(lambda: local.get_json(f"{url}/health", timeout=10))
        outcome["health"] = {"status": status, "ms": seconds * 1000}
        (status, _), seconds = timed(lambda: post_json(f"{url}/translate", body, timeout=10))
        outcome["translate"] = {"status": status, "ms": seconds * 1000}
        raw = fault_injection.read_until_closed(held_body[0], limits.http_request_s + 10)
        status, headers, _ = fault_injection.parse_answer(raw) if raw else (0, {}, b"")
        outcome["body_timeout"] = {"status": status, "content_type": headers.get("content-type"),
                                 "s": time.perf_counter() - opened}
        # every connection the front has closed by then (readable: its 408 or the close)
        closed = fault_injection.closed_by_peer(held + held_body, wait_s=5, at_least=len(held + held_body))
        outcome["closed_after_s"] = (time.perf_counter() - opened, closed, len(held + held_body))
    finally:
        for s in held + refused + held_body + refused_body:
            s.close()
    capped, capped_refused = fault_injection.half_sent_requests(port, limits.conns_per_client + 50, source="127.0.0.2")
    try:
        closed = fault_injection.closed_by_peer(capped, wait_s=3, at_least=50 - len(capped_refused))
        outcome["over_cap"] = {"tried": limits.conns_per_client + 50, "turned_away": len(capped_refused) + closed}
    finally:
        for s in capped + capped_refused:
            s.close()
    resume = fault_injection.stop_replica("Service")
    try:
        (status, answer), seconds = timed(lambda: post_json(f"{url}/translate", body, timeout=limits.server_s + 30))
    finally:
        resume()
    outcome["frozen"] = {"status": status, "s": seconds, "detail": answer.get("detail", "")[:120],
                       "front_timeout_s": limits.server_s}
    start = time.perf_counter()
    local.wait_ready(url)
    outcome["frozen"]["ready_after_resume_s"] = time.perf_counter() - start
    return outcome


def post_json(url: str, body: dict[str, Any], timeout: float) -> tuple[int, dict[str, Any]]:
    """(status, JSON) of a POST; a body that is not JSON is reported as such (the front must never send one)."""
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            status, payload = response.status, response.read()
    except urllib.error.HTTPError as e:
        status, payload = e.code, e.read()
    try:
        return status, json.loads(payload)
    except ValueError:
        return status, {"detail": f"NOT JSON: {payload[:80]!r}"}


def main(argv: list[str] | None = None) -> int:
    p = bench_parser("serve_load")
    p.add_argument("--models", default="models")
    p.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 16, 64])
    p.add_argument("--requests", type=int, default=2500, help="per concurrency level")
    p.add_argument("--precision", default="int8")
    p.add_argument("--method", default="greedy")
    p.add_argument("--threads", type=int, default=None, help="onnxruntime threads of the in-process baseline")
    p.add_argument("--server-threads", type=int, default=None, help="onnxruntime threads per replica")
    p.add_argument("--layout", default=ServeSettings.layout, choices=["one", "split"],
                   help="one deployment for HTTP and both models, or an ingress and one per model")
    p.add_argument("--replicas", type=int, default=1, help="replicas of the deployment that translates")
    p.add_argument("--python-proxy", action="store_true",
                   help="Serve's Python proxy in front, as before Ray 2.56, instead of HAProxy + direct ingress")
    p.add_argument("--max-batch-size", type=int, default=ServeSettings.max_batch_size)
    p.add_argument("--batch-wait-s", type=float, default=ServeSettings.batch_wait_timeout_s)
    p.add_argument("--port", type=int, default=8765)
    p.add_argument("--sweep", action="store_true", help="first try several batch settings at concurrency 16")
    p.add_argument("--faults", action="store_true",
                   help="then the replica kill, timeout and burst checks, and the front's: slow clients, a client "
                        "over its connection cap, a frozen replica")
    p.add_argument("--timeout-s", type=float, default=ServeSettings.request_timeout_s,
                   help="the service's request timeout (the front's backstop is 2 s past it: the frozen replica's "
                        "wait)")
    p.add_argument("--rounds", type=int, default=5,
                   help="rounds of in-process and served side by side at concurrency 16 (the targets' ratios)")
    p.add_argument("--json", help="write every number here")
    args = p.parse_args(argv)
    models = Path(args.models)
    texts = held_out(models)
    bodies = [{"text": texts[i % len(texts)], "src_lang": "de", "tgt_lang": "en", "method": args.method,
               "precision": args.precision} for i in range(max(args.requests, WARMUP_REQUESTS, 1500))]
    out: dict[str, Any] = {"load_1min_before": os.getloadavg()[0], "cpus": os.cpu_count()}
    model = in_process_model(models, texts, args.precision, args.method, args.threads)
    before = in_process(model, texts, args.method)
    print(f"in-process {args.precision} {args.method}: serial {before['serial_rps']:.0f} requests/s, "
          f"batch 16 {before['batch16_rps']:.0f} sentences/s", flush=True)
    settings = ServeSettings(models_dir=str(models), precisions=(args.precision,), threads=args.server_threads,
                             layout=args.layout, replicas=args.replicas, translate_replicas=args.replicas,
                             max_batch_size=args.max_batch_size, batch_wait_timeout_s=args.batch_wait_s,
                             max_ongoing_requests=ServeSettings.ongoing_for(args.max_batch_size), port=args.port,
                             request_timeout_s=args.timeout_s)
    url = local.start(settings, num_cpus=2, fast_front=not args.python_proxy)
    out["layout"], out["front"] = args.layout, "Python proxy" if args.python_proxy else "HAProxy + direct ingress"
    try:
        if args.sweep:
            out["sweep"] = []
            for size, wait in SWEEP:
                local.deploy(replace(settings, max_batch_size=size, batch_wait_timeout_s=wait,
                                     max_ongoing_requests=ServeSettings.ongoing_for(size)))
                asyncio.run(load(url, bodies[:200], 16))
                level = run_level(url, bodies[:1000], 16)
                out["sweep"].append({"max_batch_size": size, "batch_wait_timeout_s": wait, **level})
                print(f"sweep: max_batch_size {size:>2}, wait {wait * 1000:>4.0f} ms: {level['rps']:.0f} requests/s, "
                      f"p50 {level['p50_ms']:.0f} ms, p99 {level['p99_ms']:.0f} ms, mean batch "
                      f"{level['mean_batch']:.1f}", flush=True)
            local.deploy(settings)
        asyncio.run(load(url, bodies[:WARMUP_REQUESTS], 16))
        memory_start = server_mb()
        out["server_mb_after_warmup"] = memory_start
        levels = []
        for concurrency in args.concurrency:
            levels.append(run_level(url, bodies[:args.requests], concurrency))
            lv = levels[-1]
            print(f"concurrency {concurrency}: {lv['rps']:.0f} requests/s, p50 {lv['p50_ms']:.0f} ms, p99 "
                  f"{lv['p99_ms']:.0f} ms, {lv['errors']} errors, mean batch {lv['mean_batch']:.1f}, server "
                  f"{lv['server_mb']:.0f} MB; CPU ms per request: "
                  + ", ".join(f"{k} {v:.1f}" for k, v in sorted(lv["cpu_ms_per_request"].items())), flush=True)
        out["levels"] = levels
        print(f"\nserver memory after warm-up {memory_start:.0f} MB; after {sum(lv['requests'] for lv in levels)} "
              f"requests {levels[-1]['server_mb']:.0f} MB")
        if args.rounds:
            out["side_by_side"] = pairs = side_by_side(url, model, texts, bodies, args.method, args.rounds)
            print(f"\nside by side, {args.rounds} rounds of [in-process 160 sentences serial and 16 per call, then "
                  "480 requests at concurrency 16]:")
            for i, r in enumerate(pairs["rounds"], 1):
                print(f"  round {i}: in-process {r['serial_rps']:.0f} serial, {r['batch16_rps']:.0f} batch 16; served "
                      f"{r['served_rps']:.0f} requests/s = {r['x_serial']:.2f}x serial, {r['of_batch16']:.0%} of "
                      f"batch 16; p50 {r['p50_ms']:.0f} ms, p99 {r['p99_ms']:.0f} ms")
        if args.faults:
            long_text = max(texts, key=len)
            out["faults"] = fault_outcome = faults(url, bodies, " ".join([long_text] * 3),
                                              "Service" if args.layout == "one" else "Translator")
            kill = fault_outcome["kill"]
            print(f"\nreplica killed after 1 s of a 1,500-request run at concurrency 16: {kill['errors']} failed "
                  f"({kill['details']}), new replica: {fault_outcome['new_pid']}, ready again after "
                  f"{fault_outcome['recovered_s']:.1f} s from the start of the run")
            print(f"timeout: {fault_outcome['timeout']['details']} after {fault_outcome['timeout']['p50_ms']:.0f} ms")
            hv = fault_outcome["heavy"]
            print(f"{len(hv['heavy_s'])} heavy requests (sample, temperature 10, max_len {hv['heavy_max_len']}, "
                  f"attention='all'): {hv['heavy_statuses']} in {max(hv['heavy_s']):.1f} s, answers up to "
                  f"{hv['heavy_mb']:.1f} MB; {len(hv['light_beside_ms'])} light greedy requests beside them: median "
                  f"{np.median(hv['light_beside_ms']):.0f} ms, max {max(hv['light_beside_ms']):.0f} ms "
                  f"(alone: {hv['light_alone_ms']:.0f} ms)" + (f"; refused: {hv['heavy_refused']}"
                                                               if hv["heavy_refused"] else ""))
            burst = fault_outcome["burst"]
            before_mb, after_mb = fault_outcome["burst_server_mb"]
            print(f"burst of 1,000 at once: {burst['statuses']} in {burst['seconds']:.1f} s; server memory "
                  f"{before_mb:.0f} -> {after_mb:.0f} MB; {burst['details']}")
            if not args.python_proxy and args.layout == "one":
                out["front_faults"] = fr = front_faults(url, args.timeout_s)
                closed = fr["closed_after_s"]
                print(f"slowloris: {fr['slowloris']:,} half-sent requests from 127.0.0.1 opened in "
                      f"{fr['open_s']:.1f} s ({fr['refused']} refused); meanwhile /health {fr['health']['status']} in "
                      f"{fr['health']['ms']:.0f} ms, /translate {fr['translate']['status']} in "
                      f"{fr['translate']['ms']:.0f} ms; a request without its body got {fr['body_timeout']['status']} "
                      f"({fr['body_timeout']['content_type']}) after {fr['body_timeout']['s']:.1f} s; "
                      f"{closed[1]:,} of {closed[2]:,} closed by the front {closed[0]:.1f} s after they opened")
                print(f"over the per-client cap: {fr['over_cap']['turned_away']} of {fr['over_cap']['tried']} "
                      "connections from 127.0.0.2 turned away at once")
                frozen = fr["frozen"]
                print(f"replica frozen (SIGSTOP): a request got {frozen['status']} after {frozen['s']:.1f} s "
                      f"(front's backstop {frozen['front_timeout_s']} s): {frozen['detail']!r}; ready "
                      f"{frozen['ready_after_resume_s']:.1f} s after it resumed")
    finally:
        local.stop()
    deadline = time.monotonic() + 60
    while processes.serve_processes() and time.monotonic() < deadline:  # Ray's processes take a while to end
        time.sleep(1)
    time.sleep(3)
    # The baseline again, the service stopped: the in-process rates moved by up to a third between runs on this
    # machine, so the targets are judged against the better of the two measurements (the harder bar).
    after = in_process(model, texts, args.method)
    baseline = {key: max(before[key], after[key]) for key in before}
    out["baseline"], out["baseline_before_after"] = baseline, (before, after)
    print(f"\nin-process baseline before / after the service: serial {before['serial_rps']:.0f} / "
          f"{after['serial_rps']:.0f} requests/s, batch 16 {before['batch16_rps']:.0f} / {after['batch16_rps']:.0f} "
          "sentences/s; the table uses the higher of each\n")
    print(table(levels, baseline))
    at16 = next((lv for lv in levels if lv["concurrency"] == 16), None)
    if at16:
        side = out["side_by_side"]["median"] if "side_by_side" in out else None
        out["targets"] = targets(at16, baseline, memory_start, levels[-1]["server_mb"], side)
        print("\nTargets at concurrency 16:")
        for name, met, detail in out["targets"]:
            print(f"  {'met' if met else 'MISSED'}: {name} ({detail})")
    out["load_1min_after"] = os.getloadavg()[0]
    print(f"\n1-minute load average: {out['load_1min_before']:.1f} before, {out['load_1min_after']:.1f} after "
          f"({out['cpus']} CPUs; other work on the machine slows every number)")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1, default=str), encoding="utf-8")
    return 0
