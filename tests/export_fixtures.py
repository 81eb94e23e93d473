"""Tiny model directories exported to ONNX, shared by the export, runtime, app and triton tests.

Exporting costs 5-9 s per graph (torch.export tracing, whatever the model size; 6 graphs in all), so
each tiny model is exported once and kept on disk under `.cache/test-exports/<key>/`, where the key
hashes everything the export depends on (the files of `tx/`, `export/` and `runtime/` this file can import, this
file, and the torch/onnx/onnxruntime versions): a later run with the same code reuses it, a change to that code
rebuilds it, and an edit elsewhere (tx/attribution.py, the trainer, runtime/experiments/) does not.
A manifest of file hashes catches a test that wrote into it by mistake (rebuilt then). A failed
export is remembered for the rest of the process, so dependent tests fail at once with the same
message instead of exporting again. The directories are read-only by contract: use `fresh_copy`.
"""
from __future__ import annotations

import atexit
import contextlib
import fcntl
import functools
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path

import torch
from import_graph import reachable_files

import tx
from export.__main__ import main as export_command
from runtime.cpu import cpu_has_vnni

GERMAN = [
    "Ich trinke keinen Alkohol.", "Kannst du Auto fahren?", "Das Wetter ist heute schön.",
    "Wir treffen uns morgen am Bahnhof.", "Wo ist die nächste Apotheke?", "Die Kinder spielen im Garten.",
    "Wie viel kostet diese Jacke?", "Es tut mir leid.", "Ich verstehe nicht, was du meinst.",
]
ENGLISH = [
    "I do not drink alcohol.", "Can you drive a car?", "The weather is nice today.",
    "We meet tomorrow at the station.", "Where is the nearest pharmacy?", "The children play in the garden.",
    "How much does this jacket cost?", "I am sorry.", "I do not understand what you mean.",
]
REVIEWS = [
    ("positive", "a gem of a film, warm and funny"), ("negative", "dull, slow and far too long"),
    ("positive", "the best thing I have seen this year"), ("negative", "a mess of a script and wooden acting"),
    ("positive", "moving and beautifully shot"), ("negative", "I wanted my two hours back"),
]
TRANSLATE_META = {"task": "translate", "directions": [["de", "en"], ["en", "de"]], "max_src_len": 48}
SENTIMENT_TEMPERATURE = 1.7
SENTIMENT_META = {"task": "sentiment", "labels": ["negative", "positive"], "max_len": 48}

_root = Path(tempfile.mkdtemp(prefix="tx-export-tests-"))
atexit.register(shutil.rmtree, _root, ignore_errors=True)


def write_tsv(path: Path, header: list[str], rows: list[tuple[str, ...]]) -> None:
    lines = ["\t".join(header)] + ["\t".join(row) for row in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@functools.cache
def tokenizer_json() -> str:
    from tx.tokenizer import train_tokenizer

    texts = GERMAN + ENGLISH + [text for _, text in REVIEWS]
    tokenizer = train_tokenizer(texts * 3, vocab_size=120, min_frequency=1)
    path = _root / "tokenizer.json"
    tokenizer.save(path)
    return path.read_text(encoding="utf-8")


def vocab_size() -> int:
    from tx.tokenizer import Tokenizer

    return Tokenizer.from_str(tokenizer_json()).vocab_size


def build_translation_dir(path: Path, seed: int = 0) -> Path:
    torch.manual_seed(seed)
    config = tx.Seq2SeqConfig(vocab_size=vocab_size(), d_model=32, n_heads=4, n_layers=2, d_ff=64, dropout=0.0,
                              max_len=64)
    tx.save_model_dir(path, tx.Seq2SeqTransformer(config).eval(), tokenizer_json(), TRANSLATE_META)
    write_tsv(path / "samples.tsv", ["de", "en"], list(zip(GERMAN, ENGLISH, strict=True)))
    return path


def build_sentiment_dir(path: Path, seed: int = 0) -> Path:
    torch.manual_seed(seed)
    # temperature != 1: every export test then checks that the calibration travels into the graph
    config = tx.ClassifierConfig(vocab_size=vocab_size(), d_model=16, n_heads=2, n_layers=2, d_ff=32, dropout=0.0,
                                 max_len=64, temperature=SENTIMENT_TEMPERATURE)
    tx.save_model_dir(path, tx.SentimentClassifier(config).eval(), tokenizer_json(), SENTIMENT_META)
    write_tsv(path / "samples.tsv", ["label", "text"], REVIEWS)
    return path


REPO = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("TX_TEST_CACHE", REPO / ".cache" / "test-exports"))
KEEP_KEYS = 3  # cached code versions kept on disk (older ones are deleted)
_failures: dict[str, str] = {}  # kind -> why its export failed in this process


