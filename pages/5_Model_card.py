"""Model card: data and licence, split sizes, training curves, test metrics, the export report, limitations."""
import re

import numpy as np
import pandas as pd
import streamlit as st

from playground import cards, figures, models

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
    st.dataframe(pd.DataFrame(metrics.data.split_rows()), hide_index=True)
    st.markdown(f"**Licence:** {metrics.data.licence}")

st.header("Architecture")
config = stored["config"]
params = cards.parameter_count(task)
st.markdown(", ".join(f"{k} {v}" for k, v in config.items() if k in (
    "d_model", "n_heads", "n_layers", "n_decoder_layers", "d_ff", "vocab_size", "max_len", "pre_norm", "pooling"))
    + (f" · **{params:,} parameters**" if params else ""))

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
        left.plotly_chart(figures.curves(curve, losses, "Loss", x), width="stretch", key=f"card_{task}_loss")
    if scores:
        right.plotly_chart(figures.curves(curve, scores, "Validation score", x), width="stretch",
                           key=f"card_{task}_score")
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

baselines = cards.read_json(d / "baselines.json") if task == "sentiment" else None
if isinstance(baselines, dict):
    st.header("Against n-gram baselines")
    st.markdown("Trained on the same train split, C tuned on valid (`python -m tx evaluate sentiment --baselines`). "
                "A Transformer trained from scratch on ~10k snippets has to beat these to be worth its cost.")
    rows = [{"model": name, "test accuracy": (e.get("test") or {}).get("accuracy"),
             "test macro-F1": (e.get("test") or {}).get("macro_f1"), "test ECE %": (e.get("test") or {}).get("ece"),
             "negation probes": (e.get("negation") or {}).get("accuracy"),
             "10-fold CV": f"{e['cv']['mean']:.2f} ± {e['cv']['std']:.2f}" if isinstance(e.get("cv"), dict) else None}
            for name, e in baselines.items() if isinstance(e, dict) and "test" in e]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")

calibration = cards.read_json(d / "calibration.json") if task == "sentiment" else None
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
                 **{f"{tag} {k}": (entry.get(tag) or {}).get(k) for tag in ("uncalibrated", "calibrated")
                    for k in ("ece", "mean_confidence")}, "accuracy": (entry.get("calibrated") or {}).get("accuracy")}
                for name, entry in calibration["splits"].items()]
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
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
                            "parity ok": g.get("ok")} for g in report.get("graphs", [])])
    st.markdown("**Parity with PyTorch and sizes**")
    st.dataframe(graphs, hide_index=True, width="stretch")
    for name, section in (report.get("quality") or {}).items():
        st.markdown(f"**Agreement on held-out text ({name})**: {section.get('origin', '')}")
        systems = section.get("systems")
        if isinstance(systems, dict) and systems:
            st.dataframe(pd.DataFrame([{"system": k, **cards.flatten(v)} for k, v in systems.items()]),
                         hide_index=True, width="stretch")

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
