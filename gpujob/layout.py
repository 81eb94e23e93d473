"""Where the GPU job keeps its files: the pieces in the checkout (they travel), the work outside it (it must stay).

The device tool lays the checkout anew before every call: a path that one call carried and the next does not name is
deleted there, with everything under it (a run's weights were lost that way between two calls). So all
that a later call needs (joined wholes, the unpacked corpus, the runs, the shards, the kept pieces, a copy of the
job's own code) lives in the work folder, `/tmp/gpujob` by default (GPUJOB_WORK or `--work` change it), which the
held machine keeps between calls and which no call's tree touches.

`runs/gpujob/`: under runs/, which the tracked .gitignore ignores, so nothing in it is tracked or travels unless a
command names it in `carry`, and the GPU machine keeps it between commands while the machine is held (it keeps
ignored files; the same rule keeps the runs' own checkpoints in runs/ there). Its own `.gitignore` of `*` keeps it
ignored even without that rule. The pieces' manifest is the one file of the job that is tracked (configs/gpujob/),
so a clean clone can still check the plan's sizes.
"""
from __future__ import annotations

import os
from pathlib import Path

JOB_DIR = Path("runs") / "gpujob"
SEND_DIR = JOB_DIR / "send"  # send/<command>/: the pieces that one planned command carries (its `carry` path)
BUILD_DIR = JOB_DIR / "build"  # wholes before they are cut (the packed corpus), here only
DEFAULT_WORK = Path("/tmp/gpujob")  # the work folder on the GPU machine: outside the checkout, kept between calls
WORK_ENV = "GPUJOB_WORK"  # names another work folder (the tests and the rehearsal use a scratch one)
# inside the work folder:
CORPUS_DIR = "corpus"  # the joined corpus archive's members, unpacked once
RUNS_DIR = "runs"  # runs/<run>/: each planned run's out_dir (checkpoints, metrics, model/, result.json)
RESULT_DIR = "result"  # the chosen weights' shards and manifest, and which of them were handed back
KEPT_PIECES_DIR = "pieces"  # every sound piece a call carried, copied here: the next call's tree no longer has it
JOINED_DIR = "joined"  # wholes joined from their pieces (the corpus archive, wheels, weights)
CODE_DIR = "code"  # a copy of the job's packages and configs: detached runs and later calls import from here
PIECES_MANIFEST = Path("configs") / "gpujob" / "pieces.json"  # tracked: every piece with size and sha256
CORPUS_ARCHIVE = "corpus.tar.xz"  # the packed corpus, as one whole before cutting
SITE_DIR = Path("/tmp/site")  # where the carried wheels are installed on the GPU machine (README of the device)


def work_folder(given: Path | None = None) -> Path:
    """The work folder: `given`, else $GPUJOB_WORK, else /tmp/gpujob; absolute, created."""
    folder = Path(given or os.environ.get(WORK_ENV) or DEFAULT_WORK).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def check_outside(work: Path, root: Path) -> None:
    """Refuse a work folder inside the checkout: the device deletes there what the next call does not carry."""
    if work.resolve().is_relative_to(root.resolve()):
        raise ValueError(f"the work folder {work} is inside the checkout {root}: the device lays the checkout anew "
                         "before each call and would delete it; use a folder outside (default /tmp/gpujob)")


def ensure_job_dir(root: Path) -> Path:
    """root/runs/gpujob, created with its self-ignoring .gitignore (so `git status` stays clean and nothing travels
    by accident)."""
    job = root / JOB_DIR
    job.mkdir(parents=True, exist_ok=True)
    ignore = job / ".gitignore"
    if not ignore.is_file():
        ignore.write_text("# the GPU job's pieces and work files: never tracked (gpujob/layout.py)\n*\n")
    return job
