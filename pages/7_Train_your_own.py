"""Train your own: a small Transformer learns a toy task while you watch (loss, held-out exact match, attention maps
of a fixed probe with a slider over training time), then goes through the project's exporter (fp32 + int8, validated
against PyTorch) and runs through onnxruntime here, timed against PyTorch; two runs side by side.

The training and the export run in child processes (playground.training): one at a time per server
(playground.training_slot), at the lowest CPU priority with one torch thread; Stop, any other click while a run works,
or a closed tab ends them (playground.training_live).
"""
import json
from pathlib import Path

import streamlit as st

from playground import models, training, training_figures, training_live, training_runs, training_slot
from runtime import onnx_models

TASK_LABELS = {"copy": "copy", "reverse": "reverse", "sort": "sort", "add": "add two numbers",
               "file": "your own pairs (TSV/CSV)"}
TASK_HELP = ("copy and reverse need to know where each symbol stands (the positional encoding); sort only which "
             "symbols there are; adding needs each column's two digits and the carry from the columns to the right.")
DIRECTION = ("in", "out")  # tx.toy.vocab.DIRECTION: the one direction of every toy model
MAX_SECONDS = 120  # the page's time cap per run (the engine allows up to 300 s)


def finalize(records: list[training_runs.RunRecord]) -> None:
    """A run interrupted while this session watched it (Stop, another click): read what its worker wrote."""
    for record in records:
        if not record.finished:
            record.read_events()
            record.finished = True


models.page_setup("Train your own")
st.title("Train your own")
st.markdown("A small Transformer (`tx.Seq2SeqTransformer`) learns a toy task in seconds while you watch: its loss, "
            "how many held-out sequences it gets exactly right, and where its attention looks. Then the project's "
            "exporter turns it into ONNX (fp32 and int8, each checked against PyTorch) and it runs here through "
            "onnxruntime. Change one knob and train again to compare two runs side by side.")

files = training.session_files()
records: list[training_runs.RunRecord] = st.session_state.setdefault("train_runs", [])
finalize(records)

# ---------------------------------------------------------------- the task and the knobs
task = st.radio("Task", list(TASK_LABELS), format_func=TASK_LABELS.get, key="train_task", horizontal=True,
                help=TASK_HELP)
left, right = st.columns(2)
problem, data_path, file_vocabulary = None, None, None
if task == "file":
    upload = left.file_uploader("Your pairs: a TSV (source<TAB>target a line) or a CSV (text,label a line); tokens "
                                f"are space-separated words. {training.UPLOAD_LIMITS}.", type=["tsv", "csv", "txt"],
                                key="train_upload")
    if upload is None:
        problem = "Upload a file of pairs to train on it (or pick a synthetic task)."
    else:
        raw = upload.getvalue() if upload.size <= training.UPLOAD_MAX_BYTES else b""  # too big: not even saved
        checked = st.session_state.get("train_upload_checked")
        if not checked or checked["key"] != (upload.name, len(raw), hash(raw)):
            if upload.size > training.UPLOAD_MAX_BYTES:
                checked = {"key": (upload.name, len(raw), hash(raw)), "path": None,
                           "verdict": {"ok": False, "error": f"the file has {upload.size:,} bytes; at most "
                                                             f"{training.UPLOAD_MAX_BYTES:,} are accepted"}}
            else:
                path = training.save_upload(files, upload.name, raw)
                checked = {"key": (upload.name, len(raw), hash(raw)), "path": str(path),
                           "verdict": training.check_upload(path)}
            st.session_state["train_upload_checked"] = checked
        verdict = checked["verdict"]
        if not verdict["ok"]:
            problem = f"{upload.name}: {verdict['error']}"
        else:
            data_path, file_vocabulary = checked["path"], verdict["vocabulary"]
            left.caption(f"{upload.name}: {verdict['rows']} pairs, {verdict['vocabulary']} distinct tokens"
                         + (" (first line taken as a header)" if verdict["skipped_header"] else "")
                         + "; a tenth of the pairs is held out to score the model.")
length = left.slider("Sequence length (digits per number for adding)", 2, 20, 10 if task != "add" else 3,
                     key=f"train_length_{'add' if task == 'add' else 'seq'}", disabled=task == "file")
