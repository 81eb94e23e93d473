"""onnxruntime sessions: which execution provider really runs, and one shared session per file.

onnxruntime-gpu lists CUDA among its available providers whether or not CUDA can start,
and a session asked for CUDA that cannot start logs an error and silently runs on CPU.
So the provider is read back from the session (`get_providers()[0]`), and when CUDA was
asked for but did not come up, the reason is found by loading the CUDA provider library
ourselves: its loader error names the missing piece (e.g. "libcublasLt.so.13: cannot open").
"""
from __future__ import annotations

import contextlib
import ctypes
import functools
import io
import os
import threading
from dataclasses import dataclass
from pathlib import Path

import onnxruntime as ort

CUDA, CPU = "CUDAExecutionProvider", "CPUExecutionProvider"
PROVIDER_CHOICES = ("auto", "cuda", "cpu")
SPIN_US = 100  # how long an idle intra-op thread spins before it sleeps (why: session_options)
# onnxruntime's intra-op threads where the caller names none; unset: onnxruntime's own default (one per core). For a
# host that runs several processes side by side (the test suite sets 1: tests/conftest.py).
THREADS_ENV = "TX_ORT_THREADS"


class ProviderError(RuntimeError):
    """The execution provider that was explicitly asked for cannot run here."""


@dataclass(frozen=True)
class SessionHandle:
    session: ort.InferenceSession
    provider: str  # the provider that really runs the graph: session.get_providers()[0]
    note: str | None  # why CUDA is not used, when it was asked for ("auto") and could not start
    threads: int | None  # intra-op threads; None = onnxruntime's default (one per physical core)


@functools.cache
def cuda_unavailable_reason() -> str | None:
    """None if the CUDA provider library loads in this process, else why it does not."""
    if CUDA not in ort.get_available_providers():
        return "this onnxruntime build has no CUDA provider (install onnxruntime-gpu)"
    library = Path(ort.__file__).parent / "capi" / "libonnxruntime_providers_cuda.so"
    if not library.is_file():  # another platform's file name: let the session itself decide
        return None
    preload_cuda_libraries()
    try:
        ctypes.CDLL(str(library))
    except OSError as e:
        return f"onnxruntime's CUDA provider cannot load: {e}"
    return None


def preload_cuda_libraries() -> None:
    """Load the CUDA/cuDNN libraries pip's nvidia-* wheels put in site-packages (requirements-gpu.txt), which the
    system loader does not search; quiet, since a missing one is reported by the provider's own load below."""
    if hasattr(ort, "preload_dlls"):
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            try:
                ort.preload_dlls(msvc=False)
            except Exception:  # noqa: BLE001 - a failed preload leaves the real error to the CDLL load below
                pass


def check_provider(provider: str) -> None:
    if provider not in PROVIDER_CHOICES:
        raise ValueError(f"provider must be one of {', '.join(PROVIDER_CHOICES)}, got {provider!r}")


def default_threads() -> int | None:
    """THREADS_ENV's whole number of threads, or None where it is unset or empty; anything else is refused."""
    value = os.environ.get(THREADS_ENV, "").strip()
    if not value:
        return None
    if not value.isdecimal() or int(value) < 1:
        raise ValueError(f"{THREADS_ENV} must be a whole number of threads >= 1 (or unset), got {value!r}")
    return int(value)


def session_options(threads: int | None) -> ort.SessionOptions:
    """threads: onnxruntime's intra-op threads; None: THREADS_ENV's, else onnxruntime's default."""
    threads = default_threads() if threads is None else threads
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL  # our graphs are chains; parallel branches don't pay
    # Idle intra-op threads spin for at most SPIN_US, then sleep. Unbounded spinning (onnxruntime's default) takes
    # CPU a busy box does not have, and holds the core the search's Python needs between steps; never spinning
    # makes each of a step's ops wake a sleeping thread. SPIN_US bridges the gaps between ops, not the search's
    # work between steps. The timings: docs/export-and-runtime.md#threading-and-spinning.
    options.add_session_config_entry("session.intra_op.allow_spinning", "1")
    options.add_session_config_entry("session.intra_op.spin_duration_us", str(SPIN_US))
    if threads is not None:
        if threads < 1:
            raise ValueError(f"threads must be >= 1 (or None for onnxruntime's default), got {threads}")
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
    return options


def create_session(path: str | Path, provider: str = "auto", threads: int | None = None) -> SessionHandle:
    """A new session for `path`. provider: "auto" (CUDA if it can start, else CPU), "cuda" (CUDA or
    ProviderError), "cpu". Errors loading the file itself propagate from onnxruntime unchanged."""
    check_provider(provider)
    ort.set_default_logger_severity(3)  # the failed-CUDA fallback is reported through `note`, not the log
    note = None
    wanted = []
    if provider in ("auto", "cuda"):
        reason = cuda_unavailable_reason()
        if reason is None:
            wanted.append(CUDA)
        elif provider == "cuda":
            raise ProviderError(f"CUDA was asked for, but {reason}")
        else:
            note = f"CUDA not used: {reason}"
    wanted.append(CPU)
    session = ort.InferenceSession(str(path), session_options(threads), providers=wanted)
    actual = session.get_providers()[0]
    if CUDA in wanted and actual != CUDA:
        why = ("onnxruntime could not start CUDA here (no visible GPU, or a driver/cuDNN mismatch); "
               "onnxruntime.print_debug_info() lists what is missing")
        if provider == "cuda":
            raise ProviderError(f"CUDA was asked for, but {why}")
        note = f"CUDA not used: {why}"
    return SessionHandle(session, actual, note, threads)


_sessions: dict[tuple, SessionHandle] = {}
_sessions_lock = threading.Lock()


def shared_session(path: str | Path, provider: str = "auto", threads: int | None = None) -> SessionHandle:
    """One session per (file version, provider, threads) for the whole process.

    Sessions are safe to run from many threads at once, and creating one costs far more than a
    call, so every wrapper shares them. The file's mtime and size are part of the key: a
    re-export is picked up by the next load without restarting the app.
    """
    path = Path(path).resolve()
    stat = path.stat()
    key = (str(path), stat.st_mtime_ns, stat.st_size, provider, threads)
    with _sessions_lock:
        handle = _sessions.get(key)
        if handle is None:
            handle = _sessions[key] = create_session(path, provider, threads)
        return handle


def clear_sessions(under: str | Path | None = None) -> None:
    """Forget the shared sessions of the files under the folder `under` (a model folder that is going away, such as
    a toy model trained on the Train page), or every session when None (tests; freeing memory)."""
    with _sessions_lock:
        if under is None:
            _sessions.clear()
            return
        prefix = str(Path(under).resolve()) + os.sep
        for key in [k for k in _sessions if k[0].startswith(prefix)]:
            del _sessions[key]
