"""Decoding explorer: one input decoded once, then each step's next-token distribution under temperature / top-k /
top-p, beam search as a tree, and greedy vs beam vs sampling side by side. The logic is in playground/decoding/."""
import streamlit as st

from playground import links, model_paths, models, widgets
from playground.decoding import link, numbers
from playground.decoding import widgets as explorer

models.page_setup("Decoding explorer")
st.title("Decoding explorer")
st.caption("How a translation is chosen token by token. The model runs once per sentence; the sliders work on the "
           "stored numbers, so moving one redraws at once.")

model = models.onnx_model("translate", "auto", "fp32")
if model is None:
    st.stop()
models.provider_caption(model)
directions = models.directions()
explorer.read_link(directions)  # a shared link: its values become the widgets' first values
left, right = st.columns([1, 3])
direction = left.radio("Direction", directions, format_func=models.direction_label, key="decoding_direction",
                       on_change=widgets.forget_text_at_default("decoding_text", "decoding_default_shown"))
default = widgets.greedy_right_example(model, direction, str(model_paths.model_dir("translate")),
                                      model_paths.stamp("translate", "examples.tsv"))
st.session_state["decoding_default_shown"] = default
st.session_state.setdefault("decoding_text", default)
text = right.text_input("Text (press Enter to update)", key="decoding_text")
if link_cut := links.link_text_note(text):
    right.caption(link_cut)
knobs = explorer.knob_sliders()
temperature, top_k, top_p, beam = knobs["temperature"], knobs["top_k"], knobs["top_p"], knobs["beam"]
state = {"direction": direction, "text": text, **knobs}

if not text or not text.strip():
    st.info("Type a sentence to see how its translation is decoded.")
    st.query_params.from_dict(link.url_of(state))
    st.stop()
try:
    with st.spinner("Decoding (greedy and beam search)…"):
        run = explorer.explore(model, direction, text.strip(), beam, model_paths.stamp("translate"))
except Exception as e:
    models.show_error(e, "translate")
    st.stop()
if run["truncated"]:
    st.warning("Input too long: it was truncated to the model's length limit; the steps show what the model saw.")
if run["warning"]:
    st.warning(run["warning"])

st.page_link("pages/8_Walkthrough.py", label="The same sentence through every layer and head (Walkthrough)",
             icon="🧭", query_params={"model": f"translate:{'-'.join(direction)}", "text": text, "step": "output"})
st.header("Generation, step by step (greedy)")
explorer.greedy_steps(run, state)  # a fragment: the step slider reruns only it

st.header("Beam search as a tree")
st.plotly_chart(explorer.tree_figure(model, direction, text.strip(), beam, model_paths.stamp("translate")),
                width="stretch", key="decoding_tree")
st.caption(numbers.tree_words(beam))
st.info(f"Beam search ({beam} beams): {run['beam_text'] or '(empty output)'} (score {run['beam_score']:.3f})")

st.header("Greedy vs beam vs sampled")
explorer.compare_three_ways(model, direction, text.strip(), knobs, model_paths.stamp("translate"))

st.header("The numbers")
explorer.downloads(run, knobs)
st.caption("This page's link holds the direction, the text, the step and the sliders: share it to show this view.")
