"""The Attention explorer's blocks: running the explain graphs on the text once (with what is known of the output),
and the map of the chosen kind, layer and head."""
from __future__ import annotations

from typing import Any

import streamlit as st

from playground import figures, inputs, model_paths, models
from playground import widgets as shared

from . import maps as attention_maps

RUN_KEY = "attention_run"  # (what was asked, the model's output with its maps): explain's last run


def explain(model, task: str, text: str, direction: tuple[str, str] | None) -> Any | None:
    """The model's output on the text with every attention map recorded, and what it output shown (a greedy
    translation or a label, never as a success: often wrong). The run is kept for its text, direction and model
    files: a rerun of the page (the positional encoding's sliders, a fragment's rerun) shows it again without
    running the model. None after an error, which is shown."""
    asked = (task, text.strip(), direction, model_paths.stamp(task))
    kept = st.session_state.get(RUN_KEY)
    try:
        if kept is None or kept[0] != asked:
            with st.spinner("Running the explain graphs…"):
                if task == "translate":
                    out = model.translate([text.strip()], src_lang=direction[0], tgt_lang=direction[1],
                                          method="greedy", attention="all")[0]
                else:
                    out = model.classify([text.strip()], attention=True)[0]
            kept = st.session_state[RUN_KEY] = (asked, out)
    except Exception as e:
        models.show_error(e, task)
        return None
    out = kept[1]
    if out.warning:
        st.warning(out.warning)
    if task == "translate":
        st.info(f"Greedy translation: {out.text or '(empty output)'}")  # not a "success": often wrong
        st.caption(attention_maps.judged_note(text, out.text, inputs.curated_examples(*direction)))
    else:
        st.info(f"Predicted: {out.label} ({out.probs[out.label]:.1%})")
        st.caption(attention_maps.known_label_note(inputs.known_label("sentiment", text), out))
    return out


@st.fragment
def maps_chart(out, task: str) -> None:
    """The map picker (kind, layer, one head or the grid) and the chosen map, one fragment: a pick reruns this block
    only, not the model run, the output and the positional encoding above and below it."""
    kinds = attention_maps.KINDS[task]
    left, middle, right = st.columns(3)
    kind = left.selectbox("Attention", list(kinds), format_func=kinds.get, key=f"attention_kind_{task}")
    if task == "translate":
        maps, rows, cols = attention_maps.translation_maps(out, kind)
    else:
        maps, rows, cols = out.attention, out.tokens, out.tokens
    if out.truncated:
        st.warning("Input too long: it was truncated to the model's length limit; the maps show the "
                   "tokens the model saw.")
    layer = shared.layer_or_head(middle.selectbox, "Layer", len(maps), "layer", index=1, key=f"attention_layer_{task}")
    view = right.radio("Heads", ["one head", "all heads (grid)"], key="attention_view", horizontal=True)
    if view == "one head" or layer == figures.MEAN:
        head = shared.layer_or_head(st.select_slider, "Head", maps[0].shape[0], "head", value=1,
                                    key=f"attention_head_{task}")
        shown = attention_maps.one_head_map(maps, rows, cols, kinds[kind], layer, head)
    else:
        shown = attention_maps.heads_figure(maps, rows, cols, kinds[kind], layer)
    if isinstance(shown, str):  # markup: escaped by heatmap_markup
        st.markdown(shown, unsafe_allow_html=True)
    else:
        st.plotly_chart(shown, width="stretch", key="attention_chart")
    st.caption("Rows: the attending (query) tokens; columns: the tokens attended to; each row sums to 1. "
               "Maps come from the ONNX explain graphs (explicit-softmax attention).")
