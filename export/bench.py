"""PyTorch eager vs onnxruntime fp32 vs onnxruntime int8, same threads, interleaved in one run.

    python -m export.bench MODEL_DIR... [--threads 2] [--repeats 30] [--json out.json]

Classifier: one model call at batch 1 × 16/64/256 tokens and batch 32 × 64 (the text wrappers'
`logits` functions, so tokenising is left out). Translation: `translate()` end to end, greedy
and beam 4, batch 1 and 16, on held-out sentences (test.tsv, else samples.tsv, else a fixed
list); PyTorch decodes with its KV cache (tx.decoding.TorchBackend). Each repeat runs every
system once on the same input, in rotating order, so drifts in machine load hit all alike;
p50/p90 are over repeats after warm-up. Writes MODEL_DIR/onnx/bench.json (read by the app).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from tx import read_model_config
from tx.bench_decode import GERMAN_SENTENCES
from tx.checkpoint import atomic_write
from tx.inference import SentimentAnalyzer, Translator

from .feeds import FIRST_PLAIN_ID
from .quality import held_out_texts
from .report import versions
from .runtime import OnnxSentimentClassifier, OnnxTranslator
from .spec import ONNX_DIR

SYSTEMS = ("torch", "ort-fp32", "ort-int8")
CLASSIFIER_CASES = [(1, 16), (1, 64), (1, 256), (32, 64)]  # (batch, tokens)
TRANSLATION_CASES = [("greedy", 1), ("greedy", 16), ("beam", 1), ("beam", 16)]  # (method, batch)
TARGETS = {"translate greedy fp32": 2.5, "translate greedy int8": 5.0,
           "classifier b1 <=64 fp32": 2.5, "classifier b1 <=64 int8": 5.0}


@dataclass
class CaseResult:
    case: str  # e.g. "greedy b16", "b1x64"
    system: str  # torch | ort-fp32 | ort-int8
    p50_ms: float
    p90_ms: float
    tokens_per_s: float  # tokens processed (classifier) or generated (translation) per second, at p50
    speedup: float  # torch p50 / this p50


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(values, q))


def interleaved(calls: dict[str, Callable[[int], int]], repeats: int, warmup: int) -> dict[str, tuple[list, int]]:
    """Run each system's call(repeat) -> tokens once per repeat, rotating the order; (seconds per repeat, tokens)."""
    names = list(calls)
    times: dict[str, list[float]] = {n: [] for n in names}
    tokens: dict[str, int] = {n: 0 for n in names}
    for r in range(warmup + repeats):
        for name in names[r % len(names):] + names[:r % len(names)]:
            start = time.perf_counter()
            count = calls[name](r)
            elapsed = time.perf_counter() - start
            if r >= warmup:
                times[name].append(elapsed)
                tokens[name] += count
    return {n: (times[n], tokens[n]) for n in names}


def summarise(case: str, measured: dict[str, tuple[list, int]]) -> list[CaseResult]:
    base = statistics.median(measured["torch"][0])
    results = []
    for name, (times, tokens) in measured.items():
        p50 = statistics.median(times)
        per_call_tokens = tokens / len(times)
        results.append(CaseResult(case, name, round(p50 * 1e3, 3), round(percentile(times, 90) * 1e3, 3),
                                  round(per_call_tokens / p50, 1), round(base / p50, 2)))
    return results


def bench_classifier(model_dir: Path, threads: int, repeats: int, warmup: int) -> tuple[list[CaseResult], dict]:
    torch_side = SentimentAnalyzer.from_dir(model_dir)
    systems: dict[str, Callable] = {"torch": torch_side.model_logits}
    for precision in ("fp32", "int8"):
        systems[f"ort-{precision}"] = OnnxSentimentClassifier(model_dir, "cpu", precision, threads).logits
    config = torch_side.model.config
    rng = np.random.default_rng(0)
    results = []
    for batch, length in CLASSIFIER_CASES:
        length = min(length, config.max_len)
        ids = rng.integers(FIRST_PLAIN_ID, config.vocab_size, size=(batch, length), dtype=np.int64)
        mask = np.ones((batch, length), dtype=bool)
        calls = {name: (lambda r, fn=fn: (fn(ids, mask, False), batch * length)[1]) for name, fn in systems.items()}
        results += summarise(f"b{batch}x{length}", interleaved(calls, repeats, warmup))
    return results, {"provider": "CPUExecutionProvider"}


