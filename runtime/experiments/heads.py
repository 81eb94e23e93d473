"""Knocking out attention heads: re-translating without them, and how much each one alone matters.

    model = ExperimentModel("models/translate")
    sentence = model.sentence("Wo ist der Bahnhof?", "de", "en")
    result = knockout(model, sentence, [Head("dec_cross", 2, 5)], mode="mean")
    result.translation, result.token_log_probs  # beside sentence.translation, sentence.token_log_probs
    grid = head_importance(model, sentence)  # grid.drop["enc_self"][layer, head]: nats lost without that head

A removed head's output (its context vector, before W_O mixes the heads) is zeros (mode "zero") or its mean over
the reference set (mode "mean": runtime.experiments.reference says which set and why). Everything runs the
experiment graphs (fp32) with a gate per layer × head; gates have a batch axis, so `head_importance` tries all
its knock-outs in one encoder run and one decoder run per sentence.
"""
from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from ..batching import pad
from ..decoding import greedy, top_k_numpy
from ..spec import HEAD_KINDS
from .model import ExperimentModel, Sentence, Tensors, one_source
from .reference import REFERENCE_PAIRS, reference_means

MODES = ("zero", "mean")
# What the head functions accept: the translator's ExperimentModel, or the classifier's (runtime.experiments.
# classifier), whose only kind is "enc_self". Both have .layers {kind: L}, .shape, .ones, .zeros_fill, .cache.
AnyModel = Any
KIND_NAMES = {"enc_self": "encoder self-attention", "dec_self": "decoder self-attention",
              "dec_cross": "cross-attention"}


class Head(NamedTuple):
    """One attention head: kind (one of HEAD_KINDS), layer and head, counted from 0."""

    kind: str
    layer: int
    head: int

    def label(self) -> str:
        return f"{KIND_NAMES.get(self.kind, self.kind)}, layer {self.layer + 1}, head {self.head + 1}"


def check_heads(model: AnyModel, heads: Sequence[Head]) -> list[Head]:
    """The heads as `Head`s, or a ValueError naming the first that this model does not have."""
    checked = []
    for item in heads:
        head = Head(*item)
        if head.kind not in model.layers:
            raise ValueError(f"unknown attention kind {head.kind!r}: this model has {', '.join(model.layers)}")
        layers, n_heads = model.layers[head.kind], model.shape.n_heads
        if not (0 <= head.layer < layers and 0 <= head.head < n_heads):
            raise ValueError(f"{head.kind} has layers 0..{layers - 1} and heads 0..{n_heads - 1}, "
                             f"not layer {head.layer} head {head.head}")
        checked.append(head)
    return checked


def check_mode(mode: str) -> None:
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")


def gates_for(model: AnyModel, rows: Sequence[Sequence[Head]]) -> dict[str, np.ndarray]:
    """One gate row per entry of `rows` (the heads that row knocks out): {kind: (len(rows), L, H)}, 1 = keep."""
    gates = {kind: model.ones(kind, len(rows)) for kind in model.layers}
    for row, heads in enumerate(rows):
        for kind, layer, head in heads:
            gates[kind][row, layer, head] = 0.0
    return gates


def fills_for(model: AnyModel, mode: str) -> tuple[dict[str, np.ndarray], str | None]:
    """What a removed head outputs, per kind (L, H, K), and what that is, for a page to state."""
    check_mode(mode)
    if mode == "zero":
        return {kind: model.zeros_fill(kind) for kind in model.layers}, None
    means = reference_means(model)
    return means.fill, means.description


def teacher_forced(model: ExperimentModel, sentence: Sentence, gates: dict[str, np.ndarray],
                   fills: dict[str, np.ndarray]) -> np.ndarray:
    """The log-probability of each token of `sentence`'s translation (rows, T) under each gate row, teacher-forced.
    The encoder runs once per distinct encoder gate row; rows that keep every encoder head share one memory."""
    rows = len(gates["enc_self"])
    src, mask = one_source(sentence)
    enc_gates, memory_rows = np.unique(gates["enc_self"], axis=0, return_inverse=True)
    memory = model.encode(np.repeat(src, len(enc_gates), 0), np.repeat(mask, len(enc_gates), 0), enc_gates,
                          fills["enc_self"])["memory"]
    tgt = np.repeat(np.array([sentence.tgt_in_ids], dtype=np.int64), rows, 0)
    states, _ = model.last_states(tgt, memory[memory_rows.reshape(-1)], np.repeat(mask, rows, 0),
                                  {k: gates[k] for k in HEAD_KINDS[1:]}, {k: fills[k] for k in HEAD_KINDS[1:]})
    targets = np.repeat(np.array([sentence.output_ids], dtype=np.int64), rows, 0)
    return model.token_log_probs(states, targets)


# ---------------------------------------------------------------- re-translating with heads knocked out
@dataclass(frozen=True)
class GatedState:
    memory: np.ndarray  # (B, S, D)
    src_mask: np.ndarray  # (B, S)
    past_k: np.ndarray  # (L, B, H, P, K): the self-attention keys of every position so far
    past_v: np.ndarray
    gates: dict[str, np.ndarray]  # dec_self / dec_cross: (B, L, H)
    attention: np.ndarray | None = None  # (B, L, H, S): the last step's cross-attention, when asked for