vocab = left.slider("Vocabulary (distinct symbols)", 2, 50, 10, key="train_vocab", disabled=task in ("add", "file"))
max_seconds = left.slider("Time cap (s)", 5, MAX_SECONDS, 60, key="train_max_seconds",
                          help="Training stops here at the latest; evaluations and snapshots count.")
target = left.slider("Stop at held-out exact match", 0.5, 1.0, 0.99, 0.01, key="train_target",
                     help="The share of held-out sequences the model must get exactly right (every symbol and the "
                          "end) to stop early.")
c1, c2, c3 = right.columns(3)
n_layers = c1.number_input("Encoder layers", 1, 4, 2, key="train_n_layers")
n_decoder_layers = c2.number_input("Decoder layers", 1, 4, 2, key="train_n_decoder_layers")
d_model = c3.selectbox("d_model", [16, 32, 64, 128, 256], index=2, key="train_d_model")
n_heads = c1.selectbox("Heads", [1, 2, 4, 8], index=2, key="train_n_heads")
d_ff = c2.selectbox("d_ff", [32, 64, 128, 256, 512, 1024], index=3, key="train_d_ff")
batch_size = c3.selectbox("Batch", [16, 32, 64, 128], index=2, key="train_batch")
positional = c1.checkbox("Positional encoding", True, key="train_positional",
                         help="Off: the encoder sees a bag of symbols, with no idea where each one stands.")
scale_scores = c2.checkbox("Scale scores by 1/√d_k", True, key="train_scale_scores",
                           help="Off: raw dot products go into the softmax, which saturates as d_k grows.")
pre_norm = c3.checkbox("Pre-LN", True, key="train_pre_norm", help="LayerNorm before each sublayer instead of after "
                       "the residual sum (the paper's post-LN, which learns these tasks in about twice the steps and "
                       "less steadily).")
label_smoothing = c1.select_slider("Label smoothing", [0.0, 0.05, 0.1, 0.2], 0.0, key="train_label_smoothing")
warmup_steps = c2.select_slider("Warm-up steps", [0, 50, 100, 200, 400, 1000], 100, key="train_warmup")
lr = c3.select_slider("Peak learning rate", [5e-4, 1e-3, 2e-3, 3e-3, 5e-3], 2e-3, key="train_lr",
                      format_func=lambda v: f"{v:g}")
config = {"task": task, "length": int(length), "vocab": int(vocab), "d_model": int(d_model), "n_heads": int(n_heads),
          "n_layers": int(n_layers), "n_decoder_layers": int(n_decoder_layers), "d_ff": int(d_ff),
          "pre_norm": bool(pre_norm), "positional": bool(positional), "scale_scores": bool(scale_scores),
          "label_smoothing": float(label_smoothing), "lr": float(lr), "warmup_steps": int(warmup_steps),
          "batch_size": int(batch_size), "max_seconds": float(max_seconds), "target_accuracy": float(target)}
parameters = training_runs.parameter_count(config, training_runs.vocabulary_size(config, file_vocabulary))
right.caption(f"{parameters:,} parameters · d_k = {d_model // n_heads} · trains with {training.THREADS} torch "
              "thread(s) in a process of its own, at the lowest priority, one training at a time on this server")
if problem is None and parameters > training_runs.MAX_PARAMETERS:
    problem = (f"This model has {parameters:,} parameters; at most {training_runs.MAX_PARAMETERS:,} train on this "
               "server. Make d_model, d_ff or the layers smaller.")
if problem:
    (st.info if task == "file" and data_path is None and "Upload" in problem else st.error)(problem)

# ---------------------------------------------------------------- training
if st.button("Train", key="train_go", type="primary", disabled=problem is not None):
    number = (records[-1].number if records else 0) + 1
    for old in records[:-(training.KEPT_RUNS - 1)] if len(records) >= training.KEPT_RUNS else []:
        files.forget(old.run_dir)  # the oldest runs' files go: a session keeps KEPT_RUNS
    del records[:max(0, len(records) - (training.KEPT_RUNS - 1))]
    record = training_runs.RunRecord(number, config, str(files.new_run_dir()),
                                     training_runs.run_label(number, config))
    records.append(record)
    process = None
    try:
        training_live.wait_for_the_slot(files.id, max_seconds, "train")
        process = training.start_training(Path(record.run_dir), config, Path(data_path) if data_path else None)
        training_slot.slot().attach(files.id, process)
        training_live.watch(record, process, max_seconds)
    finally:  # also on Stop, another click or a closed tab (Streamlit raises at its next call): never run on
        training.stop(process)
        training_slot.slot().leave(files.id)
        record.read_events()
        record.finished = True
    st.rerun()

