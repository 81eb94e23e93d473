"""The Walkthrough page's numbers: the steps it shows, what each step's figures and statistics are made of,
and its shareable URL. Pure functions over a trace (runtime.walkthrough), so a test can check them and a redraw
never runs the model.

A "stage" is one stack's tensors under short names: the encoder of either model (prefix "enc"), or the decoder
(prefix "dec"); `sublayer` picks one attention or feed-forward sublayer of one layer out of it.
"""
from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from typing import Any

import numpy as np
import streamlit as st

from runtime.decoding import softmax
from runtime.walkthrough import ClassificationTrace, ClassifierWalkthrough, TranslationTrace, TranslationWalkthrough

from . import models

MODEL_CHOICES = ("translate:de-en", "translate:en-de", "sentiment")  # what the page's model radio offers
TOP_CANDIDATES = 10  # next-token candidates listed at the output step


@dataclass(frozen=True)
class Step:
    key: str  # the URL's name for it
    title: str
    section: str  # where the paper explains it
    formula: str  # LaTeX
    look: str  # one or two sentences: what to look at
    kind: str  # which view it needs: "tokens", "embedding", "attention", "scores", "heads", "norm", "ffn", "output"
    stack: str = "enc"  # "enc" or "dec"; for attention steps in the decoder: "dec_self" / "dec_cross"


ENCODER_STEPS = [
    Step("tokens", "Tokens: BPE pieces and ids", "§3.4, §5.1",
         r"\text{text} \rightarrow (t_1, \dots, t_S), \; t_i \in \{0, \dots, V-1\}",
         "The tokenizer cuts the text into subword pieces (▁ starts a word) and numbers them. The translator's "
         "source starts with a tag saying which language to write and ends with </s>.", "tokens"),
    Step("embedding", "Embeddings, scaled by √d_model", "§3.4",
         r"x_i = E[t_i] \cdot \sqrt{d_\text{model}}",
         "Each id picks one row of the embedding matrix E. The rows are small (Xavier-initialised), so they are "
         "multiplied by √d_model; the bars show why: unscaled, the positional encoding (norm √(d_model/2)) would "
         "drown the token's identity.", "embedding"),
    Step("positions", "Positional encoding, added", "§3.5",
         r"PE_{(pos, 2i)} = \sin\!\left(pos / 10000^{2i/d_\text{model}}\right), \;"
         r"PE_{(pos, 2i+1)} = \cos\!\left(pos / 10000^{2i/d_\text{model}}\right)",
         "Attention itself ignores order, so each position gets a fixed pattern of sines and cosines added: fast "
         "waves in the first dimensions, slow ones in the last. The sum is what enters layer 1.", "positions"),
    Step("qkv", "Self-attention: queries, keys, values", "§3.2.2",
         r"Q = X W^Q_h,\; K = X W^K_h,\; V = X W^V_h \quad (d_k = d_\text{model} / h)",
         "Three projections of the same input, split into heads of d_k dimensions. A query asks, a key is "
         "matched against queries, a value is what is passed on.", "attention"),
    Step("scores", "Scores: QKᵀ, ÷ √d_k, mask, softmax", "§3.2.1",
         r"\mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}} + M\right), \; M_{ij} \in \{0, -\infty\}",
         "Every query is compared with every key by a dot product; dividing by √d_k keeps the softmax out of its "
         "flat regions when d_k is large. Masked cells (padding; the future, in the decoder) become −∞, so they "
         "get weight 0. Each row of weights sums to 1.", "scores"),
    Step("heads", "Weights × V, heads concatenated, W_O", "§3.2.2",
         r"\mathrm{head}_h = A_h V_h, \quad \mathrm{MultiHead}(X) = \mathrm{Concat}(\mathrm{head}_1, \dots, "
         r"\mathrm{head}_H)\, W^O",
         "Each head's output is a weighted average of its values. The heads are laid side by side again "
         "(d_model wide) and mixed by W^O: the only place the heads talk to each other.", "heads"),
    Step("norm", "Residual connection and LayerNorm", "§3.1, §5.4",
         r"\text{post-LN: } \mathrm{LayerNorm}(x + \mathrm{Sublayer}(x)); \quad "
         r"\text{pre-LN: } x + \mathrm{Sublayer}(\mathrm{LayerNorm}(x))",
         "The sublayer's output is added to its input (the residual stream), then normalised per position to mean "
         "0 and standard deviation 1 (times a learned gain, plus a bias).", "norm"),
    Step("ffn", "Position-wise feed-forward network", "§3.3",
         r"\mathrm{FFN}(x) = \max(0,\; x W_1 + b_1)\, W_2 + b_2",
         "The same two-layer network on every position separately: d_model → d_ff → d_model. The ReLU zeroes "
         "many hidden units; which ones fire is where much of the model's knowledge sits. Then residual + norm "
         "again, and the next layer starts.", "ffn"),
]

