"""python -m gpujob run --out DIR [--work DIR] [--wait S] [--max-time S] [--resume] [--again] [--config FILE ...]

The GPU machine's one entry, the same each call (configs/README.md gives the calls in order). It joins and unpacks
the corpus, starts the planned runs side by side, detached, waits up to --wait seconds, and once all have ended,
chooses the best (each run already averaged its last checkpoints when that scored higher) and hands its weights back
in DIR as shards of at most 15 MiB with manifest.json, as many as one command may bring back. All it keeps lives in
--work (default /tmp/gpujob), outside the checkout, which the device lays anew between calls; a later call can run
from the copy of the code kept there (`cd /tmp/gpujob/code`). Exit codes:
0 all handed back, 3 still training (call again at once), 4 shards left (call again), 2 nothing usable.
Runs on the CPU the same way (device: CUDA when there is one); `--resume --max-time S` continues stopped runs.
"""
from __future__ import annotations

import platform
import shutil
import sys
from pathlib import Path

import torch

from runtime.tsv import DataError
from tx.checkpoint import CheckpointError

from ..handback import ReturnLimits
from ..job import FAILED_EXIT, JobSettings, run_job
from ..layout import RUNS_DIR, work_folder
from ..pieces import MiB
from ..runs import PLANNED_CONFIGS, planned_runs
from ..shards import SHARD_BYTES
from . import command_parser


def environment() -> str:
    device = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no CUDA: CPU"
    free = shutil.disk_usage(".").free / 2**30
    return f"python {platform.python_version()}, torch {torch.__version__}, {device}, {free:.0f} GiB free disk"


def main(argv: list[str] | None = None) -> int:
    parser = command_parser("run", __doc__)
    parser.add_argument("--out", type=Path, required=True, help="where results are handed back ($OUT)")
    parser.add_argument("--config", type=Path, action="append",
                        help=f"planned run config (repeatable; default {', '.join(PLANNED_CONFIGS)})")
    parser.add_argument("--work", type=Path, help="the work folder, outside the checkout: corpus, runs, shards, a copy "
                        "of the code (default $GPUJOB_WORK or /tmp/gpujob; the device keeps it between calls)")
    parser.add_argument("--wait", type=float, default=480, help="seconds to wait for running runs in this call")
    parser.add_argument("--max-time", type=float, help="training seconds for runs started now (default: config's)")
    parser.add_argument("--resume", action="store_true", help="continue stopped or finished runs from last.pt")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="setting for runs started now")
    parser.add_argument("--again", action="store_true", help="hand every shard back anew")
    parser.add_argument("--poll", type=float, default=30, help="seconds between progress lines")
    parser.add_argument("--shard-mib", type=float, default=SHARD_BYTES / MiB, help="shard size (≤ 16)")
    parser.add_argument("--max-return-mib", type=float, default=64, help="what one call may bring back in all")
    args = parser.parse_args(argv)
    print(environment(), flush=True)
    configs = args.config or [Path(p) for p in PLANNED_CONFIGS]
    work = work_folder(args.work)
    settings = JobSettings(root=Path.cwd(), work=work, out=args.out.resolve(),
                           runs=planned_runs(configs, work / RUNS_DIR), wait=args.wait,
                           max_time=args.max_time, resume=args.resume, overrides=args.set, again=args.again,
                           poll=args.poll, shard_bytes=int(args.shard_mib * MiB),
                           limits=ReturnLimits(max_total_bytes=int(args.max_return_mib * MiB)))
    try:
        return run_job(settings, log=lambda line: print(line, flush=True))
    except (ValueError, FileNotFoundError, CheckpointError, DataError, RuntimeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return FAILED_EXIT
