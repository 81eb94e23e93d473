"""Attention explorer: token-to-token maps from the ONNX explain graphs, and the positional encoding."""
import streamlit as st

from playground import figures, inputs, models, widgets

models.page_setup("Attention explorer")
st.title("Attention explorer")

KINDS = {"translate": {"encoder": "encoder self-attention", "self": "decoder self-attention (causal)",
                       "cross": "cross-attention (decoder → encoder)"},
         "sentiment": {"encoder": "encoder self-attention"}}


def judged_note(source: str, output: str, direction: tuple[str, str]) -> str:
    """What is known of a greedy output: the hand verdict of examples.tsv where that output was judged, else that it
    was not judged (and the judged beam-search output where the sentence has one)."""
    row = next((r for r in inputs.curated_examples(*direction) if r["source"] == source.strip()), None)
    if row is None or not row.get("verdict"):
        return ("This greedy output was not judged: greedy decoding is often wrong on this model, so read the maps as "
                "how the model got its answer, not as a checked translation.")
    judged = "judged right by hand" if row["verdict"] == "works" else "judged wrong by hand"
    if output == row.get("output"):
        return f"{'✓' if row['verdict'] == 'works' else '✗'} This output was {judged}" + (
            f" ({row['note']})." if row.get("note") else ".")
    return (f"This greedy output was not judged. The output of beam search (4 beams, the Translate page's default), "
            f"“{row.get('output')}”, was {judged}" + (f" ({row['note']})." if row.get("note") else "."))


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
        default = widgets.greedy_right_example(model, direction, str(models.model_dir(task)),
                                  models.stamp(task, "examples.tsv"))
        st.session_state["attention_default_shown"] = default
    else:
        direction, default = None, inputs.examples(task, "text")[0]
    text_key = f"attention_text_{task}"
    st.session_state.setdefault(text_key, default)
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
                    if out.warning:
                        st.warning(out.warning)
                    st.info(f"Greedy translation: {out.text or '(empty output)'}")  # not a "success": often wrong
                    st.caption(judged_note(text, out.text, direction))
                else:
                    out = model.classify([text.strip()], attention=True)[0]
                    maps, rows, cols = out.attention, out.tokens, out.tokens
                    if out.warning:
                        st.warning(out.warning)
                    st.info(f"Predicted: {out.label} ({out.probs[out.label]:.1%})")
                    label = inputs.known_label("sentiment", text)
                    st.caption(f"A test-set review labelled {label}: the model is "
                               f"{'right' if label == out.label else 'wrong'} here." if label else
                               "Not a test-set review: no known label to compare with.")
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
