"""Model card: data and licence, split sizes, training curves, test metrics, confidence verdicts, the export report,
limitations."""
import streamlit as st

from playground import model_paths, models
from playground.model_card import card_text, sources
from playground.model_card import widgets as card

models.page_setup("Model card")
st.title("Model card")

task = st.radio("Model", models.TASKS, key="card_model", horizontal=True, format_func=lambda t: models.TASK_TITLES[t])
d = model_paths.model_dir(task)
if not model_paths.has_model(task):
    st.error(models.model_problem(task))
    st.stop()

st.markdown(sources.card_line(task))
stored = models.model_meta(task)
sections = sources.readme_sections(task)
metrics, metrics_problem = sources.model_metrics(task)  # metrics.json through its one schema (runtime/metrics_file.py)

st.header("Data and licence")
data_parts = card_text.readme_parts(sections, r"data|licen[cs]e|split|provenance")
if data_parts:
    card.show_parts(data_parts)
else:
    st.markdown(f"Data: {sources.data_source(task) or 'not recorded'}")
if metrics:
    st.markdown("**Split sizes**")
    card.table(metrics.data.split_rows())
    st.markdown(f"**Licence:** {metrics.data.licence}")

st.header("Architecture")
config = stored["config"]
st.markdown(card_text.architecture_line(config, sources.parameter_count(task)))
if config.get("max_len"):
    st.markdown(card_text.positions_note(task, config["max_len"], stored["meta"]))

st.header("Training curves")
card.show_curves(task, d)

st.header("Test metrics")
card.show_test_metrics(task, d, metrics, metrics_problem)

if task == "sentiment":
    calibration = sources.side_file(task, "calibration.json")
    card.show_baselines(sources.side_file(task, "baselines.json"), metrics, calibration)
    card.show_calibration(d, calibration, config)

if task == "translate":
    card.show_confidence(d)

st.header("Export report")
card.show_export_report(d, sources.export_report(task))

st.header("Known limitations")
limits = card_text.readme_parts(sections, r"limitation|caveat|known")
if limits:
    card.show_parts(limits)
else:
    st.markdown(card_text.default_limitations(task))

with st.expander("The whole model card (README.md)"):
    if sections:
        st.markdown((d / "README.md").read_text(encoding="utf-8"))
    else:
        st.info(f"No `{d}/README.md` yet: the model card is written when the model is shipped.")
