from __future__ import annotations

import os
import sys

# pytest keeps each test module's assertion-rewritten code as a .pyc in __pycache__/ (ignored by git). Where bytecode
# writing is off (PYTHONDONTWRITEBYTECODE=1, as on this project's hosts) every pytest process rewrote all ~180 test
# modules again: 7 of the 14 s each xdist worker spent collecting. Set before anything below is imported.
sys.dont_write_bytecode = False

import gc  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import TYPE_CHECKING  # noqa: E402

import pytest  # noqa: E402

# tests/ is on sys.path (pyproject's `pythonpath`) and holds tx/, runtime/, export/, ... test folders without an
# __init__.py, which Python may take for namespace packages: `pytest -n0 tests/app/test_pages.py` through the console
# script failed at `from tx import CheckpointError` ("unknown location"; xdist's workers and `python -m pytest` have
# the working directory on sys.path, and passed). A regular package anywhere on sys.path wins over a namespace one,
# so the checkout goes on it.
REPO = str(Path(__file__).resolve().parents[1])
if REPO not in sys.path:
    sys.path.append(REPO)

if TYPE_CHECKING:
    import tx


def _end_worker_now(config: pytest.Config) -> None:
    """What an xdist worker did after pytest had finished, freeing the session's objects and then the interpreter's
    (torch, onnxruntime, streamlit, ... module by module), took 1.1-2.5 s after its last test, and the controller
    waits for it (measured in the fast suite). The results are sent by then (pytest_sessionfinish sends them);
    the atexit handlers still run here (temporary folders removed), then the worker exits with pytest's status."""
    from tx.trainer import exit_worker  # already loaded wherever a collected test file imports tx

    exit_worker(config.workeroutput.get("exitstatus", 1))  # 1: the session never finished


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    # onnxruntime sessions that name no thread count run one intra-op thread here and in every process the tests start
    # (runtime.providers.THREADS_ENV): the two workers fill the two cores already, and a session's second thread only
    # contended with them (fast suite: 6 core-s less, 48.4 and 53.0 s -> 46.2 and 50.0 s, 2026-11-29). A test that
    # needs threads names them; `TX_ORT_THREADS= pytest` runs onnxruntime's default.
    os.environ.setdefault("TX_ORT_THREADS", "1")
    # workerinput: set by pytest-xdist in its workers only (a pytest a test starts inherits PYTEST_XDIST_WORKER)
    if hasattr(config, "workerinput"):
        config.add_cleanup(lambda: _end_worker_now(config))  # the first cleanup added is the last run


# A test module that needs the tiny exported models (tests/export_fixtures.py) says so with
# `pytestmark = pytest.mark.exports`. On a cold cache their export (~60 s, two background processes) starts once
# collection finds such a test, and in one process those tests run last, so the export overlaps with everything else.
# Under xdist (`make test`, the fast suite) this order is not kept: --dist loadfile hands out the files with the most
# tests first (pytest-xdist's loadscope reorder), so in a cold `make test` one worker waited 50 s on the export and
# the other 24 s. An order of our own (units needing no export first, slow and browser files first within each) ended
# that wait but took 612 s where xdist's took 583 s (a fresh clone each, docs/testing.md): the long files then ran
# side by side, each slower beside the other (the Ray front's file 135 s against 79 s). xdist's order is kept.
def needs_exports(item) -> bool:
    return item.get_closest_marker("exports") is not None


@pytest.hookimpl(trylast=True)  # after -m and -k have deselected: only what runs counts
def pytest_collection_modifyitems(session, config, items):
    one_torch_thread()
    needs = [needs_exports(item) for item in items]
    # under pytest-xdist the first worker starts the builders; the others wait on their locks when they need a model
    first_worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0") == "gw0"
    if any(needs) and first_worker and not os.environ.get("TX_TEST_PREFETCHED"):
        from export_fixtures import prefetch

        prefetch()
    items.sort(key=needs_exports)  # stable: order kept
    # What collection loaded (torch, onnxruntime, streamlit, every test module: most of the heap) lives to the end, so
    # the cyclic garbage collector need not scan it again: not during the tests, and not in pytest's unraisable-
    # exception check at the end, whose two full collections took 0.7 s in each worker (measured in the fast suite).
    gc.freeze()


# The test files that start a Ray service on this machine: one xdist work unit, so they run on one worker, one after
# the other. The front's fault checks freeze or count this machine's Serve processes (serve/local.py finds them in
# /proc) and must not find the other file's service; each Ray start is in a process of its own where a second one in
# the same process would fail (test_serve_front's, through serve_fixtures.service_in_its_own_process).
RAY_SERVICE_FILES = ("tests/serve/test_serve_front.py", "tests/serve/test_serve_ray.py")


def work_unit(nodeid: str) -> str:
    """The test's xdist work unit: its file (--dist loadfile), the Ray service files one unit."""
    file = nodeid.split("::", 1)[0]
    return "ray services" if file in RAY_SERVICE_FILES else file


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook
def pytest_xdist_make_scheduler(config, log):
    """--dist loadfile (pyproject.toml's), with RAY_SERVICE_FILES as one unit; other modes as xdist has them."""
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class LoadFileWithRayServicesTogether(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

    return LoadFileWithRayServicesTogether(config, log)


# torch and tx are imported where they are used, not at the top: this file is also read by pytest-xdist's controller,
# which runs no test, and importing torch there (1 s) delayed the start of every worker by as much.
def one_torch_thread() -> None:
    """One intra-op thread, set in every process that runs tests (collection runs there, not in xdist's
    controller): the tests' tensors are tiny, and on a busy 2-core CI machine PyTorch's OpenMP threads wait on each
    other (measured: a tiny beam search took 12 s with 2 threads, 0.3 s with 1)."""
    import torch

    torch.set_num_threads(1)


@pytest.fixture(autouse=True)
def _seed():
    import torch

    torch.manual_seed(0)


def tiny_seq2seq(pre_norm: bool = False, share: bool = True, **kw) -> tx.Seq2SeqTransformer:
    import tx

    cfg = dict(vocab_size=40, d_model=32, n_heads=4, n_layers=2, d_ff=64, dropout=0.0, max_len=64,
               pre_norm=pre_norm, share_embeddings=share)
    cfg.update(kw)
    return tx.Seq2SeqTransformer(tx.Seq2SeqConfig(**cfg)).eval()


def tiny_classifier(pre_norm: bool = False, pooling: str = "mean", **kw) -> tx.SentimentClassifier:
    import tx

    cfg = dict(vocab_size=40, d_model=16, n_heads=2, n_layers=2, d_ff=32, dropout=0.0, max_len=64,
               pre_norm=pre_norm, pooling=pooling)
    cfg.update(kw)
    return tx.SentimentClassifier(tx.ClassifierConfig(**cfg)).eval()


@pytest.fixture(scope="module")
def chromium():
    """Debian's chromium, launched once per test file for its browser tests (tests/browser/ and tests/web/), and
    closed after it: playwright's sync API runs an asyncio loop in this thread while it is open, so a test of the
    same process that called asyncio.run after any browser file failed ("cannot be called from a running event
    loop"; the serve tests do). One at a time: playwright's sync API refuses a second while one runs."""
    from browser_fixtures import CHROMIUM, launched_chromium

    if not os.path.isfile(CHROMIUM):
        pytest.fail(f"{CHROMIUM} is missing: run `make browser` (apt-get install -y chromium)")
    with launched_chromium() as browser:
        yield browser
