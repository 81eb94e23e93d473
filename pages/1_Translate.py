"""Translate: DE→EN / EN→DE through onnxruntime, decoding controls, cross-attention, batch with CSV download."""
import pandas as pd
import streamlit as st

from playground import cards, figures, inputs, models
from runtime import providers, spec, text

models.page_setup("Translate")
st.title("Translate")

models.require_model("translate")
known_languages = sorted({models.LANGUAGES.get(lang, lang) for pair in models.directions() for lang in pair})
st.caption(f"This model knows {' and '.join(known_languages)} only: it translates "
           f"{', '.join(models.direction_label(d) for d in models.directions())}. Text in any other language or "
           "script gets a warning, and every output shows how sure the model was.")

with st.sidebar:
    st.header("Decoding")
    direction = st.radio("Direction", models.directions(), format_func=models.direction_label,
                         key="translate_direction", horizontal=True)
    method = st.selectbox("Method", text.METHODS, key="translate_method",
                          format_func={"beam": "beam search", "greedy": "greedy", "sample": "sampling"}.get)
    beam = st.slider("Beam size", 1, 16, 4, key="translate_beam", disabled=method != "beam")
    length_penalty = st.slider("Length penalty α", 0.0, 2.0, 0.6, 0.1, key="translate_length_penalty",
                               help="score = log P / ((5 + length) / 6) ** α (GNMT)")
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
text_key = f"translate_text_{src}"
st.session_state.setdefault(text_key, curated[0]["source"])


def use_example(key: str) -> None:
    st.session_state[text_key] = st.session_state[key]


example_key = f"translate_example_{src}"
judged = any(row.get("verdict") for row in curated)
st.selectbox(f"Examples ({models.LANGUAGES.get(src, src)}): " + ("✓ = translated right, ✗ = a known failure "
             "(judged by hand on this model's beam-4 output)" if judged else "sentences from the test set"),
             list(by_source), index=None, key=example_key, placeholder="pick one to fill the text box",
             format_func=lambda source: inputs.verdict_label(by_source[source]), on_change=use_example,
             args=(example_key,))
typed = st.text_area(f"{models.LANGUAGES.get(src, src)} text: one sentence per line (several lines are "
                     "translated as a batch)", key=text_key, height=120)
clicked = st.button("Translate", key="translate_go", type="primary")

model = models.onnx_model("translate", provider, precision)
if model is None:
    st.stop()
models.provider_caption(model)

if clicked:
    lines = inputs.split_lines(typed)
    st.session_state.pop("translate_results", None)
    if not lines:
        st.info("Type a sentence (or pick an example) to translate.")
    else:
        try:
            with st.spinner(f"Translating {len(lines)} line(s)…"):
                results, ms = inputs.timed(lambda: model.translate(
                    lines, src_lang=src, tgt_lang=tgt, method=method, beam=beam, length_penalty=length_penalty,
                    temperature=temperature, top_k=top_k, top_p=top_p, seed=int(seed), attention="cross"))
        except Exception as e:
            models.show_error(e, "translate")
        else:
            st.session_state["translate_results"] = {"lines": lines, "results": results, "ms": ms,
                                                     "direction": direction, "method": method}

done = st.session_state.get("translate_results")
if done:
    lines, results = done["lines"], done["results"]
    cut = [i + 1 for i, r in enumerate(results) if r.truncated]
    if cut:
        st.warning(f"Input too long: line(s) {', '.join(map(str, cut))} exceeded the model's "
                   f"{model.max_src_len}-token limit and were truncated; only their beginning was translated.")
    st.subheader(f"{models.direction_label(done['direction'])} · {done['method']} · {done['ms']:.0f} ms")
    outside = [i + 1 for i, r in enumerate(results) if r.warning]
    if len(results) == 1 and outside:
        st.warning(results[0].warning)
        st.info(f"Model output: {results[0].text or '(empty output)'}")
    elif outside:
        st.warning(f"Line(s) {', '.join(map(str, outside))} are mostly outside what the model was trained on "
                   "(German and English only): their translations mean little.")
    if len(results) == 1 and not outside:
        only = results[0]
        low, meaning = cards.confidence_judgement(only.confidence)
        if low:
            st.warning(f"Low confidence: probably wrong. {meaning}")
        # A plain, copyable box, never a green "success": the model is often wrong.
        st.code(only.text or "(empty output)", language=None, wrap_lines=True)
        if not low:
            st.caption(meaning)
        unsure = sorted(zip(only.token_probs, only.tokens, strict=True))[:3]
        st.caption(f"least sure of: {', '.join(f'{tok!r} ({p:.0%})' for p, tok in unsure)} · "
                   f"score (length-normalised log-probability): {only.score:.3f} · {len(only.tokens)} tokens")
        known = by_source.get(lines[0]) if done["direction"] == direction else None
        if known and known.get("verdict") == "fails":
            st.warning(f"A known failure of this model: judged wrong by hand ({known.get('note') or 'see the card'}).")
    lows = [cards.confidence_judgement(r.confidence)[0] for r in results]
    table = pd.DataFrame({"source": lines, "translation": [r.text for r in results],
                          "confidence": [round(r.confidence, 3) for r in results],
                          "low confidence": lows,
                          "score": [round(r.score, 4) for r in results],
                          "truncated": [r.truncated for r in results]})
    if len(results) > 1:
        if any(lows):
            flagged = ", ".join(str(i + 1) for i, low in enumerate(lows) if low)
            st.warning(f"Low confidence (probably wrong): line(s) {flagged}.")
        st.dataframe(table, hide_index=True, width="stretch")
    st.download_button("Download CSV", inputs.csv_bytes(table), "translations.csv", "text/csv",
                       key="translate_download")

    st.subheader("Cross-attention")
    row = 0
    if len(results) > 1:
        row = st.selectbox("Line", range(len(results)), key="translate_line",
                           format_func=lambda i: f"{i + 1}: {lines[i][:60]}")
    chosen = results[row]
    cross = chosen.attention["cross"]
    heads = cross[0].shape[0]
    left, middle, right = st.columns(3)
    layer = left.selectbox("Decoder layer", [figures.MEAN, *range(1, len(cross) + 1)], index=len(cross),
                           key="translate_layer", format_func=lambda v: figures.choice_label(v, "layer"))
    head = middle.selectbox("Head", [figures.MEAN, *range(1, heads + 1)], key="translate_head",
                            format_func=lambda v: figures.choice_label(v, "head"))
    grid = right.toggle("All heads of the layer", key="translate_all_heads", disabled=layer == figures.MEAN)
    if grid and layer != figures.MEAN:
        fig = figures.heads_grid(cross[int(layer) - 1], chosen.src_tokens, chosen.tokens,
                                 f"Cross-attention, layer {layer}, every head")
    else:
        fig = figures.heatmap(figures.pick_map(cross, layer, head), chosen.src_tokens, chosen.tokens,
                              f"Cross-attention ({figures.choice_label(layer, 'layer')}, "
                              f"{figures.choice_label(head, 'head')})", "source tokens", "target tokens")
    st.plotly_chart(fig, width="stretch", key="translate_chart")
    st.caption("Row t: the step that produced target token t; each row sums to 1 over the source tokens. "
               "Recorded by the search that produced the text (no second pass).")