DECODER_STEPS = [
    Step("dec_input", "Decoder input: <s> + the translation so far", "§3, §3.4",
         r"y_0 = \langle s\rangle, \; x_t = E[y_t] \sqrt{d_\text{model}} + PE_t",
         "The decoder reads its own output shifted right: at position t it has seen <s> and the first t output "
         "tokens, and predicts token t+1. Same embedding matrix as the source (shared vocabulary).", "embedding",
         "dec"),
    Step("dec_self", "Decoder masked self-attention", "§3.2.3",
         r"\mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}} + M\right), \; M_{ij} = -\infty \text{ for } j > i",
         "The same arithmetic as the encoder's, but the causal mask hides every later position: a position may "
         "only look back, as it will when generating.", "scores", "dec_self"),
    Step("dec_cross", "Cross-attention: target queries, source keys and values", "§3.2.3",
         r"\mathrm{softmax}\!\left(\frac{Q_\text{target} K_\text{memory}^\top}{\sqrt{d_k}}\right) "
         r"V_\text{memory}",
         "Queries come from the decoder, keys and values from the encoder's output (the memory): here the "
         "translation looks at the source. Often one head lines up the words like a dictionary.", "scores",
         "dec_cross"),
    Step("dec_ffn", "Decoder feed-forward", "§3.3", r"\mathrm{FFN}(x) = \max(0,\; x W_1 + b_1)\, W_2 + b_2",
         "As in the encoder, per position, then residual + norm.", "ffn", "dec"),
    Step("output", "Output layer: tied embeddings, softmax, the next token", "§3.4",
         r"P(y_{t+1}) = \mathrm{softmax}\!\left(h_t E^\top\right)",
         "The last hidden state is compared with every row of the same embedding matrix (weights tied): the "
         "most similar rows become the likeliest next tokens. Greedy decoding takes the top one.", "output", "dec"),
]

CLASSIFIER_STEPS = [
    Step("pool", "Pooling: one vector for the whole text", "(BERT-style classifier, not in the paper)",
         r"p_d = \max_i h_{i,d} \;\text{(max pooling)} \quad\text{or}\quad p = \tfrac{1}{S}\textstyle\sum_i h_i",
         "The encoder gives one vector per token; the classifier needs one per text, so it pools over the "
         "tokens (padding excluded). With max pooling each dimension comes from the token where it is largest.",
         "pool"),
    Step("head", "Classifier head and calibrated probabilities", "(temperature scaling: Guo et al., 2017)",
         r"z = p W + b, \quad P(c) = \mathrm{softmax}(z / T)_c",
         "A linear layer turns the pooled vector into one score per label. Dividing by the temperature T (fitted "
         "on held-out reviews) makes the probabilities mean what they say; it never changes the label.", "head"),
]


def steps_for(choice: str) -> list[Step]:
    return ENCODER_STEPS + (CLASSIFIER_STEPS if choice == "sentiment" else DECODER_STEPS)


def model_label(choice: str) -> str:
    if choice == "sentiment":
        return "Sentiment classifier"
    src, tgt = choice.split(":")[1].split("-")
    return f"Translator {models.direction_label((src, tgt))}"


# ---------------------------------------------------------------- loading and running

@st.cache_resource(show_spinner=False, max_entries=4)
def _walkthrough(task: str, path: str, version: tuple):
    return (ClassifierWalkthrough if task == "sentiment" else TranslationWalkthrough)(path, provider="cpu")


def walkthrough_model(task: str):
    """The task's walkthrough runner, loaded once per process and per version of its files."""
    return models.load(_walkthrough, task)


def run(model, choice: str, text: str):
    if choice == "sentiment":
        return model.run(text)
    src, tgt = choice.split(":")[1].split("-")
    return model.run(text, src, tgt)


# ---------------------------------------------------------------- views of a trace

Trace = TranslationTrace | ClassificationTrace


def stage(trace: Trace, stack: str) -> dict[str, np.ndarray]:
    """The stack's tensors: "enc" = the encoder's (either model's), "dec" = the decoder's."""
    if isinstance(trace, ClassificationTrace):
        return trace.steps
    return trace.encoder if stack == "enc" else trace.decoder


def tokens_of(trace: Trace, stack: str) -> list[str]:
    """The tokens along a stack's positions: the input pieces, or the decoder's inputs (<s> + output[:-1])."""
    if isinstance(trace, ClassificationTrace):
        return trace.pieces
    return trace.src_pieces if stack == "enc" else ["<s>", *trace.output_pieces[:-1]]


def embedding_prefix(stack: str) -> str:
    return "src" if stack == "enc" else "tgt"


def sublayer(tensors: dict[str, np.ndarray], prefix: str, layer: int) -> dict[str, np.ndarray]:
    """One layer's steps of one sublayer: {"q": (H, T, K), "weights": (H, T, S), ...} from the stacked tensors."""
    start = f"{prefix}_"
    return {name[len(start):]: value[layer] for name, value in tensors.items() if name.startswith(start)}


