"""python -m tx evaluate {translate,sentiment} --model DIR [--split test] [--method beam|greedy] [--cv 10]

Translation: sacrebleu BLEU and chrF (detokenised output, default 13a tokenisation) per direction
on the whole split, with the sacrebleu signatures; writes eval.json and a TSV of source /
reference / hypothesis next to the model (or to --out). Beam search (size 4) by default.
Sentiment: accuracy, macro-F1 and the confusion matrix. `--cv N` (sentiment) trains and tests
N models on the folds of all.tsv (fold k = test, fold k+1 = valid) and reports mean ± std.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from runtime.tsv import LABELS, DataError, read_tsv

from ..baselines import run_baselines
from ..checkpoint import CheckpointError
from ..evaluation import NEGATION, cross_validate, evaluate_split
from ..settings import apply_overrides, nest
from ..tasks import TASKS, SentimentConfig
from ..trainer import MODEL_DIR
from . import tool_parser


def main(argv: list[str] | None = None) -> int:
    parser = tool_parser("evaluate", __doc__)
    parser.add_argument("task", choices=["translate", "sentiment"])
    parser.add_argument("--model", type=Path, help="model directory (default: the task's out_dir/model)")
    parser.add_argument("--data-dir", type=Path, help="prepared data (default: the task's data_dir)")
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
    parser.add_argument("--set", action="append", default=[],
                        help="cross-validation training settings key=value, as `python -m tx train`'s")
    parser.add_argument("--baselines", action="store_true",
                        help="sentiment: fit TF-IDF+LR and NB-SVM (C tuned on valid), score them on test, the "
                             "negation probes and 10-fold CV; writes baselines.json into --out or the model dir")
    args = parser.parse_args(argv)
    config_cls, _ = TASKS[args.task]
    data_dir = args.data_dir or Path(config_cls.data_dir)
    model_dir = args.model or Path(config_cls.out_dir) / MODEL_DIR
    try:
        if args.baselines:
            if args.task != "sentiment":
                parser.error("--baselines is for sentiment")
            splits = {s: read_tsv(data_dir / f"{s}.tsv") for s in ("train", "valid", "test")}
            all_path = data_dir / "all.tsv"
            result = run_baselines(splits, list(LABELS), read_tsv(all_path) if all_path.is_file() else None,
                                   extra={"negation": read_tsv(NEGATION)}, folds=args.cv or 10)
            out = args.out or model_dir
            out.mkdir(parents=True, exist_ok=True)
            (out / "baselines.json").write_text(json.dumps({"data_dir": str(data_dir), **result}, indent=2) + "\n")
            print(f"wrote {out / 'baselines.json'}")
            return 0
        if args.cv:
            if args.task != "sentiment":
                parser.error("--cv is for sentiment")
            base = {"data_dir": str(data_dir), "out_dir": "runs/sentiment-cv"}
            config = SentimentConfig(**nest(apply_overrides(SentimentConfig, base, args.set)))
            result = cross_validate(config, args.cv)
            out = args.out or Path(config.out_dir)
            out.mkdir(parents=True, exist_ok=True)
            (out / f"cv{args.cv}.json").write_text(json.dumps(result, indent=2) + "\n")
            print(f"{args.cv}-fold cross-validation accuracy: {result['mean']:.2f} ± {result['std']:.2f}")
            return 0
        if args.split == "everyday" and args.task != "translate":
            parser.error("--split everyday is translate's dev set")
        if args.split == "negation" and args.task != "sentiment":
            parser.error("--split negation is sentiment's probe set")
        scores, scores_path, outputs_path = evaluate_split(args.task, model_dir, data_dir, args.split,
                                                           args.out or model_dir, args.method, args.beam,
                                                           args.length_penalty, args.limit)
        if args.task == "sentiment":
            print(f"accuracy {scores['accuracy']:.2f}  macro-F1 {scores['macro_f1']:.2f}  ECE {scores['ece']:.2f}%  "
                  f"confusion {scores['confusion']['rows_gold_cols_predicted']}")
    except (FileNotFoundError, CheckpointError, ValueError, DataError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"wrote {scores_path} and {outputs_path}")
    return 0