EXPORT_PACKAGES = ("tx", "export", "runtime")
LOADED_MODULES = "loaded_modules.json"  # beside manifest.json: the project modules the background export loaded


@functools.cache  # which files are in reach is read once a process (~0.5 s); the key still hashes their contents
def export_sources() -> list[Path]:
    """The files of EXPORT_PACKAGES that this file, or `python -m export` (the shipped models' export in
    shipped_fixtures.py, cached under the same key), can import, directly or through others: every import statement,
    those inside functions too. Each background build records what it really loaded; a test checks it is in here."""
    command = REPO / "export" / "__main__.py"
    return sorted({*reachable_files([Path(__file__).resolve(), command], EXPORT_PACKAGES), command})


def cache_key() -> str:
    """A hash of everything an export depends on: a different key means a rebuild."""
    h = hashlib.sha256()
    sources = [*export_sources(), Path(__file__).resolve()]
    for path in sources:
        h.update(str(path.relative_to(REPO)).encode() + b"\0" + path.read_bytes() + b"\0")
    for package in ("torch", "onnx", "onnxruntime-gpu", "onnxscript", "tokenizers"):
        with contextlib.suppress(Exception):
            h.update(f"{package}={version(package)}".encode())
    h.update(f"vnni={cpu_has_vnni()}".encode())  # the export picks its int8 scheme by the CPU (quantize.py)
    return h.hexdigest()[:16]


def manifest(directory: Path) -> dict[str, str]:
    return {str(p.relative_to(directory)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(directory.rglob("*")) if p.is_file()}


CONSOLE = "console.txt"  # beside manifest.json: what `python -m export` printed while it exported the model


def console_of(run, path: Path) -> int:
    """run() with everything this process writes to stdout and stderr, the libraries' C++ included, going to `path`
    (file descriptors 1 and 2 redirected, as a shell would for the command); returns run()'s result."""
    with open(path, "w", encoding="utf-8") as out:
        sys.stdout.flush()
        sys.stderr.flush()
        saved = os.dup(1), os.dup(2)
        os.dup2(out.fileno(), 1)
        os.dup2(out.fileno(), 2)
        try:
            return run()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])


def console(kind: str) -> list[str]:
    """The lines `python -m export` printed while it exported the tiny `kind` model (read-only, as the model)."""
    return (exported(kind).parent / CONSOLE).read_text(encoding="utf-8").splitlines()


