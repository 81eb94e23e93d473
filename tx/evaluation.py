"""Scoring a model directory: translation (sacrebleu BLEU and chrF per direction, with their signatures) and
sentiment (accuracy, macro-F1, confusion matrix, ECE), plus cross-validation of the sentiment recipe.

The tool is `python -m tx evaluate`; `tx.baselines` scores its n-gram models with the same
`classification_scores` and folds.
"""
from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import sacrebleu

from runtime.tsv import LABELS, read_tsv, write_tsv

from .calibration import expected_calibration_error
from .inference import SentimentAnalyzer, Translator
from .tasks import SentimentConfig, SentimentTask
from .tasks.translate import read_everyday
from .trainer import MODEL_DIR, Trainer

NEGATION = Path(__file__).resolve().parent / "evalsets" / "negation.tsv"  # sentiment's hand-written probes

# The German sentences every speed benchmark translates when no prepared test set is there (tx/evalsets/README.md).
BENCH_FILE = Path(__file__).resolve().parent / "evalsets" / "bench_de.txt"
BENCH_SENTENCES = BENCH_FILE.read_text(encoding="utf-8").splitlines()


def eval_files(split: str) -> tuple[str, str]:
    """The scores (JSON) and outputs (TSV) an evaluation of `split` writes; the test split's are what ship reads."""
    return "eval.json" if split == "test" else f"eval_{split}.json", f"{split}_outputs.tsv"


def split_rows(split: str, data_dir: Path) -> list[dict[str, str]]:
    """The rows of a prepared split (data_dir/SPLIT.tsv), or of a hand-written set: translate's everyday dev set,
    sentiment's negation probes."""
    if split == "everyday":
        return read_everyday()
    if split == "negation":
        return read_tsv(NEGATION)
    return read_tsv(data_dir / f"{split}.tsv")


def evaluate_split(task: str, model_dir: Path, data_dir: Path, split: str, out: Path, method: str = "beam",
                   beam: int = 4, length_penalty: float = 0.6, limit: int = 0) -> tuple[dict[str, Any], Path, Path]:
    """Score model_dir on one split (its first `limit` rows; 0 = all) and write the scores (JSON) and the outputs
    (TSV) into out, named by `eval_files`; returns the scores as written and both paths (what `python -m tx
    evaluate` and the GPU job's unpack do)."""
    rows = split_rows(split, data_dir)
    if limit:
        rows = rows[:limit]
    out.mkdir(parents=True, exist_ok=True)
    scores_name, outputs_name = eval_files(split)
    if task == "translate":
        scores, samples = evaluate_translation(model_dir, rows, method, beam, length_penalty)
        write_tsv(out / outputs_name, ["direction", "source", "reference", "hypothesis"], samples)
    else:
        scores, samples = evaluate_sentiment(model_dir, rows)
        write_tsv(out / outputs_name, ["label", "predicted", "p_positive", "text"], samples)
    scores = {"task": task, "split": split, "data_dir": str(data_dir), **scores}
    (out / scores_name).write_text(json.dumps(scores, indent=2, ensure_ascii=False) + "\n")
    return scores, out / scores_name, out / outputs_name


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


def classification_scores(gold: list[str], predicted: list[str], labels: Sequence[str] = LABELS) -> dict[str, Any]:
    """Accuracy and macro-F1 (percent) and the confusion matrix, in `runtime.metrics_file`'s layout."""
    labels = list(labels)
    confusion = [[sum(1 for g, p in zip(gold, predicted, strict=True) if g == a and p == b) for b in labels]
                 for a in labels]
    f1s = []
    for i, _ in enumerate(labels):
        tp = confusion[i][i]
        fp = sum(confusion[j][i] for j in range(len(labels))) - tp
        fn = sum(confusion[i]) - tp
        f1s.append(0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn))
    accuracy = 100.0 * sum(confusion[i][i] for i in range(len(labels))) / max(len(gold), 1)
    return {"accuracy": round(accuracy, 2), "macro_f1": round(100.0 * sum(f1s) / len(f1s), 2),
            "confusion": {"labels": labels, "rows_gold_cols_predicted": confusion}, "reviews": len(gold)}


def evaluate_sentiment(model_dir: Path, rows: list[dict[str, str]]) -> tuple[dict[str, Any], list[list[str]]]:
    analyzer = SentimentAnalyzer.from_dir(model_dir)
    preds = analyzer.classify([r["text"] for r in rows])
    scores = classification_scores([r["label"] for r in rows], [p.label for p in preds])
    probs = [[p.probs[label] for label in LABELS] for p in preds]
    scores["ece"] = round(expected_calibration_error(probs, [LABELS.index(r["label"]) for r in rows]), 2)
    samples = [[r["label"], p.label, f"{p.probs['positive']:.3f}", r["text"]] for r, p in zip(rows, preds, strict=True)]
    return scores, samples


def fold_split(rows: list[dict[str, str]], folds: int, k: int) -> tuple[list[dict[str, str]], ...]:
    """(train, valid, test) of fold k: fold k is the test set, fold k+1 the valid set, the rest train."""
    test = [r for r in rows if int(r["fold"]) % folds == k]
    valid = [r for r in rows if int(r["fold"]) % folds == (k + 1) % folds]
    train = [r for r in rows if int(r["fold"]) % folds not in (k, (k + 1) % folds)]
    return train, valid, test


def fold_summary(accuracies: list[float]) -> dict[str, Any]:
    return {"folds": len(accuracies), "accuracies": accuracies, "mean": round(statistics.mean(accuracies), 2),
            "std": round(statistics.stdev(accuracies), 2) if len(accuracies) > 1 else 0.0}


def cross_validate(config: SentimentConfig, folds: int, log: Callable[[str], None] = print) -> dict[str, Any]:
    """Train/test one classifier per fold of all.tsv; accuracy mean ± std over the folds."""
    rows = read_tsv(Path(config.data_dir) / "all.tsv")
    available = sorted({int(r["fold"]) for r in rows})
    if len(available) < folds:
        raise ValueError(f"{config.data_dir}/all.tsv has {len(available)} folds; re-run "
                         f"`python -m corpus prepare --cv {folds}`")
    accuracies = []
    for k in range(folds):
        train, valid, test = fold_split(rows, folds, k)
        fold_config = replace(config, out_dir=f"{config.out_dir}/cv{folds}/fold{k}")
        task = SentimentTask(fold_config, quiet=True, rows=(train, valid))
        Trainer(fold_config, task.build_model(), task, quiet=True).fit()
        test_scores, _ = evaluate_sentiment(Path(fold_config.out_dir) / MODEL_DIR, test)
        accuracies.append(test_scores["accuracy"])
        log(f"fold {k}: test accuracy {test_scores['accuracy']:.2f} ({len(train)} train, {len(test)} test)")
    return {**fold_summary(accuracies), "config": {k: v for k, v in asdict(config).items() if k != "out_dir"}}
