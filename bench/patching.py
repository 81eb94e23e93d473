"""Server time of activation patching (runtime.experiments) on the shipped translator: the encoder residual-stream
grid for a ~20-token source ((3 + 1) points × 20 positions = 80 patched runs; goal ≤ 10 s on 2 cores), the other
grids, a cell's re-translation, the pair's set-up (two greedy translations and the clean run), and the classifier's
grids (models/sentiment). Timed in rounds, each running every call once in a rotated order, so drift from other
work on the machine hits all alike; the median and max of the rounds are printed, and the load average says
whether other work shared the CPU. A benchmark, not a test: `python -m bench patching`.
"""
from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable

from runtime.experiments import (
    ClassifierExperimentModel,
    ExperimentModel,
    Patch,
    classify_patching,
    decoder_residual_grid,
    encoder_residual_grid,
    head_grid,
    memory_grid,
    patch_pair,
    retranslate,
)

from . import bench_parser
from .stats import rotated_rounds

CLEAN = "Der kleine Hund schläft heute Nachmittag ruhig im Garten hinter dem alten Haus meiner Eltern."
CORRUPTED = "Die kleine Katze schläft heute Nachmittag ruhig im Garten hinter dem alten Haus meiner Eltern."
REVIEW, NEGATED = "a warm and funny film with a wonderful cast", "a cold and dull film with a wonderful cast"
ENCODER_GRID = "encoder residual grid"
GOAL_S = 10.0


def timed(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = bench_parser("patching", __doc__)
    parser.add_argument("--model-dir", default="models/translate")
    parser.add_argument("--classifier-dir", default="models/sentiment", help="'' to skip the classifier's grids")
    parser.add_argument("--clean", default=CLEAN)
    parser.add_argument("--corrupted", default=CORRUPTED)
    parser.add_argument("--repeats", type=int, default=3, help="rounds (default 3)")
    parser.add_argument("--threads", type=int, default=None, help="onnxruntime threads (default: one per core)")
    args = parser.parse_args(argv)

    load_before = os.getloadavg()[0]
    model = ExperimentModel(args.model_dir, threads=args.threads)
    pair = patch_pair(model, args.clean, args.corrupted)
    print(f"clean:     {args.clean!r} -> {pair.clean.translation!r}")
    print(f"corrupted: {args.corrupted!r} -> {pair.corrupted.translation!r}")
    print(f"{len(pair.corrupted.src_ids)} source tokens (tag and </s> included), metric: {pair.metric.description}; "
          f"clean {pair.clean_value:.3f}, corrupted {pair.corrupted_value:.3f}")
    if pair.note:
        print(pair.note)
    calls: dict[str, Callable[[], object]] = {
        ENCODER_GRID: lambda: encoder_residual_grid(model, pair),
        "decoder residual grid": lambda: decoder_residual_grid(model, pair),
        **{f"head grid {kind}": (lambda kind=kind: head_grid(model, pair, kind))
           for kind in ("enc_self", "dec_self", "dec_cross")},
        "memory row": lambda: memory_grid(model, pair),
        "re-translation (one encoder cell)": lambda: retranslate(model, pair, Patch("enc_resid", 2, -1, 2)),
        "pair set-up (2 translations + clean run)": lambda: patch_pair(model, args.clean, args.corrupted),
    }
    if args.classifier_dir:
        classifier = ClassifierExperimentModel(args.classifier_dir, threads=args.threads)
        calls["classifier: both grids"] = lambda: classify_patching(classifier, REVIEW, NEGATED)
    names = list(calls)
    times = rotated_rounds(calls, args.repeats, timed)
    load = os.getloadavg()[0]
    busy = max(load, load_before) > 1.5
    print(f"\n{args.repeats} rounds, threads {args.threads or 'default'}, {os.cpu_count()} cores, load average "
          f"{load_before:.1f} before, {load:.1f} at the end"
          + (" (other work shared the CPU: the times are inflated)" if busy else ""))
    cells = (model.shape.n_layers + 1) * len(pair.corrupted.src_ids)
    for name in names:
        median, worst = statistics.median(times[name]), max(times[name])
        line = f"  {name:42s} median {median:6.2f} s, max {worst:6.2f} s"
        if name == ENCODER_GRID:
            line += f" ({cells} cells; goal ≤ {GOAL_S:.0f} s on 2 cores: {'met' if median <= GOAL_S else 'MISSED'})"
        print(line)
    return 0
