"""Where the models are, loading them once per process, and turning load failures into messages.

The model root is `models/` unless the environment variable TX_MODELS_DIR names another one (the tests
point it at tiny exported models). Each task lives in `<root>/<task>/`.
"""
from __future__ import annotations

import threading
from typing import Any

import streamlit as st

from runtime import (
    CheckpointError,
    ModelLoadError,
    OnnxSentimentClassifier,
    OnnxTranslator,
    ProviderError,
    read_model_config,
)
from runtime.text import DEFAULT_DIRECTIONS

from .model_paths import (
    export_report_path,
    first_line,
    has_model,
    model_dir,
    stamp,
)

TASKS = ("translate", "sentiment")
TASK_TITLES = {"translate": "Translation", "sentiment": "Sentiment"}
TASK_NOUNS = {"translate": "translation", "sentiment": "sentiment"}
LANGUAGES = {"de": "German", "en": "English"}  # display names of the language codes a model's meta names


# The pages in sidebar order: (script, label, icon). Streamlit's own list is off (.streamlit/config.toml)
# because it would call the home page "app". Emoji, not ":material/...:" icons: as a page icon (favicon)
# Streamlit fetches those from fonts.gstatic.com, which fails offline (tests/browser/test_browser.py checks).
PAGES = [("app.py", "Home", "🏠"),
         ("pages/1_Translate.py", "Translate", "🔤"),
         ("pages/2_Sentiment.py", "Sentiment", "🎭"),
         ("pages/3_Attention_explorer.py", "Attention explorer", "🔍"),
         ("pages/8_Walkthrough.py", "Walkthrough", "🧭"),
         ("pages/6_Decoding_explorer.py", "Decoding explorer", "🌳"),
         ("pages/9_Experiments.py", "Experiments", "🧪"),
         ("pages/4_Latency.py", "Latency", "⏱️"),
         ("pages/5_Model_card.py", "Model card", "📄"),
         ("pages/7_Train_your_own.py", "Train your own", "🏋️")]


def page_setup(title: str) -> None:
    """set_page_config + the sidebar's page list: the first lines of every page."""
    icon = next(icon for _, label, icon in PAGES if label == title)
    st.set_page_config(page_title=f"{title} · Transformer playground" if title != "Home" else "Transformer playground",
                       page_icon=icon, layout="wide")
    with st.sidebar:
        for script, label, page_icon in PAGES:
            st.page_link(script, label=label, icon=page_icon)
        st.divider()


# ---------------------------------------------------------------- where the models are

def create_hint(task: str) -> str:
    d = model_dir(task)
    return (f"`make run` exports the shipped models and starts this app; to train your own: "
            f"`python -m tx train {task}`, then `python -m export {d}`.")


def model_problem(task: str) -> str | None:
    """Why the task's ONNX model cannot serve (a message naming the fixing command), or None."""
    d = model_dir(task)
    noun = TASK_NOUNS[task]
    if not has_model(task):
        return f"No {noun} model found in `{d}`. {create_hint(task)}"
    if not export_report_path(task).is_file():
        return (f"The {noun} model in `{d}` is not exported to ONNX yet: run `python -m export {d}` "
                f"(`make run` does it for the shipped models).")
    return None


def require_model(task: str) -> None:
    """Stop the page with the reason (and the fixing command) when the task's ONNX model cannot serve."""
    problem = model_problem(task)
    if problem:
        st.error(problem)
        st.stop()


def model_meta(task: str) -> dict[str, Any]:
    try:
        return read_model_config(model_dir(task))
    except CheckpointError:
        return {"kind": "?", "config": {}, "meta": {}}


def directions(task: str = "translate") -> list[tuple[str, str]]:
    found = model_meta(task)["meta"].get("directions") or DEFAULT_DIRECTIONS
    return [(str(s), str(t)) for s, t in found]


def direction_label(direction: tuple[str, str]) -> str:
    return f"{direction[0].upper()} → {direction[1].upper()}"


# ---------------------------------------------------------------- loading, once per process

# Every loaded model is keyed by `stamp(task)` so that replaced model files are picked up without a restart.
# The entry for the files' previous version is dropped as soon as the new one loads: one live session per
# configuration however often the files change (a translation session at fp32 holds ~240 MB, measured); max_entries
# is the backstop across configurations (2 tasks × 2 precisions × auto/cpu/thread counts).
# No gc.freeze() (measured for issue 13): frozen objects are never collected and a dropped onnxruntime session sits in
# reference cycles, so freezing leaked every replaced model; and without it a full collection (~160 ms) struck once
# in 900 page reruns after the first visit to each page, too rare to be worth that.
_newest_version: dict[tuple, tuple] = {}  # (loader name, its arguments but the version) -> the version last loaded
_newest_lock = threading.Lock()  # st.cache_resource loaders run in every session's script thread


