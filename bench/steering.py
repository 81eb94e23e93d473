"""python -m bench steering [--model-dir DIR] [--precision fp32|int8]: alternatives at one position vs plain greedy.

What the Translate page does when a word is clicked: `translate_n_best(return_alternatives=True,
num_hypotheses=5, method="greedy")` at one position (the first, and the middle of the greedy output), i.e. one
teacher-forced pass to the position and one greedy search over the 5 continuations, timed side by side with the
plain greedy translation of the same sentence (`translate(method="greedy")`), in alternating order, on the
onnxruntime translator. Goal: at most 1.5x the plain greedy time. The numbers depend on the machine and on what
else runs on it: read the ratios of one run, not the absolute times across runs.

Beside each ratio, the same ratio of the time spent inside the decoder and encoder graphs alone (onnxruntime's
`session.run`, in the same best run): the floor that no change to the search's own Python can go below, since every
alternative's tokens and log-probs must stay those of its own greedy completion.
"""
from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from runtime import OnnxTranslator
from tx.evaluation import BENCH_SENTENCES

from . import bench_parser


class GraphClock:
    """Seconds spent inside the backend's graph runs (`OnnxBackend.run`, wrapped on this one instance)."""

    def __init__(self, backend) -> None:
        self.seconds, run = 0.0, backend.run

        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return run(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - start

        backend.run = timed


def timed_call(call: Callable[[], object], clock: GraphClock) -> tuple[float, float]:
    """(wall seconds, seconds inside the graphs) of one call."""
    clock.seconds = 0.0
    start = time.perf_counter()
    call()
    return time.perf_counter() - start, clock.seconds


def load() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    parser = bench_parser("steering", __doc__)
    parser.add_argument("--model-dir", type=Path, default=Path("models/translate"))
    parser.add_argument("--precision", choices=["fp32", "int8"], default="fp32")
    parser.add_argument("--threads", type=int, default=2, help="onnxruntime intra-op threads")
    parser.add_argument("--sentences", type=int, default=8, help="sentences timed (the first of BENCH_SENTENCES)")
    parser.add_argument("--alternatives", type=int, default=5, help="num_hypotheses: continuations completed")
    parser.add_argument("--repeats", type=int, default=5, help="best of this many runs per case")
    args = parser.parse_args(argv)
    translator = OnnxTranslator(args.model_dir, provider="cpu", precision=args.precision, threads=args.threads)
    texts = BENCH_SENTENCES[:args.sentences]
    k = args.alternatives
    print(f"model {args.model_dir}, onnxruntime {args.precision} on {translator.provider}, {args.threads} threads; "
          f"{k} alternatives, each completed greedily; best of {args.repeats}; {load()}")
    print(f"{'sentence':<44} {'tokens':>6} {'greedy ms':>9} {'alt@0 ms':>8} {'ratio':>6} {'alt@mid ms':>10} "
          f"{'ratio':>6}")
    clock = GraphClock(translator.backend)
    translator.translate(texts[:1], method="greedy")  # warm-up: sessions and first-call allocations
    ratios: dict[str, list[float]] = {"first": [], "middle": []}
    graph_ratios: dict[str, list[float]] = {"first": [], "middle": []}
    for text in texts:
        [plain] = translator.translate([text], method="greedy")
        middle = translator.tokenizer.decode(plain.token_ids[:len(plain.token_ids) // 2])
        cases = {"greedy": lambda text=text: translator.translate([text], method="greedy")}
        for name, prefix in (("first", ""), ("middle", middle)):
            cases[name] = lambda text=text, prefix=prefix: translator.translate_n_best(
                [text], method="greedy", target_prefix=[prefix], return_alternatives=True, num_hypotheses=k)
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
        for _ in range(args.repeats):  # alternating, so a slow spell of the machine hits every case alike
            for name, call in cases.items():
                times[name].append(timed_call(call, clock))
        best = {name: min(values) for name, values in times.items()}  # the fastest run, and its graph time
        for name in ratios:
            ratios[name].append(best[name][0] / best["greedy"][0])
            graph_ratios[name].append(best[name][1] / best["greedy"][1])
        print(f"{text[:44]:<44} {len(plain.token_ids):>6} {best['greedy'][0] * 1e3:>9.1f} "
              f"{best['first'][0] * 1e3:>8.1f} {ratios['first'][-1]:>5.2f}x {best['middle'][0] * 1e3:>10.1f} "
              f"{ratios['middle'][-1]:>5.2f}x")
    for name, values in ratios.items():
        graph = graph_ratios[name]
        print(f"alternatives at the {name} position: median {statistics.median(values):.2f}x plain greedy "
              f"(min {min(values):.2f}x, max {max(values):.2f}x; goal <= 1.5x); inside the graphs alone: median "
              f"{statistics.median(graph):.2f}x (min {min(graph):.2f}x, max {max(graph):.2f}x)")
    print(load())
    return 0
