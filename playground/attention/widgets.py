"""The Attention explorer's blocks: running the explain graphs on the text (with what is known of the output),
and the map of the chosen layer and head."""
from __future__ import annotations

from typing import Any

import streamlit as st

from playground import figures, inputs, models
from playground import widgets as shared

from . import maps as attention_maps


def explain(model, task: str, kind: str, text: str, direction: tuple[str, str] | None) -> tuple | None:
    """Run the model on the text with every attention map recorded and say what it output (a greedy translation or
    a label, never as a success: often wrong). Returns (output, maps, query tokens, key tokens); None after an
    error, which is shown."""
    try:
        with st.spinner("Running the explain graphs…"):
            if task == "translate":
                out = model.translate([text.strip()], src_lang=direction[0], tgt_lang=direction[1],
                                      method="greedy", attention="all")[0]
                maps, rows, cols = attention_maps.translation_maps(out, kind)
                if out.warning:
                    st.warning(out.warning)
                st.info(f"Greedy translation: {out.text or '(empty output)'}")  # not a "success": often wrong
                st.caption(attention_maps.judged_note(text, out.text, inputs.curated_examples(*direction)))
            else:
                out = model.classify([text.strip()], attention=True)[0]
                maps, rows, cols = out.attention, out.tokens, out.tokens
                if out.warning:
                    st.warning(out.warning)
                st.info(f"Predicted: {out.label} ({out.probs[out.label]:.1%})")
                st.caption(attention_maps.known_label_note(inputs.known_label("sentiment", text), out))
    except Exception as e:
        models.show_error(e, task)
        return None
    return out, maps, rows, cols


def maps_chart(explained: tuple, task: str, kind_title: str, middle: Any, right: Any) -> None:
    """The chosen layer's map: one head (or the mean), or every head in a grid; the layer and view pickers go in the
    `middle` and `right` columns."""
    out, maps, rows, cols = explained
    if out.truncated:
        st.warning("Input too long: it was truncated to the model's length limit; the maps show the "
                   "tokens the model saw.")
    layer = shared.layer_or_head(middle.selectbox, "Layer", len(maps), "layer", index=1, key=f"attention_layer_{task}")
    view = right.radio("Heads", ["one head", "all heads (grid)"], key="attention_view", horizontal=True)
    if view == "one head" or layer == figures.MEAN:
        head = shared.layer_or_head(st.select_slider, "Head", maps[0].shape[0], "head", value=1,
                                    key=f"attention_head_{task}")
        fig = attention_maps.one_head_figure(maps, rows, cols, kind_title, layer, head)
    else:
        fig = attention_maps.heads_figure(maps, rows, cols, kind_title, layer)
    st.plotly_chart(fig, width="stretch", key="attention_chart")
    st.caption("Rows: the attending (query) tokens; columns: the tokens attended to; each row sums to 1. "
               "Maps come from the ONNX explain graphs (explicit-softmax attention).")
