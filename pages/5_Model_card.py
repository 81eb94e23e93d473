"""Model card: data and licence, split sizes, training curves, test metrics, the export report, limitations."""
import re

import numpy as np
import pandas as pd
import streamlit as st

from playground import cards, figures, files, models
from runtime import text

models.page_setup("Model card")
st.title("Model card")

task = st.radio("Model", models.TASKS, key="card_model", horizontal=True, format_func=lambda t: models.TASK_TITLES[t])
d = models.model_dir(task)
if not models.has_model(task):
    st.error(models.model_problem(task))
    st.stop()

st.markdown(cards.card_line(task))
stored = models.model_meta(task)
sections = cards.readme_sections(task)
metrics, metrics_problem = cards.model_metrics(task)  # metrics.json through its one schema (runtime/metrics_file.py)


def architecture(config: dict) -> list[str]:
    """The config in words (config.json's keys are the code's names)."""
    parts = []
    if "vocab_size" in config:
        parts.append(f"vocabulary of {config['vocab_size']:,} subword tokens")
    if "d_model" in config:
        parts.append(f"model width {config['d_model']}")
    if "n_heads" in config:
        parts.append(f"{config['n_heads']} attention heads")
    if "n_layers" in config:
        decoder = config.get("n_decoder_layers")
        parts.append(f"{config['n_layers']} encoder layers" + (f" + {decoder} decoder layers" if decoder else ""))
    if "d_ff" in config:
        parts.append(f"feed-forward width {config['d_ff']:,}")
    if "max_len" in config:
        parts.append(f"{config['max_len']} positions")
    if "pre_norm" in config:
        parts.append("layer norm before each sub-layer (pre-LN)" if config["pre_norm"] else
                     "layer norm after each sub-layer (post-LN, as in the paper)")
    if config.get("pooling"):
        parts.append(f"{config['pooling']} pooling over the tokens")
    return parts


def positions_note(positions: int, meta: dict) -> str:
    """Why the positional table is longer than (or as long as) the input the model reads."""
    if task == "translate":
        cut = min(int(meta.get("max_src_len", text.DEFAULT_MAX_SRC_LEN)), positions)
        return (f"The positional table has **{positions} positions**: no sequence inside the model can be longer. "
                f"The text to translate is cut at **{cut} tokens** (the target-language tag and the end mark "
                f"included), the length the model was trained with"
                + (f"; the translation it writes may run on up to the {positions} positions." if cut < positions
                   else "."))
    cut = min(int(meta.get("max_len", text.DEFAULT_MAX_SRC_LEN)), positions)
    if cut < positions:
        return (f"The positional table has **{positions} positions**, but a review is cut at **{cut} tokens**, the "
                f"length the model was trained with: the positions after {cut} are never used.")
    return f"The positional table has **{positions} positions**, and a review is cut at **{cut} tokens** to fit it."


def metric_name(column: str, values: pd.Series) -> str:
    """A metrics.csv score column as its metric's name: valid_bleu -> BLEU, valid_accuracy -> accuracy %."""
    for pattern, name in ((r"bleu", "BLEU"), (r"chrf", "chrF"), (r"f1", "macro-F1"), (r"acc", "accuracy")):
        if re.search(pattern, column, re.IGNORECASE):
            if name in ("macro-F1", "accuracy"):  # a share (0-1) or percent, as the file has it
                return f"{name} %" if pd.to_numeric(values, errors="coerce").max() > 1 else name
            return name
    return column.replace("_", " ")


def parity_note(graphs: list[dict]) -> str:
    """The tolerance each precision's files were held to, from export_report.json."""
    tolerances = {g.get("precision"): g.get("atol") for g in graphs}
    cases = max((len(g.get("cases") or []) for g in graphs), default=0)
    sentences = [f"Each file is run on random inputs{f' of {cases} shapes' if cases else ''} and compared with "
                 "PyTorch output by output (`max |onnx - torch|`)."]
    sentences += [f"The {p} files must match PyTorch within an absolute tolerance of {atol:g} on every output."
                  for p, atol in tolerances.items() if atol is not None]
    loose = [p for p, atol in tolerances.items() if atol is None]
    if loose:
        sentences.append(f"For the {' and '.join(loose)} files the differences are reported, not enforced: "
                         "quantisation changes the numbers by design, so they are judged by their agreement on "
                         "held-out text below.")
    return " ".join(sentences)