def attention_prefix(step: Step) -> str:
    return {"enc": "enc_self", "dec": "dec_self"}.get(step.stack, step.stack)


def ffn_prefix(step: Step) -> str:
    return "enc_ff" if step.stack == "enc" else "dec_ff"


def norm_rows(matrix: np.ndarray) -> np.ndarray:
    return np.linalg.norm(matrix, axis=-1)


def layer_norm_stats(before: np.ndarray, after: np.ndarray) -> list[dict[str, Any]]:
    """Per position: mean and standard deviation of the residual sum and of what the norm made of it."""
    return [{"position": i, "mean before": float(b.mean()), "std before": float(b.std()),
             "mean after": float(a.mean()), "std after": float(a.std())} for i, (b, a) in
            enumerate(zip(before, after, strict=True))]


def relu_zero_share(hidden: np.ndarray) -> np.ndarray:
    """(T, F) ReLU outputs -> per position, the share of the d_ff units that are exactly 0."""
    return (hidden == 0).mean(axis=-1)


def softmax_check(masked: np.ndarray, weights: np.ndarray) -> float:
    """max |softmax(masked scores) - weights|: the page's proof that the shown weights come from the shown scores.
    A row masked everywhere has weights 0 in the model (not a uniform row), so it is left out."""
    live = np.isfinite(masked).any(axis=-1)  # (..., T)
    if not live.any():
        return 0.0
    return float(np.abs(softmax(masked[live]) - weights[live]).max())  # (rows, S) each


def top_candidates(log_probs: np.ndarray, tokenizer, k: int = TOP_CANDIDATES) -> list[dict[str, Any]]:
    """The k likeliest next tokens at one position: rank, token, id, probability, logit rank order."""
    order = np.argsort(-log_probs, kind="stable")[:k]
    return [{"rank": r + 1, "token": tokenizer.id_to_token(int(i)), "id": int(i),
             "probability": float(np.exp(log_probs[i]))} for r, i in enumerate(order)]


def full_distribution_csv(log_probs: np.ndarray, logits: np.ndarray, tokenizer) -> str:
    """Every vocabulary entry at one position, most probable first: id, token, logit, probability."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["rank", "id", "token", "logit", "probability"])
    for rank, i in enumerate(np.argsort(-log_probs, kind="stable")):
        writer.writerow([rank + 1, int(i), tokenizer.id_to_token(int(i)), f"{logits[i]:.6g}",
                         f"{np.exp(log_probs[i]):.6g}"])
    return out.getvalue()


def matrix_csv(matrix: np.ndarray, row_labels: list[str], column_labels: list[str] | None = None) -> str:
    """A 2-D array as CSV with a label per row (the token) and per column."""
    matrix = np.atleast_2d(matrix)
    columns = column_labels or [str(j) for j in range(matrix.shape[1])]
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["row", *columns])
    for label, row in zip(row_labels, matrix, strict=True):
        writer.writerow([label, *(f"{v:.6g}" for v in row)])
    return out.getvalue()


def step_json(arrays: dict[str, np.ndarray], tokens: dict[str, list[str]]) -> str:
    """The arrays a step shows, as JSON lists (−∞ written as null), with the token labels of its axes."""
    def plain(a: np.ndarray):
        return np.where(np.isfinite(a), a, np.nan).round(6).tolist() if a.dtype.kind == "f" else a.tolist()
    body = {name: plain(np.asarray(a)) for name, a in arrays.items()}
    text = json.dumps({"tokens": tokens, "arrays": body}, ensure_ascii=False, allow_nan=True)
    return text.replace("NaN", "null")


# ---------------------------------------------------------------- the page's URL

URL_KEYS = ("model", "text", "step", "layer", "head", "query", "position")


def parse_url(params: dict[str, str], choices: tuple[str, ...] = MODEL_CHOICES) -> dict[str, Any]:
    """The page state a shared link holds; anything unknown or malformed is left out (the page's default
    stands). As on the page, layers and heads count from 1, query rows and decoder positions from 0."""
    state: dict[str, Any] = {}
    if params.get("model") in choices:
        state["model"] = params["model"]
    if isinstance(params.get("text"), str) and params["text"].strip():
        state["text"] = params["text"][:2000]
    if params.get("step") in {s.key for s in ENCODER_STEPS + DECODER_STEPS + CLASSIFIER_STEPS}:
        state["step"] = params["step"]
    for name, lowest in (("layer", 1), ("head", 1), ("query", 0), ("position", 0)):
        value = params.get(name, "")
        if value.isdigit() and lowest <= int(value) <= 10_000:
            state[name] = int(value)
    return state


def url_of(state: dict[str, Any]) -> dict[str, str]:
    return {k: str(state[k]) for k in URL_KEYS if state.get(k) not in (None, "")}
