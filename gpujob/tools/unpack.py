"""python -m gpujob unpack FOLDER [FOLDER ...] [--data-dir DIR] [--ship-to models/translate] [--method beam]

Here, after the window: joins the shards the returning commands brought back (one folder per command), checks them
(every shard's sha256 and the whole's, tensor shapes against the manifest and the config, one forward pass), writes
the candidate model directory, evaluates it and the shipped model on every set (Ding test, docs test, everyday;
both directions; `tx.evaluation.evaluate_split`, what `python -m tx evaluate` runs), and ships it (weights, config,
tokenizer, then the metrics.json and samples.tsv of `tx.shipping`, as `python -m tx ship` writes them) only if its
BLEU is higher on every set and direction. The model card (README.md,
experiments, the everyday sentences judged by hand) is a person's work afterwards.
"""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import torch

from runtime.model_files import CONFIG_FILE, TOKENIZER_FILE, WEIGHTS_FILE
from runtime.tsv import DataError
from tx.checkpoint import save_model_dir
from tx.evaluation import evaluate_split
from tx.run_files import METRICS_FILE
from tx.shipping import ship_files

from ..compare import SETS, compare, read_bleu, render
from ..shards import DTYPES, ShardError, read_shards
from . import command_parser

REPORT = "gpujob_report.json"  # in the candidate folder: both runs' results and metrics, the choice, the comparison


def write_candidate(folders: list[Path], candidate: Path) -> dict:
    """The checked shards as a model directory; returns the manifest."""
    manifest, _, model = read_shards(folders)
    save_model_dir(candidate, model, manifest["tokenizer"], manifest["meta"], weights_dtype=DTYPES[manifest["dtype"]])
    (candidate / METRICS_FILE).write_text(manifest["metrics_csv"])
    (candidate / REPORT).write_text(json.dumps(manifest["report"], indent=1) + "\n")
    return manifest


def evaluate_all(model_dir: Path, data_dir: Path, out: Path, method: str, limit: int) -> None:
    """model_dir's translations scored on every set (as `python -m tx evaluate translate --split SET`), into out."""
    for split in SETS:
        scores, scores_path, outputs_path = evaluate_split("translate", model_dir, data_dir, split, out, method,
                                                           limit=limit)
        print(f"wrote {scores_path} and {outputs_path}")


def ship(candidate: Path, eval_dir: Path, ship_to: Path, data_dir: Path) -> None:
    ship_to.mkdir(parents=True, exist_ok=True)
    for name in (CONFIG_FILE, WEIGHTS_FILE, TOKENIZER_FILE, METRICS_FILE):
        shutil.copyfile(candidate / name, ship_to / name)
    ship_files("translate", ship_to, eval_dir, data_dir=data_dir)


def main(argv: list[str] | None = None) -> int:
    parser = command_parser("unpack", __doc__)
    parser.add_argument("folders", type=Path, nargs="+", help="what the returning commands brought back")
    parser.add_argument("--candidate", type=Path, default=Path("runs/gpujob/candidate"), help="candidate model dir")
    parser.add_argument("--data-dir", type=Path, default=Path("data/processed/translate"), help="prepared corpus")
    parser.add_argument("--ship-to", type=Path, default=Path("models/translate"), help="the shipped model dir")
    parser.add_argument("--method", default="beam", choices=["beam", "greedy"])
    parser.add_argument("--limit", type=int, default=0, help="only the first N rows of each set (0 = all)")
    parser.add_argument("--check-only", action="store_true", help="join and check the shards, evaluate nothing")
    args = parser.parse_args(argv)
    torch.set_num_threads(max(1, torch.get_num_threads()))
    try:
        manifest = write_candidate(args.folders, args.candidate)
        chosen = manifest["report"].get("chosen", {})
        print(f"shards ok: {len(manifest['weights']['pieces'])} shards, sha256 and shapes checked, forward pass ok; "
              f"chosen run {chosen.get('run', '?')}; candidate in {args.candidate}")
        if args.check_only:
            return 0
        candidate_eval, shipped_eval = args.candidate / "eval", args.candidate / "shipped_eval"
        evaluate_all(args.candidate, args.data_dir, candidate_eval, args.method, args.limit)
        evaluate_all(args.ship_to, args.data_dir, shipped_eval, args.method, args.limit)
        better, rows = compare(read_bleu(candidate_eval), read_bleu(shipped_eval))
        print(render(rows))
        report = json.loads((args.candidate / REPORT).read_text())
        report["comparison"] = {"better_everywhere": better, "rows": rows, "method": args.method, "limit": args.limit}
        (args.candidate / REPORT).write_text(json.dumps(report, indent=1) + "\n")
        if not better:
            print(f"not shipped: not better on every set; the candidate stays in {args.candidate}")
            return 0
        ship(args.candidate, candidate_eval, args.ship_to, args.data_dir)
    except (ShardError, RuntimeError, FileNotFoundError, ValueError, DataError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"shipped into {args.ship_to}: better on every set; write its model card (README.md) next")
    return 0
