"""Where the GPU job keeps its files, relative to the repository root, here and on the GPU machine alike.

`runs/gpujob/`: under runs/, which the tracked .gitignore ignores, so nothing in it is tracked or travels unless a
command names it in `carry`, and the GPU machine keeps it between commands while the machine is held (it keeps
ignored files; the same rule keeps the runs' own checkpoints in runs/ there). Its own `.gitignore` of `*` keeps it
ignored even without that rule. The pieces' manifest is the one file of the job that is tracked (configs/gpujob/),
so a clean clone can still check the plan's sizes.
"""
from __future__ import annotations

from pathlib import Path

JOB_DIR = Path("runs") / "gpujob"
SEND_DIR = JOB_DIR / "send"  # send/<command>/: the pieces that one planned command carries (its `carry` path)
BUILD_DIR = JOB_DIR / "build"  # wholes before they are cut (the packed corpus), here only
WORK_DIR = JOB_DIR / "work"  # on the GPU machine (or a CPU test): joined wholes, the unpacked corpus, results
RESULT_DIR = WORK_DIR / "result"  # the chosen weights' shards and manifest before they are handed back
PIECES_MANIFEST = Path("configs") / "gpujob" / "pieces.json"  # tracked: every piece with size and sha256
CORPUS_ARCHIVE = "corpus.tar.xz"  # the packed corpus, as one whole before cutting
SITE_DIR = Path("/tmp/site")  # where the carried wheels are installed on the GPU machine (README of the device)


def ensure_job_dir(root: Path) -> Path:
    """root/runs/gpujob, created with its self-ignoring .gitignore (so `git status` stays clean and nothing travels
    by accident)."""
    job = root / JOB_DIR
    job.mkdir(parents=True, exist_ok=True)
    ignore = job / ".gitignore"
    if not ignore.is_file():
        ignore.write_text("# the GPU job's pieces and work files: never tracked (gpujob/layout.py)\n*\n")
    return job