SYSTEMS = {"torch": "PyTorch (reference)", "fp32": "onnxruntime fp32", "int8": "onnxruntime int8"}
BASELINES = {"tfidf_lr": "TF-IDF + logistic regression", "nbsvm": "NB-SVM"}
SCALED = {"accuracy": "accuracy %", "agreement": "same output as PyTorch %",
          "accuracy_delta": "accuracy change (points)"}
LABELS = {"bleu": "BLEU", "bleu_delta": "BLEU change", "seconds": "seconds", "disagreements": "outputs that differ",
          "max_prob_diff": "largest probability difference"}


def quality_rows(systems) -> tuple[list[dict], list[str]]:
    """export_report.json's text-level agreement as table rows with readable columns, and the first difference
    found as a sentence."""
    rows, notes = [], []
    for system, result in (systems or {}).items() if isinstance(systems, dict) else ():
        row = {"system": SYSTEMS.get(system, system)}
        for key, value in result.items():
            if key == "first_disagreement":
                if isinstance(value, dict):
                    direction = value.get("direction", "")
                    notes.append(f"First difference ({SYSTEMS.get(system, system)}"
                                 + (f", {direction_words(direction)}" if direction else "")
                                 + f"): “{value.get('source', '')}” → PyTorch “{value.get('torch', '')}”, "
                                 f"onnxruntime “{value.get('onnx', '')}”.")
            elif isinstance(value, dict):
                for part, number in value.items():
                    row[f"{LABELS.get(key, key.replace('_', ' '))} {direction_words(part)}"] = number
            elif key in SCALED and isinstance(value, int | float):
                row[SCALED[key]] = round(value * 100, 2)
            else:
                row[LABELS.get(key, key.replace("_", " "))] = value
        rows.append(row)
    return rows, notes


def direction_words(direction: str) -> str:
    return models.direction_label(tuple(direction.split("-", 1))) if "-" in direction else direction


def readme_parts(pattern: str) -> list[tuple[str, str]]:
    return [(h, body) for h, body in sections if h and re.search(pattern, h, re.IGNORECASE)]


def show_parts(parts: list[tuple[str, str]]) -> None:
    for heading, body in parts:
        st.markdown(f"**{heading}**")
        st.markdown(body or "_(empty)_")


st.header("Data and licence")
data_parts = readme_parts(r"data|licen[cs]e|split|provenance")
if data_parts:
    show_parts(data_parts)
else:
    st.markdown(f"Data: {cards.data_source(task) or 'not recorded'}")
if metrics:
    st.markdown("**Split sizes**")
    st.dataframe(cards.filled(pd.DataFrame(metrics.data.split_rows())), hide_index=True)
    st.markdown(f"**Licence:** {metrics.data.licence}")

st.header("Architecture")
config = stored["config"]
params = cards.parameter_count(task)
st.markdown(" · ".join(architecture(config)) + (f" · **{params:,} parameters**" if params else ""))
if config.get("max_len"):
    st.markdown(positions_note(config["max_len"], stored["meta"]))

st.header("Training curves")
try:
    curve = pd.read_csv(d / "metrics.csv")
except (OSError, ValueError):
    curve = None
if curve is None or curve.empty:
    st.info(f"No training curve (`{d}/metrics.csv`): `python -m tx train {task}` writes one per evaluation.")
