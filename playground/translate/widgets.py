"""The Translate page's result blocks: the verdicts over the output (verdicts.py's words), the batch table with
its download, and the cross-attention map with the links into the explorers."""
from __future__ import annotations

from typing import Any

import streamlit as st

from playground import figures, inputs, model_paths, models
from playground import widgets as shared
from runtime import confidence, confidence_score

from . import calibration_tables, result_words, verdicts
from .cross import cross_map, heads_figure
from .settings import Decoding, first_change


@st.cache_data(show_spinner=False, max_entries=4)
def _read_calibrations(path: str, version: tuple) -> dict[str, confidence.MethodCalibration]:
    return confidence.read_calibration(path)


def calibrations() -> dict[str, confidence.MethodCalibration]:
    """The translator's confidence.json, per decoding method, read again when the file changes."""
    return _read_calibrations(str(model_paths.model_dir("translate")),
                              model_paths.stamp("translate", confidence.CONFIDENCE_FILE))


def translate(model, typed: str, decoding: Decoding, settings: dict[str, Any]) -> None:
    """Translate the typed lines and keep the result with the settings it was made with; a model error is shown."""
    lines, notice = inputs.split_lines(typed)
    if notice:
        st.warning(notice)
    st.session_state.pop("translate_results", None)
    if not lines:
        st.info("Type a sentence (or pick an example) to translate.")
        return
    try:
        with st.spinner(f"Translating {len(lines)} line(s)…"):
            lists, ms = inputs.timed(lambda: model.translate_n_best(lines, **decoding.search(),
                                                                    **decoding.steering(len(lines))))
    except Exception as e:
        models.show_error(e, "translate")
    else:
        results = [hypotheses[0] for hypotheses in lists]  # the n best's first is what translate() returns
        st.session_state["translate_results"] = {"lines": lines, "results": results, "n_best": lists, "ms": ms,
                                                 "settings": settings, "provider": model.provider,
                                                 "back": back_translations(model, results, decoding, lines)}


def back_translations(model, results: list, decoding: Decoding, sources: list[str]) -> list | None:
    """Each output translated back with its source forced, where the method's score uses it
    (runtime.confidence_score.back_pass: one more pass); None where it does not, or the pass failed (the score
    then goes without it)."""
    cal = calibrations().get(decoding.method)
    if cal is None or confidence.BACK not in cal.scorers:
        return None
    src, tgt = decoding.direction
    try:
        return confidence_score.back_pass(model, results, sources, src, tgt)
    except Exception:  # the verdict is a side note: a failed back pass must not lose the translation
        return None


def kept_result(settings: dict[str, Any]) -> dict[str, Any] | None:
    """The last result, unless it was made with other settings: then it is dropped and the change named, so no
    fp32 result shows under "int8", nor German under an English box."""
    done = st.session_state.get("translate_results")
    changed = done and first_change(done["settings"], settings)
    if changed:
        st.session_state.pop("translate_results")
        st.info(f"The {changed} changed since the last translation: click Translate for a new result.")
        return None
    return done


def show(box: verdicts.Message) -> None:
    kind, text = box
    (st.warning if kind == "warning" else st.info)(text)


def one_output(done: dict[str, Any], verdict: confidence.Verdict, cal, calibrated: dict,
               known: dict[str, str] | None, frequency: confidence.Frequency | None = None,
               is_forced: bool = False) -> None:
    """A single line's output: its verdict, the output in a plain copyable box, what its confidence means."""
    result, used = done["results"][0], done["settings"]
    show(verdicts.verdict_message(verdict, cal, used, calibrated, frequency, known, result.text, is_forced))
    # A plain, copyable box, never a green "success": the model is often wrong.
    st.code(result.text or "(empty output)", language=None, wrap_lines=True)
    st.caption(verdicts.confidence_caption(result, verdict, verdicts.basis(cal, used)))
    if frequency is not None and not is_forced:
        st.caption(verdicts.score_line(frequency, verdict, result))


def how_measured(cal: confidence.MethodCalibration | None) -> None:
    """The method's bands, in an expander: what each verdict rests on."""
    table = calibration_tables.bands_table(cal)
    if table is None:
        return
    with st.expander("What the verdicts rest on"):
        st.markdown(table)
        st.caption(calibration_tables.rule_note(cal))
        checked = calibration_tables.held_out_table(cal)
        if checked:
            st.markdown(checked)
            st.caption(calibration_tables.held_out_note(cal))
        for kind in (confidence.BACK, confidence.PLAIN):
            scored = calibration_tables.score_table(cal, kind)
            if scored:
                st.markdown(scored)
                st.caption(calibration_tables.score_note(kind))
                break


