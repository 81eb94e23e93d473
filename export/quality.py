"""Text-level checks at export: do the ONNX files produce the same outputs as PyTorch on real text?

Translation: greedy translations of held-out sentences in both directions by PyTorch (KV cache)
and by onnxruntime at each precision; agreement = identical token ids, BLEU against the
references. Sentiment: labels and accuracy on the held-out reviews. Sentences come from
data/processed/<task>/test.tsv when present, else from the model directory's samples.tsv,
else the check is skipped with a note (a fresh clone has no data/).
"""
from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sacrebleu

from runtime import OnnxSentimentClassifier, OnnxTranslator
from runtime.tsv import read_tsv
from tx.inference import SentimentAnalyzer, Translator

SAMPLE_SEED = 0  # which test rows are used is fixed, so reports of two exports compare
# int8 vs fp32. Past a limit the export fails (a passed export means int8 keeps its meaning); the stricter
# targets (issue 15) are warnings: on 500 sentences a BLEU delta moves by ~0.2 with no change in quality.
INT8_MAX_BLEU_DROP = 0.5
INT8_MAX_ACCURACY_DROP = 0.01
INT8_TARGET_BLEU_DROP = 0.2
INT8_TARGET_AGREEMENT = 0.85  # greedy outputs identical to fp32's


@dataclass
class Texts:
    """Held-out texts: `rows` of column -> value, and where they came from."""

    origin: str
    rows: list[dict[str, str]] = field(default_factory=list)


def pick_rows(path: Path, needed: set[str], limit: int) -> list[dict[str, str]]:
    rows = [r for r in read_tsv(path) if all((r.get(c) or "").strip() for c in needed)]
    if len(rows) > limit:
        rows = random.Random(SAMPLE_SEED).sample(rows, limit)
    return rows


def held_out_texts(task_dir: Path, model_dir: Path, needed: set[str], limit: int) -> Texts:
    """Up to `limit` rows having the `needed` columns, from test.tsv, else samples.tsv."""
    for path in (task_dir / "test.tsv", model_dir / "samples.tsv"):
        if path.is_file():
            rows = pick_rows(path, needed, limit)
            if rows:
                return Texts(str(path), rows)
    return Texts(f"none: neither {task_dir / 'test.tsv'} nor {model_dir / 'samples.tsv'} has columns "
                 f"{', '.join(sorted(needed))}")


def corpus_bleu(hypotheses: list[str], references: list[str]) -> float:
    return round(sacrebleu.corpus_bleu(hypotheses, [references]).score, 2)


def bleu_delta(bleu: dict[str, float], reference: dict[str, float]) -> dict[str, float]:
    """Per direction: this system's BLEU minus the reference's (negative: it lost BLEU)."""
    return {d: round(bleu[d] - reference[d], 2) for d in bleu}


