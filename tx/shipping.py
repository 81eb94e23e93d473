"""The files a shipped model directory carries besides its weights, from an evaluation (`evaluate_split` of the
test split: eval.json + test_outputs.tsv):
- metrics.json (layout: `runtime.metrics_file`): the test metrics (with sacrebleu signatures), the data
  manifest's provenance, and the metrics of `samples.tsv` alone, which the slow tests recompute;
- samples.tsv: the first N test rows with references and the model's outputs (translation: both
  directions side by side; sentiment: gold label, predicted label, p(positive)).
What `python -m tx ship` and the GPU job's unpack write.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import sacrebleu

from runtime.metrics_file import METRICS_FILE, SAMPLES_FILE, MetricsFormatError, ModelMetrics
from runtime.tsv import MANIFEST, read_tsv, write_tsv

from .evaluation import classification_scores, eval_files
from .tasks import TASKS


def translation_samples(outputs: list[dict[str, str]], n: int) -> tuple[list[list[str]], dict[str, Any]]:
    """Rows (de, en, output_en, output_de) for the first n test pairs, and BLEU/chrF on them."""
    de_en = [r for r in outputs if r["direction"] == "de-en"][:n]
    en_de = [r for r in outputs if r["direction"] == "en-de"][:n]
    rows = [[a["source"], a["reference"], a["hypothesis"], b["hypothesis"]] for a, b in zip(de_en, en_de, strict=True)]
    scores = {}
    for name, part in (("de-en", de_en), ("en-de", en_de)):
        hyps, refs = [r["hypothesis"] for r in part], [r["reference"] for r in part]
        scores[name] = {"bleu": round(sacrebleu.corpus_bleu(hyps, [refs]).score, 2),
                        "chrf": round(sacrebleu.corpus_chrf(hyps, [refs]).score, 2)}
    return rows, {"sentences": len(rows), "directions": scores}


def ship_files(task: str, model_dir: Path, eval_dir: Path, samples: int = 100, data_dir: Path | None = None
               ) -> ModelMetrics:
    """Write model_dir's metrics.json and samples.tsv (the first `samples` test rows; sentiment: 0 = all) from the
    evaluation in eval_dir; data_dir (default: the task's) holds the data manifest, for the provenance. Raises
    ValueError when the metrics miss what runtime.metrics_file requires."""
    scores_name, outputs_name = eval_files("test")
    evaluation = json.loads((eval_dir / scores_name).read_text())
    outputs = read_tsv(eval_dir / outputs_name)
    manifest_path = (data_dir or Path(TASKS[task][0].data_dir)) / MANIFEST
    manifest = json.loads(manifest_path.read_text()) if manifest_path.is_file() else {}
    if task == "translate":
        rows, sample_scores = translation_samples(outputs, samples)
        write_tsv(model_dir / SAMPLES_FILE, ["de", "en", "output_en", "output_de"], rows)
    else:
        kept = outputs[:samples] if samples else outputs
        write_tsv(model_dir / SAMPLES_FILE, ["label", "text", "predicted", "p_positive"],
                  [[r["label"], r["text"], r["predicted"], r["p_positive"]] for r in kept])
        sample_scores = classification_scores([r["label"] for r in kept], [r["predicted"] for r in kept])
    written = {"task": task, "test": evaluation, "samples": sample_scores,
               "data": {k: manifest.get(k) for k in ("source", "sources", "version", "license", "licence", "counts")
                        if manifest.get(k) is not None}}
    try:  # the one layout the app reads (runtime.metrics_file); a gap is an error here, not a guess there
        metrics = ModelMetrics.from_json(written, "the metrics to ship")
    except MetricsFormatError as e:
        raise ValueError(f"{e} (is {manifest_path} the data manifest of `python -m corpus prepare`?)") from e
    metrics.write(model_dir / METRICS_FILE)
    return metrics
