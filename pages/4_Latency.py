"""Latency: PyTorch eager vs onnxruntime fp32 vs int8 (and CUDA when it loads), warm-up then N timed runs.

onnxruntime is the app's own runtime. The PyTorch column needs torch, which `pip install .` leaves out
(playground/latency/pytorch.py imports it only where it is installed; elsewhere the page says how to add it).
"""
import os

import streamlit as st

from playground import inputs, models
from playground.latency import measure, pytorch
from playground.latency import widgets as latency
from runtime import providers

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
no_pytorch = pytorch.unavailable()
if no_pytorch:
    st.info(no_pytorch)

latency.note_an_interruption()
if st.button("Run", key="latency_go", type="primary"):
    work = measure.Workload(task, [text.strip()] if source == "my text" else standard, direction, method)
    latency.run(work, int(runs), int(warmup), int(threads), no_pytorch is None, cuda_reason)
latency.show_results(task)

st.subheader("Latest `bench runtimes` results")
latency.show_saved_bench(task)
