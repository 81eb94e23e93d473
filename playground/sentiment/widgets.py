"""The Sentiment page's actions and result blocks: classifying a review, the typed lines or an uploaded file (each
result kept with the runtime it ran on), and drawing what came out with the words of notes.py, negation.py and
batch.py."""
from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from playground import figures, files, inputs, model_paths, models
from playground import widgets as shared

from . import batch, negation, notes


def truncation_notice(cut: list[int], model) -> None:
    said = notes.truncation_warning(cut, model.max_len)
    if said:
        st.warning(said)


@st.fragment
def one_review(model, precision: str, reviews: list[str]) -> None:
    """The "One review" tab: an example picker, the text, Classify and its result, one fragment: a click (or a new
    example, or the layer of the attention chart) reruns this block only, not the page (issue 44.9)."""
    st.selectbox("Example reviews (from the test set)", reviews, index=None, key="sentiment_example",
                 placeholder="pick one to fill the text box",
                 on_change=shared.fill_from("sentiment_example", "sentiment_text"))
    text = st.text_area("Review text", key="sentiment_text", height=100)
    if st.button("Classify", key="sentiment_go", type="primary"):
        classify_review(model, precision, text)
    done = kept_review(model, precision, text)
    if done:
        review_result(done, model)


def classify_review(model, precision: str, text: str) -> None:
    """Classify one review (with its attention) and keep the result, with the text and runtime it came from."""
    st.session_state.pop("sentiment_result", None)
    if not text or not text.strip():
        st.info("Type a review (or pick an example) to classify.")
        return
    try:
        with st.spinner("Classifying…"):
            found, ms = inputs.timed(lambda: model.classify([text.strip()], attention=True))
        st.session_state["sentiment_result"] = {"prediction": found[0], "ms": ms, "text": text.strip(),
                                                "runtime": (precision, model.provider)}
    except Exception as e:
        models.show_error(e, "sentiment")


def kept_review(model, precision: str, text: str | None) -> dict[str, Any] | None:
    """The last review's result, unless the runtime or the review changed since: then it is dropped, and why said."""
    done = st.session_state.get("sentiment_result")
    if done and done["runtime"] != (precision, model.provider):  # never an fp32 result under an "int8" caption
        st.session_state.pop("sentiment_result")
        st.info(f"The runtime changed to {precision} on {model.provider}: click Classify for its result.")
        return None
    if done and done["text"] != (text or "").strip():  # never a result under a review it was not given
        st.session_state.pop("sentiment_result")
        st.info("The review changed since the last result: click Classify for its result.")
        return None
    return done


def review_result(done: dict[str, Any], model) -> None:
    """The label, plainly (a model output, not a success), what its probability means, a negation's warning, the
    class probabilities and the tokens the classifier attended to."""
    prediction = done["prediction"]
    truncation_notice([1] if prediction.truncated else [], model)
    probability = prediction.probs[prediction.label]
    if prediction.warning:
        st.warning(prediction.warning)
        st.info(f"The model says {prediction.label} ({probability:.1%}), but see above.")
    else:
        st.markdown(f"The model says **{prediction.label}**, probability **{probability:.1%}**.")
        # measured on reviews: it says nothing of text outside them
        report = files.read_json(model_paths.model_dir("sentiment") / notes.CALIBRATION_FILE)
        st.caption(notes.calibration_note(report, probability))
    warning = negation.negation_warning(
        done["text"], files.read_json(model_paths.model_dir("sentiment") / negation.NEGATION_EVAL_FILE))
    if warning:
        st.warning(warning)
    st.caption(notes.details(prediction, done["ms"], done["runtime"]))
    labels = list(prediction.probs)
    left, right = st.columns([1, 2])
    left.plotly_chart(figures.bar(labels, [prediction.probs[k] for k in labels], "Class probabilities",
                                  "probability"), width="stretch", key="sentiment_probs_chart")
    layer = shared.layer_or_head(right.selectbox, "Encoder layer", len(prediction.attention), "layer",
                                 index=len(prediction.attention), key="sentiment_layer")
    received = figures.attention_received(prediction.attention, layer).tolist()
    right.plotly_chart(figures.bar(prediction.tokens, received,
                                   "Which tokens the classifier attended to (attention received, heads averaged)",
                                   "mean attention"), width="stretch", key="sentiment_tokens_chart")


def classify_table(model, precision: str, frame: pd.DataFrame, column: str, source: str,
                   file_id: str | None = None) -> None:
    """Classify a table's texts (inputs.with_predictions) and keep the result, with where it came from."""
    table, ms = inputs.timed(lambda: inputs.with_predictions(frame, column, model.classify))
    st.session_state["sentiment_batch"] = {"table": table, "source": source, "file_id": file_id, "ms": ms,
                                           "runtime": (precision, model.provider)}


def classify_lines(model, precision: str, lines_text: str | None) -> None:
    """The "Classify all lines" button: the typed lines, never a file."""
    rows, notice = inputs.numbered_lines(lines_text)
    if notice:
        st.warning(notice)
    if rows.empty:
        st.info("Paste some reviews (one per line) first; a CSV file is classified as soon as it is uploaded.")
        return
    st.session_state.pop("sentiment_batch", None)
    try:
        with st.spinner(f"Classifying {len(rows)} reviews…"):
            classify_table(model, precision, rows, "text", "the text box")
    except Exception as e:
        models.show_error(e, "sentiment")


def take_upload(upload, model, precision: str) -> dict[str, Any] | None:
    """A file is classified once, when it arrives, never by the button: a browser that refuses a file over the size
    limit keeps the file uploaded before it and tells the server nothing, so a button would classify that one.
    Returns what is known of the file now in the uploader (its id, why it was refused, whether it was classified)."""
    seen = st.session_state.get("sentiment_file")
    if upload is None:
        st.session_state.pop("sentiment_file", None)
    elif seen is None or seen["id"] != upload.file_id:
        st.session_state.pop("sentiment_batch", None)  # whatever came before is replaced, by results or a refusal
        seen = st.session_state["sentiment_file"] = {"id": upload.file_id, "problem": None}
        try:
            frame, column = inputs.read_csv_table(upload.getvalue())
        except ValueError as e:
            seen["problem"] = str(e)
        else:
            try:
                with st.spinner(f"Classifying {upload.name}…"):
                    classify_table(model, precision, frame, column, upload.name, upload.file_id)
                seen["classified"] = True
            except Exception as e:
                models.show_error(e, "sentiment")
    return seen


def upload_notice(upload, seen: dict[str, Any] | None, done: dict[str, Any] | None) -> None:
    """Why the file in the uploader shows no results: it was refused, or later results replaced its own."""
    if upload is not None and seen and seen["problem"]:
        st.warning(f"{upload.name} was refused and nothing of it was classified: {seen['problem']}.")
    elif upload is not None and seen.get("classified") and (done or {}).get("file_id") != upload.file_id:
        st.caption(f"{upload.name} was classified when it was uploaded; other results have replaced its own since: "
                   "upload it again to see them.")


def batch_result(done: dict[str, Any], model) -> None:
    """The batch's table, what it holds and where it came from, and its download."""
    table = done["table"]
    truncation_notice(batch.truncated(done), model)
    st.markdown(batch.summary(done))
    st.caption(batch.source_caption(done))
    outside = batch.outside_warning(table)
    if outside:
        st.warning(outside)
    st.dataframe(table, hide_index=True, width="stretch")
    st.download_button("Download CSV", inputs.csv_bytes(table), "sentiment.csv", "text/csv",
                       key="sentiment_download", on_click="ignore")
