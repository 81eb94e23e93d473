"""Latency: PyTorch eager vs onnxruntime fp32 vs int8 (and CUDA when it loads), warm-up then N timed runs.

onnxruntime is the app's own runtime. The PyTorch column needs torch, which `pip install .` leaves out: torch is
imported inside `pytorch()` only, and where it is missing the page times onnxruntime alone and says how to add it.
"""
import contextlib
import os
import statistics

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from playground import cards, inputs, models
from runtime import providers, spec, timing

TRAIN_EXTRA = "pip install '.[train]'"
NOISE = "noise (p10–p90 vs PyTorch)"  # a speed-up whose two p10-p90 ranges overlap is within noise
RUNNING = "latency_running"  # {"task", "done", "total"} while a measurement runs: what a Stop leaves behind


def pytorch():
    """(tx.inference: the PyTorch wrappers and torch_threads, None) or (None, why the PyTorch column is left out)."""
    try:
        from tx import inference
    except ImportError as e:
        if (e.name or "").split(".")[0] == "torch":
            return None, f"PyTorch is not installed here: the PyTorch column needs the training extra: {TRAIN_EXTRA}"
        return None, f"PyTorch is left out: {models.first_line(e)}"
    return inference, None


def torch_thread_count() -> int:
    import torch  # only called once the PyTorch column ran, so torch is there

    return torch.get_num_threads()


@st.cache_resource(show_spinner=False, max_entries=4)
def pytorch_model(task: str, path: str, version: tuple):
    inference, _ = pytorch()
    return (inference.Translator if task == "translate" else inference.SentimentAnalyzer).from_dir(path)


models.page_setup("Latency")
st.title("Latency")
st.markdown("Each run calls every system once on the same input, in rotating order, so drifts in machine load "
            "hit all alike; p50/p90 are over the runs after warm-up.")

task = st.radio("Model", models.TASKS, key="latency_task", horizontal=True,
                format_func=lambda t: models.TASK_TITLES[t])
models.require_model(task)

left, right = st.columns(2)
source = left.radio("Input", ["my text", "standard set"], key="latency_input", horizontal=True,
                    help="standard set: the model's example sentences (samples.tsv), one per run in turn")
if task == "translate":
    direction = left.radio("Direction", models.directions(), format_func=models.direction_label,
                           key="latency_direction", horizontal=True)
    method = left.radio("Decoding", ["greedy", "beam"], key="latency_method", horizontal=True)
    left.caption("PyTorch decodes with its KV cache, like the ONNX decoder graph.")
    standard = inputs.examples("translate", direction[0], limit=50)
else:
    direction, method = None, None
    standard = inputs.examples("sentiment", "text", limit=50)
text = left.text_input("Text", value=standard[0], key=f"latency_text_{task}", disabled=source != "my text")
# Defaults that finish in seconds: beam search on the real translator costs ~0.5 s per round of all systems.
runs = right.slider("Timed runs (N)", 5, 200, 10, key="latency_runs")
warmup = right.slider("Warm-up runs", 0, 20, 2, key="latency_warmup")
cores = os.cpu_count() or 1
threads = right.number_input("Threads (onnxruntime intra-op and torch.set_num_threads)", 1, cores, min(2, cores),
                             key="latency_threads")
cuda_reason = providers.cuda_unavailable_reason()
if cuda_reason is None:
    right.caption("CUDA: loads here, measured as one more system.")
models.cuda_note(cuda_reason, right)
inference, no_pytorch = pytorch()
if no_pytorch:
    st.info(no_pytorch)

# A measurement that was interrupted (Stop, or any other click while it ran) left how far it got: say so once, and
# keep the results of the last complete one.
interrupted = st.session_state.pop(RUNNING, None)
if interrupted:
    st.session_state[f"latency_stopped_{interrupted['task']}"] = interrupted
