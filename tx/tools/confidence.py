"""python -m tx confidence MODEL_DIR [--judged FILE] [--beam 4] [--length-penalty 0.6] [--max-right-below 0.1]

Translates the hand-judged outputs' sources again, measures what the confidence says about being right
(`tx.confidence`), writes MODEL_DIR/confidence.json and prints it.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from runtime.confidence import CONFIDENCE_FILE

from ..confidence import JUDGED_FILE, measure
from ..data import read_tsv
from . import tool_parser


def main(argv: list[str] | None = None) -> int:
    parser = tool_parser("confidence", __doc__)
    parser.add_argument("model_dir", type=Path)
    parser.add_argument("--judged", type=Path, help=f"judged outputs (default MODEL_DIR/{JUDGED_FILE})")
    parser.add_argument("--beam", type=int, default=4)
    parser.add_argument("--length-penalty", type=float, default=0.6)
    parser.add_argument("--max-right-below", type=float, default=0.10)
    args = parser.parse_args(argv)
    judged = args.judged or args.model_dir / JUDGED_FILE
    if not judged.is_file():
        print(f"error: {judged} not found (columns: direction, source, hypothesis, correct)", file=sys.stderr)
        return 2
    result = measure(args.model_dir, read_tsv(judged), args.beam, args.length_penalty, args.max_right_below)
    (args.model_dir / CONFIDENCE_FILE).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))
    return 0
