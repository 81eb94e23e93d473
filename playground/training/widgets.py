"""The "Train your own" page's widgets: the upload, the knobs, one run's view (curves, held-out predictions,
attention over training time), the exported model's results (the onnxruntime check, Try it, downloads), and two runs
compared. The page script places them; the session object (playground.training.session) runs what they ask for."""
from __future__ import annotations

from typing import Any

import streamlit as st

from playground import models
from runtime import onnx_models, toy

from . import figures
from .files import held_out_first, model_zip, onnx_files
from .runs import RunRecord, percent
from .session import TrainingSession

TASK_LABELS = {"copy": "copy", "reverse": "reverse", "sort": "sort", "add": "add two numbers",
               "file": "your own pairs (TSV/CSV)"}
TASK_HELP = ("copy and reverse need to know where each symbol stands (the positional encoding); sort only which "
             "symbols there are; adding needs each column's two digits and the carry from the columns to the right.")
MAX_SECONDS = 120  # the page's time cap per run (the engine allows up to 300 s)


def pairs_upload(session: TrainingSession, column, locked: bool = False) -> tuple[str | None, str | None,
                                                                               int | None]:
    """The user's file: (why it cannot be trained on, or None; its saved path; its distinct tokens). `locked`: a
    run is starting (see knobs)."""
    upload = column.file_uploader("Your pairs: a TSV (source<TAB>target a line) or a CSV (text,label a line); tokens "
                                  f"are space-separated words. {toy.UPLOAD_LIMITS}.", type=["tsv", "csv", "txt"],
                                  key="train_upload", disabled=locked)
    if upload is None:
        return "Upload a file of pairs to train on it (or pick a synthetic task).", None, None
    checked = session.check_upload(upload.name, upload.getvalue())
    if not checked.verdict["ok"]:
        return f"{upload.name}: {checked.verdict['error']}", None, None
    rows, vocabulary, header = (checked.verdict[k] for k in ("rows", "vocabulary", "skipped_header"))
    column.caption(f"{upload.name}: {rows} pairs, {vocabulary} distinct tokens"
                   + (" (first line taken as a header)" if header else "")
                   + "; a tenth of the pairs is held out to score the model.")
    return None, checked.path, vocabulary


