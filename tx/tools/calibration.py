"""python -m tx calibration MODEL_DIR [--data-dir DIR] [--bins 10] [--dry-run]

Fits the temperature of a sentiment model directory on the valid split (`tx.calibration`), stores it in
its config.json, writes calibration.json (ECE, NLL, accuracy and reliability tables per split, before and
after) and prints the ECE before and after.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from runtime.files import atomic_write
from runtime.tsv import DataError, read_tsv

from ..calibration import CALIBRATION_FILE, fit_classifier, report
from ..checkpoint import TOKENIZER_FILE, CheckpointError, load_model_dir, read_model_config
from ..tasks import SentimentConfig
from ..tokenizer import Tokenizer
from . import tool_parser


def main(argv: list[str] | None = None) -> int:
    parser = tool_parser("calibration", __doc__)
    parser.add_argument("model_dir", type=Path, help="a sentiment model directory")
    parser.add_argument("--data-dir", type=Path, default=Path(SentimentConfig.data_dir),
                        help="valid.tsv (fitted on) and test.tsv (reported)")
    parser.add_argument("--bins", type=int, default=10)
    parser.add_argument("--dry-run", action="store_true", help="report only; leave config.json as it is")
    args = parser.parse_args(argv)
    try:
        saved = read_model_config(args.model_dir, "classifier")
        model = load_model_dir(args.model_dir, "classifier")
        tokenizer = Tokenizer.load(args.model_dir / TOKENIZER_FILE)
        splits = {s: read_tsv(args.data_dir / f"{s}.tsv") for s in ("valid", "test")}
        temperature = round(fit_classifier(model, tokenizer, saved["meta"], splits["valid"]), 6)
        result = report(model, tokenizer, saved["meta"], splits, temperature, args.bins)
    except (CheckpointError, DataError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for split, entry in result["splits"].items():
        before, after = entry["uncalibrated"], entry["calibrated"]
        print(f"{split}: ECE {before['ece']:.2f}% -> {after['ece']:.2f}%, NLL {before['nll']:.4f} -> "
              f"{after['nll']:.4f}, mean confidence {before['mean_confidence']:.1f}% -> "
              f"{after['mean_confidence']:.1f}% (accuracy {after['accuracy']:.2f}, unchanged)")
    print(f"temperature {temperature:.4f} (fitted on valid)")
    if not args.dry_run:
        saved["config"]["temperature"] = temperature
        atomic_write(args.model_dir / "config.json",
                     lambda tmp: Path(tmp).write_text(json.dumps(saved, indent=2) + "\n"))
        atomic_write(args.model_dir / CALIBRATION_FILE,
                     lambda tmp: Path(tmp).write_text(json.dumps(result, indent=2) + "\n"))
        print(f"wrote the temperature into {args.model_dir / 'config.json'} and {args.model_dir / CALIBRATION_FILE}")
    return 0