def translation_int8_verdict(int8: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(failures, warnings) for the int8 system's measured agreement and BLEU delta against PyTorch."""
    worst_drop = round(-min(int8["bleu_delta"].values()), 2) + 0.0  # + 0.0: no "-0.00"
    failures, warnings = [], []
    if worst_drop > INT8_MAX_BLEU_DROP:
        failures.append(f"int8 loses {worst_drop:.2f} BLEU (limit {INT8_MAX_BLEU_DROP}); try `--precision fp32` "
                        "or another int8 scheme (--per-tensor, --weight-bits, --weight-type, --keep-fp32)")
    elif worst_drop > INT8_TARGET_BLEU_DROP:
        warnings.append(f"int8 loses {worst_drop:.2f} BLEU (target <= {INT8_TARGET_BLEU_DROP})")
    if int8["agreement"] < INT8_TARGET_AGREEMENT:
        warnings.append(f"int8 greedy output identical to fp32 for {int8['agreement']:.1%} of sentences "
                        f"(target >= {INT8_TARGET_AGREEMENT:.0%}; docs/export-and-runtime.md has the schemes measured)")
    return failures, warnings


def translation_quality(model_dir: Path, data_dir: Path, precisions: list[str], limit: int,
                        threads: int | None) -> tuple[dict[str, Any], list[str], list[str]]:
    """Returns (report section, failures, warnings)."""
    texts = held_out_texts(data_dir / "translate", model_dir, {"de", "en"}, limit)
    section: dict[str, Any] = {"origin": texts.origin, "sentences": len(texts.rows), "method": "greedy"}
    if not texts.rows:
        return section, [], [f"translation agreement skipped: {texts.origin}"]
    systems: dict[str, Any] = {"torch": Translator.from_dir(model_dir)}
    for precision in precisions:
        systems[precision] = OnnxTranslator(model_dir, provider="cpu", precision=precision, threads=threads)
    directions = [tuple(d) for d in systems["torch"].directions]
    outputs: dict[str, dict[str, list]] = {name: {} for name in systems}
    results: dict[str, Any] = {name: {"bleu": {}, "seconds": 0.0} for name in systems}
    for src, tgt in directions:
        sources, references = [r[src] for r in texts.rows], [r[tgt] for r in texts.rows]
        for name, system in systems.items():
            start = time.perf_counter()
            translations = system.translate(sources, src_lang=src, tgt_lang=tgt, method="greedy")
            results[name]["seconds"] += round(time.perf_counter() - start, 2)
            outputs[name][f"{src}-{tgt}"] = translations
            results[name]["bleu"][f"{src}-{tgt}"] = corpus_bleu([t.text for t in translations], references)
    failures, warnings = [], []
    for name in precisions:
        same, total, example = 0, 0, None
        for direction, translations in outputs[name].items():
            for i, (mine, ref) in enumerate(zip(translations, outputs["torch"][direction], strict=True)):
                total += 1
                same += mine.token_ids == ref.token_ids
                if example is None and mine.token_ids != ref.token_ids:
                    src = direction.split("-")[0]
                    example = {"direction": direction, "source": texts.rows[i][src], "torch": ref.text,
                               "onnx": mine.text}
        results[name]["agreement"] = round(same / total, 4)
        results[name]["disagreements"] = total - same
        results[name]["first_disagreement"] = example
        results[name]["bleu_delta"] = bleu_delta(results[name]["bleu"], results["torch"]["bleu"])
        if name == "fp32" and same != total:
            failures.append(f"fp32 greedy translations differ from PyTorch for {total - same} of {total} "
                            f"sentences (first: {example})")
        if name == "int8":
            int8_failures, int8_warnings = translation_int8_verdict(results[name])
            failures += int8_failures
            warnings += int8_warnings
    section["systems"] = results
    return section, failures, warnings


def sentiment_quality(model_dir: Path, data_dir: Path, precisions: list[str], limit: int,
                      threads: int | None) -> tuple[dict[str, Any], list[str], list[str]]:
    """Returns (report section, failures, warnings); fp32 labels must equal PyTorch's."""
    texts = held_out_texts(data_dir / "sentiment", model_dir, {"label", "text"}, limit)
    section: dict[str, Any] = {"origin": texts.origin, "texts": len(texts.rows)}
    if not texts.rows:
        return section, [], [f"sentiment agreement skipped: {texts.origin}"]
    systems: dict[str, Any] = {"torch": SentimentAnalyzer.from_dir(model_dir)}
    for precision in precisions:
        systems[precision] = OnnxSentimentClassifier(model_dir, provider="cpu", precision=precision, threads=threads)
    gold = [r["label"] for r in texts.rows]
    predictions, results = {}, {}
    for name, system in systems.items():
        start = time.perf_counter()
        predictions[name] = system.classify([r["text"] for r in texts.rows])
        labels = [p.label for p in predictions[name]]
        results[name] = {"accuracy": round(sum(a == b for a, b in zip(labels, gold, strict=True)) / len(gold), 4),
                         "seconds": round(time.perf_counter() - start, 2)}
    failures, warnings = [], []
    for name in precisions:
        pairs = list(zip(predictions[name], predictions["torch"], strict=True))
        same = sum(a.label == b.label for a, b in pairs)
        worst_prob = max(abs(a.probs[k] - b.probs[k]) for a, b in pairs for k in a.probs)
        results[name].update(agreement=round(same / len(pairs), 4), max_prob_diff=round(worst_prob, 6),
                             accuracy_delta=round(results[name]["accuracy"] - results["torch"]["accuracy"], 4))
        if name == "fp32" and same != len(pairs):
            failures.append(f"fp32 labels differ from PyTorch for {len(pairs) - same} of {len(pairs)} texts "
                            f"(max probability difference {worst_prob:.3g})")
        if name == "int8" and -results[name]["accuracy_delta"] > INT8_MAX_ACCURACY_DROP:
            failures.append(f"int8 loses {-results[name]['accuracy_delta']:.2%} accuracy "
                            f"(limit {INT8_MAX_ACCURACY_DROP:.0%})")
    section["systems"] = results
    return section, failures, warnings
