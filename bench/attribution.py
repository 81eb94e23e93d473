"""Which explanation predicts what deleting a word does: for one output token per held-out sentence (the first
content token: the first output piece that starts a word of 3+ letters not in a short stop-word list), the
deletion AUC (runtime.experiments.deletion; lower = the method's order makes the token's probability fall sooner)
of occlusion, saliency, input × gradient, integrated gradients (tx.attribution, 64 steps, doubled while the
completeness error is over 1%), attention rollout (the mean over decoder layers, and the last layer alone) and a
seeded random order. Prints mean ± standard error per direction, integrated gradients' completeness error (mean,
max, how many over 1%; at the first pass and as returned, with the steps it took) and the time; writes the
numbers to models/translate/experiments/attribution.json (the Experiments page quotes it).

Sentences: the first N of data/processed/translate/test.tsv (the held-out Ding test split, never trained on;
`make data`), else of tx/evalsets/everyday.tsv (hand-written, never trained on); the DE side translated DE->EN,
the EN side EN->DE. The Django catalogs are never read. `python -m bench attribution` (N = 100 per direction).
"""
from __future__ import annotations

import csv
import json
import math
import os
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from runtime.experiments import ExperimentModel, attention_maps, occlusion
from runtime.experiments.deletion import (
    deletion_curves,
    occlusion_order,
    order_from_scores,
    random_order,
    source_positions,
)
from runtime.experiments.rollout import translation_rollout
from runtime.files import atomic_write
from tx.attribution import AttributionConfig, attribute_translation
from tx.checkpoint import load_model_dir

from . import bench_parser

SETS = (Path("data/processed/translate/test.tsv"), Path("tx/evalsets/everyday.tsv"))
OUT = Path("models/translate/experiments/attribution.json")
METHODS = ("occlusion", "saliency", "input_x_gradient", "integrated_gradients", "rollout", "rollout_last", "random")
NAMES = {"occlusion": "occlusion", "saliency": "saliency", "input_x_gradient": "input × gradient",
         "integrated_gradients": "integrated gradients", "rollout": "rollout (mean of decoder layers)",
         "rollout_last": "rollout (last decoder layer)", "random": "random order (seeded)"}
STOP_WORDS = {"the", "and", "you", "for", "are", "was", "der", "die", "das", "den", "dem", "des", "und", "ein",
              "eine", "ist", "sie", "ich", "wir", "ihr", "mit", "von", "zu", "auf"}


def content_position(pieces: list[str]) -> int:
    """The first output piece that starts a word of 3+ letters that is not a stop word; else the first piece."""
    for t, piece in enumerate(pieces):
        word = piece.lstrip("▁")
        if piece.startswith("▁") and len(word) >= 3 and word.isalpha() and word.lower() not in STOP_WORDS:
            return t
    return 0


def held_out(count: int) -> tuple[Path, list[tuple[str, str]]]:
    for path in SETS:
        if path.is_file():
            with path.open(encoding="utf-8", newline="") as f:
                rows = [(r["de"], r["en"]) for r in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
                        if r.get("kind", "sentence") == "sentence"]
            return path, rows[:count]
    raise SystemExit(f"no held-out set: none of {', '.join(map(str, SETS))}")


def measure(model, torch_model, text: str, src: str, tgt: str, seed: int, config: AttributionConfig) -> dict:
    """One sentence: the chosen token, each method's deletion AUC, IG's completeness error."""
    sentence = model.sentence(text, src, tgt)
    t = content_position(sentence.output_pieces)
    positions = source_positions(sentence)
    a = attribute_translation(torch_model, sentence.src_ids, sentence.tgt_in_ids, t, sentence.output_ids[t],
                              config=config)
    flow = translation_rollout(attention_maps(model, sentence))
    orders = {"occlusion": occlusion_order(occlusion(model, sentence, "mask"), t),
              "rollout": order_from_scores(positions, flow.source[t, positions]),
              "rollout_last": order_from_scores(positions, flow.per_layer[-1, t, positions]),
              "random": random_order(positions, seed)}
    for method in ("saliency", "input_x_gradient", "integrated_gradients"):
        orders[method] = order_from_scores(positions, a.source(method)[positions])
    curves = deletion_curves(model, sentence, t, orders)
    return {"token": sentence.output_pieces[t], "pieces": len(positions), "completeness": a.completeness_error,
            "first_pass": a.passes[0][1], "steps": a.steps, "gradient_evaluations": a.gradient_evaluations,
            "auc": {m: curves[m].auc for m in METHODS}}


