"""Walkthrough: one input through the shipped model, step by step, with the numbers onnxruntime computes (graphs
that expose every intermediate tensor). The model runs once per input; steps, layers and heads redraw from the
stored numbers. The logic is in playground/walkthrough/."""
import streamlit as st

from playground import inputs, model_paths, models, widgets
from playground.walkthrough import steps as steps_of
from playground.walkthrough import widgets as walkthrough

models.page_setup("Walkthrough")
st.title("Walkthrough: one sentence through the Transformer")
st.caption("Every number on this page is computed by the served model (onnxruntime, fp32, CPU) for your input. "
           "Pick a step; the layer, head and position choices redraw at once without running the model again.")

offered = steps_of.offered(models.directions())
walkthrough.read_link(offered)  # a shared link: its values become the widgets' first values, corrections said
choice = st.radio("Model", offered, format_func=walkthrough.model_label,
                  key="walkthrough_model", horizontal=True, on_change=walkthrough.another_model_another_text)
task = "sentiment" if choice == "sentiment" else "translate"
if models.model_problem(task):
    st.error(models.model_problem(task))
    st.stop()
try:
    with st.spinner("Loading the walkthrough graphs…"):
        model = walkthrough.walkthrough_model(task)
except Exception as e:  # ModelLoadError says which command makes the missing graphs
    models.show_error(e, task)
    st.stop()

if task == "translate":
    direction = steps_of.direction_of(choice)
    default = widgets.greedy_right_example(model.translator, direction, str(model_paths.model_dir(task)),
                                            model_paths.stamp(task, "examples.tsv"))
else:
    default = (inputs.examples("sentiment", "text") or ["a gem of a film, warm and funny"])[0]
st.session_state.setdefault("walkthrough_text", default)
text = st.text_input("Text (press Enter to run it through the model)", key="walkthrough_text")
state = {"model": choice, "text": text}
if not text or not text.strip():
    st.info("Type a sentence to walk it through the model.")
    st.query_params.from_dict(steps_of.url_of(state))
    st.stop()

trace_key = (choice, text.strip(), model_paths.stamp(task))
if st.session_state.get("walkthrough_trace", (None,))[0] != trace_key:
    try:
        with st.spinner("Running the sentence through the model…"):
            st.session_state["walkthrough_trace"] = (trace_key, walkthrough.run(model, choice, text.strip()))
    except Exception as e:
        models.show_error(e, task)
        st.stop()
trace = st.session_state["walkthrough_trace"][1]
if trace.truncated:
    st.warning("Input too long: it was truncated to the model's length limit; the steps show what the model saw.")
if trace.warning:
    st.warning(trace.warning)
if task == "translate":
    st.info(f"Greedy translation: **{trace.text or '(empty output)'}** — the decoder steps below are walked over "
            "<s> + this output, so position t shows the distribution the output's token t was chosen from.")
    st.page_link("pages/6_Decoding_explorer.py", label="The same sentence under sampling and beam search "
                 "(Decoding explorer)", icon="🌳", query_params={"direction": "-".join(direction), "text": text})

config = models.model_meta(task)["config"]


@st.fragment
def step_and_view() -> None:
    """Back / Next / the step list, the layer, head and position controls and the step's view, one fragment: a
    click there reruns this block only, not the model choice, the text and the greedy output above (issue 44.9).
    A change above reruns the page, and this block with it."""
    link = dict(state)  # a fresh copy per run: a step without a layer must not keep the last step's in the URL
    step = walkthrough.step_picker(steps_of.steps_for(choice))
    link["step"] = step.key
    view = walkthrough.view_controls(step, trace, config, link)
    st.query_params.from_dict(steps_of.url_of(link))

    st.subheader(step.title)
    st.latex(step.formula)
    st.caption(f"Paper: {step.section}")
    st.markdown(step.look)
    walkthrough.show_step(step, trace, view, model, config)


step_and_view()
st.caption("This page's link holds the model, the text, the step and the layer/head/position: share it to show "
           "this view.")
