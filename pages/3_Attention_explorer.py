"""Attention explorer: token-to-token maps from the ONNX explain graphs, and the positional encoding."""
import streamlit as st

from playground import figures, inputs, model_paths, models, widgets
from playground.attention import maps
from playground.attention import widgets as attention_widgets

models.page_setup("Attention explorer")
st.title("Attention explorer")

task = st.radio("Model", models.TASKS, key="attention_model", horizontal=True,
                format_func=lambda t: models.TASK_TITLES[t])
model = models.onnx_model(task, "auto", "fp32")
if model is not None:
    models.provider_caption(model)
    if task == "translate":
        direction = st.radio("Direction", models.directions(), format_func=models.direction_label,
                             key="attention_direction", horizontal=True,
                             on_change=widgets.forget_text_at_default("attention_text_translate",
                                                                      "attention_default_shown"))
        default = widgets.greedy_right_example(model, direction, str(model_paths.model_dir(task)),
                                               model_paths.stamp(task, "examples.tsv"))
        st.session_state["attention_default_shown"] = default
    else:
        direction, default = None, inputs.examples(task, "text")[0]
    text_key = f"attention_text_{task}"
    st.session_state.setdefault(text_key, default)
    text = st.text_input("Text (press Enter to update)", key=text_key)
    if not text or not text.strip():
        st.info("Type a sentence to see its attention maps.")
    else:
        out = attention_widgets.explain(model, task, text, direction)
        if out is not None:
            attention_widgets.maps_chart(out, task)

st.header("Positional encoding")
d_choices, model_d, start_positions = maps.positional_choices(models.model_meta(task)["config"])
left, right = st.columns(2)
d_model = left.select_slider("d_model", d_choices, value=model_d, key="attention_pe_d_model")
positions = right.slider("Positions", 10, 512, start_positions, key="attention_pe_positions")
fig_pe, fig_sim = figures.positional_figures(d_model, positions)
left.plotly_chart(fig_pe, width="stretch", key="attention_pe_chart")
right.plotly_chart(fig_sim, width="stretch", key="attention_pe_similarity")
st.caption("PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(pos / 10000^(2i/d)): the table "
           "`tx.PositionalEncoding` adds to the embeddings. Nearby positions have similar encodings; the similarity "
           "depends only on the distance between positions.")
