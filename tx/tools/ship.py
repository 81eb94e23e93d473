"""python -m tx ship {translate,sentiment} MODEL_DIR --eval EVAL_DIR [--samples N]

Turns an evaluation (`python -m tx evaluate ... --out EVAL_DIR`: eval.json + test_outputs.tsv)
into the files a shipped model directory carries besides its weights: metrics.json (layout:
`runtime.metrics_file`) and samples.tsv, the first N test rows with the model's outputs (what each holds:
tx/shipping.py).
"""
from __future__ import annotations

import sys
from pathlib import Path

from runtime.metrics_file import METRICS_FILE, SAMPLES_FILE

from ..shipping import ship_files
from . import tool_parser


def main(argv: list[str] | None = None) -> int:
    parser = tool_parser("ship", __doc__)
    parser.add_argument("task", choices=["translate", "sentiment"])
    parser.add_argument("model_dir", type=Path)
    parser.add_argument("--eval", type=Path, required=True, help="folder with eval.json and test_outputs.tsv")
    parser.add_argument("--samples", type=int, default=100, help="test rows kept in samples.tsv (sentiment: 0 = all)")
    parser.add_argument("--data-dir", type=Path, help="prepared data, for the manifest (default: the task's data_dir)")
    args = parser.parse_args(argv)
    try:
        ship_files(args.task, args.model_dir, args.eval, args.samples, args.data_dir)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"wrote {args.model_dir / METRICS_FILE} and {args.model_dir / SAMPLES_FILE}")
    return 0
