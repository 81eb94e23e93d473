"""Translate: DE→EN / EN→DE through onnxruntime, decoding controls, cross-attention, batch with CSV download."""
import pandas as pd
import streamlit as st

from playground import figures, inputs, models
from runtime import confidence, providers, spec, text

models.page_setup("Translate")
st.title("Translate")

models.require_model("translate")
known_languages = sorted({models.LANGUAGES.get(lang, lang) for pair in models.directions() for lang in pair})
st.caption(f"This model knows {' and '.join(known_languages)} only: it translates "
           f"{', '.join(models.direction_label(d) for d in models.directions())}. Text in any other language or "
           "script gets a warning, and every output gets a verdict (probably wrong, uncertain or probably right) "
           "measured on hand-judged outputs of the decoding method used.")

with st.sidebar:
    st.header("Decoding")
    direction = st.radio("Direction", models.directions(), format_func=models.direction_label,
                         key="translate_direction", horizontal=True)
    method = st.selectbox("Method", text.METHODS, key="translate_method",
                          format_func={"beam": "beam search", "greedy": "greedy", "sample": "sampling"}.get)
    beam = st.slider("Beam size", 1, 16, 4, key="translate_beam", disabled=method != "beam")
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

# Everything the result depends on, in the order a change is named: a result made with other values is dropped.
settings = {"direction": direction, "text": typed, "method": method, "precision": precision, "provider": provider,
            "length penalty": length_penalty}
if method == "beam":
    settings.update({"beam size": beam, "stopping": "once a beam's worth finished" if stop_early else "exact"})
if method == "sample":
    settings.update({"temperature": temperature, "top-k": top_k, "top-p": top_p, "seed": int(seed)})

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
                    temperature=temperature, top_k=top_k, top_p=top_p, seed=int(seed), attention="cross",
                    patience=1.0 if stop_early and method == "beam" else None))
        except Exception as e:
            models.show_error(e, "translate")
        else:
            st.session_state["translate_results"] = {"lines": lines, "results": results, "ms": ms,
                                                     "settings": settings, "provider": model.provider}

done = st.session_state.get("translate_results")
if done and done["settings"] != settings:  # never an fp32 result under "int8", nor German under an English box
    changed = next((name for name, value in settings.items() if done["settings"].get(name) != value), "settings")
    st.session_state.pop("translate_results")
    st.info(f"The {changed} changed since the last translation: click Translate for a new result.")
    done = None


@st.cache_data(show_spinner=False, max_entries=4)
def read_calibrations(path: str, version: tuple) -> dict[str, confidence.MethodCalibration]:
    return confidence.read_calibration(path)


calibrations = read_calibrations(str(models.model_dir("translate")),
                                 models.stamp("translate", confidence.CONFIDENCE_FILE))
METHOD_TITLES = {"beam": "beam search", "greedy": "greedy", "sample": "sampling"}


def method_label(used: dict) -> str:
    if used["method"] == "beam":
        early = ", stopped once a beam's worth finished" if used["stopping"] != "exact" else ""
        return f"beam {used['beam size']}, α {used['length penalty']:g}{early}"
    if used["method"] == "sample":
        return (f"sampling (temperature {used['temperature']:g}, top-k {used['top-k']}, top-p {used['top-p']:g}, "
                f"seed {used['seed']})")
    return "greedy"


def no_verdict_reason(cal: confidence.MethodCalibration | None, method: str) -> str:
    title = METHOD_TITLES.get(method, method)
    if cal is not None and not cal.calibrated:
        return f"{title} is not calibrated ({cal.reason})"
    if calibrations:
        return f"{title} is not calibrated for this model (its confidence.json measured other methods only)"
    return ("this model has no measured calibration (`python -m tx confidence MODEL_DIR` measures one on "
            "hand-judged outputs)")


def basis(cal: confidence.MethodCalibration | None, used: dict) -> str:
    """Where the verdicts come from, and how the settings used differ from the measured ones."""
    if cal is None or not cal.calibrated:
        return ""
    kind = confidence.METHOD_NAMES.get(cal.method, cal.method)
    said = f"verdicts measured on {cal.outputs} hand-judged everyday {kind} outputs"
    measured = (cal.settings.get("beam"), cal.settings.get("length_penalty"))
    if cal.method == "beam" and None not in measured and ((used["beam size"], used["length penalty"]) != measured
                                                          or used["stopping"] != "exact"):
        said += (f" of beam {measured[0]}, α {measured[1]:g} (your settings differ: read the verdict as a rough "
                 "guide)")
    if used["precision"] != "fp32":
        said += f" (fp32 outputs; {used['precision']} shifts confidences slightly)"
    return said