def _forget_older_version(loader, args: tuple, version: tuple) -> None:
    """Drop loader's cached model for an older version of the same files, so it can be freed."""
    with _newest_lock:
        older = _newest_version.get((loader.__name__, args))
        _newest_version[(loader.__name__, args)] = version
    if older is not None and older != version:
        loader.clear(*args, older)


@st.cache_resource(show_spinner=False, max_entries=24)
def _onnx_model(task: str, path: str, provider: str, precision: str, threads: int | None, version: tuple):
    cls = OnnxTranslator if task == "translate" else OnnxSentimentClassifier
    return cls(path, provider=provider, precision=precision, threads=threads)


def load(loader, task: str, *args):
    """loader(task, the task's directory, *args, the files' version): a `st.cache_resource` function whose entry
    for an older version of the files is dropped once the new one loads (the Latency page's PyTorch model too)."""
    args, version = (task, str(model_dir(task)), *args), stamp(task)
    model = loader(*args, version)
    _forget_older_version(loader, args, version)
    return model


def onnx_model(task: str, provider: str = "auto", precision: str = "fp32", threads: int | None = None,
               quiet: bool = False):
    """The task's onnxruntime wrapper, or None after telling the user why not.

    A provider that was asked for but cannot run gives a warning with the reason and the CPU instead."""
    problem = model_problem(task)
    if problem:
        if not quiet:
            st.error(problem)
        return None
    try:
        with st.spinner(f"Loading the {TASK_NOUNS[task]} model ({precision}, {provider})…"):
            return load(_onnx_model, task, provider, precision, threads)
    except ProviderError as e:
        if not quiet:
            st.warning(f"CUDA was asked for, but it is not available on this machine: running on the CPU instead. "
                       f"{GPU_HINT}")
            cuda_details(str(e))
        return onnx_model(task, "cpu", precision, threads, quiet)
    except Exception as e:  # ModelLoadError names the file and the fixing command
        if not quiet:
            show_error(e, task)
        return None


def load_problem(task: str) -> str | None:
    """Why the task's exported model does not load (its files really opened, not just its config read), or None.

    Home uses it: a model whose config is fine but whose ONNX or tokenizer file is corrupt or missing is not
    healthy, and must not be listed as if it were."""
    problem = model_problem(task)
    if problem:
        return problem
    try:
        load(_onnx_model, task, "cpu", "fp32", None)
    except Exception as e:
        return f"The {TASK_NOUNS[task]} model does not load: {first_line(e)}"
    return None


def show_error(e: BaseException, task: str | None = None) -> None:
    """Any failure as a message a user can act on: never a traceback."""
    if isinstance(e, ProviderError):
        st.warning(f"Execution provider problem: {first_line(e)}")
    elif isinstance(e, ModelLoadError | CheckpointError):
        # The message names the file and its fix (restore it, or re-export); "train your own" would mislead here.
        st.error(f"The model cannot be loaded: {first_line(e)}.")
    elif isinstance(e, ValueError) and str(e).startswith("empty text"):
        st.info("Nothing to work on: type some text (or pick an example) first.")
    elif isinstance(e, ValueError):
        st.warning(first_line(e))
    else:
        st.error(f"Something went wrong ({type(e).__name__}): {first_line(e)}")


GPU_HINT = "To use an NVIDIA GPU: `pip install -r requirements-gpu.txt`."
NO_CUDA = f"Running on the CPU: CUDA is not available on this machine. {GPU_HINT}"


def cuda_details(reason: str, where=st) -> None:
    """The loader's own words (e.g. "libcublasLt.so.13: cannot open shared object file"), on demand."""
    with where.expander("Why CUDA is not available (details)"):
        st.info(reason)


def cuda_note(reason: str | None, where=st, box: str = "caption") -> None:
    """The one plain sentence every page shows when CUDA cannot run here, with the raw reason in an expander.
    reason: a session's provider_note or providers.cuda_unavailable_reason(); None says nothing."""
    if reason:
        getattr(where, box)(NO_CUDA)
        cuda_details(reason, where)


def provider_caption(model) -> None:
    st.caption(f"onnxruntime on **{model.provider}** · {model.precision}")
    cuda_note(model.provider_note)
