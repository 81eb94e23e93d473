"""The experiments that apply to the sentiment classifier: knocking out its (encoder self-attention) heads, head
importance, and occlusion beside the attention each token receives. (The logit lens has no classifier counterpart:
its output layer reads the pooled sentence, not a position.)

    model = ClassifierExperimentModel("models/sentiment")
    review = model.review("a gem of a film, warm and funny")
    classify_knockout(model, review, [Head("enc_self", 1, 0)], mode="mean").probs
    classify_head_importance(model, review).drop["enc_self"]  # (L, H): nats the predicted label loses per head
    classify_occlusion(model, review).drop                    # per token, beside .attention and .spearman

Everything is measured on the label the served model predicted (`review.label`): the drop is how much less
probable that label becomes. Heads, modes ("zero" | "mean") and occlusion methods ("mask" | "remove") mean what
they mean for the translator (runtime.experiments.heads, .occlude); the mean-ablation reference set is
`REFERENCE_REVIEWS` (runtime.experiments.reference).
"""
from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..batching import pad
from ..model_files import ModelFiles, ModelLoadError
from ..onnx_backend import run_plain
from ..onnx_models import OnnxSentimentClassifier
from ..spec import EXPERIMENT_PRECISION, classifier_experiment_graph
from ..text import check_texts
from .heads import Head, HeadImportance, check_heads, every_head, fills_for, gates_for
from .model import Tensors
from .occlude import METHODS, spearman


@dataclass(frozen=True)
class Review:
    """One text and the served classifier's verdict on it: what every classifier experiment starts from."""

    text: str
    ids: list[int]  # the text's pieces, cut to the model's limit
    pieces: list[str]
    labels: list[str]
    probs: np.ndarray  # (C,) the served probabilities
    truncated: bool
    warning: str | None

    @property
    def label_index(self) -> int:
        return int(np.argmax(self.probs))

    @property
    def label(self) -> str:
        return self.labels[self.label_index]


class ClassifierExperimentModel:
    """The served fp32 classifier plus its experiment graph (CPU by default)."""

    kind = "classifier"

    def __init__(self, model_dir: str | Path, provider: str = "cpu", threads: int | None = None):
        self.classifier = OnnxSentimentClassifier(model_dir, provider, "fp32", threads)
        self.files = files = ModelFiles.open(model_dir, "classifier")
        self.shape = files.shape
        self.tokenizer = self.classifier.tokenizer
        self.spec = classifier_experiment_graph(files.shape)
        path = files.path(self.spec, EXPERIMENT_PRECISION)
        if not path.is_file():
            raise ModelLoadError(f"{path}: no experiment graph in this model directory (exported before it existed, "
                                 f"or with --no-experiments); add it with `python -m export {files.model_dir} "
                                 f"--if-stale` (`make run` does it)")
        self.handle = files.session(self.spec, EXPERIMENT_PRECISION, provider, threads)
        files.check_tokenizer(self.tokenizer, self.handle)
        self.layers = {"enc_self": self.shape.n_layers}
        self.cache: dict[object, object] = {}

    def review(self, text: str) -> Review:
        """The served fp32 classifier's verdict on `text` (its checks, truncation and coverage warning)."""
        check_texts([text])
        prediction = self.classifier.classify([text])[0]
        ids = self.tokenizer.encode(text)[:self.classifier.max_len]
        if not ids:
            raise ValueError("the text has no piece the model reads: nothing to experiment on")
        labels = list(self.classifier.labels)
        return Review(text, ids, self.tokenizer.tokens(ids), labels,
                      np.array([prediction.probs[label] for label in labels]), prediction.truncated,
                      prediction.warning)

    def ones(self, kind: str, rows: int) -> np.ndarray:
        return np.ones((rows, self.layers[kind], self.shape.n_heads), dtype=np.float32)

    def zeros_fill(self, kind: str) -> np.ndarray:
        return np.zeros((self.layers[kind], self.shape.n_heads, self.shape.head_dim), dtype=np.float32)

    def run(self, ids: np.ndarray, mask: np.ndarray, gate: np.ndarray | None = None,
            fill: np.ndarray | None = None) -> Tensors:
        """ids (B, S), mask (B, S), gate (B, L, H) (None: keep every head), fill (L, H, K) (None: zeros) ->
        {"logits" (B, C) calibrated, "enc_self_weights" (L, B, H, S, S), "enc_self_context" (L, B, H, S, K)}."""
        ids = np.ascontiguousarray(ids, dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": np.ascontiguousarray(mask, dtype=bool),
                 "enc_self_gate": self.ones("enc_self", len(ids)) if gate is None else np.asarray(gate, np.float32),
                 "enc_self_fill": self.zeros_fill("enc_self") if fill is None else np.asarray(fill, np.float32)}
        names = self.spec.output_names
        return dict(zip(names, run_plain(self.handle, feeds, names), strict=True))