if st.button("Run", key="latency_go", type="primary"):
    st.session_state.pop(f"latency_stopped_{task}", None)
    texts = [text.strip()] if source == "my text" else standard
    if not texts or not texts[0]:
        st.info("Type a text to time (or choose the standard set).")
    else:
        systems = {}
        if inference is not None:
            try:
                with st.spinner(f"Loading the PyTorch {models.TASK_NOUNS[task]} model…"):
                    systems["PyTorch eager"] = models.load(pytorch_model, task)
            except Exception as e:
                st.warning(f"PyTorch model not available, so it is left out: {models.first_line(e)}")
        for precision in spec.PRECISIONS:
            found = models.onnx_model(task, "cpu", precision, int(threads))
            if found is not None:
                systems[f"onnxruntime {precision}"] = found
        if cuda_reason is None:
            found = models.onnx_model(task, "cuda", "fp32", int(threads), quiet=True)
            if found is not None and found.provider == "CUDAExecutionProvider":
                systems["onnxruntime CUDA fp32"] = found

        truncated: set[int] = set()  # which inputs were longer than the model's limit
        outputs: dict[str, dict[int, object]] = {name: {} for name in systems}  # system -> input -> its output

        def call(name, system):
            def run(r: int) -> int:
                i = r % len(texts)
                if task == "translate":
                    out = system.translate([texts[i]], src_lang=direction[0], tgt_lang=direction[1],
                                           method=method, beam=4)[0]
                    produced, outputs[name][i] = len(out.token_ids), tuple(out.token_ids)
                else:
                    out = system.classify([texts[i]])[0]
                    produced, outputs[name][i] = len(out.tokens), out.label
                if out.truncated:
                    truncated.add(i)
                return produced
            return run

        # A Stop button and a bar: each update is a call into Streamlit, where a click on Stop (or a closed tab)
        # interrupts this script, so the measurement really stops instead of running on with nobody watching.
        st.button("Stop", key="latency_stop")
        bar = st.progress(0.0, text="warming up…")

        def progress(done: int, total: int) -> None:
            st.session_state[RUNNING] = {"task": task, "done": done, "total": total}  # read back after a Stop
            bar.progress(done / total, text=f"round {done + 1} of {total} ({len(systems)} systems per round)")

        try:
            if not systems:
                raise RuntimeError("no system could be loaded (see the messages above)")
            with_torch = "PyTorch eager" in systems
            # torch's thread count pinned like onnxruntime's while they are timed, and read back for the caption
            with inference.torch_threads(int(threads)) if with_torch else contextlib.nullcontext():
                measured = timing.interleaved({name: call(name, s) for name, s in systems.items()}, int(runs),
                                              int(warmup), progress)
                torch_threads = torch_thread_count() if with_torch else None
            bar.empty()
            reference = next(iter(systems))  # PyTorch eager where it runs, else onnxruntime fp32
            agreement = {name: [sum(outputs[reference].get(i) == out for i, out in seen.items()), len(seen)]
                         for name, seen in outputs.items()}
            st.session_state[f"latency_result_{task}"] = {"measured": measured, "threads": int(threads),
                                                          "torch_threads": torch_threads, "texts": len(texts),
                                                          "method": method, "truncated": sorted(truncated),
                                                          "reference": reference, "agreement": agreement}
        except Exception as e:
            models.show_error(e, task)
        # finished or failed: not interrupted. (An interruption is a BaseException raised by Streamlit at the next
        # st call, so no `finally` here: the record must survive it.)
        st.session_state.pop(RUNNING, None)

done = st.session_state.get(f"latency_result_{task}")
stopped = st.session_state.get(f"latency_stopped_{task}")
if stopped:
    st.warning(f"Stopped after {stopped['done']} of {stopped['total']} rounds: nothing of that measurement is kept. "
               + ("The results below are from the previous complete run." if done else "Click Run to measure again."))
