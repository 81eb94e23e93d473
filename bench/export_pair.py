"""python -m bench export_pair BEFORE_DIR AFTER_DIR [--precision int8] [--threads 2] [--rounds 200]

Two exports of one translator (before and after a change to the exported graphs), timed side by side in one
process with the rounds interleaved (the order alternates), so that a busy machine slows both alike:
- one decoder step (the KV-cache graph alone) at batch 1 and 16 (past 12, source 20, half the rows padded to 10
  real tokens) and batch 4 (past 30, source 40);
- whole translations of tx/evalsets/bench_de.txt, greedy and beam 4, one sentence per call (16 calls) and all 16
  in one call (a tenth of the rounds).
Prints p50 and p10 per side, after / before, and the load average. Issue 42's padding-invariant cross-attention
was measured with it (docs/export-and-runtime.md#int8-schemes).
"""
from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from runtime import OnnxTranslator

from . import bench_parser

# tx.evaluation.BENCH_SENTENCES, read by path (as bench/step_overhead.py does: no torch in the process measured)
SENTENCES = (Path(__file__).resolve().parents[1] / "tx" / "evalsets" / "bench_de.txt").read_text("utf-8").splitlines()
STEP_CASES = ((1, 20, 12), (16, 20, 12), (4, 40, 30))  # (batch, source length, past length)


def interleaved(calls: dict[str, Callable[[], object]], rounds: int) -> dict[str, tuple[float, float]]:
    """p50 and p10 ms of each call, run in turn for `rounds` rounds, the order reversed every other round."""
    times: dict[str, list[float]] = {name: [] for name in calls}
    names = list(calls)
    for r in range(rounds):
        for name in (names if r % 2 else names[::-1]):
            start = time.perf_counter()
            calls[name]()
            times[name].append(time.perf_counter() - start)
    return {name: (statistics.median(t) * 1e3, float(np.percentile(t, 10)) * 1e3) for name, t in times.items()}


def step_call(translator: OnnxTranslator, batch: int, source: int, past: int) -> Callable[[], object]:
    backend, rng = translator.backend, np.random.default_rng(0)
    ids = rng.integers(5, translator.tokenizer.vocab_size, (batch, source))
    mask = np.ones((batch, source), dtype=bool)
    mask[1:, source // 2:] = False  # the other rows padded: a batch of unequal sentences
    state = backend.encode(ids, mask)
    heads, head_dim = backend.head_shape
    pasts = tuple(rng.standard_normal((batch, heads, past, head_dim)).astype(np.float32) for _ in state.past)
    state = type(state)(state.src_mask, state.cross, pasts, state.sources)
    tokens = rng.integers(5, translator.tokenizer.vocab_size, batch)
    return lambda: backend.step(tokens, state)


def translate_call(translator: OnnxTranslator, method: str, batch: int) -> Callable[[], object]:
    if batch == 1:
        return lambda: [translator.translate([s], method=method) for s in SENTENCES]
    return lambda: translator.translate(SENTENCES[:batch], method=method)


def line(case: str, result: dict[str, tuple[float, float]]) -> str:
    (b50, b10), (a50, a10) = result["before"], result["after"]
    return (f"| {case} | {b50:.2f} / {b10:.2f} | {a50:.2f} / {a10:.2f} | {a50 / b50:.3f} / {a10 / b10:.3f} | "
            f"{os.getloadavg()[0]:.1f} |")


def main(argv: list[str] | None = None) -> int:
    parser = bench_parser("export_pair", __doc__)
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--precision", default="int8")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=200, help="decoder-step rounds (translations: a tenth)")
    args = parser.parse_args(argv)
    translators = {name: OnnxTranslator(path, provider="cpu", precision=args.precision, threads=args.threads)
                   for name, path in (("before", args.before), ("after", args.after))}
    print(f"{args.before} -> {args.after}, {args.precision}, {args.threads} threads, CPU provider")
    print("| case | before p50 / p10 ms | after p50 / p10 ms | after ÷ before | load |")
    print("|---|--:|--:|--:|--:|")
    for batch, source, past in STEP_CASES:
        calls = {name: step_call(t, batch, source, past) for name, t in translators.items()}
        interleaved(calls, 10)  # warm-up
        print(line(f"decoder step, batch {batch}, source {source}, past {past}", interleaved(calls, args.rounds)),
              flush=True)
    for method in ("greedy", "beam"):
        for batch in (1, 16):
            calls = {name: translate_call(t, method, batch) for name, t in translators.items()}
            interleaved(calls, 1)
            print(line(f"{method}, 16 sentences {'one per call' if batch == 1 else 'in one call'}",
                       interleaved(calls, max(2, args.rounds // 10))), flush=True)
    return 0
