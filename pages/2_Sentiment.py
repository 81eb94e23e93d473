"""Sentiment: label and class probabilities, the tokens the classifier attended to, batch mode with CSV."""
import pandas as pd
import streamlit as st

from playground import cards, figures, inputs, models
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


def truncation_notice(predictions, first_line: int = 1) -> None:
    cut = [i + first_line for i, p in enumerate(predictions) if p.truncated]
    if cut:
        st.warning(f"Input too long: text(s) {', '.join(map(str, cut[:20]))} exceeded the model's "
                   f"{model.max_len}-token limit and were truncated; only their beginning was classified.")


def calibration_note(probability: float) -> str:
    """What the probability means, from the model's calibration.json (`python -m tx calibration`): the test split's
    expected calibration error and how often the label was right among the test reviews given a like probability."""
    report = cards.read_json(models.model_dir("sentiment") / "calibration.json")
    splits = report.get("splits") if isinstance(report, dict) else None
    name = "test" if isinstance(splits, dict) and "test" in splits else next(iter(splits or {}), None)
    try:
        measured, reviews = splits[name]["calibrated"], int(splits[name]["reviews"])
        edges, counts, accuracy = (measured["reliability"][k] for k in ("edges", "counts", "accuracy"))
        note = (f"The probability is calibrated: a label given about p% was right about p% of the time. On the "
                f"{reviews:,} {name} reviews the gap between the two averaged {float(measured['ece']):.1f} points "
                "(expected calibration error).")
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
    scores = cards.read_json(models.model_dir("sentiment") / inputs.NEGATION_EVAL_FILE)
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
    if done:
        prediction = done["prediction"]
        truncation_notice([prediction])
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
    lines_text = st.text_area("One review per line", key="sentiment_batch_text", height=150)
    upload = st.file_uploader("…or a CSV file with a `text` column", type=["csv"], key="sentiment_upload")
    if st.button("Classify all", key="sentiment_batch_go"):
        st.session_state.pop("sentiment_batch", None)
        try:
            texts = inputs.texts_from_csv(upload.getvalue()) if upload is not None else []
            texts = inputs.split_lines("\n".join(texts)) if texts else inputs.split_lines(lines_text)
            if not texts:
                st.info("Paste some reviews (one per line) or upload a CSV first.")
            else:
                with st.spinner(f"Classifying {len(texts)} reviews…"):
                    found, ms = inputs.timed(lambda: model.classify(texts))
                st.session_state["sentiment_batch"] = {"texts": texts, "predictions": found, "ms": ms}
        except Exception as e:
            models.show_error(e, "sentiment")

    done = st.session_state.get("sentiment_batch")
    if done:
        predictions = done["predictions"]
        truncation_notice(predictions)
        table = pd.DataFrame({"text": done["texts"], "label": [p.label for p in predictions],
                              **{f"p_{label}": [round(p.probs[label], 4) for p in predictions]
                                 for label in predictions[0].probs},
                              "truncated": [p.truncated for p in predictions],
                              "warning": [p.warning or "" for p in predictions]})
        counts = table["label"].value_counts()
        st.markdown(f"**{len(table)} review{'s' if len(table) != 1 else ''}** in {done['ms']:.0f} ms: "
                    + ", ".join(f"{label} {n}" for label, n in counts.items()))
        outside = int((table["warning"] != "").sum())
        if outside:
            st.warning(f"{outside} of them are mostly outside what the model was trained on (see the warning "
                       "column): their labels mean little.")
        st.dataframe(table, hide_index=True, width="stretch")
        st.download_button("Download CSV", inputs.csv_bytes(table), "sentiment.csv", "text/csv",
                           key="sentiment_download")
