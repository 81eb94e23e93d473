"""A copy of the job's own code in the work folder, so that nothing running on the GPU machine needs the checkout.

The device lays the checkout anew before each call. A detached run that is still training when its call returns
(exit 3) would then import from a tree that is being replaced (`tx.evaluation` and others import lazily), and a
later call could find a tree without the job at all (`No module named gpujob`). So `gpujob run`
copies its packages and configs/ into <work>/code/ once, the runs start there (cwd and PYTHONPATH), and the planned
later calls `cd` there first: they run the very code that started the run.
"""
from __future__ import annotations

import shutil
from pathlib import Path

from .layout import CODE_DIR

PACKAGES = ("gpujob", "tx", "runtime", "corpus")  # what a run and the hand-back import (tests/gpujob checks it)
CONFIGS = "configs"  # the planned runs' settings and the pieces' manifest
SKIP = shutil.ignore_patterns("__pycache__", "*.pyc")
MARK = ".copied_from"  # names the checkout the copy came from


def code_root() -> Path:
    """The folder holding the job's packages now running (the checkout, or a code copy)."""
    return Path(__file__).resolve().parents[1]


def is_code_copy(root: Path, work: Path) -> bool:
    return root.resolve() == (work / CODE_DIR).resolve()


def copy_code(root: Path, work: Path) -> Path:
    """<work>/code: the packages this process runs and root's configs/, replaced whole (a new folder renamed into
    place) unless root already is that copy. Call it only while no run is training from the copy."""
    target = work / CODE_DIR
    if is_code_copy(root, work):
        return target
    fresh = work / (CODE_DIR + ".new")
    shutil.rmtree(fresh, ignore_errors=True)
    fresh.mkdir(parents=True)
    for package in PACKAGES:
        shutil.copytree(code_root() / package, fresh / package, ignore=SKIP)
    if (root / CONFIGS).is_dir():
        shutil.copytree(root / CONFIGS, fresh / CONFIGS, ignore=SKIP)
    (fresh / MARK).write_text(f"{root.resolve()}\n")
    old = work / (CODE_DIR + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if target.exists():
        target.rename(old)
    fresh.rename(target)
    shutil.rmtree(old, ignore_errors=True)
    return target

