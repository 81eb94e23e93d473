"""Translate: DE→EN / EN→DE through onnxruntime, decoding controls, cross-attention, batch with CSV download, and
steering: a start you choose, the n-best list, a word's alternatives, word alignment; its state is in the URL."""
import streamlit as st

from playground import inputs, models, widgets
from playground.serving import widgets as serving
from playground.translate import settings
from playground.translate import steering_widgets as steer
from playground.translate import widgets as translate_widgets
from runtime import confidence, providers, spec, text

models.page_setup("Translate")
st.title("Translate")

models.require_model("translate")
known_languages = sorted({models.LANGUAGES.get(lang, lang) for pair in models.directions() for lang in pair})
st.caption(f"This model knows {' and '.join(known_languages)} only: it translates "
           f"{', '.join(models.direction_label(d) for d in models.directions())}. Text in any other language or "
           "script gets a warning, and every output gets a measured frequency: how many held-out, hand-judged "
           "outputs with a score like its own were right.")

# a shared link: its values become the widgets' first values
steer.read_link(models.directions(), text.METHODS, models.directions()[0])
with st.sidebar:
    st.header("Decoding")
    direction = st.radio("Direction", models.directions(), format_func=models.direction_label,
                         key="translate_direction", horizontal=True)
    method = st.selectbox("Method", text.METHODS, key="translate_method", format_func=confidence.method_title)
    beam = steer.beam_slider(method)
    n_best = steer.n_best_slider(method, beam)
    length_penalty = st.slider("Length penalty α", 0.0, 2.0, 0.6, 0.1, key="translate_length_penalty",
                               help="score = log P / ((5 + length) / 6) ** α (GNMT)")
    stop_early = st.toggle("Stop once a beam's worth has finished", False, key="translate_stop_early",
                           disabled=method != "beam",
                           help="Off: a sentence stops only when no live beam can still beat its best (exact). On: "
                                "once as many hypotheses as the beam size have finished, as CTranslate2 does: "
                                "fewer steps (up to a third on long batches), now and then another result.")
    temperature = st.slider("Temperature", 0.1, 2.0, 1.0, 0.1, key="translate_temperature",
                            disabled=method != "sample")
    top_k = st.slider("Top-k (0 = off)", 0, 100, 0, key="translate_top_k", disabled=method != "sample")
    top_p = st.slider("Top-p (1 = off)", 0.05, 1.0, 1.0, 0.05, key="translate_top_p", disabled=method != "sample")
    seed = st.number_input("Sampling seed", 0, 2**31 - 1, 0, key="translate_seed", disabled=method != "sample")
    st.header("Runtime")
    precision = st.radio("Precision", spec.PRECISIONS, key="translate_precision", horizontal=True)
    provider = st.selectbox("Execution provider", providers.PROVIDER_CHOICES, key="translate_provider")
src, tgt = direction
curated = inputs.curated_examples(src, tgt)
by_source = {row["source"]: row for row in curated}
# One text box per source language: switching DE→EN to EN→DE must not leave German in a box labelled "English".
text_key, example_key = f"translate_text_{src}", f"translate_example_{src}"
widgets.restore_text(text_key, curated[0]["source"])  # typed text survives a switch to the other direction
judged = any(row.get("verdict") for row in curated)
st.selectbox(f"Examples ({models.LANGUAGES.get(src, src)}): " + ("✓ = translated right, ✗ = a known failure "
             "(judged by hand on this model's beam-4 output)" if judged else "sentences from the test set"),
             list(by_source), index=None, key=example_key, placeholder="pick one to fill the text box",
             format_func=lambda source: inputs.verdict_label(by_source[source]),
             on_change=widgets.fill_from(example_key, text_key))
typed = st.text_area(f"{models.LANGUAGES.get(src, src)} text: one sentence per line (several lines are "
                     "translated as a batch)", key=text_key, height=120)
widgets.keep_text(text_key, typed)
prefix = steer.prefix_box()
decoding = settings.Decoding(direction, method, beam, length_penalty, stop_early, temperature, top_k, top_p,
                             int(seed), precision, provider, prefix, n_best)
steer.write_url(decoding, typed)

model = serving.model("translate", provider, precision)  # the service at TX_SERVE_URL, if set
if model is None:
    st.stop()


@st.fragment
def translate_and_show() -> None:
    """The Translate button and everything a translation shows, one fragment: a click (or a layer, head or word
    picked below) reruns this block only, not the sidebar, the examples and the text box above (the whole page's
    rerun would be most of a click's time). A change above reruns the page, and this block with it."""
    clicked = st.button("Translate", key="translate_go", type="primary") or steer.link_go()
    models.provider_caption(model)
    current = decoding.settings(typed)
    if clicked:
        translate_widgets.translate(model, typed, decoding, current)
    done = translate_widgets.kept_result(current)
    if done:
        translate_widgets.result(done, model, translate_widgets.calibrations(), by_source)
        steer.n_best_list(done)
        if len(done["results"]) == 1 and not done["results"][0].warning:
            steer.steer(done, model, decoding,
                        lambda chosen: translate_widgets.back_translations(model, [chosen], decoding, done["lines"]))
        if all(r.attention for r in done["results"]):
            translate_widgets.cross_attention(done)
        else:  # the service sends attention with a request's first translation only (a chosen alternative has none)
            st.caption("No cross-attention came with this output: click Translate to draw it.")
        steer.alignment(done)


translate_and_show()
