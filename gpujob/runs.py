"""The planned runs as detached processes: start one (in its own session, so it outlives the command that started
it: the GPU machine kills what a command leaves behind unless it called setsid), and tell how each one stands.

A run's state is read from its out_dir alone, so any later command (a new process) can read it: `gpujob.pid`
while it trains, result.json once it finished, error.json if it failed, last.pt if it stopped and can resume.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from .training import ERROR, RESULT

PID_FILE, LOG_FILE = "gpujob.pid", "train.log"
PLANNED_CONFIG = "planned_config.json"  # the run's config file as it was started (the checkout's may be gone)
NOT_STARTED, RUNNING, FINISHED, FAILED, STOPPED = "not started", "running", "finished", "failed", "stopped"


@dataclass(frozen=True)
class PlannedRun:
    """One planned training run."""

    name: str  # its name in reports: the config file's stem, e.g. translate-v2
    config_file: Path  # the JSON settings (configs/translate-gpu-*.json)
    out_dir: Path  # where it writes (the config's out_dir, or given)


def alive(pid: int) -> bool:
    """Is process `pid` running (a zombie, exited but not yet reaped, is not)?"""
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[-1][:1] != "Z"
    except OSError:  # no /proc: kill(0) said it exists
        return True


def state(run: PlannedRun) -> str:
    out = run.out_dir
    pid_file = out / PID_FILE
    if pid_file.is_file() and alive(int(pid_file.read_text().split()[0])):
        return RUNNING
    if (out / RESULT).is_file():
        return FINISHED
    if (out / ERROR).is_file():
        return FAILED
    if (out / "last.pt").is_file():
        return STOPPED
    if pid_file.is_file():  # started, gone, and nothing written: it died before its first checkpoint (an import?)
        return FAILED
    return NOT_STARTED


def read_result(run: PlannedRun) -> dict:
    return json.loads((run.out_dir / RESULT).read_text())


def read_error(run: PlannedRun) -> str:
    """What a failed run said: its error.json, or the end of its log when it died before writing one."""
    path = run.out_dir / ERROR
    if path.is_file():
        return json.loads(path.read_text())["error"]
    return f"ended without a result or checkpoint; the end of {run.out_dir / LOG_FILE}:\n{log_tail(run, 12)}"


def start(run: PlannedRun, data_dir: Path, max_time: float | None, resume: bool, overrides: list[str],
          code: Path) -> subprocess.Popen:
    """Start `python -m gpujob train-one` for the run, detached (a new session), its output in out_dir/train.log.

    It runs in `code` (the work folder's copy of the job's code, `gpujob.code_copy`) with its config copied beside
    its checkpoints: nothing it reads lies in the checkout, which the device replaces between calls."""
    run.out_dir.mkdir(parents=True, exist_ok=True)
    config = run.out_dir / PLANNED_CONFIG
    if not resume or not config.is_file():
        shutil.copyfile(run.config_file, config)
    sets = [f"data_dir={data_dir}", f"out_dir={run.out_dir}", *overrides]
    if max_time is not None:
        sets.append(f"max_time={max_time}")
    command = [sys.executable, "-m", "gpujob", "train-one", "--config", str(config.resolve()),
               *(x for s in sets for x in ("--set", s)), *(["--resume"] if resume else [])]
    env = {**os.environ, "PYTHONUNBUFFERED": "1",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(code), os.environ.get("PYTHONPATH", "")]))}
    with open(run.out_dir / LOG_FILE, "a") as log:
        log.write(f"\n$ {' '.join(command)}\n")
        log.flush()
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   cwd=code, env=env, start_new_session=True)
    (run.out_dir / PID_FILE).write_text(f"{process.pid}\n")
    return process


def log_tail(run: PlannedRun, lines: int = 5) -> str:
    path = run.out_dir / LOG_FILE
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.is_file() else ""


PLANNED_CONFIGS = ("configs/translate-v2.json",)  # one run: the translate window (gpujob/plan.py)


def planned_runs(config_files: list[Path], runs_root: Path | None = None) -> list[PlannedRun]:
    """The runs of these config files: each writes to runs_root/<its config's out_dir's name> (`gpujob run` gives
    the work folder's runs/), or to its config's out_dir when no runs_root is given."""
    runs = []
    for path in config_files:
        out_dir = Path(json.loads(Path(path).read_text()).get("out_dir", "runs/translate"))
        runs.append(PlannedRun(Path(path).stem, Path(path), runs_root / out_dir.name if runs_root else out_dir))
    names = [r.out_dir for r in runs]
    if len(set(names)) != len(names):
        raise ValueError(f"two planned runs would write to the same out_dir: {names}")
    return runs