def log_softmax(logits: np.ndarray) -> np.ndarray:
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def label_log_probs(model: ClassifierExperimentModel, review: Review, gates: dict[str, np.ndarray],
                    fills: dict[str, np.ndarray]) -> tuple[np.ndarray, Tensors]:
    """Every gate row's log-probability of the review's predicted label (rows,), and the run's outputs."""
    rows = len(gates["enc_self"])
    ids = np.repeat(np.array([review.ids], dtype=np.int64), rows, 0)
    out = model.run(ids, np.ones_like(ids, dtype=bool), gates["enc_self"], fills["enc_self"])
    return log_softmax(out["logits"].astype(np.float64))[:, review.label_index], out


@dataclass(frozen=True)
class ClassifierKnockout:
    original: Review
    heads: list[Head]
    mode: str
    reference: str | None
    probs: np.ndarray  # (C,) with the heads removed
    attention: np.ndarray  # (L, H, S, S) with the heads removed

    @property
    def label(self) -> str:
        return self.original.labels[int(np.argmax(self.probs))]

    @property
    def changed(self) -> bool:
        return self.label != self.original.label


def classify_knockout(model: ClassifierExperimentModel, review: Review, heads: Sequence[Head],
                      mode: str = "zero") -> ClassifierKnockout:
    """Classify `review` again with `heads` removed; with none, the served probabilities."""
    heads = check_heads(model, heads)
    fills, reference = fills_for(model, mode)
    ids = np.array([review.ids], dtype=np.int64)
    out = model.run(ids, np.ones_like(ids, dtype=bool), gates_for(model, [heads])["enc_self"], fills["enc_self"])
    probs = np.exp(log_softmax(out["logits"][0].astype(np.float64)))
    return ClassifierKnockout(review, heads, mode, reference, probs, out["enc_self_weights"][:, 0])


def classify_head_importance(model: ClassifierExperimentModel, reviews: Review | Sequence[Review],
                             mode: str = "zero") -> HeadImportance:
    """Per review, the drop in the predicted label's log-probability when each head alone is removed (one run of
    1 + L × H rows per review). `sentences` of the result holds the reviews; `per_token` is empty."""
    start = time.perf_counter()
    reviews = [reviews] if isinstance(reviews, Review) else list(reviews)
    if not reviews:
        raise ValueError("no texts to measure head importance on")
    fills, reference = fills_for(model, mode)
    heads = every_head(model)
    gates = gates_for(model, [[]] + [[h] for h in heads])
    base, drops = [], []
    for review in reviews:
        log_probs, _ = label_log_probs(model, review, gates, fills)
        base.append(float(log_probs[0]))
        drops.append((log_probs[0] - log_probs[1:]).reshape(model.layers["enc_self"], model.shape.n_heads))
    return HeadImportance(reviews, mode, reference, np.array(base), {"enc_self": np.stack(drops)}, {},
                          time.perf_counter() - start)


@dataclass(frozen=True)
class ClassifierOcclusion:
    review: Review
    method: str
    pieces: list[str]  # every piece, each occluded in turn
    base: float  # the predicted label's log-probability, nothing occluded
    drop: np.ndarray  # (P,) base minus the log-probability with that piece occluded (nats)
    attention: np.ndarray  # (P,) attention the piece receives: mean over layers, heads and the other positions
    spearman: float


def classify_occlusion(model: ClassifierExperimentModel, review: Review, method: str = "mask") -> ClassifierOcclusion:
    """Occlude each piece in turn ("mask": <pad>, masked out as padding, pooled over by nobody; "remove": deleted)
    and re-classify, all in one run; beside it, the attention each piece receives."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    if len(review.ids) < 2:
        raise ValueError("one piece only: occluding it leaves nothing to classify")
    n, pad_id = len(review.ids), model.tokenizer.pad_id
    if method == "mask":
        ids = np.repeat(np.array([review.ids], dtype=np.int64), n + 1, 0)
        mask = np.ones_like(ids, dtype=bool)
        ids[np.arange(1, n + 1), np.arange(n)], mask[np.arange(1, n + 1), np.arange(n)] = pad_id, False
    else:
        ids, mask = pad([review.ids] + [review.ids[:i] + review.ids[i + 1:] for i in range(n)], pad_id)
    out = model.run(ids, mask)
    log_probs = log_softmax(out["logits"].astype(np.float64))[:, review.label_index]
    received = out["enc_self_weights"][:, 0].mean(axis=(0, 1, 2))  # (L, H, S, S) -> (S,): mean over queries too
    drop = log_probs[0] - log_probs[1:]
    return ClassifierOcclusion(review, method, list(review.pieces), float(log_probs[0]), drop, received,
                               spearman(drop, received))
