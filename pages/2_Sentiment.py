"""Sentiment: label and class probabilities, the tokens the classifier attended to, batch mode with CSV."""
import streamlit as st

from playground import inputs, models
from playground.sentiment import widgets as sentiment_widgets
from playground.serving import widgets as serving
from runtime import providers, spec

models.page_setup("Sentiment")
st.title("Sentiment")

models.require_model("sentiment")

with st.sidebar:
    st.header("Runtime")
    precision = st.radio("Precision", spec.PRECISIONS, key="sentiment_precision", horizontal=True)
    provider = st.selectbox("Execution provider", providers.PROVIDER_CHOICES, key="sentiment_provider")

model = serving.model("sentiment", provider, precision)  # the service at TX_SERVE_URL, if set
if model is None:
    st.stop()
models.provider_caption(model)

reviews = inputs.examples("sentiment", "text")
st.session_state.setdefault("sentiment_text", reviews[0])

single, batch = st.tabs(["One review", "Batch"])

with single:
    sentiment_widgets.one_review(model, precision, reviews)  # a fragment: its clicks rerun only it

with batch:
    lines_text = st.text_area(f"One review per line (at most {inputs.MAX_LINES})", key="sentiment_batch_text",
                              height=150)
    if st.button("Classify all lines", key="sentiment_batch_go"):
        sentiment_widgets.classify_lines(model, precision, lines_text)
    st.caption(f"…or a CSV file with a header row, classified as soon as it is uploaded. The texts come from its "
               f"`text` column (else `review`, `sentence`, or the last column). At most {inputs.MAX_LINES} reviews "
               f"and {st.get_option('server.maxUploadSize')} MB per file; a bigger file is refused and nothing of it "
               "is classified. The download keeps every column and row of the file, in order; blank rows are kept "
               "and marked, not classified.")
    upload = st.file_uploader("CSV file", type=["csv"], key="sentiment_upload")
    seen = sentiment_widgets.take_upload(upload, model, precision)
    done = st.session_state.get("sentiment_batch")
    sentiment_widgets.upload_notice(upload, seen, done)
    if done:
        sentiment_widgets.batch_result(done, model)
