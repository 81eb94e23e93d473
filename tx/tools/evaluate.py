"""python -m tx.evaluate {translate,sentiment} --model DIR [--split test] [--method beam|greedy] [--cv 10]

Translation: sacrebleu BLEU and chrF (detokenised output, default 13a tokenisation) per direction
on the whole split, with the sacrebleu signatures; writes eval.json and a TSV of source /
reference / hypothesis next to the model (or to --out). Beam search (size 4) by default.
Sentiment: accuracy, macro-F1 and the confusion matrix. `--cv N` (sentiment) trains and tests
N models on the folds of all.tsv (fold k = test, fold k+1 = valid) and reports mean ± std.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import sacrebleu

from .checkpoint import CheckpointError
from .data import DataError, read_tsv, write_tsv
from .data.translate import read_everyday
from .inference import SentimentAnalyzer, Translator
from .tasks import LABELS, SentimentConfig, SentimentTask
from .trainer import Trainer

NEGATION = Path(__file__).resolve().parent / "evalsets" / "negation.tsv"  # sentiment's hand-written probes


def evaluate_translation(model_dir: Path, rows: list[dict[str, str]], method: str = "beam", beam: int = 4,
                         length_penalty: float = 0.6, batch_log=print) -> tuple[dict[str, Any], list[list[str]]]:
    """Scores per direction and the sample rows (direction, source, reference, hypothesis)."""
    translator = Translator.from_dir(model_dir)
    results: dict[str, Any] = {"method": method, "beam": beam if method == "beam" else 1,
                               "length_penalty": length_penalty, "sentences": len(rows), "directions": {}}
    samples: list[list[str]] = []
    for src, tgt in translator.directions:
        started = time.monotonic()
        out = translator.translate([r[src] for r in rows], src, tgt, method=method, beam=beam,
                                   length_penalty=length_penalty)
        hyps, refs = [t.text for t in out], [r[tgt] for r in rows]
        bleu, chrf = sacrebleu.BLEU(), sacrebleu.CHRF()
        b, c = bleu.corpus_score(hyps, [refs]), chrf.corpus_score(hyps, [refs])
        results["directions"][f"{src}-{tgt}"] = {
            "bleu": round(b.score, 2), "chrf": round(c.score, 2), "bleu_signature": str(bleu.get_signature()),
            "chrf_signature": str(chrf.get_signature()), "bleu_detail": str(b),
            "truncated": sum(t.truncated for t in out), "seconds": round(time.monotonic() - started, 1)}
        batch_log(f"{src}->{tgt}: BLEU {b.score:.2f}  chrF {c.score:.2f}  ({len(rows)} sentences, "
                  f"{time.monotonic() - started:.0f} s)")
        samples += [[f"{src}-{tgt}", r[src], ref, hyp] for r, ref, hyp in zip(rows, refs, hyps, strict=True)]
    return results, samples


def classification_scores(gold: list[str], predicted: list[str]) -> dict[str, Any]:
    confusion = [[sum(1 for g, p in zip(gold, predicted, strict=True) if g == a and p == b) for b in LABELS]
                 for a in LABELS]
    f1s = []
    for i, _ in enumerate(LABELS):
        tp = confusion[i][i]
        fp = sum(confusion[j][i] for j in range(len(LABELS))) - tp
        fn = sum(confusion[i]) - tp
        f1s.append(0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn))
    accuracy = 100.0 * sum(confusion[i][i] for i in range(len(LABELS))) / max(len(gold), 1)
    return {"accuracy": round(accuracy, 2), "macro_f1": round(100.0 * sum(f1s) / len(f1s), 2),
            "confusion": {"labels": LABELS, "rows_gold_cols_predicted": confusion}, "reviews": len(gold)}


def evaluate_sentiment(model_dir: Path, rows: list[dict[str, str]]) -> tuple[dict[str, Any], list[list[str]]]:
    from .calibration import expected_calibration_error

    analyzer = SentimentAnalyzer.from_dir(model_dir)
    preds = analyzer.classify([r["text"] for r in rows])
    scores = classification_scores([r["label"] for r in rows], [p.label for p in preds])
    probs = [[p.probs[label] for label in LABELS] for p in preds]
    scores["ece"] = round(expected_calibration_error(probs, [LABELS.index(r["label"]) for r in rows]), 2)
    samples = [[r["label"], p.label, f"{p.probs['positive']:.3f}", r["text"]] for r, p in zip(rows, preds, strict=True)]
    return scores, samples


def cross_validate(config: SentimentConfig, folds: int, log=print) -> dict[str, Any]:
    """Train/test one classifier per fold of all.tsv; accuracy mean ± std over the folds."""
    rows = read_tsv(Path(config.data_dir) / "all.tsv")
    available = sorted({int(r["fold"]) for r in rows})
    if len(available) < folds:
        raise ValueError(f"{config.data_dir}/all.tsv has {len(available)} folds; re-run "
                         f"`python -m tx.data prepare --cv {folds}`")
    accuracies = []
    for k in range(folds):
        test = [r for r in rows if int(r["fold"]) % folds == k]
        valid = [r for r in rows if int(r["fold"]) % folds == (k + 1) % folds]
        train = [r for r in rows if int(r["fold"]) % folds not in (k, (k + 1) % folds)]
        fold_config = SentimentConfig(**{**asdict(config), "out_dir": f"{config.out_dir}/cv{folds}/fold{k}"})
        task = SentimentTask(fold_config, quiet=True, rows=(train, valid))
        Trainer(fold_config, task.build_model(), task, asdict(fold_config), quiet=True).fit()
        test_scores, _ = evaluate_sentiment(Path(fold_config.out_dir) / "model", test)
        accuracies.append(test_scores["accuracy"])
        log(f"fold {k}: test accuracy {test_scores['accuracy']:.2f} ({len(train)} train, {len(test)} test)")
    return {"folds": folds, "accuracies": accuracies, "mean": round(statistics.mean(accuracies), 2),
            "std": round(statistics.stdev(accuracies), 2) if folds > 1 else 0.0,
            "config": {k: v for k, v in asdict(config).items() if k != "out_dir"}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tx.evaluate", description=__doc__.split("\n\n")[0])
    parser.add_argument("task", choices=["translate", "sentiment"])
    parser.add_argument("--model", type=Path, help="model directory (default runs/<task>/model)")
    parser.add_argument("--data-dir", type=Path, help="prepared data (default data/processed/<task>)")
    parser.add_argument("--split", default="test", choices=["test", "valid", "train", "docs_valid", "docs_test",
                                                            "everyday", "negation"],
                        help="a prepared split, or a hand-written set (tx/evalsets): translate's everyday dev set, "
                             "sentiment's negation probes")
    parser.add_argument("--limit", type=int, default=0, help="only the first N rows (0 = all)")
    parser.add_argument("--method", default="beam", choices=["beam", "greedy"])
    parser.add_argument("--beam", type=int, default=4)
    parser.add_argument("--length-penalty", type=float, default=0.6)
    parser.add_argument("--out", type=Path, help="where eval.json and the samples go (default: the model dir)")
    parser.add_argument("--cv", type=int, default=0, help="sentiment: N-fold cross-validation (trains N models)")
    parser.add_argument("--set", action="append", default=[], help="cross-validation training settings key=value")
    parser.add_argument("--baselines", action="store_true",
                        help="sentiment: fit TF-IDF+LR and NB-SVM (C tuned on valid), score them on test, the "
                             "negation probes and 10-fold CV; writes baselines.json into --out or the model dir")
    args = parser.parse_args(argv)
    data_dir = args.data_dir or Path("data/processed") / args.task
    model_dir = args.model or Path("runs") / args.task / "model"
    try:
        if args.baselines:
            if args.task != "sentiment":
                parser.error("--baselines is for sentiment")
            from .baselines import run_baselines

            splits = {s: read_tsv(data_dir / f"{s}.tsv") for s in ("train", "valid", "test")}
            all_path = data_dir / "all.tsv"
            result = run_baselines(splits, LABELS, read_tsv(all_path) if all_path.is_file() else None,
                                   extra={"negation": read_tsv(NEGATION)}, folds=args.cv or 10)
            out = args.out or model_dir
            out.mkdir(parents=True, exist_ok=True)
            (out / "baselines.json").write_text(json.dumps({"data_dir": str(data_dir), **result}, indent=2) + "\n")
            print(f"wrote {out / 'baselines.json'}")
            return 0
        if args.cv:
            if args.task != "sentiment":
                parser.error("--cv is for sentiment")
            from .train import apply_overrides

            base = {"data_dir": str(data_dir), "out_dir": "runs/sentiment-cv"}
            config = SentimentConfig(**apply_overrides(SentimentConfig, base, args.set))
            result = cross_validate(config, args.cv)
            out = args.out or Path(config.out_dir)
            out.mkdir(parents=True, exist_ok=True)
            (out / f"cv{args.cv}.json").write_text(json.dumps(result, indent=2) + "\n")
            print(f"{args.cv}-fold cross-validation accuracy: {result['mean']:.2f} ± {result['std']:.2f}")
            return 0
        if args.split == "everyday":
            if args.task != "translate":
                parser.error("--split everyday is translate's dev set")
            rows = read_everyday()
        elif args.split == "negation":
            if args.task != "sentiment":
                parser.error("--split negation is sentiment's probe set")
            rows = read_tsv(NEGATION)
        else:
            rows = read_tsv(data_dir / f"{args.split}.tsv")
        if args.limit:
            rows = rows[:args.limit]
        out = args.out or model_dir
        out.mkdir(parents=True, exist_ok=True)
        if args.task == "translate":
            scores, samples = evaluate_translation(model_dir, rows, args.method, args.beam, args.length_penalty)
            write_tsv(out / f"{args.split}_outputs.tsv", ["direction", "source", "reference", "hypothesis"], samples)
        else:
            scores, samples = evaluate_sentiment(model_dir, rows)
            write_tsv(out / f"{args.split}_outputs.tsv", ["label", "predicted", "p_positive", "text"], samples)
            print(f"accuracy {scores['accuracy']:.2f}  macro-F1 {scores['macro_f1']:.2f}  ECE {scores['ece']:.2f}%  "
                  f"confusion {scores['confusion']['rows_gold_cols_predicted']}")
    except (FileNotFoundError, CheckpointError, ValueError, DataError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    scores = {"task": args.task, "split": args.split, "data_dir": str(data_dir), **scores}
    name = "eval.json" if args.split == "test" else f"eval_{args.split}.json"  # eval.json: what tx.ship reads
    (out / name).write_text(json.dumps(scores, indent=2, ensure_ascii=False) + "\n")
    print(f"wrote {out / name} and {out / (args.split + '_outputs.tsv')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
