"""python -m gpujob unpack (FOLDER [FOLDER ...] | --from-shared [--returns-dir DIR]) [--data-dir DIR]
    [--ship-to models/translate] [--method beam] [--check-only]

Here, after the window: finds the shards the returning commands brought back, checks them, writes the candidate
model directory, evaluates it and the shipped model on every set, and ships it only when the ship rule holds.

Where the shards come from (gpujob.returns): the FOLDERs named, wherever they came from (one may hold the whole
set, or it may be spread over several, one per command); or, with --from-shared, the returns folder
(../shared/gpu-returns beside the checkout, or --returns-dir) and its sub-folders one level down, searched for the
complete set of the planned run (its manifest's report.chosen.run is the stem of gpujob.runs.PLANNED_CONFIGS);
finding none there, it says what it looked for and where, and exits 1.

The checks: the manifests among the folders are one run's (the same weights sha256), every shard is there with
its sha256 (a missing or damaged one is named), then the whole's sha256, tensor shapes against the manifest and
the config, one forward pass. The evaluation: every set (Ding test, docs test, everyday; both directions;
`tx.evaluation.evaluate_split`, what `python -m tx evaluate` runs). The ship rule (gpujob.compare): the mean BLEU
over the six set x direction rows rises, both everyday directions rise, and no row falls by more than
MAX_FALL_BLEU (1.0; exactly that much is allowed); a missing score means not shipped. The table (each row's
scores, change and the rule it passes or fails, the mean, the verdict naming every failed rule) is printed and
written into the candidate's gpujob_report.json ("comparison") either way. Shipping copies weights, config and
tokenizer, then writes the metrics.json and samples.tsv of `tx.shipping`, as `python -m tx ship` does. The model
card (README.md, experiments, the everyday sentences judged by hand) is a person's work afterwards.
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
from ..returns import ReturnsError, ReturnSet, check_set, find_planned_set
from ..runs import PLANNED_CONFIGS
from ..shards import DTYPES, ShardError, read_shards
from . import command_parser

REPORT = "gpujob_report.json"  # in the candidate folder: both runs' results and metrics, the choice, the comparison
REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_RETURNS = REPO_ROOT.parent / "shared" / "gpu-returns"  # where returns from other sessions are left
PLANNED_RUNS = tuple(Path(config).stem for config in PLANNED_CONFIGS)  # the names the job's manifests give them
NOTHING_TO_UNPACK = 1  # exit status when --from-shared finds no complete set of the planned run
FAILED_CHECK = 2  # exit status when the returns fail a check (missing or damaged shard, mixed runs, bad shapes)


def write_candidate(returned: ReturnSet, candidate: Path) -> dict:
    """The checked shards as a model directory; returns the manifest."""
    manifest, _, model = read_shards(list(returned.folders))
    save_model_dir(candidate, model, manifest["tokenizer"], manifest["meta"], weights_dtype=DTYPES[manifest["dtype"]])
    (candidate / METRICS_FILE).write_text(manifest["metrics_csv"])
    report = {**manifest["report"], "returned_from": [str(f) for f in returned.manifest_folders]}
    (candidate / REPORT).write_text(json.dumps(report, indent=1) + "\n")
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


def parse(argv: list[str] | None):
    parser = command_parser("unpack", __doc__)
    parser.add_argument("folders", type=Path, nargs="*", help="what the returning commands brought back")
    parser.add_argument("--from-shared", action="store_true",
                        help=f"find the planned run's ({', '.join(PLANNED_RUNS)}) complete set in --returns-dir")
    parser.add_argument("--returns-dir", type=Path, default=DEFAULT_RETURNS,
                        help="with --from-shared: the folder (and its sub-folders) to search (default: %(default)s)")
    parser.add_argument("--candidate", type=Path, default=Path("runs/gpujob/candidate"), help="candidate model dir")
    parser.add_argument("--data-dir", type=Path, default=Path("data/processed/translate"), help="prepared corpus")
    parser.add_argument("--ship-to", type=Path, default=Path("models/translate"), help="the shipped model dir")
    parser.add_argument("--method", default="beam", choices=["beam", "greedy"])
    parser.add_argument("--limit", type=int, default=0, help="only the first N rows of each set (0 = all)")
    parser.add_argument("--check-only", action="store_true", help="join and check the shards, evaluate nothing")
    args = parser.parse_args(argv)
    if bool(args.folders) == args.from_shared:
        parser.error("name the returned FOLDERs, or give --from-shared (one of the two)")
    return args


def evaluate_and_decide(args, candidate_eval: Path) -> bool:
    """Both models evaluated, the ship rule applied, the table printed and written into the report; ship?"""
    shipped_eval = args.candidate / "shipped_eval"
    evaluate_all(args.candidate, args.data_dir, candidate_eval, args.method, args.limit)
    evaluate_all(args.ship_to, args.data_dir, shipped_eval, args.method, args.limit)
    decision = compare(read_bleu(candidate_eval), read_bleu(shipped_eval))
    print(render(decision))
    report = json.loads((args.candidate / REPORT).read_text())
    report["comparison"] = {**decision.to_json(), "method": args.method, "limit": args.limit}
    (args.candidate / REPORT).write_text(json.dumps(report, indent=1) + "\n")
    return decision.ship


def unpack(args, returned: ReturnSet) -> int:
    """The checked set joined into the candidate, evaluated and shipped by the rule: the same whatever found it."""
    try:
        manifest = write_candidate(returned, args.candidate)
        print(f"shards ok: {len(manifest['weights']['pieces'])} shards, sha256 and shapes checked, forward pass ok; "
              f"chosen run {returned.run}; candidate in {args.candidate}")
        if args.check_only:
            return 0
        candidate_eval = args.candidate / "eval"
        if not evaluate_and_decide(args, candidate_eval):
            print(f"the candidate stays in {args.candidate}")
            return 0
        ship(args.candidate, candidate_eval, args.ship_to, args.data_dir)
    except (ShardError, RuntimeError, FileNotFoundError, ValueError, DataError) as e:
        print(f"error: {e}", file=sys.stderr)
        return FAILED_CHECK
    print(f"shipped into {args.ship_to}: the ship rule holds; write its model card (README.md) next")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    torch.set_num_threads(max(1, torch.get_num_threads()))
    if args.from_shared:
        try:
            returned = find_planned_set(args.returns_dir, PLANNED_RUNS)
        except ReturnsError as e:
            print(f"nothing to unpack: {e}", file=sys.stderr)
            return NOTHING_TO_UNPACK
        print(f"found run {returned.run}'s complete set in {', '.join(map(str, returned.manifest_folders))}")
        return unpack(args, returned)
    try:
        returned = check_set(args.folders)
    except ReturnsError as e:
        print(f"error: {e}", file=sys.stderr)
        return FAILED_CHECK
    return unpack(args, returned)