def bench_translation(model_dir: Path, threads: int, repeats: int, warmup: int,
                      data_dir: Path) -> tuple[list[CaseResult], dict]:
    texts = held_out_texts(data_dir / "translate", model_dir, {"de"}, 64)
    sentences = [r["de"] for r in texts.rows] or GERMAN_SENTENCES
    origin = texts.origin if texts.rows else "tx.bench_decode.GERMAN_SENTENCES"
    systems: dict[str, Any] = {"torch": Translator.from_dir(model_dir)}
    for precision in ("fp32", "int8"):
        systems[f"ort-{precision}"] = OnnxTranslator(model_dir, "cpu", precision, threads)
    results = []
    for method, batch in TRANSLATION_CASES:
        def call(r: int, system=None, method=method, batch=batch) -> int:
            chosen = [sentences[(r * batch + i) % len(sentences)] for i in range(batch)]
            out = system.translate(chosen, src_lang="de", tgt_lang="en", method=method, beam=4)
            return sum(len(t.token_ids) for t in out)

        calls = {name: (lambda r, s=s, c=call: c(r, s)) for name, s in systems.items()}
        # Fewer repeats at batch 16: each call is ~16x longer and p50 settles faster.
        n = max(5, repeats // 3) if batch > 1 else repeats
        results += summarise(f"{method} b{batch}", interleaved(calls, n, max(1, warmup // 2)))
    return results, {"sentences": origin, "provider": systems["ort-fp32"].provider}


def check_targets(task: str, results: list[CaseResult]) -> dict[str, dict[str, Any]]:
    """Each target's reached ratio (the worst case it covers)."""
    reached = {}
    for system, precision in (("ort-fp32", "fp32"), ("ort-int8", "int8")):
        if task == "translate":
            ratios = [r.speedup for r in results if r.system == system and r.case.startswith("greedy")]
            name = f"translate greedy {precision}"
        else:
            ratios = [r.speedup for r in results if r.system == system and r.case in ("b1x16", "b1x64")]
            name = f"classifier b1 <=64 {precision}"
        if ratios:
            reached[name] = {"target": TARGETS[name], "reached": min(ratios), "met": min(ratios) >= TARGETS[name]}
    return reached


def bench_model_dir(model_dir: Path, threads: int, repeats: int, warmup: int, data_dir: Path) -> dict[str, Any]:
    task = read_model_config(model_dir)["meta"].get("task", "?")
    torch.set_num_threads(threads)  # the same thread count on both sides
    if task == "translate":
        results, extra = bench_translation(model_dir, threads, repeats, warmup, data_dir)
    else:
        results, extra = bench_classifier(model_dir, threads, repeats, warmup)
    return {"model_dir": str(model_dir), "task": task, "threads": threads, "repeats": repeats, **extra,
            "versions": versions(), "results": [asdict(r) for r in results],
            "targets": check_targets(task, results)}


def table(bench: dict[str, Any]) -> str:
    lines = [f"{bench['model_dir']} ({bench['task']}, {bench['threads']} threads, {bench['versions']['cpu']})",
             "| case | system | p50 ms | p90 ms | tokens/s | × torch |", "|---|---|---|---|---|---|"]
    for r in bench["results"]:
        lines.append(f"| {r['case']} | {r['system']} | {r['p50_ms']:.2f} | {r['p90_ms']:.2f} | "
                     f"{r['tokens_per_s']:.0f} | {r['speedup']:.2f} |")
    for name, t in bench["targets"].items():
        lines.append(f"target {name}: >= {t['target']}x, reached {t['reached']:.2f}x ({'met' if t['met'] else 'MISSED'})")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m export.bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("model_dirs", nargs="+", type=Path)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--data-dir", type=Path, default=Path("data/processed"))
    parser.add_argument("--json", type=Path, default=None,
                        help="write all results here (default: each MODEL_DIR/onnx/bench.json)")
    args = parser.parse_args(argv)
    if args.threads < 1 or args.repeats < 1 or args.warmup < 0:
        parser.error("--threads and --repeats must be >= 1, --warmup >= 0")
    benches = []
    for model_dir in args.model_dirs:
        try:
            bench = bench_model_dir(model_dir, args.threads, args.repeats, args.warmup, args.data_dir)
        except ValueError as e:  # ModelLoadError / CheckpointError: say what to run
            print(f"error: {e}", file=sys.stderr)
            return 2
        print(table(bench) + "\n")
        benches.append(bench)
        if args.json is None:
            out = model_dir / ONNX_DIR / "bench.json"
            atomic_write(out, lambda tmp, b=bench: Path(tmp).write_text(json.dumps(b, indent=2) + "\n"))
    if args.json is not None:
        atomic_write(args.json, lambda tmp: Path(tmp).write_text(json.dumps(benches, indent=2) + "\n"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
