"""Transformer playground: the home page (`streamlit run app.py`; the other pages are in pages/)."""
import os

import onnxruntime as ort
import streamlit as st

from playground import model_paths, models
from playground.model_card import sources

models.page_setup("Home")
st.title("Transformer playground")
st.markdown(
    "A Transformer written from scratch in PyTorch after *Attention Is All You Need* (`tx/`), trained on "
    "German↔English dictionary sentences and movie-review snippets, exported to ONNX (`export/`) and served "
    "here through onnxruntime. Translate and classify text, look inside the attention heads, and time "
    "PyTorch against onnxruntime fp32 and int8."
)

st.subheader("Models")
st.caption(f"Model directory: `{model_paths.models_root()}` (set `{model_paths.MODELS_ENV}` to use another)")
for task in models.TASKS:
    problem = models.load_problem(task)  # the files really opened: a readable config alone is not a working model
    if problem and not model_paths.has_model(task):
        st.warning(problem)
        continue
    st.markdown(f"- {'✅' if problem is None else '❌'} {sources.card_line(task)}")
    if problem:
        st.error(problem)

st.subheader("Execution provider")
loaded = next((m for m in (models.onnx_model(t, "auto", quiet=True) for t in models.TASKS) if m is not None), None)
if loaded is None:
    st.info("No exported model loaded, so no onnxruntime session runs yet. " + models.create_hint("translate"))
else:
    st.markdown(f"onnxruntime {ort.__version__} runs the models on **{loaded.provider}** (asked for: `auto`).")
    models.cuda_note(loaded.provider_note, box="info")
st.caption(f"Providers compiled into this onnxruntime build: {', '.join(ort.get_available_providers())} "
           "(compiled in is not the same as able to run: the provider above is the one that really runs).")

st.subheader("Pages")
ABOUT = {"Translate": "DE↔EN with greedy, beam search or sampling; cross-attention heatmap; batch with CSV download",
         "Sentiment": "label and class probabilities, the tokens the classifier attended to, batch with CSV",
         "Attention explorer": "every layer and head of every attention kind; the positional encoding",
         "Walkthrough": "one sentence through the model step by step: Q, K, V, scores, softmax, norms, the output",
         "Decoding explorer": "next-token distributions under temperature, top-k, top-p; beam search as a tree",
         "Experiments": "why the model translates as it does: edit and compare, int8 vs fp32, your model vs ours, "
                        "the logit lens, knocking out heads, which source words a target word needed",
         "Latency": "PyTorch eager vs onnxruntime fp32 vs int8 on your input, p50/p90, speed-ups",
         "Model card": "data and licence, training curves, test metrics, the ONNX export report",
         "Train your own": "a small Transformer learns copy/reverse/sort/adding or your pairs while you watch, then "
                           "runs through onnxruntime"}
for script, label, icon in models.PAGES[1:]:
    st.page_link(script, label=f"{label}: {ABOUT[label]}", icon=icon)
WEB_URL = os.environ.get("TX_WEB_URL", "http://localhost:8502/")  # where `make run` serves dist/web
st.markdown(f"🌐 [The translator in your browser]({WEB_URL}): the same model through onnxruntime-web, no server "
            "needed (`make web` builds it; `make run` serves it beside this app)")
