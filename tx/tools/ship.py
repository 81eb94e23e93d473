"""python -m tx ship {translate,sentiment} MODEL_DIR --eval EVAL_DIR [--samples N]

Turns an evaluation (`python -m tx evaluate ... --out EVAL_DIR`: eval.json + test_outputs.tsv)
into the files a shipped model directory carries besides its weights:
- metrics.json (layout: `runtime.metrics_file`): the test metrics (with sacrebleu signatures), the data
  manifest's provenance, and the metrics of `samples.tsv` alone, which the slow tests recompute;
- samples.tsv: the first N test rows with references and the model's outputs (translation: both
  directions side by side; sentiment: gold label, predicted label, p(positive)).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import sacrebleu

from runtime.metrics_file import METRICS_FILE, SAMPLES_FILE, MetricsFormatError, ModelMetrics
from runtime.tsv import MANIFEST, read_tsv, write_tsv

from ..evaluation import classification_scores, eval_files
from ..tasks import TASKS
from . import tool_parser


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


def main(argv: list[str] | None = None) -> int:
    parser = tool_parser("ship", __doc__)
    parser.add_argument("task", choices=["translate", "sentiment"])
    parser.add_argument("model_dir", type=Path)
    parser.add_argument("--eval", type=Path, required=True, help="folder with eval.json and test_outputs.tsv")
    parser.add_argument("--samples", type=int, default=100, help="test rows kept in samples.tsv (sentiment: 0 = all)")
    parser.add_argument("--data-dir", type=Path, help="prepared data, for the manifest (default: the task's data_dir)")
    args = parser.parse_args(argv)
    scores_name, outputs_name = eval_files("test")
    evaluation = json.loads((args.eval / scores_name).read_text())
    outputs = read_tsv(args.eval / outputs_name)
    manifest_path = (args.data_dir or Path(TASKS[args.task][0].data_dir)) / MANIFEST
    manifest = json.loads(manifest_path.read_text()) if manifest_path.is_file() else {}
    if args.task == "translate":
        rows, sample_scores = translation_samples(outputs, args.samples)
        write_tsv(args.model_dir / SAMPLES_FILE, ["de", "en", "output_en", "output_de"], rows)
    else:
        kept = outputs[:args.samples] if args.samples else outputs
        write_tsv(args.model_dir / SAMPLES_FILE, ["label", "text", "predicted", "p_positive"],
                  [[r["label"], r["text"], r["predicted"], r["p_positive"]] for r in kept])
        sample_scores = classification_scores([r["label"] for r in kept], [r["predicted"] for r in kept])
    written = {"task": args.task, "test": evaluation, "samples": sample_scores,
               "data": {k: manifest.get(k) for k in ("source", "sources", "version", "license", "licence", "counts")
                        if manifest.get(k) is not None}}
    try:  # the one layout the app reads (runtime.metrics_file); a gap is an error here, not a guess there
        metrics = ModelMetrics.from_json(written, "the metrics to ship")
    except MetricsFormatError as e:
        print(f"error: {e} (is {manifest_path} the data manifest of `python -m corpus prepare`?)", file=sys.stderr)
        return 2
    metrics.write(args.model_dir / METRICS_FILE)
    print(f"wrote {args.model_dir / METRICS_FILE} and {args.model_dir / SAMPLES_FILE}")
    return 0
