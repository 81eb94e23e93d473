"""`python -m serve [run] [options]`: the service on this machine (Ray + Serve), until Ctrl-C.

    python -m serve                                   # models/, http://127.0.0.1:8000 (docs at /docs)
    python -m serve run --port 8100 --replicas 2 --threads 1 --max-batch-size 16 --batch-wait-s 0.005
    python -m serve --layout split --translate-replicas 2      # an ingress and a deployment per model
    python -m serve --expose                          # for other machines: http://0.0.0.0:8000, Ray on this address

`make serve` runs the first line after exporting the shipped models. On a cluster: `serve deploy serve/config.yaml`.
"""
from __future__ import annotations

import argparse
import signal
import sys
import time

from .front import LOOPBACK
from .local import start, stop
from .settings import ServeSettings

DEFAULTS = ServeSettings()


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m serve", description=__doc__.split("\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("command", nargs="?", default="run", choices=["run"], help="run (the default): start and wait")
    p.add_argument("--models", default=DEFAULTS.models_dir, help="the folder holding translate/ and sentiment/")
    p.add_argument("--host", default=None,
                   help=f"address the API listens on (default: {DEFAULTS.host}; 0.0.0.0 with --expose)")
    p.add_argument("--port", type=int, default=DEFAULTS.port)
    p.add_argument("--provider", default=DEFAULTS.provider, help="onnxruntime provider: auto, cpu or cuda")
    p.add_argument("--precision", nargs="+", default=list(DEFAULTS.precisions), help="precisions to load")
    p.add_argument("--threads", type=int, default=None, help="onnxruntime intra-op threads per replica")
    p.add_argument("--layout", default=DEFAULTS.layout, choices=["one", "split"],
                   help="one: one deployment is the HTTP API and holds both models (fastest on one machine); "
                        "split: an ingress and a deployment per model, each with its own replicas")
    p.add_argument("--replicas", type=int, default=DEFAULTS.replicas, help="replicas (layout one)")
    p.add_argument("--translate-replicas", type=int, default=DEFAULTS.translate_replicas, help="(layout split)")
    p.add_argument("--sentiment-replicas", type=int, default=DEFAULTS.sentiment_replicas, help="(layout split)")
    p.add_argument("--python-proxy", action="store_true",
                   help="Serve's Python proxy in front, not HAProxy with direct ingress (slower; docs/serving.md)")
    p.add_argument("--max-batch-size", type=int, default=DEFAULTS.max_batch_size)
    p.add_argument("--batch-wait-s", type=float, default=DEFAULTS.batch_wait_timeout_s)
    p.add_argument("--max-ongoing", type=int, default=None,
                   help=f"requests a model replica takes at once (default: {DEFAULTS.max_ongoing_requests}, at least "
                        "two batches)")
    p.add_argument("--max-queued", type=int, default=DEFAULTS.max_queued_requests,
                   help="requests waiting per model deployment before 503 (-1: no limit)")
    p.add_argument("--timeout-s", type=float, default=DEFAULTS.request_timeout_s, help="504 after this long")
    p.add_argument("--num-cpus", type=int, default=None, help="logical CPUs Ray may schedule on (default: all)")
    p.add_argument("--expose", action="store_true",
                   help="listen beyond loopback: the API on --host (default 0.0.0.0), Ray on this machine's address, "
                        "HAProxy's Prometheus exporter on every interface; without it nothing listens beyond "
                        "127.0.0.1 (docs/serving.md#the-front-slow-clients-errors-ports)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    ongoing = args.max_ongoing or ServeSettings.ongoing_for(args.max_batch_size)
    host = args.host or ("0.0.0.0" if args.expose else DEFAULTS.host)
    if not args.expose and host not in LOOPBACK:
        print(f"python -m serve: --host {host} listens beyond loopback: add --expose to mean it", file=sys.stderr)
        return 2
    try:
        settings = ServeSettings(
            models_dir=args.models, host=host, port=args.port, expose=args.expose, provider=args.provider,
            precisions=tuple(args.precision), threads=args.threads, layout=args.layout, replicas=args.replicas,
            translate_replicas=args.translate_replicas,
            sentiment_replicas=args.sentiment_replicas, max_batch_size=args.max_batch_size,
            batch_wait_timeout_s=args.batch_wait_s, max_ongoing_requests=ongoing,
            max_queued_requests=args.max_queued, request_timeout_s=args.timeout_s)
    except ValueError as e:
        print(f"python -m serve: {e}", file=sys.stderr)
        return 2
    try:
        url = start(settings, num_cpus=args.num_cpus, fast_front=not args.python_proxy)
        # SIGTERM (a process manager, `kill`) stops like Ctrl-C, Serve and Ray with it. Set after ray.init, whose
        # own handler aborts the process and leaves Ray's agent processes running (seen here).
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        print(f"serving {settings.models_dir} at {url} (API docs: {url}/docs); Ctrl-C stops it", flush=True)
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        return 0
    except RuntimeError as e:
        print(f"python -m serve: {e}", file=sys.stderr)
        return 1
    finally:
        stop()


if __name__ == "__main__":
    sys.exit(main())