if not records:
    st.info("Pick a task and press Train. The defaults learn copy and reverse in well under a minute.")
    st.stop()

# ---------------------------------------------------------------- one run: curves, predictions, attention
st.header("Your run")
names = [r.label for r in records]
chosen = st.selectbox("Run", names, index=len(names) - 1, key="train_run")
record = records[names.index(chosen)]
summary = record.summary()
(st.warning if summary.startswith(("stopped", "failed")) else st.markdown)(f"**{record.label}** {summary}.")
start, snapshots = record.last("start"), record.of("attention")
if start:
    st.caption(f"{start['parameters']:,} parameters · {start['held_out']} held-out sequences, never trained on · "
               f"probe: `{' '.join(start['probe']['source'][1:-1])}`")
st.plotly_chart(training_figures.curves({record.label: record.events}), width="stretch", key="train_curves")
evaluation = record.last("eval")
if evaluation:
    st.subheader("Held-out predictions")
    st.dataframe([{"source": s["source"], "expected": s["target"], "model": s["output"],
                   "right": "✓" if s["right"] else "✗"} for s in evaluation["samples"]], hide_index=True,
                 width="stretch")
if snapshots and start:
    st.subheader("Attention on the probe, over training time")
    m1, m2, m3 = st.columns(3)
    kind = m1.radio("Map", list(training_figures.KINDS), format_func=training_figures.KINDS.get, key="train_map_kind")
    layers = len(snapshots[0][kind])
    layer = m2.selectbox("Layer", [*range(1, layers + 1), "average"], index=layers - 1, key="train_map_layer")
    head = m3.selectbox("Head", ["average", *range(1, len(snapshots[0][kind][0]) + 1)], key="train_map_head")
    steps = [s["step"] for s in snapshots]
    at_step = st.select_slider("Training step", steps, value=steps[-1], key=f"train_map_step_{record.number}")
    snapshot = snapshots[steps.index(at_step)]
    st.plotly_chart(training_figures.attention_map(snapshot, start["probe"], kind, layer, head,
                                                   title=f"{training_figures.KINDS[kind]} at step {at_step} "
                                                         f"({snapshot['seconds']:.1f} s)"),
                    width="stretch", key="train_map")
    st.caption("Copy forms a diagonal in the cross-attention, reverse an anti-diagonal; with the positional encoding "
               "off, neither can form (the encoder cannot tell positions apart).")

# ---------------------------------------------------------------- export, onnxruntime, latency, downloads
st.header("Export to ONNX and run it through onnxruntime")
if not record.saved:
    st.info("This run saved no model (it failed or was stopped before its first step): train again.")
