"""Decoding explorer: one input decoded once, then each step's next-token distribution under temperature / top-k /
top-p, beam search as a tree, and greedy vs beam vs sampling side by side."""
import numpy as np
import streamlit as st

from playground import decoding, models, widgets

models.page_setup("Decoding explorer")
st.title("Decoding explorer")
st.caption("How a translation is chosen token by token. The model runs once per sentence; the sliders work on the "
           "stored numbers, so moving one redraws at once.")

model = models.onnx_model("translate", "auto", "fp32")
if model is None:
    st.stop()
models.provider_caption(model)
directions = models.directions()
if "decoding_url_read" not in st.session_state:  # a shared link: its values become the widgets' first values
    st.session_state["decoding_url_read"] = True
    for name, value in decoding.parse_url(dict(st.query_params), directions).items():
        st.session_state[f"decoding_{name}"] = value
left, right = st.columns([1, 3])
direction = left.radio("Direction", directions, format_func=models.direction_label, key="decoding_direction",
                       on_change=widgets.forget_text_at_default("decoding_text", "decoding_default_shown"))
default = widgets.greedy_right_example(model, direction, str(models.model_dir("translate")),
                                      models.stamp("translate", "examples.tsv"))
st.session_state["decoding_default_shown"] = default
st.session_state.setdefault("decoding_text", default)
text = right.text_input("Text (press Enter to update)", key="decoding_text")
knobs = {}
for column, (name, knob) in zip(st.columns(len(decoding.KNOBS)), decoding.KNOBS.items(), strict=True):
    st.session_state.setdefault(f"decoding_{name}", knob.default)  # the value lives in session state (a link sets it)
    knobs[name] = column.slider(knob.label, knob.low, knob.high, step=knob.step, key=f"decoding_{name}")
temperature, top_k, top_p, beam = knobs["temperature"], knobs["top_k"], knobs["top_p"], knobs["beam"]
state = {"direction": direction, "text": text, **knobs}

if not text or not text.strip():
    st.info("Type a sentence to see how its translation is decoded.")
    st.query_params.from_dict(decoding.url_of(state))
    st.stop()
try:
    with st.spinner("Decoding (greedy and beam search)…"):
        run = decoding.explore(model, direction, text.strip(), beam, models.stamp("translate"))
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
steps = len(run["log_probs"])
st.session_state["decoding_step"] = min(st.session_state.get("decoding_step", 1), steps)  # a link's, or a longer text's
step = st.slider("Step", 1, steps, key="decoding_step") if steps > 1 else 1
state["step"] = step
st.query_params.from_dict(decoding.url_of(state))
pieces = run["pieces"]
chosen = run["tokens"][step - 1]
raw = run["log_probs"][step - 1]
probs, removed = decoding.filtered(raw, temperature, top_k, top_p)
st.markdown(f"Generated so far: `{' '.join(['<s>', *pieces[:step - 1]]) }` → greedy chooses **`{pieces[step - 1]}`** "
            f"(model probability {float(np.exp(raw[chosen])):.1%}).")
title = f"Step {step}: the next-token distribution (T = {temperature:g}, top-k = {top_k or 'off'}, " \
        f"top-p = {top_p:g})"
st.plotly_chart(decoding.bars_figure(probs, raw, run["vocab"], chosen, title), width="stretch",
                key="decoding_bars")
st.caption(decoding.removed_words(removed, int((probs > 0).sum()), len(probs), top_k, top_p) +
           " Red: the token greedy decoding chose (the most probable one, whatever the sliders say). "
           "Temperature divides the log-probs before the softmax: below 1 sharpens, above 1 flattens.")
st.info(f"Greedy translation: {run['greedy_text'] or '(empty output)'}")

st.header("Beam search as a tree")
st.plotly_chart(decoding.tree_figure(run["nodes"]), width="stretch", key="decoding_tree")
st.caption(f"Beam size {beam}, GNMT length penalty α = {decoding.LENGTH_PENALTY}: "
           "score = log-prob / ((5 + length) / 6)^α. "
           "Each step ranks the 2 × beam best extensions of the live beams; the best beam-size ones that do not end "
           "become the next beams, those ending with </s> are offered as finished, the rest are pruned. Red: the "
           "path of the hypothesis beam search returns. Hover a node for its raw and length-penalised scores.")
st.info(f"Beam search ({beam} beams): {run['beam_text'] or '(empty output)'} (score {run['beam_score']:.3f})")

st.header("Greedy vs beam vs sampled")
seed = st.number_input("Sampling seed", 0, 10**6, 0, key="decoding_seed")
compare_key = (direction, text.strip(), beam, temperature, top_k, top_p, seed, models.stamp("translate"))
if st.button("Decode three ways", key="decoding_compare"):
    try:
        with st.spinner("Decoding…"):
            outs = {name: model.translate([text.strip()], src_lang=direction[0], tgt_lang=direction[1],
                                          method=method, beam=beam, temperature=temperature, top_k=top_k,
                                          top_p=top_p, seed=seed)[0]
                    for name, method in (("greedy", "greedy"), (f"beam ({beam})", "beam"),
                                         ("sampled", "sample"))}
        st.session_state["decoding_compared"] = (compare_key, outs)
    except Exception as e:
        models.show_error(e, "translate")
compared = st.session_state.get("decoding_compared")
if compared and compared[0] == compare_key:
    st.dataframe([{"method": name, "translation": out.text, "score (normalised)": round(out.score, 4),
                   "confidence": f"{out.confidence:.1%}"} for name, out in compared[1].items()],
                 hide_index=True, key="decoding_table")
    st.caption(f"Score: log-prob / ((5 + length) / 6)^{decoding.LENGTH_PENALTY} for every method, so they compare. "
               f"Sampling uses the sliders above (T = {temperature:g}, top-k = {top_k or 'off'}, "
               f"top-p = {top_p:g}) and seed {seed}.")
else:
    st.caption("Runs the model three times with the settings above (sampling uses the sliders and the seed).")

st.header("The numbers")
d1, d2 = st.columns(2)
d1.download_button("Step distributions (CSV: each step's 50 most probable tokens)",
                   decoding.distributions_csv(run["log_probs"], run["vocab"], temperature, top_k, top_p),
                   "decoding_steps.csv", "text/csv", key="decoding_download_steps")
d2.download_button("Beam search tree (JSON)", decoding.tree_json(run["nodes"]), "beam_tree.json",
                   "application/json", key="decoding_download_tree")
st.caption("This page's link holds the direction, the text, the step and the sliders: share it to show this view.")
