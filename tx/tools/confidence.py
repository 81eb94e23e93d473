"""python -m tx confidence MODEL_DIR [--judged FILE] [--beam 4] [--length-penalty 0.6] [--wrong-at-most 0.25]
[--right-at-least 0.75] [--min-band-outputs 10] [--min-region-outputs 20]

Translates the hand-judged outputs' sources again with beam search, greedily and by sampling, measures per
method what the confidence says about being right and chooses the verdict cuts on band edges (`tx.confidence`
documents the rule), checks each verdict on outputs its cuts were not chosen on (two halves, both ways), fits the
scores (runtime.confidence_score) on one half and reports them on the other (held-out AUROC), writes
MODEL_DIR/confidence.json, and prints one summary line per method.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from runtime.confidence import CONFIDENCE_FILE
from runtime.tsv import read_tsv

from ..confidence import JUDGED_FILE, RULE, measure
from . import tool_parser


def summary(method: str, entry: dict) -> str:
    if not entry["calibrated"]:
        return f"{method}: not calibrated ({entry['reason']})"
    bands = ", ".join(f"{b['from']:.0%}–{b['to']:.0%} {b['right']}/{b['outputs']}" for b in entry["bands"]
                      if b["outputs"])
    right_from = entry["probably_right_from"]
    held = "; ".join(f"{verdict} {counts['right']}/{counts['outputs']} right"
                     for verdict, counts in entry["held_out"]["verdicts"].items())
    return (f"{method}: {entry['outputs']} outputs counted ({entry['skipped_changed_outputs']} differed from the "
            f"judged text), {entry['right']} right, AUROC {entry['auroc']}; right per band: {bands}; probably wrong "
            f"below {entry['probably_wrong_below']:.0%}, probably right "
            + ("never" if right_from is None else f"from {right_from:.0%}")
            + f"; held out (cuts chosen on the other half): {held}"
            + "".join(f"; {kind} score held-out AUROC "
                      + ", ".join(f"{d} {v}" for d, v in scorer["held_out_auroc"].items())
                      for kind, scorer in entry.get("scorers", {}).items()))


def main(argv: list[str] | None = None) -> int:
    parser = tool_parser("confidence", __doc__)
    parser.add_argument("model_dir", type=Path)
    parser.add_argument("--judged", type=Path, help=f"judged outputs (default MODEL_DIR/{JUDGED_FILE})")
    parser.add_argument("--beam", type=int, default=4)
    parser.add_argument("--length-penalty", type=float, default=0.6)
    for name, value in RULE.items():
        parser.add_argument(f"--{name.replace('_', '-')}", type=type(value), default=value)
    args = parser.parse_args(argv)
    judged = args.judged or args.model_dir / JUDGED_FILE
    if not judged.is_file():
        print(f"error: {judged} not found (columns: direction, source, hypothesis, correct)", file=sys.stderr)
        return 2
    rule = {name: getattr(args, name) for name in RULE}
    result = measure(args.model_dir, read_tsv(judged), args.beam, args.length_penalty, rule)
    (args.model_dir / CONFIDENCE_FILE).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    for method, entry in result["methods"].items():
        print(summary(method, entry))
    print(f"wrote {args.model_dir / CONFIDENCE_FILE}")
    return 0
