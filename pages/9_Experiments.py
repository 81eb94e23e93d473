"""Experiments on the translator (and the classifier where one applies): edit the input and compare, int8 against
fp32, your trained model against the shipped one; the logit lens; knocking out heads; which source words a target
word needed. Every number comes from onnxruntime; every figure downloads as SVG, PNG and CSV, the experiment as one
HTML file, and the URL holds it. The logic is in playground/experiments/."""
import streamlit as st

from playground import models
from playground.experiments import (
    attribution_classifier,
    attribution_widgets,
    checks,
    classifier_widgets,
    engine_widgets,
    link,
    patching_widgets,
)
from playground.experiments import widgets as experiments

models.page_setup("Experiments")
title = st.empty()  # named once the model is known: the classifier's experiments are not the translator's
st.caption("Ask the model *why*: change its input, remove its heads, read its layers. Every number on this page is "
           "computed by onnxruntime for your input; each figure downloads as SVG, PNG and CSV.")

model = models.onnx_model("translate", "cpu", "fp32")
if model is None:
    st.stop()
shapes = experiments.model_shapes()
experiments.read_link(shapes)  # a shared link: its values become the widgets' first values
left, right = st.columns([1, 3])
choice = experiments.model_choice(left, shapes)  # a model shown before gets its experiment back
title.title(f"Experiments on the {'sentiment classifier' if choice == 'sentiment' else 'translator'}")
st.session_state.setdefault("exp_text", experiments.default_text(model, choice))
text = right.text_input("A: the text (press Enter to run it)", key="exp_text")
offered = experiments.experiments_of(choice)
exp = st.radio("Experiment", list(offered), format_func=offered.get, key="exp_exp", horizontal=True)
state = link.Experiment(choice, text, exp)
problem = checks.text_problem(text)
if problem:
    experiments.show_corrections()
    st.info(problem)
    st.query_params.from_dict(state.url())
    st.stop()

if choice == "sentiment" and exp == "patch":
    report = patching_widgets.classifier_experiment(text.strip(), state)
elif choice == "sentiment" and exp == "attribute":
    report = attribution_classifier.experiment(text.strip(), state)
elif choice == "sentiment":
    report = classifier_widgets.experiment(text.strip(), state, shapes[choice])
else:
    direction = experiments.direction_of(choice)
    base = experiments.translated(model, direction, text.strip())
    if base is None:
        st.stop()
    experiments.say_input_notes(base, text)
    st.info(f"Greedy translation: **{base.text or '(empty output)'}**")
    if exp == "compare":
        report = experiments.compare(model, direction, text.strip(), base, state)
    elif exp == "patch":
        report = patching_widgets.experiment(model, base, direction, text.strip(), state)
    elif exp == "attribute":
        report = attribution_widgets.experiment(model, base, direction, text.strip(), state)
    else:
        report = engine_widgets.engine_experiment(model, base, direction, text.strip(), state, shapes[choice])
experiments.show_corrections(state.notes)
st.query_params.from_dict(state.url())
if report is not None:
    experiments.show(report)
    st.divider()
    experiments.export(report, state)
