"""python -m bench steering [--model-dir DIR] [--precision fp32|int8]: alternatives at one position vs plain greedy.

What the Translate page does when a word is clicked: `translate_n_best(return_alternatives=True,
num_hypotheses=5, method="greedy")` at one position (the first, and the middle of the greedy output), i.e. one
teacher-forced pass to the position and one greedy search over the 5 continuations, timed side by side with the
plain greedy translation of the same sentence (`translate(method="greedy")`), in alternating order, on the
onnxruntime translator. Goal: at most 1.5x the plain greedy time. The numbers depend on the machine and on what
else runs on it: read the ratios of one run, not the absolute times across runs.
"""
from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from pathlib import Path

from runtime import OnnxTranslator
from tx.evaluation import BENCH_SENTENCES

from . import bench_parser


def best_of(call: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return min(times)


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
          f"{k} alternatives, each completed greedily; best of {args.repeats}")
    print(f"{'sentence':<44} {'tokens':>6} {'greedy ms':>9} {'alt@0 ms':>8} {'ratio':>6} {'alt@mid ms':>10} "
          f"{'ratio':>6}")
    translator.translate(texts[:1], method="greedy")  # warm-up: sessions and first-call allocations
    ratios: dict[str, list[float]] = {"first": [], "middle": []}
    for text in texts:
        [plain] = translator.translate([text], method="greedy")
        middle = translator.tokenizer.decode(plain.token_ids[:len(plain.token_ids) // 2])
        cases = {"greedy": lambda text=text: translator.translate([text], method="greedy")}
        for name, prefix in (("first", ""), ("middle", middle)):
            cases[name] = lambda text=text, prefix=prefix: translator.translate_n_best(
                [text], method="greedy", target_prefix=[prefix], return_alternatives=True, num_hypotheses=k)
        times = {name: [] for name in cases}
        for _ in range(args.repeats):  # alternating, so a slow spell of the machine hits every case alike
            for name, call in cases.items():
                times[name].append(best_of(call, 1))
        best = {name: min(values) for name, values in times.items()}
        for name in ratios:
            ratios[name].append(best[name] / best["greedy"])
        print(f"{text[:44]:<44} {len(plain.token_ids):>6} {best['greedy'] * 1e3:>9.1f} {best['first'] * 1e3:>8.1f} "
              f"{ratios['first'][-1]:>5.2f}x {best['middle'] * 1e3:>10.1f} {ratios['middle'][-1]:>5.2f}x")
    for name, values in ratios.items():
        print(f"alternatives at the {name} position: median {statistics.median(values):.2f}x plain greedy "
              f"(min {min(values):.2f}x, max {max(values):.2f}x; goal <= 1.5x)")
    return 0