else:
    x = next((c for c in ("step", "steps", "epoch") if c in curve.columns), curve.columns[0])
    numeric = [c for c in curve.columns if c != x and pd.to_numeric(curve[c], errors="coerce").notna().any()]
    losses = [c for c in numeric if "loss" in c.lower()]
    scores = [c for c in numeric if re.search(r"bleu|chrf|acc|f1", c, re.IGNORECASE)]
    left, right = st.columns(2)
    if losses:
        fig = figures.curves(curve, losses, "Loss (cross-entropy, lower is better)", x)
        fig.update_layout(yaxis_title="loss")
        left.plotly_chart(fig, width="stretch", key=f"card_{task}_loss")
    if scores:
        names = " and ".join(dict.fromkeys(metric_name(c, curve[c]) for c in scores))
        fig = figures.curves(curve, scores, f"Validation {names} (on the valid split, higher is better)", x)
        fig.update_layout(yaxis_title=names)
        right.plotly_chart(fig, width="stretch", key=f"card_{task}_score")
    with st.expander(f"metrics.csv ({len(curve)} rows)"):
        st.dataframe(curve, hide_index=True, width="stretch")

st.header("Test metrics")
if metrics_problem:
    st.warning(f"metrics.json does not fit its schema, so no test metrics are shown: {metrics_problem}")
elif not metrics:
    st.info(f"No `{d}/metrics.json` yet: it is written when the model is evaluated and shipped "
            f"(`python -m tx evaluate {task}`, then `python -m tx ship {task} {d}`).")
elif task == "translate":
    test = metrics.test
    st.dataframe(pd.DataFrame([{"direction": name, "BLEU": s.bleu, "chrF": s.chrf,
                                "sentences": test.sentences} for name, s in test.directions.items()]),
                 hide_index=True, width="stretch")
    signature = next(iter(test.directions.values())).extra.get("bleu_signature")
    if signature:
        st.caption(f"sacrebleu signature: `{signature}`")
else:
    test = metrics.test
    st.dataframe(pd.DataFrame([{"accuracy %": test.accuracy, "macro-F1 %": test.macro_f1,
                                "reviews": test.reviews}]), hide_index=True, width="stretch")
    if test.confusion:
        fig = figures.heatmap(np.asarray(test.confusion, dtype=float), test.labels, test.labels,
                         "Confusion matrix (test)", "predicted", "true")
        fig["data"][0]["texttemplate"] = "%{z:.0f}"
        st.plotly_chart(fig, width="stretch", key=f"card_{task}_confusion")

baselines = files.read_json(d / "baselines.json") if task == "sentiment" else None
calibration = files.read_json(d / "calibration.json") if task == "sentiment" else None
if isinstance(baselines, dict):
    st.header("Against n-gram baselines")
    st.markdown("This model beside two word 1–2-gram classifiers trained on the same train split, their C tuned on "
                "the valid split (`python -m tx evaluate sentiment --baselines`). Accuracy, macro-F1 and ECE are "
                "percentages on the test split; the negation probes are hand-written sentences whose label turns on "
                "a negation. — : not recorded in the model's files.")
    rows = [{"model": BASELINES.get(name, name.replace("_", " ")),
             "test accuracy": (e.get("test") or {}).get("accuracy"),
             "test macro-F1": (e.get("test") or {}).get("macro_f1"), "test ECE %": (e.get("test") or {}).get("ece"),
             "negation probes": (e.get("negation") or {}).get("accuracy"),
             "10-fold CV": f"{e['cv']['mean']:.2f} ± {e['cv']['std']:.2f}" if isinstance(e.get("cv"), dict) else None}
            for name, e in baselines.items() if isinstance(e, dict) and "test" in e]
    if metrics:
        splits = calibration.get("splits") if isinstance(calibration, dict) else None
        ece = ((splits or {}).get("test") or {}).get("calibrated", {}).get("ece")
        rows.insert(0, {"model": "Transformer (this model)", "test accuracy": metrics.test.accuracy,
                        "test macro-F1": metrics.test.macro_f1, "test ECE %": ece})
    st.dataframe(cards.filled(pd.DataFrame(rows)), hide_index=True, width="stretch")