def how_measured(cal: confidence.MethodCalibration | None) -> None:
    """The method's bands, in an expander: what each verdict rests on."""
    if cal is None or not cal.calibrated or not cal.bands:
        return
    with st.expander("What the verdicts rest on"):
        rows = [f"| {b.label} | {b.outputs} | {b.right} | {cal.band_verdict(b)} |" for b in cal.bands]
        st.markdown("| shown confidence | hand-judged outputs | right | verdict |\n|---|--:|--:|---|\n"
                    + "\n".join(rows))
        rule = cal.rule
        said = ("An output counts only where it is exactly the text that was judged by hand. A confidence is "
                "placed by the percentage shown.")
        if rule.get("wrong_at_most") is not None and rule.get("right_at_least") is not None:
            said += (f" Probably wrong: at most {rule['wrong_at_most']:.0%} of the judged outputs there were right; "
                     f"probably right: at least {rule['right_at_least']:.0%} were; uncertain between. The cuts "
                     "sit on band edges.")
        st.caption(said)


if done:
    lines, results, used = done["lines"], done["results"], done["settings"]
    cal = calibrations.get(used["method"])
    verdicts = [confidence.judge(calibrations, used["method"], r.confidence) for r in results]
    cut = [i + 1 for i, r in enumerate(results) if r.truncated]
    if cut:
        st.warning(f"Input too long: line(s) {', '.join(map(str, cut))} exceeded the model's "
                   f"{model.max_src_len}-token limit and were truncated; only their beginning was translated.")
    st.subheader(f"{models.direction_label(used['direction'])} · {method_label(used)} · "
                 f"{used['precision']} on {done['provider']} · {done['ms']:.0f} ms")
    source_language = models.LANGUAGES.get(used["direction"][0], used["direction"][0])
    outside = [i + 1 for i, r in enumerate(results) if r.warning]
    if len(results) == 1:
        st.text(f"Source ({source_language}): {lines[0]}")
    if len(results) == 1 and outside:
        st.warning(results[0].warning)
        st.info(f"Model output: {results[0].text or '(empty output)'}")
    elif outside:
        st.warning(f"Line(s) {', '.join(map(str, outside))} are mostly outside what the model was trained on "
                   "(German and English only): their translations mean little.")
    if len(results) == 1 and not outside:
        only, v = results[0], verdicts[0]
        shown = f"Confidence {v.percent}%"
        why = "; ".join(part for part in (v.evidence, v.region) if part)
        if v.verdict == confidence.WRONG:
            st.warning(f"Low confidence: probably wrong. {shown}: {why}.")
        elif v.verdict == confidence.UNCERTAIN:
            st.warning(f"Uncertain: this translation may be right or wrong. {shown}: {why}.")
        elif v.verdict == confidence.RIGHT:
            st.info(f"Probably right (not a guarantee). {shown}: {why}.")
        else:
            st.info(f"No verdict: {no_verdict_reason(cal, used['method'])}. {shown}.")
        # A plain, copyable box, never a green "success": the model is often wrong.
        st.code(only.text or "(empty output)", language=None, wrap_lines=True)
        unsure = sorted(zip(only.token_probs, only.tokens, strict=True))[:3]
        said = basis(cal, used)
        st.caption(f"{shown} is the geometric mean of the model's token probabilities"
                   + (f"; {said}" if said else "") + f" · least sure of: "
                   f"{', '.join(f'{tok!r} ({p:.0%})' for p, tok in unsure)} · score (length-normalised "
                   f"log-probability): {only.score:.3f} · {len(only.tokens)} tokens")
        known = by_source.get(lines[0])
        if known and known.get("verdict") == "fails":
            st.warning(f"A known failure of this model: judged wrong by hand ({known.get('note') or 'see the card'}).")
    table = pd.DataFrame({"source": lines, "translation": [r.text for r in results],
                          "verdict": [v.verdict or "no verdict" for v in verdicts],
                          "confidence": [round(r.confidence, 3) for r in results],
                          "score": [round(r.score, 4) for r in results],
                          "truncated": [r.truncated for r in results]})
    if len(results) > 1:
        grouped = {verdict: ", ".join(str(i + 1) for i, v in enumerate(verdicts) if v.verdict == verdict)
                   for verdict in (confidence.WRONG, confidence.UNCERTAIN, confidence.RIGHT)}
        if grouped[confidence.WRONG]:
            st.warning(f"Low confidence (probably wrong): line(s) {grouped[confidence.WRONG]}.")
        if grouped[confidence.UNCERTAIN]:
            st.warning(f"Uncertain: line(s) {grouped[confidence.UNCERTAIN]} may be right or wrong.")
        if grouped[confidence.RIGHT]:
            st.info(f"Probably right (not a guarantee): line(s) {grouped[confidence.RIGHT]}.")
        if any(v.verdict is None for v in verdicts):
            st.info(f"No verdict: {no_verdict_reason(cal, used['method'])}.")
        st.dataframe(table, hide_index=True, width="stretch")
        said = basis(cal, used)
        if said:
            st.caption(f"Confidence: the geometric mean of the model's token probabilities; {said}.")
    how_measured(cal)
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
    pair = "-".join(used["direction"])
    walk, explore = st.columns(2)
    walk.page_link("pages/8_Walkthrough.py", label="This line step by step, inside the model (Walkthrough)",
                   icon="🧭", query_params={"model": f"translate:{pair}", "text": lines[row], "step": "dec_cross"})
    explore.page_link("pages/6_Decoding_explorer.py", label="How its words were chosen (Decoding explorer)",
                      icon="🌳", query_params={"direction": pair, "text": lines[row]})
