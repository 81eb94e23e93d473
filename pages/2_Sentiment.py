"""Sentiment: label and class probabilities, the tokens the classifier attended to, batch mode with CSV."""
import pandas as pd
import streamlit as st

from playground import figures, files, inputs, models
from runtime import providers, spec

models.page_setup("Sentiment")
st.title("Sentiment")

models.require_model("sentiment")

with st.sidebar:
    st.header("Runtime")
    precision = st.radio("Precision", spec.PRECISIONS, key="sentiment_precision", horizontal=True)
    provider = st.selectbox("Execution provider", providers.PROVIDER_CHOICES, key="sentiment_provider")

model = models.onnx_model("sentiment", provider, precision)
if model is None:
    st.stop()
models.provider_caption(model)

reviews = inputs.examples("sentiment", "text")
st.session_state.setdefault("sentiment_text", reviews[0])


def use_example() -> None:
    st.session_state["sentiment_text"] = st.session_state["sentiment_example"]


def truncation_notice(cut: list[int]) -> None:
    """cut: the numbers (line, row) of the texts the model saw only the beginning of."""
    if cut:
        st.warning(f"Input too long: text(s) {', '.join(map(str, cut[:20]))} exceeded the model's "
                   f"{model.max_len}-token limit and were truncated; only their beginning was classified.")


def classify_table(frame: pd.DataFrame, column: str, source: str, file_id: str | None = None) -> None:
    """Classify a table's texts (inputs.with_predictions) and keep the result, with where it came from."""
    table, ms = inputs.timed(lambda: inputs.with_predictions(frame, column, model.classify))
    st.session_state["sentiment_batch"] = {"table": table, "source": source, "file_id": file_id, "ms": ms,
                                           "runtime": (precision, model.provider)}


def calibration_note(probability: float) -> str:
    """What the probability means, from the model's calibration.json (`python -m tx calibration`): the test split's
    expected calibration error and how often the label was right among the test reviews given a like probability."""
    report = files.read_json(models.model_dir("sentiment") / "calibration.json")
    splits = report.get("splits") if isinstance(report, dict) else None
    name = "test" if isinstance(splits, dict) and "test" in splits else next(iter(splits or {}), None)
    try:
        measured, reviews = splits[name]["calibrated"], int(splits[name]["reviews"])
        edges, counts, accuracy = (measured["reliability"][k] for k in ("edges", "counts", "accuracy"))
        note = (f"The probability is calibrated (temperature scaling) to read as a chance: of the reviews given "
                f"about p%, about p% should have the label given. Measured on the {reviews:,} {name} reviews, the "
                f"two differed by {float(measured['ece']):.1f} points on average (expected calibration error).")
        shown = round(probability, 3)  # the band of the number as shown: 79.96% reads 80.0%, in the 80–90% band
        band = max([i for i, edge in enumerate(edges[:-1]) if round(edge, 6) <= shown] or [0])
        if counts[band] and accuracy[band] is not None:
            note += (f" {round(accuracy[band] * counts[band])} of the {counts[band]:,} {name} reviews given "
                     f"{edges[band]:.0%}–{edges[band + 1]:.0%} had the label the model gave them "
                     f"({accuracy[band]:.0%}).")
    except (KeyError, TypeError, ValueError, IndexError):
        return ("This probability is not known to be calibrated (no calibration report in the model directory: "
                "`python -m tx calibration` writes one): read it as the model's score, not as a chance.")
    return note


def negation_note(text: str) -> None:
    """Where the text negates, the model's known weakness there: its accuracy on the model card's negation probes
    when `python -m tx evaluate sentiment --split negation` left it in the model directory, else the card's word."""
    found = inputs.negations(text)
    if not found:
        return
    words = ", ".join(f"“{w}”" for w in found)
    scores = files.read_json(models.model_dir("sentiment") / inputs.NEGATION_EVAL_FILE)
    try:
        confusion = scores["confusion"]["rows_gold_cols_predicted"]
        right, probes = sum(confusion[i][i] for i in range(len(confusion))), int(scores["reviews"])
        commoner = max(sum(row) for row in confusion) / probes
        measured = (f"on the model card's {probes} negation probes (hand-written sentences whose label turns on a "
                    f"negation) it was right on {right} of the {probes} ({float(scores['accuracy']):.1f}%; always "
                    f"giving the commoner label would get {commoner:.0%}).")
    except (KeyError, TypeError, ValueError, IndexError, ZeroDivisionError):
        measured = ("the model card measures it on hand-written negation probes (sentences whose label turns on a "
                    "negation) and gives the result (see the Model card page); the model directory holds no "
                    f"`{inputs.NEGATION_EVAL_FILE}` (what `python -m tx evaluate sentiment --split negation` writes), "
                    "so this page shows no number.")
    st.warning(f"This review has a negation ({words}). Negation is this model's known weakness: {measured} "
               "Treat this label with extra care.")


single, batch = st.tabs(["One review", "Batch"])