if done:
    measured = done["measured"]
    base = statistics.median(measured["PyTorch eager"][0]) if "PyTorch eager" in measured else None
    reference = done.get("reference", next(iter(measured)))
    same_as = f"same output as {'PyTorch' if reference == 'PyTorch eager' else reference}"
    rows = []
    for name, (times, tokens) in measured.items():
        p50 = statistics.median(times)
        low, high = cards.spread(times)
        same, compared = done.get("agreement", {}).get(name, (0, 0))
        rows.append({"system": name, "p50 ms": round(p50 * 1e3, 2),
                     "p90 ms": round(float(np.percentile(times, 90)) * 1e3, 2),
                     "p10–p90 ms": f"{low * 1e3:.2f}–{high * 1e3:.2f}",
                     "tokens/s": round(tokens / sum(times), 1) if sum(times) else 0.0,
                     **({"speed-up vs PyTorch": round(base / p50, 2),
                         NOISE: "reference" if name == "PyTorch eager" else "within noise" if
                         cards.within_noise(times, measured["PyTorch eager"][0]) else "beyond noise"} if base else {}),
                     same_as: "reference" if name == reference else "not compared" if not compared else
                     f"same on {same} of {compared} input(s)" if same == compared else
                     f"differs on {compared - same} of {compared} input(s)"})
    frame = pd.DataFrame(rows)
    st.subheader("Results")
    st.caption("These timings share the server with other users of this app and whatever else runs on it: a busy "
               "moment slows every system of a round alike but widens the spread, so a speed-up counts only where "
               "the p10–p90 ranges stay apart. `python -m export.bench` on an idle machine gives steadier numbers.")
    if done.get("truncated"):
        st.warning(f"{len(done['truncated'])} input(s) exceeded the model's token limit and were truncated: the "
                   "times are for their beginning only.")
    torch_part = f"torch {done['torch_threads']} thread(s)" if done["torch_threads"] else "no PyTorch column"
    st.caption(f"{len(next(iter(measured.values()))[0])} timed runs after warm-up · onnxruntime "
               f"{done['threads']} intra-op thread(s) · {torch_part} · "
               f"{done['texts']} distinct input(s)" + (f" · {done['method']} decoding" if done["method"] else "")
               + f" · {same_as}: " + ("the same translation token ids" if task == "translate" else "the same label")
               + " for each timed input")
    st.dataframe(frame, hide_index=True, width="stretch")
    if base:
        columns = st.columns(max(1, len(rows) - 1))
        for column, row in zip(columns, [r for r in rows if r["system"] != "PyTorch eager"], strict=False):
            column.metric(f"{row['system']} speed-up", f"{row['speed-up vs PyTorch']:.2f}×")
            column.caption(f"{row[NOISE]} (p10–p90 ranges {'overlap' if row[NOISE] == 'within noise' else 'apart'})"
                           f" · outputs {row[same_as]}")
    fig = go.Figure()
    for name, (times, _) in measured.items():
        fig.add_trace(go.Box(y=[t * 1e3 for t in times], name=name, boxpoints="all", jitter=0.4, pointpos=0))
    fig.update_layout(title="Latency per call (ms)", yaxis_title="ms", height=420, showlegend=False,
                      margin={"l": 10, "r": 10, "t": 50, "b": 10})
    st.plotly_chart(fig, width="stretch", key="latency_chart")

st.subheader("Latest `export.bench` results")
bench = cards.bench_results(task)
if bench is None:
    st.info(f"No benchmark saved for this model yet: `python -m export.bench {models.model_dir(task)}` writes "
            f"`{models.model_dir(task)}/onnx/bench.json`.")
else:
    st.caption(f"{bench.get('model_dir')} · {bench.get('threads')} threads · {bench.get('repeats')} repeats · "
               f"CPU: {bench.get('versions', {}).get('cpu', '?')} · onnxruntime "
               f"{bench.get('versions', {}).get('onnxruntime', '?')}")
    st.dataframe(pd.DataFrame(bench["results"]), hide_index=True, width="stretch")
    for name, target in (bench.get("targets") or {}).items():
        mark = "met" if target.get("met") else "missed"
        st.markdown(f"- target **{name}**: ≥ {target.get('target')}× — reached {target.get('reached', 0):.2f}× "
                    f"({mark})")
    with st.expander("As text"):
        if isinstance(bench.get("table"), str):  # the markdown table export.bench printed, saved with its results
            st.code(bench["table"], language="markdown")
        else:
            st.info("This bench.json is older than the saved table: re-run "
                    f"`python -m export.bench {models.model_dir(task)}` to get it.")
            st.json(bench, expanded=False)
