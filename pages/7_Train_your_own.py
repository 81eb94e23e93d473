"""Train your own: a small Transformer learns a toy task while you watch (loss, held-out exact match, attention maps
of a fixed probe with a slider over training time), then goes through the project's exporter (fp32 + int8, validated
against PyTorch) and runs through onnxruntime here, timed against PyTorch; two runs side by side.

The session object (playground.training.session.TrainingSession) runs each training and export in child processes,
one at a time per server, at the lowest CPU priority with one torch thread; Stop, any other click while a run works,
or a closed tab ends them. The widgets are playground.training.widgets'; the limits are runtime.toy's.
"""
import streamlit as st

from playground import models
from playground.training import processes, runs, session, widgets

models.page_setup("Train your own")
st.title("Train your own")
st.markdown("A small Transformer (`tx.Seq2SeqTransformer`) learns a toy task in seconds while you watch: its loss, "
            "how many held-out sequences it gets exactly right, and where its attention looks. Then the project's "
            "exporter turns it into ONNX (fp32 and int8, each checked against PyTorch) and it runs here through "
            "onnxruntime. Change one knob and train again to compare two runs side by side.")

training = session.TrainingSession.of(st.session_state)
training.finalize(st.session_state)
processes.SPARE.keep()  # a worker warm before the click, torch imported: Train's first step comes within a second

# ---------------------------------------------------------------- the task and the knobs
# This script run is the Train click's (its callback asked for it): it trains below, and every control, Train too,
# is disabled until it ends (a click on one would rerun the page and so end the run; Stop is the way to end it).
starting = session.training_requested(st.session_state)
task = st.radio("Task", list(widgets.TASK_LABELS), format_func=widgets.TASK_LABELS.get, key="train_task",
                horizontal=True, help=widgets.TASK_HELP, disabled=starting)
left, right = st.columns(2)
problem, data_path, file_vocabulary = widgets.pairs_upload(training, left, starting) if task == "file" \
    else (None, None, None)
config = widgets.knobs(task, left, right, starting)
parameters = runs.parameter_count(config, runs.vocabulary_size(config, file_vocabulary))
right.caption(f"{parameters:,} parameters · d_k = {config['d_model'] // config['n_heads']} · trains with "
              f"{processes.THREADS} torch thread(s) in a process of its own, at the lowest priority, one training at a "
              "time on this server")
problem = problem or runs.size_problem(parameters)
if problem:
    (st.info if task == "file" and data_path is None and "Upload" in problem else st.error)(problem)

# ---------------------------------------------------------------- training
# Streamlit drops a disabled button's click, so the run starts from the flag Train's callback set, not its value.
st.button("Train", key="train_go", type="primary", disabled=problem is not None or starting,
          on_click=session.request_training, args=(st.session_state,))
if starting and problem is None:
    training.train(training.new_run(config), data_path, config["max_seconds"])
    st.rerun()

if not training.records:
    st.info("Pick a task and press Train. The defaults learn copy and reverse in well under a minute.")
    st.stop()

# ---------------------------------------------------------------- one run: curves, predictions, attention
st.header("Your run")
names = [r.label for r in training.records]
# keyed by the newest run: a new run gets a new box, which starts on it (one key would keep showing the old pick)
record = training.records[names.index(st.selectbox("Run", names, index=len(names) - 1,
                                                   key=f"train_run_{training.records[-1].number}"))]
widgets.run_view(record)

# ---------------------------------------------------------------- export, onnxruntime, latency, downloads
st.header("Export to ONNX and run it through onnxruntime")
if not record.saved:
    st.info(record.no_model())
else:
    export_clicked = st.button("Export (fp32 + int8) and check", key="train_export",
                               disabled=record.served is not None)
    # One slot, drawn on every run, holds the export's queue, Stop and progress: the elements below keep their
    # places, so the export's run and the next leave no stale copies of them (a second Precision radio, a blank box).
    progress = st.empty()
    if export_clicked:
        training.export(record, progress)
    widgets.exported(record)

# ---------------------------------------------------------------- two runs side by side
if len(training.records) >= 2:
    st.header("Compare two runs")
    widgets.compare(training.records)
