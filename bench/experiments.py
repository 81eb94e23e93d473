"""Server time of the experiments (runtime.experiments) on the shipped translator: the head-importance grid for a
10-token sentence (3+3 layers × 8 heads × 3 kinds = 72 knock-outs; target ≤ 3 s on 2 cores) and every other call
(target ≤ 300 ms), and the classifier's experiments (models/sentiment). Calls are timed in rounds, each round
running every call once in a rotated order, so drift from other work on the machine hits all of them alike; each is
also printed as a multiple of the served translation timed in the same rounds. The reference means (mean-ablation)
are computed once per model and cached: their first computation is printed on its own. A benchmark, not a test:
`python -m bench experiments`.
"""
from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable

from runtime.experiments import (
    ClassifierExperimentModel,
    ExperimentModel,
    Head,
    classify_head_importance,
    classify_knockout,
    classify_occlusion,
    head_importance,
    knockout,
    logit_lens,
    occlusion,
    reference_means,
    reference_sentences,
)

from . import bench_parser
from .stats import rotated_rounds

SENTENCE = "Wo ist die nächste Apotheke?"  # 9 pieces + tag + </s> in; the shipped model's greedy output: 10 tokens
GRID_TARGET_S, CALL_TARGET_MS = 3.0, 300.0
TRANSLATE = "translate (served fp32 greedy)"
REVIEW = "not perfect, but the cast is wonderful and I enjoyed every minute of it"


def timed(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    call()
    return (time.perf_counter() - start) * 1000


def main(argv: list[str] | None = None) -> int:
    parser = bench_parser("experiments", __doc__)
    parser.add_argument("--model-dir", default="models/translate")
    parser.add_argument("--classifier-dir", default="models/sentiment", help="'' to skip the classifier's calls")
    parser.add_argument("--repeats", type=int, default=5, help="rounds (default 5)")
    parser.add_argument("--threads", type=int, default=None, help="onnxruntime threads (default: one per core)")
    parser.add_argument("--set", type=int, default=0, help="also time the grid over this many built-in sentences")
    args = parser.parse_args(argv)

    start = time.perf_counter()
    model = ExperimentModel(args.model_dir, threads=args.threads)
    print(f"load: {time.perf_counter() - start:.2f} s (the served fp32 translator + 3 experiment graphs)")
    sentence = model.sentence(SENTENCE)
    print(f"sentence: {SENTENCE!r} -> {sentence.translation!r}: {len(sentence.src_ids)} source tokens "
          f"(tag and </s> included), {len(sentence.output_ids)} output tokens")
    print(f"reference means, once per model: {timed(lambda: reference_means(model)):.0f} ms "
          f"({reference_means(model).sentences} sentences)")
    one, eight = [Head("dec_cross", 2, 3)], [Head("dec_cross", 0, h) for h in range(model.shape.n_heads)]
    one_enc = [Head("enc_self", 0, 0)]
    calls: dict[str, Callable[[], object]] = {
        "head-importance grid (72 knock-outs, zero)": lambda: head_importance(model, sentence, "zero"),
        "head-importance grid (72 knock-outs, mean)": lambda: head_importance(model, sentence, "mean"),
        TRANSLATE: lambda: model.sentence(SENTENCE),
        "logit lens (k=5)": lambda: logit_lens(model, sentence, 5),
        "knockout: 1 head, zero": lambda: knockout(model, sentence, one, "zero"),
        "knockout: 8 heads, mean": lambda: knockout(model, sentence, eight, "mean"),
        "occlusion (mask)": lambda: occlusion(model, sentence, "mask"),
        "occlusion (remove)": lambda: occlusion(model, sentence, "remove"),
    }
    if args.classifier_dir:
        classifier = ClassifierExperimentModel(args.classifier_dir, threads=args.threads)
        review = classifier.review(REVIEW)
        print(f"review: {REVIEW!r} -> {review.label} ({len(review.ids)} pieces)")
        calls |= {
            "classifier: classify (served fp32)": lambda: classifier.review(REVIEW),
            "classifier: head-importance grid (zero)": lambda: classify_head_importance(classifier, review, "zero"),
            "classifier: knockout 1 head, mean": lambda: classify_knockout(classifier, review, one_enc, "mean"),
            "classifier: occlusion (mask)": lambda: classify_occlusion(classifier, review, "mask"),
        }
    names = list(calls)
    times = rotated_rounds(calls, args.repeats, timed)
    load = os.getloadavg()[0]
    print(f"\n{args.repeats} rounds, threads {args.threads or 'default'}, {os.cpu_count()} cores, load average "
          f"{load:.1f} at the end" + (" (the machine was busy: times are inflated)" if load > 1.5 else ""))
    reference = statistics.median(times[TRANSLATE])
    print("  (× translate: the median over the served translation's median in the same rounds, which load inflates "
          "alike)")
    for name in names:
        median, worst = statistics.median(times[name]), max(times[name])
        target = GRID_TARGET_S * 1000 if name.startswith("head-importance grid (72") else CALL_TARGET_MS
        print(f"  {name:44s} median {median:7.0f} ms, max {worst:7.0f} ms, {median / reference:5.2f} × translate "
              f"(target ≤ {target:.0f} ms: {'met' if median <= target else 'MISSED'})")
    if args.set:
        sentences = reference_sentences(model, count=args.set)
        seconds = timed(lambda: head_importance(model, sentences)) / 1000
        print(f"  head-importance grid over {len(sentences)} built-in sentences: {seconds:.2f} s")
    return 0