if task == "sentiment":
    st.header("Calibration")
    if not isinstance(calibration, dict) or not calibration.get("splits"):
        st.info(f"No `{d}/calibration.json`: `python -m tx calibration {d}` fits the temperature on the valid "
                "split and reports how well the percentages match the accuracy.")
    else:
        t = calibration.get("temperature", config.get("temperature", 1.0))
        st.markdown(f"The logits are divided by **T = {t:.3f}**, fitted on the valid split by minimising the "
                    "log-loss (temperature scaling). This changes how sure the model says it is, never a label. "
                    "ECE = the average gap between confidence and accuracy over 10 confidence bins.")
        rows = [{"evaluated on": name, "reviews": entry.get("reviews"),
                 **{f"{tag} {label}": (entry.get(tag) or {}).get(k) for tag in ("uncalibrated", "calibrated")
                    for k, label in (("ece", "ECE %"), ("mean_confidence", "mean confidence %"))},
                 "accuracy %": (entry.get("calibrated") or {}).get("accuracy")}
                for name, entry in calibration["splits"].items()]
        st.dataframe(cards.filled(pd.DataFrame(rows)), hide_index=True, width="stretch")
        shown = "test" if "test" in calibration["splits"] else next(iter(calibration["splits"]))
        st.plotly_chart(figures.reliability_figure(calibration["splits"][shown], shown), width="stretch",
                        key="card_sentiment_reliability")

st.header("Export report")
report = cards.export_report(task)
if report is None:
    st.info(f"Not exported yet: `python -m export {d}` writes `{d}/onnx/export_report.json`.")
else:
    warned = len(report.get("warnings", []))
    status = "FAILED" if not report.get("ok") else f"passed with {warned} warning(s)" if warned else "passed"
    st.markdown(f"Export **{status}** · {report.get('exporter', '?')} · opset {report.get('opset', '?')} · "
                f"precisions {', '.join(report.get('precisions', []))} · {report.get('created', '?')}")
    for failure in report.get("failures", []):
        st.error(failure)
    for warning in report.get("warnings", []):
        st.warning(warning)
    graphs = pd.DataFrame([{"file": g.get("file"), "graph": g.get("graph"), "precision": g.get("precision"),
                            "MB": round(g.get("bytes", 0) / 1e6, 2),
                            "max |onnx - torch|": max((g.get("max_diff") or {}).values(), default=None),
                            "tolerance": f"≤ {g['atol']:g}" if g.get("atol") is not None else "not enforced",
                            "parity ok": g.get("ok")} for g in report.get("graphs", [])])
    st.markdown("**Parity with PyTorch and sizes**")
    st.markdown(parity_note(report.get("graphs", [])))
    st.dataframe(cards.filled(graphs), hide_index=True, width="stretch")
    for name, section in (report.get("quality") or {}).items():
        if not isinstance(section, dict):
            continue
        counted = section.get("sentences") or section.get("texts")
        st.markdown(f"**Agreement on held-out text ({name})**: "
                    + (f"{counted} {'sentences per direction' if name == 'translation' else 'reviews'} " if counted
                       else "") + (f"from `{section['origin']}`" if section.get("origin") else "")
                    + (f", {section['method']} decoding" if section.get("method") else ""))
        rows, notes = quality_rows(section.get("systems"))
        if rows:
            st.dataframe(cards.filled(pd.DataFrame(rows)), hide_index=True, width="stretch")
        for note in notes:
            st.caption(note)

st.header("Known limitations")
limits = readme_parts(r"limitation|caveat|known")
if limits:
    show_parts(limits)
else:
    st.markdown("- Trained on 2 CPU cores with a small budget: expect mistakes on long or idiomatic input.\n"
                + ("- Domain: dictionary example sentences (Ding), not news or web text."
                   if task == "translate" else "- Domain: short movie-review snippets (Rotten Tomatoes)."))

with st.expander("The whole model card (README.md)"):
    if sections:
        st.markdown((d / "README.md").read_text(encoding="utf-8"))
    else:
        st.info(f"No `{d}/README.md` yet: the model card is written when the model is shipped.")