def result(done: dict[str, Any], model, calibrated: dict, by_source: dict[str, dict[str, str]]) -> None:
    """The result block: truncation and out-of-domain warnings, the output(s) with their verdicts, the table's
    download."""
    lines, results, used = done["lines"], done["results"], done["settings"]
    cal = calibrated.get(used["method"])
    judged = [confidence.judge(calibrated, used["method"], r.confidence) for r in results]
    direction, back = "-".join(used["direction"]), done.get("back") or [None] * len(results)
    is_forced = [verdicts.forced(r, bool(done.get("steered"))) for r in results]
    frequencies = [None if x else confidence.frequency(calibrated, used["method"], r, line, direction, b)
                   for r, line, b, x in zip(results, lines, back, is_forced, strict=True)]
    known = [by_source.get(line) for line in lines]
    cut = result_words.truncation_warning(results, model.max_src_len)
    if cut:
        st.warning(cut)
    st.subheader(result_words.headline(models.direction_label(used["direction"]), used, done["provider"], done["ms"]))
    source_language = models.LANGUAGES.get(used["direction"][0], used["direction"][0])
    single, outside = len(results) == 1, result_words.outside_warning(results)
    if single:
        st.text(f"Source ({source_language}): {lines[0]}")
    if single and results[0].warning:
        st.warning(results[0].warning)
        st.info(f"Model output: {results[0].text or '(empty output)'}")
    elif outside:
        st.warning(outside)
    if single and not results[0].warning:
        one_output(done, judged[0], cal, calibrated, known[0], frequencies[0], is_forced[0])
    table = verdicts.results_table(lines, results, judged, frequencies, known, is_forced)
    if not single:
        hand = [bool(k and k.get("verdict") in ("works", "fails")) for k in known]
        for box in verdicts.batch_messages(judged, cal, used, calibrated, frequencies, hand, is_forced):
            show(box)
        st.dataframe(table, hide_index=True, width="stretch")
        basis_words = verdicts.basis(cal, used)
        if basis_words:
            st.caption(f"Confidence: the geometric mean of the model's token probabilities; {basis_words}.")
    how_measured(cal)
    st.download_button("Download CSV", inputs.csv_bytes(table), "translations.csv", "text/csv",
                       key="translate_download", on_click="ignore")


def cross_attention(done: dict[str, Any]) -> None:
    """The chosen line's cross-attention, recorded by the search that produced it, and the links that open the
    line in the Walkthrough and the Decoding explorer."""
    lines, results = done["lines"], done["results"]
    st.subheader("Cross-attention")
    row = 0
    if len(results) > 1:
        row = st.selectbox("Line", range(len(results)), key="translate_line",
                           format_func=lambda i: f"{i + 1}: {lines[i][:60]}")
    chosen = results[row]
    cross = chosen.attention["cross"]
    left, middle, right = st.columns(3)
    layer = shared.layer_or_head(left.selectbox, "Decoder layer", len(cross), "layer", index=len(cross),
                                 key="translate_layer")
    head = shared.layer_or_head(middle.selectbox, "Head", cross[0].shape[0], "head", key="translate_head")
    grid = right.toggle("All heads of the layer", key="translate_all_heads", disabled=layer == figures.MEAN)
    view = heads_figure(chosen, layer) if grid and layer != figures.MEAN else cross_map(chosen, layer, head)
    if isinstance(view, str):  # markup: escaped by heatmap_markup
        st.markdown(view, unsafe_allow_html=True)
    else:
        st.plotly_chart(view, width="stretch", key="translate_chart")
    st.caption("Row t: the step that produced target token t; each row sums to 1 over the source tokens. "
               "Recorded by the search that produced the text (no second pass).")
    pair = "-".join(done["settings"]["direction"])
    walk, explore = st.columns(2)
    walk.page_link("pages/8_Walkthrough.py", label="This line step by step, inside the model (Walkthrough)",
                   icon="🧭", query_params={"model": f"translate:{pair}", "text": lines[row], "step": "dec_cross"})
    explore.page_link("pages/6_Decoding_explorer.py", label="How its words were chosen (Decoding explorer)",
                      icon="🌳", query_params={"direction": pair, "text": lines[row]})
