"""The Walkthrough page's numbers: what each step's figures, statistics and downloads are made of (the steps
themselves and the page's URL: steps.py). Pure functions over a trace (runtime.walkthrough), so a test can check
them and a redraw never runs the model.

A "stage" is one stack's tensors under short names: the encoder of either model (prefix "enc"), or the decoder
(prefix "dec"); `sublayer` picks one attention or feed-forward sublayer of one layer out of it.
"""
from __future__ import annotations

import csv
import io
import json
from typing import Any

import numpy as np

from runtime.decoding import softmax
from runtime.walkthrough import ClassificationTrace, TranslationTrace

from .steps import Step

TOP_CANDIDATES = 10  # next-token candidates listed at the output step

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


def _span(norms: np.ndarray) -> str:
    low, high = float(np.min(norms)), float(np.max(norms))
    return f"{low:.2f}" if f"{low:.2f}" == f"{high:.2f}" else f"{low:.2f}–{high:.2f}"


DROWNED = 0.5  # scaled rows under half the encoding's length: the encoding dominates their sum (and over 2: the rows)


def embedding_words(rows: np.ndarray, scaled: np.ndarray, positions: np.ndarray) -> str:
    """What the embedding step's bars show for this model and text: the vector lengths (L2 norms, one per token) of
    the embedding rows, of the rows × √d_model and of the positional encoding, compared by their medians. The
    paper's reason for the scaling holds for one model and not for another, so the words follow the numbers.
    rows, scaled, positions: (T, d_model), one row per token."""
    rows, scaled, positions = norm_rows(rows), norm_rows(scaled), norm_rows(positions)
    if not np.any(positions):
        return (f"The scaled rows are {_span(scaled)} long. This model adds no positional encoding, so nothing "
                "competes with them.")
    ratio = float(np.median(scaled) / np.median(positions))
    lengths = (f"Here the rows × √d_model are {_span(scaled)} long against the positional encoding's "
               f"{_span(positions)}")
    if ratio < DROWNED:
        return (f"{lengths}: **the encoding dominates** their sum even after the scaling. This model learned short "
                f"embedding rows ({_span(rows)} before scaling), so what enters layer 1 is mostly position, and "
                "the token's identity is a small part of it.")
    if ratio > 1 / DROWNED:
        return f"{lengths}: **the token's row dominates** their sum; the position is a small addition to it."
    unscaled = (f"without the scaling, at {_span(rows)}, the rows would be drowned by the encoding: that is what "
                "the scaling is for" if np.median(rows) < DROWNED * np.median(positions)
                else f"the unscaled rows, at {_span(rows)}, would hold their own too")
    return f"{lengths}: **about the same size**, so their sum keeps both the token and its position; {unscaled}."


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
