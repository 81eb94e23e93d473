"""python -m bench step_overhead MODEL_DIR [--precision int8] [--threads 2] [--rounds 5]

Where a translation's time goes besides the graphs: per decoder step, the time inside the decoder and encoder
sessions' `run`, inside the searches' one-node top-k graph (onnxruntime work that replaced torch.topk), in the
backend's `reorder` (numpy copies of the KV cache that follow the beams), and the rest: the Python of the search
and the text API around them. Cases as `bench runtimes`: greedy and beam 4, batch 1
(16 sentences one by one) and batch 16 (one call), on tx/evalsets/bench_de.txt. Medians over rounds.
"""
from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import onnxruntime as ort

from runtime import OnnxTranslator

from . import bench_parser

CASES = (("greedy", 1), ("beam", 1), ("greedy", 16), ("beam", 16))
# tx.evaluation.BENCH_SENTENCES, read by path: importing tx would load torch into the process measured, and a
# process serving the runtime has none (its idle threads and allocations measurably slowed the beam-16 case).
SENTENCES = (Path(__file__).resolve().parents[1] / "tx" / "evalsets" / "bench_de.txt").read_text("utf-8").splitlines()


class RunClock:
    """Wraps onnxruntime.InferenceSession.run for the whole process: seconds inside it, per kind of graph."""

    def __init__(self):
        self.seconds = {"decoder": 0.0, "encoder": 0.0, "top_k": 0.0, "other": 0.0}
        self.decoder_steps = 0
        self.real_run = ort.InferenceSession.run

    @staticmethod
    def kind(session: ort.InferenceSession) -> str:
        names = [o.name for o in session.get_outputs()]
        if names == ["top_values", "top_indices"]:  # runtime/ops/top_k.onnx
            return "top_k"
        return "decoder" if "log_probs" in names and "present_self_k_0" in names else \
            "encoder" if names and names[0] == "memory" else "other"

    def __enter__(self):
        clock = self

        def timed_run(session, *args, **kwargs):
            start = time.perf_counter()
            try:
                return clock.real_run(session, *args, **kwargs)
            finally:
                kind = clock.kind(session)
                clock.seconds[kind] += time.perf_counter() - start
                clock.decoder_steps += kind == "decoder"

        ort.InferenceSession.run = timed_run
        return self

    def __exit__(self, *exc):
        ort.InferenceSession.run = self.real_run


def measure(translator: OnnxTranslator, method: str, batch: int) -> dict[str, float]:
    """One round: ms per decoder step inside each kind of graph, in reorder, and outside all of them."""
    backend = translator.backend
    reorder, reordering = backend.reorder, [0.0]

    def timed_reorder(*args, **kwargs):
        start = time.perf_counter()
        try:
            return reorder(*args, **kwargs)
        finally:
            reordering[0] += time.perf_counter() - start

    backend.reorder = timed_reorder  # on the instance: the class stays as it is
    try:
        with RunClock() as clock:
            start = time.perf_counter()
            if batch == 1:
                for text in SENTENCES:
                    translator.translate([text], method=method, beam=4)
            else:
                translator.translate(SENTENCES[:batch], method=method, beam=4)
            total = time.perf_counter() - start
    finally:
        del backend.reorder
    steps = max(clock.decoder_steps, 1)
    inside = sum(clock.seconds.values())
    return {"steps": clock.decoder_steps, "decoder": clock.seconds["decoder"] / steps * 1e3,
            "top_k": clock.seconds["top_k"] / steps * 1e3, "reorder": reordering[0] / steps * 1e3,
            "python": (total - inside) / steps * 1e3, "total": total * 1e3}


def main(argv: list[str] | None = None) -> int:
    parser = bench_parser("step_overhead", __doc__)
    parser.add_argument("model_dir", type=Path)
    parser.add_argument("--precision", default="int8")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    translator = OnnxTranslator(args.model_dir, provider="cpu", precision=args.precision, threads=args.threads)
    for method, batch in CASES:  # warm-up: sessions, caches, the one-node graphs
        measure(translator, method, batch)
    print(f"{args.model_dir}, {args.precision}, {args.threads} threads, {args.rounds} rounds (medians), "
          f"{translator.provider}, torch in the process: {'torch' in sys.modules}")
    print("| case | decoder steps | decoder graph ms/step | top-k graph ms/step | Python ms/step "
          "(of which KV reorder) | call total ms |")
    print("|---|--:|--:|--:|--:|--:|")
    for method, batch in CASES:
        rounds = [measure(translator, method, batch) for _ in range(args.rounds)]
        med = {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}
        print(f"| {method} b{batch} | {med['steps']:.0f} | {med['decoder']:.3f} | {med['top_k']:.3f} | "
              f"{med['python']:.3f} ({med['reorder']:.3f}) | {med['total']:.1f} |", flush=True)
    return 0