else:
    export_clicked = st.button("Export (fp32 + int8) and check", key="train_export",
                               disabled=record.served is not None)
    # One slot, drawn on every run, holds the export's Stop and progress: the elements below keep their places, so
    # the export's run and the next leave no stale copies of them (a second Precision radio, a blank input box).
    progress = st.empty()
    if export_clicked:
        try:
            with progress.container():
                training_live.wait_for_the_slot(files.id, 120, "export")
                st.button("Stop", key="train_export_stop")  # any click ends the export: run_child's finally kills it
                status = st.empty()
            code, output = training.run_child(training.export_command(record.model_dir), training.ROOT,
                                              lambda s: status.info(f"Exporting with `python -m export` ({s:.0f} s)…"),
                                              timeout_s=300)
            if code != 0:
                progress.error(f"The export failed validation:\n\n```\n{output[-1500:]}\n```")
            else:
                record.exported = {"log": output}
                code, output = training.run_child(training.serve_command(record.model_dir), training.ROOT,
                                                  lambda s: status.info(f"Translating the held-out set with PyTorch "
                                                                        f"and onnxruntime, then timing ({s:.0f} s)…"),
                                                  timeout_s=300)
                if code != 0:
                    progress.error(f"The onnxruntime check failed:\n\n```\n{output[-1500:]}\n```")
                else:
                    record.served = json.loads(output.strip().splitlines()[-1])
                    progress.empty()
        finally:
            training_slot.slot().leave(files.id)
    if record.exported:
        st.code("\n".join(line for line in record.exported["log"].splitlines() if line.startswith("exported")),
                language=None)
    if record.served:
        served = record.served
        st.dataframe([{"system": name, "held-out exact match": f"{s['exact_match']:.1%}",
                       "same output as PyTorch": f"{s['same_as_pytorch']:.1%}", "p50 ms": s["p50_ms"],
                       "p90 ms": s["p90_ms"]} for name, s in served["systems"].items()],
                     hide_index=True, width="stretch", key="train_served")
        base = served["systems"]["PyTorch"]["p50_ms"]
        st.caption(f"{served['held_out']} held-out sequences, greedy decoding · latency: one held-out sequence per "
                   f"call, {served['runs']} timed runs each after warm-up, interleaved, {served['threads']} thread(s)"
                   f" · onnxruntime fp32 {base / served['systems']['onnxruntime fp32']['p50_ms']:.1f}× PyTorch's "
                   "speed. The machine is shared: other users' work widens the spread.")
        wrong = served["systems"]["onnxruntime fp32"]["first_wrong"]
        if wrong:
            st.caption(f"A held-out sequence it gets wrong: `{wrong['source']}` should give `{wrong['target']}`, "
                       f"onnxruntime fp32 gives `{wrong['output'] or '(nothing)'}`.")
        st.subheader("Try it")
        held = training.held_out_first(record.model_dir)
        t1, t2 = st.columns([3, 1])
        text = t1.text_input("Input (symbols separated by spaces; press Enter)", value=held, key="train_input")
        precision = t2.radio("Precision", ["fp32", "int8"], key="train_precision", horizontal=True)
        if text.strip():
            try:
                translator = onnx_models.OnnxTranslator(record.model_dir, provider="cpu", precision=precision,
                                                        threads=1)
                out = translator.translate([text], *DIRECTION, method="greedy")[0]
                st.markdown("onnxruntime's output:")
                st.code(out.text or "(empty output)", language=None)
                if out.warning:
                    st.caption(out.warning)
            except Exception as e:  # symbols the model never saw still translate (as <unk>): this is anything else
                models.show_error(e)
        d1, d2 = st.columns(2)
        if record.zipped is None:  # made once: zipping the ONNX files on every rerun would cost each click
            record.zipped = training.model_zip(record.model_dir)
        d1.download_button("Model directory (.zip)", record.zipped,
                           file_name=f"toy-{record.config['task']}-run{record.number}.zip", mime="application/zip",
                           key="train_download_zip")
        for path in training.onnx_files(record.model_dir):
            d2.download_button(path.name, path.read_bytes(), file_name=path.name, mime="application/octet-stream",
                               key=f"train_download_{path.name}")

# ---------------------------------------------------------------- two runs side by side
if len(records) >= 2:
    st.header("Compare two runs")
    a_col, b_col = st.columns(2)
    a_name = a_col.selectbox("Run A", names, index=len(names) - 2, key="train_compare_a")
    b_name = b_col.selectbox("Run B", names, index=len(names) - 1, key="train_compare_b")
    pair = [records[names.index(a_name)], records[names.index(b_name)]]
    st.plotly_chart(training_figures.curves({r.label: r.events for r in pair}), width="stretch",
                    key="train_compare_curves")
    moment = st.slider("Moment of training (share of each run's steps)", 0.0, 1.0, 1.0, 0.05,
                       key="train_compare_moment")
    for side, column, r in zip("ab", st.columns(2), pair, strict=True):  # the maps below the curves and the slider
        shots, begin = r.of("attention"), r.last("start")
        if shots and begin:
            shot = shots[round(moment * (len(shots) - 1))]
            column.plotly_chart(training_figures.attention_map(shot, begin["probe"], "cross", "average", "average",
                                                               title=f"{r.label}<br>cross-attention, step "
                                                                     f"{shot['step']}", height=360),
                                width="stretch", key=f"train_compare_map_{side}")
        column.caption(r.summary())
