"""Attention explorer: token-to-token maps from the ONNX explain graphs, and the positional encoding."""
import streamlit as st

from playground import figures, inputs, models

models.page_setup("Attention explorer")
st.title("Attention explorer")

KINDS = {"translate": {"encoder": "encoder self-attention", "self": "decoder self-attention (causal)",
                       "cross": "cross-attention (decoder → encoder)"},
         "sentiment": {"encoder": "encoder self-attention"}}

task = st.radio("Model", models.TASKS, key="attention_model", horizontal=True,
                format_func=lambda t: models.TASK_TITLES[t])
model = models.onnx_model(task, "auto", "fp32")
if model is not None:
    models.provider_caption(model)
    if task == "translate":
        direction = st.radio("Direction", models.directions(), format_func=models.direction_label,
                             key="attention_direction", horizontal=True)
        source_column = direction[0]
    else:
        direction, source_column = None, "text"
    text_key = f"attention_text_{task}"
    st.session_state.setdefault(text_key, inputs.examples(task, source_column)[0])
    text = st.text_input("Text (press Enter to update)", key=text_key)
    kinds = KINDS[task]
    left, middle, right = st.columns(3)
    kind = left.selectbox("Attention", list(kinds), format_func=kinds.get, key=f"attention_kind_{task}")
    if not text or not text.strip():
        st.info("Type a sentence to see its attention maps.")
    else:
        try:
            with st.spinner("Running the explain graphs…"):
                if task == "translate":
                    out = model.translate([text.strip()], src_lang=direction[0], tgt_lang=direction[1],
                                          method="greedy", attention="all")[0]
                    maps = out.attention[kind]
                    rows = out.src_tokens if kind == "encoder" else out.tokens
                    cols = out.tokens if kind == "self" else out.src_tokens
                    st.info(f"Greedy translation: {out.text or '(empty output)'}")  # not a "success": often wrong
                else:
                    out = model.classify([text.strip()], attention=True)[0]
                    maps, rows, cols = out.attention, out.tokens, out.tokens
                    st.info(f"Predicted: {out.label} ({out.probs[out.label]:.1%})")
        except Exception as e:
            models.show_error(e, task)
        else:
            if out.truncated:
                st.warning("Input too long: it was truncated to the model's length limit; the maps show the "
                           "tokens the model saw.")
            layers, heads = len(maps), maps[0].shape[0]
            layer = middle.selectbox("Layer", [figures.MEAN, *range(1, layers + 1)], index=1,
                                     key=f"attention_layer_{task}",
                                     format_func=lambda v: figures.choice_label(v, "layer"))
            view = right.radio("Heads", ["one head", "all heads (grid)"], key="attention_view", horizontal=True)
            if view == "one head" or layer == figures.MEAN:
                head = st.select_slider("Head", [figures.MEAN, *range(1, heads + 1)], value=1,
                                        key=f"attention_head_{task}",
                                        format_func=lambda v: figures.choice_label(v, "head"))
                fig = figures.heatmap(figures.pick_map(maps, layer, head), cols, rows,
                                      f"{kinds[kind].capitalize()}: {figures.choice_label(layer, 'layer')}, "
                                      f"{figures.choice_label(head, 'head')}", "key (attended to)", "query (attending)")
            else:
                fig = figures.heads_grid(maps[int(layer) - 1], cols, rows,
                                         f"{kinds[kind].capitalize()}: layer {layer}, all {heads} heads")
            st.plotly_chart(fig, width="stretch", key="attention_chart")
            st.caption("Rows: the attending (query) tokens; columns: the tokens attended to; each row sums to 1. "
                       "Maps come from the ONNX explain graphs (explicit-softmax attention).")

st.header("Positional encoding")
config = models.model_meta(task)["config"]
left, right = st.columns(2)
model_d = int(config.get("d_model", 256))
model_d = model_d if model_d % 2 == 0 else 256
d_model = left.select_slider("d_model", sorted({16, 32, 64, 128, 256, 512, model_d}), value=model_d,
                             key="attention_pe_d_model")
positions = right.slider("Positions", 10, 512, min(100, int(config.get("max_len", 100))), key="attention_pe_positions")
fig_pe, fig_sim = figures.positional_figures(d_model, positions)
left.plotly_chart(fig_pe, width="stretch", key="attention_pe_chart")
right.plotly_chart(fig_sim, width="stretch", key="attention_pe_similarity")
st.caption("PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(pos / 10000^(2i/d)): the table "
           "`tx.PositionalEncoding` adds to the embeddings. Nearby positions have similar encodings; the similarity "
           "depends only on the distance between positions.")
