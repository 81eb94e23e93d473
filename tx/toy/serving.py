"""After the export: the toy model's held-out examples through PyTorch and onnxruntime fp32/int8 (exact match,
and whether each output is PyTorch's token for token), and their latency side by side on one held-out input at a
time (`runtime.timing.interleaved`, the Latency page's measurement)."""
from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

import numpy as np

from runtime import OnnxTranslator, timing
from runtime.toy import DIRECTION, read_held_out

from ..inference import Translator, torch_threads


def serve_check(model_dir: Path, threads: int = 2, runs: int = 20, warmup: int = 3) -> dict[str, Any]:
    held = read_held_out(model_dir)
    sources = [src for src, _ in held]
    systems = {"PyTorch": Translator.from_dir(model_dir)}
    for precision in ("fp32", "int8"):
        systems[f"onnxruntime {precision}"] = OnnxTranslator(model_dir, provider="cpu", precision=precision,
                                                             threads=threads)
    report: dict[str, Any] = {"held_out": len(held), "threads": threads, "runs": runs, "systems": {}}
    outputs = {}
    with torch_threads(threads):
        for name, system in systems.items():
            outputs[name] = system.translate(sources, *DIRECTION, method="greedy")

        def call(system):
            return lambda r: len(system.translate([sources[r % len(sources)]], *DIRECTION,
                                                  method="greedy")[0].token_ids)

        measured = timing.interleaved({name: call(s) for name, s in systems.items()}, runs, warmup)
    for name, results in outputs.items():
        exact = [t.text == want for t, (_, want) in zip(results, held, strict=True)]
        same = [t.token_ids == ref.token_ids for t, ref in zip(results, outputs["PyTorch"], strict=True)]
        times = measured[name][0]
        wrong = next((i for i, ok in enumerate(exact) if not ok), None)
        report["systems"][name] = {
            "exact_match": round(sum(exact) / len(exact), 4), "same_as_pytorch": round(sum(same) / len(same), 4),
            "p50_ms": round(statistics.median(times) * 1e3, 3),
            "p90_ms": round(float(np.percentile(times, 90)) * 1e3, 3),
            "first_wrong": None if wrong is None else {"source": held[wrong][0], "target": held[wrong][1],
                                                       "output": results[wrong].text}}
    return report