def knobs(task: str, left, right, locked: bool = False) -> dict[str, Any]:
    """The task's size, the caps, the model's shape and the recipe: tx.toy.engine.RunConfig's fields. `locked`: the
    run this script run starts: every knob is disabled while it trains, since a click on one would end it (the
    click reruns the page, which ends the run)."""
    length = left.slider("Sequence length (digits per number for adding)", 2, 20, 10 if task != "add" else 3,
                         key=f"train_length_{'add' if task == 'add' else 'seq'}", disabled=locked or task == "file")
    vocab = left.slider("Vocabulary (distinct symbols)", 2, 50, 10, key="train_vocab",
                        disabled=locked or task in ("add", "file"))
    max_seconds = left.slider("Time cap (s)", 5, MAX_SECONDS, 60, key="train_max_seconds", disabled=locked,
                              help="Training stops here at the latest; evaluations and snapshots count.")
    target = left.slider("Stop at held-out exact match", 0.5, 1.0, 0.99, 0.01, key="train_target", disabled=locked,
                         help="The share of held-out sequences the model must get exactly right (every symbol and the "
                              "end) to stop early.")
    c1, c2, c3 = right.columns(3)
    n_layers = c1.number_input("Encoder layers", 1, 4, 2, key="train_n_layers", disabled=locked)
    n_decoder_layers = c2.number_input("Decoder layers", 1, 4, 2, key="train_n_decoder_layers", disabled=locked)
    d_model = c3.selectbox("d_model", [16, 32, 64, 128, 256], index=2, key="train_d_model", disabled=locked)
    n_heads = c1.selectbox("Heads", [1, 2, 4, 8], index=2, key="train_n_heads", disabled=locked)
    d_ff = c2.selectbox("d_ff", [32, 64, 128, 256, 512, 1024], index=3, key="train_d_ff", disabled=locked)
    batch_size = c3.selectbox("Batch", [16, 32, 64, 128], index=2, key="train_batch", disabled=locked)
    # the switches one under another at the column's full width: a third of it would cut their labels
    # ("Positional enc…")
    positional = right.checkbox("Positional encoding", True, key="train_positional", disabled=locked,
                                help="Off: the encoder sees a bag of symbols, with no idea where each one stands.")
    scale_scores = right.checkbox("Scale scores by 1/√d_k", True, key="train_scale_scores", disabled=locked,
                                  help="Off: raw dot products go into the softmax, which saturates as d_k grows.")
    pre_norm = right.checkbox("Pre-LN (LayerNorm first)", True, key="train_pre_norm", disabled=locked,
                              help="On: LayerNorm before each sublayer. Off: after the residual sum (the paper's "
                              "post-LN, which learns these tasks in about twice the steps and less steadily).")
    c1, c2, c3 = right.columns(3)
    label_smoothing = c1.select_slider("Label smoothing", [0.0, 0.05, 0.1, 0.2], 0.0, key="train_label_smoothing",
                                       disabled=locked)
    warmup_steps = c2.select_slider("Warm-up steps", [0, 50, 100, 200, 400, 1000], 100, key="train_warmup",
                                    disabled=locked)
    lr = c3.select_slider("Peak learning rate", [5e-4, 1e-3, 2e-3, 3e-3, 5e-3], 2e-3, key="train_lr", disabled=locked,
                          format_func=lambda v: f"{v:g}")
    return {"task": task, "length": int(length), "vocab": int(vocab), "d_model": int(d_model),
            "n_heads": int(n_heads), "n_layers": int(n_layers), "n_decoder_layers": int(n_decoder_layers),
            "d_ff": int(d_ff), "pre_norm": bool(pre_norm), "positional": bool(positional),
            "scale_scores": bool(scale_scores), "label_smoothing": float(label_smoothing), "lr": float(lr),
            "warmup_steps": int(warmup_steps), "batch_size": int(batch_size), "max_seconds": float(max_seconds),
            "target_accuracy": float(target)}


def run_view(record: RunRecord) -> None:
    """One run: how it ended, its curves, its held-out predictions, and its attention over training time."""
    summary = record.summary()
    (st.warning if summary.startswith(("stopped", "failed")) else st.markdown)(f"**{record.label}** {summary}.")
    start, snapshots = record.last("start"), record.of("attention")
    if start:
        st.caption(f"{start['parameters']:,} parameters · {start['held_out']} held-out sequences, never trained on · "
                   f"probe: `{' '.join(start['probe']['source'][1:-1])}`")
    st.plotly_chart(figures.curves({record.label: record.events}), width="stretch", key="train_curves")
    evaluation = record.last("eval")
    if evaluation:
        st.subheader("Held-out predictions")
        st.dataframe([{"source": s["source"], "expected": s["target"], "model": s["output"],
                       "right": "✓" if s["right"] else "✗"} for s in evaluation["samples"]], hide_index=True,
                     width="stretch")
    if not (snapshots and start):
        return
    st.subheader("Attention on the probe, over training time")
    m1, m2, m3 = st.columns(3)
    kind = m1.radio("Map", list(figures.KINDS), format_func=figures.KINDS.get, key="train_map_kind")
    layers = len(snapshots[0][kind])
    layer = m2.selectbox("Layer", [*range(1, layers + 1), "average"], index=layers - 1, key="train_map_layer")
    head = m3.selectbox("Head", ["average", *range(1, len(snapshots[0][kind][0]) + 1)], key="train_map_head")
    steps = [s["step"] for s in snapshots]
    at_step = st.select_slider("Training step", steps, value=steps[-1], key=f"train_map_step_{record.number}")
    snapshot = snapshots[steps.index(at_step)]
    st.plotly_chart(figures.attention_map(snapshot, start["probe"], kind, layer, head,
                                          title=f"{figures.KINDS[kind]} at step {at_step} "
                                                f"({snapshot['seconds']:.1f} s)"),
                    width="stretch", key="train_map")
    st.caption("Copy forms a diagonal in the cross-attention, reverse an anti-diagonal; with the positional encoding "
               "off, neither can form (the encoder cannot tell positions apart).")