def summary(results: list[dict]) -> dict:
    methods = {}
    for m in METHODS:
        values = np.array([r["auc"][m] for r in results])
        se = float(values.std(ddof=1) / math.sqrt(len(values))) if len(values) > 1 else float("nan")
        methods[m] = {"mean": round(float(values.mean()), 4), "se": round(se, 4)}
    best = min((m for m in METHODS if m != "random"), key=lambda m: methods[m]["mean"])
    steps = np.array([r["steps"] for r in results])
    return {"sentences": len(results), "methods": methods, "best": best,
            "completeness": errors_summary([r["completeness"] for r in results]),
            "first_pass": errors_summary([r["first_pass"] for r in results]),
            "final_steps": {str(n): int((steps == n).sum()) for n in sorted(set(steps.tolist()))},
            "gradient_evaluations_mean": round(float(np.mean([r["gradient_evaluations"] for r in results])), 1)}


def errors_summary(errors: list[float]) -> dict:
    values = np.array(errors)
    return {"mean": round(float(values.mean()), 5), "max": round(float(values.max()), 5),
            "over_1pct": int((values > 0.01).sum())}


def main(argv: list[str] | None = None) -> int:
    parser = bench_parser("attribution", __doc__)
    parser.add_argument("--model-dir", default="models/translate")
    parser.add_argument("--sentences", type=int, default=100, help="per direction (default 100)")
    parser.add_argument("--steps", type=int, default=64, help="integrated gradients' steps (default 64)")
    parser.add_argument("--no-refine", action="store_true",
                        help="one IG pass at --steps (default: doubled while its completeness error is over 1%%)")
    parser.add_argument("--out", default=str(OUT), help="the JSON written ('' to write none)")
    args = parser.parse_args(argv)

    start = time.perf_counter()
    model = ExperimentModel(args.model_dir)
    torch_model = load_model_dir(args.model_dir, "seq2seq")
    path, pairs = held_out(args.sentences)
    config = AttributionConfig(steps=args.steps, target_error=None if args.no_refine else 0.01)
    scan = f" ({config.scan - 1} forward-only scan points)" if config.rule == "adaptive" else ""
    refine = "" if args.no_refine else f", doubled up to {config.max_steps} while over 1%"
    print(f"set: {path} (first {len(pairs)} sentence pairs); IG: {config.steps} steps{refine}, {config.rule} rule"
          f"{scan}, "
          f"{config.baseline} baseline; load average at start {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    directions = {}
    for src, tgt in (("de", "en"), ("en", "de")):
        results = []
        for i, (de, en) in enumerate(pairs):
            results.append(measure(model, torch_model, de if src == "de" else en, src, tgt, i, config))
            if (i + 1) % 10 == 0:
                print(f"  {src}->{tgt}: {i + 1}/{len(pairs)} ({time.perf_counter() - start:.0f} s)", flush=True)
        directions[f"{src}-{tgt}"] = summary(results)
    seconds = time.perf_counter() - start
    print_table(directions)
    print(f"time: {seconds:.0f} s ({seconds / (2 * len(pairs)):.1f} s a sentence), load average at the end "
          f"{os.getloadavg()[0]:.1f}")
    if args.out:
        result = {"measured": datetime.now(UTC).strftime("%Y-%m-%d"), "set": str(path),
                  "sentences_per_direction": len(pairs), "token": "the first content token of the greedy output",
                  "ig": {"steps": config.steps, "rule": config.rule, "baseline": config.baseline,
                         "scan": config.scan if config.rule == "adaptive" else 0,
                         "target_error": config.target_error, "max_steps": config.max_steps},
                  "deletion": "mask (<pad>, masked out), cumulative, teacher-forced; AUC over the fraction deleted",
                  "names": NAMES, "directions": directions, "seconds": round(seconds),
                  "command": f"python -m bench attribution --sentences {len(pairs)}"}
        atomic_write(args.out, lambda tmp: Path(tmp).write_text(json.dumps(result, indent=1) + "\n"))
        print(f"wrote {args.out}")
    return 0


def print_table(directions: dict) -> None:
    names = list(directions)
    print("| method | " + " | ".join(f"{d} deletion AUC (mean ± s.e.)" for d in names) + " |")
    print("|---|" + "--:|" * len(names))
    for m in METHODS:
        cells = [f"{directions[d]['methods'][m]['mean']:.3f} ± {directions[d]['methods'][m]['se']:.3f}" for d in names]
        print(f"| {NAMES[m]} | " + " | ".join(cells) + " |")
    for d in names:
        first, c, n = directions[d]["first_pass"], directions[d]["completeness"], directions[d]["sentences"]
        print(f"{d}: best {NAMES[directions[d]['best']]}; IG completeness error at the first pass: mean "
              f"{first['mean']:.2%}, max {first['max']:.2%}, {first['over_1pct']} of {n} over 1%; as returned: mean "
              f"{c['mean']:.2%}, max {c['max']:.2%}, {c['over_1pct']} of {n} over 1%; final steps "
              f"{directions[d]['final_steps']}, {directions[d]['gradient_evaluations_mean']} gradients a token")
