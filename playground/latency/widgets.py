"""The Latency page's parts that call Streamlit: loading the systems, the measurement with its Stop button and
progress bar, the results, and the saved `bench runtimes` results."""
from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from runtime import spec

from .. import model_paths, models
from ..files import read_json
from ..serving import widgets as serving
from . import pytorch, report
from .measure import Workload, measure

RUNNING = "latency_running"  # {"task", "done", "total", "so_far"} while a measurement runs: what a Stop leaves


def result_key(task: str) -> str:
    return f"latency_result_{task}"


def stopped_key(task: str) -> str:
    return f"latency_stopped_{task}"


def note_an_interruption() -> None:
    """A measurement that was interrupted (Stop, or any other click while it ran) left how far it got: the rounds
    it timed become its task's result, marked partial; stopped during its warm-up, it timed nothing, so the page
    says so once and the results of the last run stay."""
    interrupted = st.session_state.pop(RUNNING, None)
    if interrupted and interrupted.get("so_far") is not None:
        st.session_state[result_key(interrupted["task"])] = interrupted["so_far"]
    elif interrupted:
        st.session_state[stopped_key(interrupted["task"])] = interrupted


def load_systems(task: str, threads: int, with_pytorch: bool, cuda_reason: str | None) -> dict[str, Any]:
    """name -> model for every system that loads here, PyTorch first (the reference) where it runs."""
    systems = {}
    if with_pytorch:
        try:
            with st.spinner(f"Loading the PyTorch {models.TASK_NOUNS[task]} model…"):
                systems[report.PYTORCH] = pytorch.model(task)
        except Exception as e:
            st.warning(f"PyTorch model not available, so it is left out: {model_paths.first_line(e)}")
    for precision in spec.PRECISIONS:
        found = models.onnx_model(task, "cpu", precision, threads)
        if found is not None:
            systems[f"onnxruntime {precision}"] = found
    if cuda_reason is None:
        found = models.onnx_model(task, "cuda", "fp32", threads, quiet=True)
        if found is not None and found.provider == "CUDAExecutionProvider":
            systems["onnxruntime CUDA fp32"] = found
    systems.update(serving.latency_systems(task))  # "served (HTTP) fp32" when TX_SERVE_URL is set
    return systems


def run(work: Workload, runs: int, warmup: int, threads: int, with_pytorch: bool, cuda_reason: str | None) -> None:
    """Load, time and keep the result for the task's page (or say why not)."""
    st.session_state.pop(stopped_key(work.task), None)
    if not work.texts or not work.texts[0]:
        st.info("Type a text to time (or choose the standard set).")
        return
    systems = load_systems(work.task, threads, with_pytorch, cuda_reason)
    # A Stop button and a bar: each update is a call into Streamlit, where a click on Stop (or a closed tab)
    # interrupts this script, so the measurement really stops instead of running on with nobody watching.
    # Both in one slot that is emptied when the measurement ends: a Stop left on the page after its run finished
    # was still clickable and did nothing (issue 44.7).
    live = st.empty()
    with live.container():
        st.button("Stop", key="latency_stop")
        bar = st.progress(0.0, text="warming up…")

    def progress(done: int, total: int, so_far: report.LatencyResult | None) -> None:
        # read back after a Stop: how far it got, and the rounds timed so far
        st.session_state[RUNNING] = {"task": work.task, "done": done, "total": total, "so_far": so_far}
        bar.progress(done / total, text=f"round {done + 1} of {total} ({len(systems)} systems per round)")

    try:
        result = measure(work, systems, runs, warmup, threads, progress, pytorch)
        live.empty()
        st.session_state[result_key(work.task)] = result
    except Exception as e:
        live.empty()
        models.show_error(e, work.task)
    # finished or failed: not interrupted. (An interruption is a BaseException raised by Streamlit at the next
    # st call, so no `finally` here: the record must survive it.)
    st.session_state.pop(RUNNING, None)


def show_results(task: str) -> None:
    """The task's last measurement, complete or partial (said so), and a note when a later one was stopped before
    it timed anything."""
    done: report.LatencyResult | None = st.session_state.get(result_key(task))
    stopped = st.session_state.get(stopped_key(task))
    if stopped:
        st.warning(report.stopped_note(stopped, previous_kept=done is not None))
    if not done:
        return
    rows = report.result_rows(done)
    st.subheader("Results" + (" (partial: stopped)" if done.stopped else ""))
    if done.stopped:
        st.warning(report.partial_note(done))
    st.caption("These timings share the server with other users of this app and whatever else runs on it: a busy "
               "moment slows every system of a round alike but widens the spread, so a speed-up counts only where "
               "the p10–p90 ranges stay apart. `python -m bench runtimes` on an idle machine gives steadier numbers.")
    if report.truncated_note(done):
        st.warning(report.truncated_note(done))
    st.caption(report.run_caption(done, task))
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
    figures = report.speed_ups(rows, done)
    if figures:
        for column, (label, value, note) in zip(st.columns(len(figures)), figures, strict=True):
            column.metric(label, value)
            column.caption(note)
    st.plotly_chart(report.box_figure(done), width="stretch", key="latency_chart")


def show_saved_bench(task: str) -> None:
    """The latest `python -m bench runtimes` output for the task (MODEL_DIR/onnx/bench.json), or how to make it."""
    d = model_paths.model_dir(task)
    bench = report.saved_bench(read_json(d / spec.ONNX_DIR / "bench.json"), task)
    if bench is None:
        st.info(f"No benchmark saved for this model yet: `python -m bench runtimes {d}` writes `{d}/onnx/bench.json`.")
        return
    st.caption(report.bench_caption(bench))
    st.dataframe(pd.DataFrame(bench["results"]), hide_index=True, width="stretch")
    for line in report.target_lines(bench):
        st.markdown(line)
    with st.expander("As text"):
        table = report.bench_table_text(bench)
        if table is not None:
            st.code(table, language="markdown")
        else:
            st.info(f"This bench.json is older than the saved table: re-run `python -m bench runtimes {d}` to get it.")
            st.json(bench, expanded=False)
