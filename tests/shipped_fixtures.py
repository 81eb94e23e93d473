"""The shipped models (models/translate, models/sentiment) exported, for the tests that serve or run them: the Ray
service tests (tests/serve/) and the README's inference snippet (tests/test_readme.py).

Where `make run` (or `make export`) has exported models/ itself, those files. Else (a fresh clone, as in CI) a copy
exported once per code version and shared by every test process of every run: kept under the tiny test exports'
cache folder (`.cache/test-exports/<key>/shipped-<models>/`, tests/export_fixtures.py: the same code key, so it is
pruned with its code version), built by whichever process asks first while the others wait on a lock. Tests never
write into models/. Each test module exported its own copy before (the service's two test files: 2 x 66 s of a cold
`make test`, again on every run) and the README's snippet was skipped.

Only what the tests run is exported: the served graphs in fp32 and int8, as `make run` makes them (the service tests
serve both; the README's snippet loads the translator in int8); no quality check, no Walkthrough or Experiments graphs.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from export_fixtures import CACHE, cache_key

REPO = Path(__file__).resolve().parent.parent
MODELS = REPO / "models"
TASKS = ("translate", "sentiment")
PRECISIONS = {"translate": "fp32,int8", "sentiment": "fp32,int8"}  # task -> what the tests load (the docstring)
FLAGS = ("--no-quality", "--no-walkthrough", "--no-experiments")
# Each export in one process: the two run side by side beside the test workers, where a graph-pool helper per core
# (the default) only adds its own start to the CPU (shipped translator: 29.8 -> 23.0 core-s, 2026-11-29).
ONE_PROCESS = ("--processes", "1")
MODEL_FILES = ("config.json", "model.pt", "tokenizer.json")  # what an export reads from a model directory


def exported_after_the_model(model_dir: Path) -> bool:
    """The cheap half of `python -m export --if-stale` (which takes 12 s to import torch on a busy machine): a
    passed export report newer than the model's files. Anything else runs the real check."""
    report = model_dir / "onnx" / "export_report.json"
    try:
        ok = json.loads(report.read_text(encoding="utf-8")).get("ok")
    except (OSError, ValueError):
        return False
    sources = [model_dir / name for name in MODEL_FILES]
    return bool(ok) and report.stat().st_mtime >= max(p.stat().st_mtime for p in sources)


def models_key() -> str:
    """A hash of the shipped models' files and of what is exported from them: another model, another export."""
    h = hashlib.sha256(json.dumps([PRECISIONS, FLAGS]).encode())
    for task in TASKS:
        for name in MODEL_FILES:
            h.update(f"{task}/{name}\0".encode() + (MODELS / task / name).read_bytes() + b"\0")
    return h.hexdigest()[:12]


def listing(root: Path) -> dict[str, list[int]]:
    """Every file under `root` with its size and modification time: a test that wrote into the export changes it
    (hashing the 400 MB of ONNX files on every use would cost seconds)."""
    return {str(p.relative_to(root)): [p.stat().st_size, p.stat().st_mtime_ns]
            for p in sorted(root.rglob("*")) if p.is_file()}


def intact(target: Path) -> bool:
    return (target / "listing.json").is_file() and \
        json.loads((target / "listing.json").read_text(encoding="utf-8")) == listing(target / "models")


def _build(target: Path) -> None:
    """Copy the model directories (without any onnx/ of theirs) and export both at once (2 processes), into a
    temporary sibling of `target` renamed when complete."""
    staging = Path(tempfile.mkdtemp(prefix=".shipped-", dir=target.parent))
    try:
        for task in TASKS:
            shutil.copytree(MODELS / task, staging / "models" / task, ignore=shutil.ignore_patterns("onnx"))
        exports = {task: subprocess.Popen(
            [sys.executable, "-m", "export", str(staging / "models" / task), "--precision", PRECISIONS[task], *FLAGS,
             *ONE_PROCESS],
            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for task in TASKS}
        for task, process in exports.items():
            output, _ = process.communicate()
            if process.returncode:
                raise AssertionError(f"exporting the shipped {task} model failed:\n{output[-3000:]}")
        (staging / "listing.json").write_text(json.dumps(listing(staging / "models")), encoding="utf-8")
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def shipped_models_root() -> Path:
    """A models root holding the shipped translate/ and sentiment/, exported (read-only!): models/ where it is
    exported already, else the cached copy (built here on first use, several minutes of CPU)."""
    if all(exported_after_the_model(MODELS / task) for task in TASKS):
        return MODELS
    folder = CACHE / cache_key()
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"shipped-{models_key()}"
    with open(folder / ".shipped.lock", "w") as lock:  # one builder; the other test processes wait and reuse it
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not intact(target):
            _build(target)
    return target / "models"