class GatedBackend:
    """runtime.decoding's step interface over the experiment graphs with one set of heads knocked out, so the
    searches of the served model run unchanged: the gated encoder once, then the gated decoder step graph with its
    KV cache, projecting only the new position."""

    def __init__(self, model: ExperimentModel, heads: Sequence[Head], fills: dict[str, np.ndarray]):
        self.model, self.fills = model, fills
        self.gate = {kind: g[0] for kind, g in gates_for(model, [heads]).items()}  # (L, H) per kind
        self.max_source_len = self.max_target_len = model.files.max_len
        self.encoded: Tensors | None = None  # the last `encode`'s outputs (memory, weights): a knock-out reuses them

    def rows(self, kind: str, n: int) -> np.ndarray:
        return np.repeat(self.gate[kind][None], n, axis=0)

    def encode(self, src_ids: np.ndarray, src_mask: np.ndarray) -> GatedState:
        n = len(src_ids)
        self.encoded = self.model.encode(src_ids, src_mask, self.rows("enc_self", n), self.fills["enc_self"])
        shape = self.model.shape
        empty = np.zeros((shape.n_decoder_layers, n, shape.n_heads, 0, shape.head_dim), dtype=np.float32)
        return GatedState(self.encoded["memory"], np.asarray(src_mask, dtype=bool), empty, empty,
                          {kind: self.rows(kind, n) for kind in HEAD_KINDS[1:]})

    def step(self, tokens: np.ndarray, state: GatedState, attention: bool = False) -> tuple[np.ndarray, GatedState]:
        out = self.model.step(np.asarray(tokens, dtype=np.int64)[:, None], state.memory, state.src_mask, state.past_k,
                              state.past_v, state.gates, self.fills)
        log_probs = self.model.project(out["states"])[:, 0]  # (B, 1, V) -> (B, V)
        weights = out["dec_cross_weights"][:, :, :, -1].transpose(1, 0, 2, 3) if attention else None
        return log_probs, GatedState(state.memory, state.src_mask, out["present_k"], out["present_v"], state.gates,
                                     weights)

    @staticmethod
    def cross_attention(state: GatedState) -> np.ndarray:
        return state.attention

    @staticmethod
    def top_k(values: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        return top_k_numpy(values, k)

    @staticmethod
    def reorder(state: GatedState, index: np.ndarray) -> GatedState:
        take = lambda a: a.take(index, axis=0)
        return GatedState(take(state.memory), take(state.src_mask), state.past_k.take(index, axis=1),
                          state.past_v.take(index, axis=1), {k: take(g) for k, g in state.gates.items()},
                          None if state.attention is None else take(state.attention))

    def attention(self, src_ids: np.ndarray, src_mask: np.ndarray, tgt_ids: np.ndarray) -> dict[str, list]:
        n = len(src_ids)
        encoded = self.model.encode(src_ids, src_mask, self.rows("enc_self", n), self.fills["enc_self"])
        decoded = self.model.decode(tgt_ids, encoded["memory"], src_mask, {k: self.rows(k, n) for k in HEAD_KINDS[1:]},
                                    {k: self.fills[k] for k in HEAD_KINDS[1:]})
        return {"encoder": list(encoded["enc_self_weights"]), "self": list(decoded["dec_self_weights"]),
                "cross": list(decoded["dec_cross_weights"])}


@dataclass(frozen=True)
class Knockout:
    """The sentence re-translated (greedy) with some heads removed, beside the original."""

    original: Sentence
    heads: list[Head]
    mode: str  # "zero" | "mean"
    reference: str | None  # mode "mean": what each removed head's mean was computed over
    output_ids: list[int]  # the new greedy translation, </s> included when reached
    output_pieces: list[str]
    translation: str
    token_log_probs: list[float]  # the knocked-out model's log-probability of each new token
    # the knocked-out model's log-probability of each token of the ORIGINAL translation (teacher-forced): how much
    # less it believes the old output, even where its own choice did not change
    original_log_probs: list[float]
    attention: dict[str, np.ndarray]  # the new translation's weights, teacher-forced: kind -> (L, H, T, S)

    @property
    def changed(self) -> bool:
        return self.output_ids != self.original.output_ids


def knockout(model: ExperimentModel, sentence: Sentence, heads: Sequence[Head], mode: str = "zero") -> Knockout:
    """Re-translate `sentence` greedily with `heads` removed (mode "zero": their output zeroed; "mean": replaced by
    their mean over the reference set). With no heads it is the served model: same tokens, same log-probs.
    Runs: the greedy search (one encoder run, one cached decoder step per token, as the served search), then one
    teacher-forced decoder run of two rows that scores the original translation and records the new one's
    attention."""
    heads = check_heads(model, heads)
    fills, reference = fills_for(model, mode)
    backend = GatedBackend(model, heads, fills)
    src, mask = one_source(sentence)
    tokenizer = model.tokenizer
    (hyp,) = greedy(backend, src, mask, sentence.max_len, tokenizer.bos_id, tokenizer.eos_id)
    new_ids = list(hyp.tokens)
    rows = [sentence.output_ids, new_ids]
    tgt_in, _ = pad([[tokenizer.bos_id, *ids[:-1]] for ids in rows], tokenizer.pad_id)  # pads after: causal
    targets, _ = pad(rows, tokenizer.pad_id)
    decoded = model.decode(tgt_in, np.repeat(backend.encoded["memory"], 2, 0), np.repeat(mask, 2, 0),
                           {kind: backend.rows(kind, 2) for kind in HEAD_KINDS[1:]},
                           {kind: fills[kind] for kind in HEAD_KINDS[1:]})
    original = model.token_log_probs(decoded["layer_states"][-1][:1], targets[:1])[0, :len(sentence.output_ids)]
    n = len(new_ids)
    attention = {"enc_self": backend.encoded["enc_self_weights"][:, 0],
                 "dec_self": decoded["dec_self_weights"][:, 1, :, :n, :n],
                 "dec_cross": decoded["dec_cross_weights"][:, 1, :, :n]}
    return Knockout(sentence, heads, mode, reference, new_ids, tokenizer.tokens(new_ids), tokenizer.decode(new_ids),
                    [float(x) for x in hyp.token_log_probs], [float(x) for x in original], attention)


# ---------------------------------------------------------------- the head-importance grid
@dataclass(frozen=True)
class HeadImportance:
    """How much the log-probability of each sentence's own translation drops when one head alone is removed."""

    sentences: list[Sentence]  # (the classifier's: runtime.experiments.classifier.Review)
    mode: str
    reference: str | None
    base_log_prob: np.ndarray  # (N,) each translation's summed log-probability with every head kept
    # kind -> (N, L, H): base minus the summed log-probability with that head removed (nats; > 0: the head helped)
    per_sentence: dict[str, np.ndarray]
    # kind -> N × (L, H, T): the same per target token (empty for the classifier)
    per_token: dict[str, list[np.ndarray]]
    seconds: float  # wall time of the computation

    @property
    def drop(self) -> dict[str, np.ndarray]:
        """kind -> (L, H): the drop averaged over the sentences."""
        return {kind: values.mean(axis=0) for kind, values in self.per_sentence.items()}

    def ranked(self) -> list[tuple[Head, float]]:
        """Every head with its mean drop, largest first."""
        items = [(Head(kind, layer, head), float(values[layer, head])) for kind, values in self.drop.items()
                 for layer in range(values.shape[0]) for head in range(values.shape[1])]
        return sorted(items, key=lambda item: -item[1])


def every_head(model: AnyModel) -> list[Head]:
    return [Head(kind, layer, head) for kind in model.layers for layer in range(model.layers[kind])
            for head in range(model.shape.n_heads)]


def head_importance(model: ExperimentModel, sentences: Sentence | Sequence[Sentence],
                    mode: str = "zero") -> HeadImportance:
    """For each sentence (one, or a small set: `reference_sentences`), the drop in its translation's teacher-forced
    log-probability when each head alone is removed: 1 + (layers × heads per kind) rows in one batch per sentence."""
    start = time.perf_counter()
    sentences = [sentences] if isinstance(sentences, Sentence) else list(sentences)
    if not sentences:
        raise ValueError("no sentences to measure head importance on")
    fills, reference = fills_for(model, mode)
    heads = every_head(model)
    gates = gates_for(model, [[]] + [[h] for h in heads])  # row 0 keeps every head
    base, per_token = [], []
    for sentence in sentences:
        log_probs = teacher_forced(model, sentence, gates, fills)  # (1 + heads, T)
        base.append(float(log_probs[0].sum()))
        per_token.append(log_probs[0][None] - log_probs[1:])  # (heads, T)
    per_sentence, tokens = {}, {}
    n_heads = model.shape.n_heads
    at = 0
    for kind in HEAD_KINDS:
        count = model.layers[kind] * n_heads
        tokens[kind] = [p[at:at + count].reshape(model.layers[kind], n_heads, -1) for p in per_token]
        per_sentence[kind] = np.stack([t.sum(axis=-1) for t in tokens[kind]])
        at += count
    return HeadImportance(sentences, mode, reference, np.array(base), per_sentence, tokens,
                          time.perf_counter() - start)


def reference_sentences(model: ExperimentModel, src_lang: str = "de", tgt_lang: str = "en", count: int = 8,
                        max_len: int | None = None) -> list[Sentence]:
    """The first `count` sources of the reference set in `src_lang`, translated: a small built-in set for
    `head_importance`."""
    if src_lang not in ("de", "en"):
        raise ValueError(f"the built-in set is German–English, not {src_lang}")
    texts = [de if src_lang == "de" else en for de, en in REFERENCE_PAIRS[:count]]
    return [model.sentence(text, src_lang, tgt_lang, max_len) for text in texts]