def _build(kind: str, target: Path | str) -> None:
    """Export a fresh tiny model into `target` (via a temporary sibling, renamed when complete)."""
    target = Path(target)
    build = build_translation_dir if kind == "translate" else build_sentiment_dir
    staging = Path(tempfile.mkdtemp(prefix=f".{kind}-", dir=target.parent))
    try:
        model_dir = build(staging / "model")
        # through the command itself, so that what it printed is kept for the test of its output (test_export_output
        # ran a second export of the same tiny classifier for that: ~90 s of CPU in every cold `make test`)
        printed = staging / CONSOLE
        # one process: the builders run beside the test workers, where graph-pool helpers (one per core by default)
        # only add their own start to the CPU (tiny translator: 50 -> 47 core-s, sentiment: 23 -> 19, 2026-11-29)
        code = console_of(lambda: export_command([str(model_dir), "--data-dir", str(_root / "no-data"),
                                                  "--processes", "1"]), printed)
        if code != 0:
            raise AssertionError(f"the tiny {kind} model did not export (exit {code}):\n"
                                 f"{printed.read_text(encoding='utf-8', errors='replace')[-3000:]}")
        (staging / "manifest.json").write_text(json.dumps(manifest(model_dir)), encoding="utf-8")
        # a builder process of its own (_exported's): what it loaded is the export's (and this file's) alone
        loaded = sorted(name for name in sys.modules if name.split(".")[0] in EXPORT_PACKAGES)
        (staging / LOADED_MODULES).write_text(json.dumps(loaded), encoding="utf-8")
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _prune_old_keys(keep: str) -> None:
    keys = sorted((p for p in CACHE.iterdir() if p.is_dir() and p.name != keep), key=lambda p: p.stat().st_mtime)
    for old in keys[:-(KEEP_KEYS - 1)] if KEEP_KEYS > 1 else keys:
        shutil.rmtree(old, ignore_errors=True)


KINDS = ("translate", "sentiment")


def intact(target: Path) -> bool:
    return (target / "manifest.json").is_file() and \
        json.loads((target / "manifest.json").read_text(encoding="utf-8")) == manifest(target / "model")


def prefetch(skip: str | None = None) -> None:
    """Start building the tiny models that are not cached yet in background processes, so that the export
    overlaps with tests that need none (conftest starts it with the session; 2 cores). Each kind has its own
    lock, so whoever needs a model waits for its builder instead of building it twice."""
    folder = CACHE / cache_key()
    for kind in KINDS:  # one process per kind: measured 62 s cold for the fast suite, 72 s with one after the other
        if kind != skip and not intact(folder / kind):
            subprocess.Popen(_builder_command(f"_exported({kind!r})"), cwd=Path(__file__).parent,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=_builder_env())


def _builder_command(call: str) -> list[str]:
    return [sys.executable, "-c", f"import export_fixtures; export_fixtures.{call}"]


def _builder_env() -> dict[str, str]:
    """A builder process's: one thread (two build side by side on 2 cores), marked as a builder, the repo importable."""
    return {**os.environ, "OMP_NUM_THREADS": "1", "TX_TEST_PREFETCHED": "1",
            "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}


@functools.cache
def _exported(kind: str) -> Path:
    key = cache_key()
    folder = CACHE / key
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / kind
    # One builder per kind (parallel processes share the cache); the others wait for it and reuse its work.
    with open(folder / f".{kind}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not intact(target):
            if os.environ.get("TX_TEST_PREFETCHED"):  # a builder process already
                _build(kind, target)
            else:  # a test process, where other tests' imports would mix into the record of what the export loads
                prefetch(skip=kind)
                built = subprocess.run(_builder_command(f"_build({kind!r}, {str(target)!r})"),
                                       cwd=Path(__file__).parent, capture_output=True, text=True, env=_builder_env())
                if built.returncode:
                    raise AssertionError(f"the tiny {kind} model did not export:\n{built.stderr[-3000:]}")
            _prune_old_keys(key)
    return target / "model"


def exported(kind: str) -> Path:
    """A tiny model directory of `kind` ("translate" | "sentiment") with fp32 + int8 exports (read-only!)."""
    if kind in _failures:  # functools.cache does not remember exceptions: every dependent test would re-export
        raise AssertionError(f"(cached failure) {_failures[kind]}")
    try:
        return _exported(kind)
    except Exception as e:
        _failures[kind] = f"{type(e).__name__}: {e}"
        raise


def fresh_copy(kind: str, name: str) -> Path:
    """A private, writable copy of an exported model directory (for tests that break files)."""
    target = _root / "copies" / name
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(exported(kind), target)
    return target
