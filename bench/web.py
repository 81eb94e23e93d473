"""python -m bench web [--model-dir DIR] [--precision int8|fp32] [--sentences N]: the translator in chromium
(onnxruntime-web, dist/web) against Python onnxruntime on the same CPU, side by side in one run.

Builds the folder into a temporary directory, serves it with http.server on 127.0.0.1 and opens it in Debian's
chromium (headless, a fresh profile: nothing cached). Prints the time from opening the page to its translator being
loaded and to the first translation done, then per sentence the time in the page's Web Worker (its own clock, as
the page shows it) and in Python onnxruntime with one intra-op thread (the page gets one thread where it is not
cross-origin isolated, as under http.server), greedy and beam 4, one sentence at a time, alternating; beside them
the same page served cross-origin isolated (`python -m web serve --isolated`, as `make run` serves it), where
onnxruntime-web runs on min(4, cores) wasm threads. The numbers depend on the machine and on what else runs on it:
the load average is printed before and after.
"""
from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path

from runtime import OnnxTranslator
from tx.evaluation import BENCH_SENTENCES
from web.build import BuildOptions, build, portable_model_dir
from web.local import static_server

from . import bench_parser

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def load() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def page_translate(page, text: str, method: str) -> dict:
    return page.evaluate("([text, method]) => window.txWeb.translateIds(window.txWeb.prepare(text, 'en').srcIds, "
                         "{method, beam: 4, alpha: 0.6})", [text, method])


def main(argv: list[str] | None = None) -> int:
    from playwright.sync_api import sync_playwright

    parser = bench_parser("web", __doc__)
    parser.add_argument("--model-dir", type=Path, default=Path("models/translate"))
    parser.add_argument("--precision", choices=["int8", "fp32"], default="int8")
    parser.add_argument("--sentences", type=int, default=8, help="German sentences timed (BENCH_SENTENCES)")
    args = parser.parse_args(argv)
    texts = BENCH_SENTENCES[:args.sentences]
    print(f"model {args.model_dir}, {args.precision}; {len(texts)} sentences DE->EN; {os.cpu_count()} CPUs; {load()}")
    with tempfile.TemporaryDirectory(prefix="tx-web-bench-") as tmp:
        # Python runs the page's own graphs (its int8 is made by one scheme for every CPU: web/build.py)
        python = OnnxTranslator(portable_model_dir(args.model_dir, Path(tmp) / "python"), provider="cpu",
                                precision=args.precision, threads=1)
        folder = Path(tmp) / "web"
        build(BuildOptions(model_dir=args.model_dir, out=folder, precisions=(args.precision,), compresslevel=1,
                           log=lambda _: None))
        with static_server(folder) as url, static_server(folder, isolated=True) as isolated_url, \
                sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = browser.new_page()
            opened = time.perf_counter()
            page.goto(url + "/")
            page.wait_for_selector("body[data-ready='1']")
            page.evaluate("precision => window.txWeb.load(precision)", args.precision)
            loaded = time.perf_counter()
            first = page_translate(page, texts[0], "greedy")
            done = time.perf_counter()
            print(f"page opened -> translator loaded: {loaded - opened:.2f} s; -> first translation (greedy) done: "
                  f"{done - opened:.2f} s (the translation itself {first['ms']:.0f} ms in the worker)")
            python.translate(texts[:1], "de", "en", method="greedy")  # warm-up, as the page's first call was
            threaded_page = browser.new_page()
            threaded_page.goto(isolated_url + "/")
            threaded_page.wait_for_selector("body[data-ready='1']")
            threaded_page.evaluate("precision => window.txWeb.load(precision)", args.precision)
            threads = page_translate(threaded_page, texts[0], "greedy")["threads"]  # and its warm-up
            print(f"{'method':<7} {'sentence':<44} {'tokens':>6} {'chromium ms':>11} {'python ms':>9} {'ratio':>6} "
                  f"{f'{threads} threads ms':>12} {'speed-up':>8}")
            ratios: dict[str, list[float]] = {"greedy": [], "beam": []}
            speedups: dict[str, list[float]] = {"greedy": [], "beam": []}
            for method in ratios:
                for text in texts:
                    in_page = page_translate(page, text, method)
                    threaded = page_translate(threaded_page, text, method)
                    speedups[method].append(in_page["ms"] / threaded["ms"])
                    start = time.perf_counter()
                    [done_python] = python.translate([text], "de", "en", method=method, beam=4, length_penalty=0.6)
                    python_ms = (time.perf_counter() - start) * 1e3
                    ratios[method].append(in_page["ms"] / python_ms)
                    same = "" if in_page["tokens"] == done_python.token_ids == threaded["tokens"] else "  (other ids!)"
                    print(f"{method:<7} {text[:44]:<44} {len(done_python.token_ids):>6} {in_page['ms']:>11.1f} "
                          f"{python_ms:>9.1f} {ratios[method][-1]:>5.2f}x {threaded['ms']:>12.1f} "
                          f"{speedups[method][-1]:>7.2f}x{same}")
            browser.close()
    for method, values in ratios.items():
        print(f"{method}: chromium takes median {statistics.median(values):.2f}x Python onnxruntime's time per "
              f"sentence (min {min(values):.2f}x, max {max(values):.2f}x), both on one thread; chromium on {threads} "
              f"threads (isolated) over one: speed-up median {statistics.median(speedups[method]):.2f}x "
              f"(min {min(speedups[method]):.2f}x, max {max(speedups[method]):.2f}x; below 1: slower)")
    print(load())
    return 0