def exported(record: RunRecord) -> None:
    """What the export and the onnxruntime check found, the Try-it box (onnxruntime in the server) and downloads."""
    if record.exported:
        st.code("\n".join(line for line in record.exported["log"].splitlines() if line.startswith("exported")),
                language=None)
    if not record.served:
        return
    served = record.served
    st.dataframe([{"system": name, "held-out exact match": percent(s["exact_match"]),
                   "same output as PyTorch": percent(s["same_as_pytorch"]), "p50 ms": s["p50_ms"],
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
    t1, t2 = st.columns([3, 1])
    text = t1.text_input("Input (symbols separated by spaces; press Enter)", value=held_out_first(record.model_dir),
                         key="train_input")
    precision = t2.radio("Precision", ["fp32", "int8"], key="train_precision", horizontal=True)
    if text.strip():
        try:
            translator = onnx_models.OnnxTranslator(record.model_dir, provider="cpu", precision=precision, threads=1)
            out = translator.translate([text], *toy.DIRECTION, method="greedy")[0]
            st.markdown("onnxruntime's output:")
            st.code(out.text or "(empty output)", language=None)
            # the toy vocabulary's own check, not out.warning: runtime.coverage judges German and English text and
            # calls digits, a digit-trained model's whole vocabulary, "outside what the model was trained on"
            unseen = toy.unseen_warning(text, out.src_tokens)
            if unseen:
                st.caption(unseen)
        except Exception as e:  # symbols the model never saw still translate (as <unk>): this is anything else
            models.show_error(e)
    d1, d2 = st.columns(2)
    if record.zipped is None:  # made once: zipping the ONNX files on every rerun would cost each click
        record.zipped = model_zip(record.model_dir)
    d1.download_button("Model directory (.zip)", record.zipped,
                       file_name=f"toy-{record.config['task']}-run{record.number}.zip", mime="application/zip",
                       key="train_download_zip", on_click="ignore")
    for path in onnx_files(record.model_dir):
        d2.download_button(path.name, path.read_bytes(), file_name=path.name, mime="application/octet-stream",
                           key=f"train_download_{path.name}", on_click="ignore")


def compare(records: list[RunRecord]) -> None:
    """Two runs side by side: their curves in one chart, and their attention maps at the same share of training."""
    names, newest = [r.label for r in records], records[-1].number
    a_col, b_col = st.columns(2)  # keyed by the newest run: a new run starts the pair on the last two
    a_name = a_col.selectbox("Run A", names, index=len(names) - 2, key=f"train_compare_a_{newest}")
    b_name = b_col.selectbox("Run B", names, index=len(names) - 1, key=f"train_compare_b_{newest}")
    pair = [records[names.index(a_name)], records[names.index(b_name)]]
    st.plotly_chart(figures.curves({r.label: r.events for r in pair}), width="stretch", key="train_compare_curves")
    moment = st.slider("Moment of training (share of each run's steps)", 0.0, 1.0, 1.0, 0.05,
                       key="train_compare_moment")
    for side, column, r in zip("ab", st.columns(2), pair, strict=True):  # the maps below the curves and the slider
        shots, begin = r.of("attention"), r.last("start")
        if shots and begin:
            shot = shots[round(moment * (len(shots) - 1))]
            column.plotly_chart(figures.attention_map(shot, begin["probe"], "cross", "average", "average",
                                                      title=f"{r.label}<br>cross-attention, step {shot['step']}",
                                                      height=360),
                                width="stretch", key=f"train_compare_map_{side}")
        column.caption(r.summary())
