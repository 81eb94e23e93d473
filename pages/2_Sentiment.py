"""Sentiment: label and class probabilities, the tokens the classifier attended to, batch mode with CSV."""
import pandas as pd
import streamlit as st

from playground import figures, inputs, models
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
                st.session_state["sentiment_result"] = {"prediction": found[0], "ms": ms,
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
        shown = f"{prediction.label} ({prediction.probs[prediction.label]:.1%})"
        if prediction.warning:
            st.warning(prediction.warning)
            st.info(f"The model says {shown}, but see above.")
        else:
            st.success(shown)
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