with single:
    st.selectbox("Example reviews (from the test set)", reviews, index=None, key="sentiment_example",
                 placeholder="pick one to fill the text box", on_change=use_example)
    text = st.text_area("Review text", key="sentiment_text", height=100)
    if st.button("Classify", key="sentiment_go", type="primary"):
        st.session_state.pop("sentiment_result", None)
        if not text or not text.strip():
            st.info("Type a review (or pick an example) to classify.")
        else:
            try:
                with st.spinner("Classifying…"):
                    found, ms = inputs.timed(lambda: model.classify([text.strip()], attention=True))
                st.session_state["sentiment_result"] = {"prediction": found[0], "ms": ms, "text": text.strip(),
                                                        "runtime": (precision, model.provider)}
            except Exception as e:
                models.show_error(e, "sentiment")

    done = st.session_state.get("sentiment_result")
    if done and done["runtime"] != (precision, model.provider):  # never an fp32 result under an "int8" caption
        st.session_state.pop("sentiment_result")
        st.info(f"The runtime changed to {precision} on {model.provider}: click Classify for its result.")
        done = None
    elif done and done["text"] != (text or "").strip():  # never a result under a review it was not given
        st.session_state.pop("sentiment_result")
        st.info("The review changed since the last result: click Classify for its result.")
        done = None
    if done:
        prediction = done["prediction"]
        truncation_notice([1] if prediction.truncated else [])
        probability = prediction.probs[prediction.label]
        shown = f"{prediction.label} ({probability:.1%})"
        if prediction.warning:
            st.warning(prediction.warning)
            st.info(f"The model says {shown}, but see above.")
        else:  # a model output, not a success: shown plainly, with what its probability means
            st.markdown(f"The model says **{prediction.label}**, probability **{probability:.1%}**.")
            st.caption(calibration_note(probability))  # measured on reviews: it says nothing of text outside them
        negation_note(done["text"])
        st.caption(f"{len(prediction.tokens)} tokens · {done['ms']:.0f} ms · {done['runtime'][0]} on "
                   f"{done['runtime'][1]}")
        labels = list(prediction.probs)
        left, right = st.columns([1, 2])
        left.plotly_chart(figures.bar(labels, [prediction.probs[k] for k in labels], "Class probabilities",
                                      "probability"), width="stretch", key="sentiment_probs_chart")
        layers = len(prediction.attention)
        layer = right.selectbox("Encoder layer", [figures.MEAN, *range(1, layers + 1)], index=layers,
                                key="sentiment_layer", format_func=lambda v: figures.choice_label(v, "layer"))
        received = figures.attention_received(prediction.attention, layer).tolist()
        right.plotly_chart(figures.bar(prediction.tokens, received,
                                       "Which tokens the classifier attended to (attention received, heads averaged)",
                                       "mean attention"), width="stretch", key="sentiment_tokens_chart")

with batch:
    lines_text = st.text_area(f"One review per line (at most {inputs.MAX_LINES})", key="sentiment_batch_text",
                              height=150)
    if st.button("Classify all lines", key="sentiment_batch_go"):
        rows = inputs.numbered_lines(lines_text)
        if rows.empty:
            st.info("Paste some reviews (one per line) first; a CSV file is classified as soon as it is uploaded.")
        else:
            st.session_state.pop("sentiment_batch", None)
            try:
                with st.spinner(f"Classifying {len(rows)} reviews…"):
                    classify_table(rows, "text", "the text box")
            except Exception as e:
                models.show_error(e, "sentiment")

    # A file is classified once, when it arrives, never by the button: a browser that refuses a file over the size
    # limit keeps the file uploaded before it and tells the server nothing, so a button would classify that one.
    st.caption(f"…or a CSV file with a header row, classified as soon as it is uploaded. The texts come from its "
               f"`text` column (else `review`, `sentence`, or the last column). At most {inputs.MAX_LINES} reviews "
               f"and {st.get_option('server.maxUploadSize')} MB per file; a bigger file is refused and nothing of it "
               "is classified. The download keeps every column and row of the file, in order; blank rows are kept "
               "and marked, not classified.")
    upload = st.file_uploader("CSV file", type=["csv"], key="sentiment_upload")
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
                    classify_table(frame, column, upload.name, upload.file_id)
                seen["classified"] = True
            except Exception as e:
                models.show_error(e, "sentiment")
    done = st.session_state.get("sentiment_batch")
    if upload is not None and seen and seen["problem"]:
        st.warning(f"{upload.name} was refused and nothing of it was classified: {seen['problem']}.")
    elif upload is not None and seen.get("classified") and (done or {}).get("file_id") != upload.file_id:
        st.caption(f"{upload.name} was classified when it was uploaded; other results have replaced its own since: "
                   "upload it again to see them.")

    if done:
        table, names = done["table"], done["table"].attrs["model_columns"]
        classified = table[table[names["note"]] != inputs.BLANK_NOTE]
        numbers = table["line"] if done["file_id"] is None else pd.Series(range(1, len(table) + 1))
        truncation_notice([int(n) for n, cut in zip(numbers, table[names["truncated"]], strict=True)
                           if pd.notna(cut) and bool(cut)])
        counts = classified[names["label"]].value_counts()
        st.markdown(f"**{len(classified)} review{'s' if len(classified) != 1 else ''}** in {done['ms']:.0f} ms: "
                    + ", ".join(f"{label} {n}" for label, n in counts.items()))
        blank = len(table) - len(classified)
        if done["file_id"] is None:
            st.caption(f"From the text box (`line`: where each review was; blank lines skipped) · {done['runtime'][0]} "
                       f"on {done['runtime'][1]}")
        else:
            st.caption(f"From {done['source']}: all {len(table)} rows and every column of the file, in order"
                       + (f"; {blank} blank row{'s' if blank != 1 else ''} kept and marked in `{names['note']}`, "
                          "not classified" if blank else "")
                       + f" · {done['runtime'][0]} on {done['runtime'][1]}")
        outside = int((classified[names["warning"]] != "").sum())
        if outside:
            st.warning(f"{outside} of them are mostly outside what the model was trained on (see the "
                       f"`{names['warning']}` column): their labels mean little.")
        st.dataframe(table, hide_index=True, width="stretch")
        st.download_button("Download CSV", inputs.csv_bytes(table), "sentiment.csv", "text/csv",
                           key="sentiment_download")
