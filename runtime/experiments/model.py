"""The translator's experiment graphs as one object, and the sentence every experiment starts from.

`ExperimentModel` holds the served fp32 translator (for the original greedy translation) and the three experiment
graphs of `runtime.spec` (encoder and teacher-forced decoder with head gates, the output layer alone). Its
`encode` / `decode` / `project` run them on batches; the experiments (`lens`, `heads`, `occlusion`) are functions
over it. A model directory exported before the experiment graphs existed gets them with
`python -m export DIR --if-stale`.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..model_files import ModelFiles, ModelLoadError
from ..onnx_backend import run_plain
from ..onnx_models import OnnxTranslator
from ..providers import SessionHandle
from ..spec import EXPERIMENT_PRECISION, HEAD_KINDS, GraphSpec, experiment_graphs
from ..text import check_texts

Tensors = dict[str, np.ndarray]
# Rows × positions × vocabulary floats the output layer gets per run: a head-importance batch of 73 rows over a
# long sentence would otherwise hold hundreds of MB of log-probabilities at once.
PROJECT_FLOATS = 16_000_000
# The same bound for the decoder's attention outputs (rows × layers × heads × T × max(T, S) floats per run): 73 rows
# over a 128-token sentence would otherwise return ~500 MB of weights and head outputs from one run.
DECODE_FLOATS = 8_000_000


@dataclass(frozen=True)
class Sentence:
    """One source text and a translator's greedy translation of it: what every experiment starts from.

    Greedy, not beam: every experiment follows one path, and greedy's token at position t is the most probable
    one given the output before it, which is what the logit lens and the knock-outs compare against."""

    text: str
    src_lang: str
    tgt_lang: str
    src_ids: list[int]  # what the encoder saw: <2xx> tag, the text's pieces, </s>
    src_pieces: list[str]
    output_ids: list[int]  # the greedy translation, </s> included when it was reached
    output_pieces: list[str]
    token_log_probs: list[float]  # the translator's log-probability of each output token when it chose it
    translation: str  # detokenised
    truncated: bool  # the source was cut to the model's length limit
    warning: str | None  # pieces the tokenizer does not know (runtime.coverage)
    bos_id: int
    max_len: int | None = None  # the search's limit (None: source length + 50); re-translations use it too

    @property
    def tgt_in_ids(self) -> list[int]:
        """The decoder's teacher-forced inputs: <s> + output_ids[:-1] (position t predicts output_ids[t])."""
        return [self.bos_id, *self.output_ids[:-1]]


def sentence_from(translator: OnnxTranslator, text: str, src_lang: str = "de", tgt_lang: str = "en",
                  max_len: int | None = None) -> Sentence:
    """`translator`'s greedy translation of `text` as a `Sentence` (any OnnxTranslator: fp32, int8, another
    model directory). Raises ValueError for empty text or a direction the model lacks (runtime.text's messages)."""
    check_texts([text])
    out = translator.translate([text], src_lang, tgt_lang, method="greedy", max_len=max_len)[0]
    if not out.token_ids:
        raise ValueError("the translation is empty (max_len too small?): nothing to experiment on")
    src_ids, truncated = translator.source_ids(text, tgt_lang)
    tokenizer = translator.tokenizer
    return Sentence(text, src_lang, tgt_lang, src_ids, tokenizer.tokens(src_ids), list(out.token_ids),
                    tokenizer.tokens(out.token_ids), [float(np.log(p)) for p in out.token_probs], out.text,
                    truncated, out.warning, tokenizer.bos_id, max_len)


class ExperimentModel:
    """The served fp32 translator plus the experiment graphs of the same model directory (CPU by default)."""

    kind = "seq2seq"

    def __init__(self, model_dir: str | Path, provider: str = "cpu", threads: int | None = None):
        self.translator = OnnxTranslator(model_dir, provider, "fp32", threads)
        self.files = files = ModelFiles.open(model_dir, "seq2seq")
        self.shape = files.shape
        self.tokenizer = self.translator.tokenizer
        self.pre_norm = bool(files.config.get("pre_norm", False))
        self.graphs: dict[str, tuple[GraphSpec, SessionHandle]] = {}
        for spec in experiment_graphs(files.shape):
            path = files.path(spec, EXPERIMENT_PRECISION)
            if not path.is_file():
                raise ModelLoadError(f"{path}: no experiment graphs in this model directory (exported before they "
                                     f"existed, or with --no-experiments); add them with "
                                     f"`python -m export {files.model_dir} --if-stale` (`make run` does it)")
            self.graphs[spec.name] = (spec, files.session(spec, EXPERIMENT_PRECISION, provider, threads))
        files.check_tokenizer(self.tokenizer, self.graphs["encoder_experiment"][1])
        self.layers = {"enc_self": self.shape.n_layers, "dec_self": self.shape.n_decoder_layers,
                       "dec_cross": self.shape.n_decoder_layers}
        self.cache: dict[object, object] = {}  # reference means by reference set (runtime.experiments.reference)

    def sentence(self, text: str, src_lang: str = "de", tgt_lang: str = "en", max_len: int | None = None) -> Sentence:
        """The served fp32 greedy translation of `text` (see `sentence_from`)."""
        return sentence_from(self.translator, text, src_lang, tgt_lang, max_len)

    def ones(self, kind: str, rows: int) -> np.ndarray:
        """Gates (rows, L, H) that keep every head of `kind`."""
        return np.ones((rows, self.layers[kind], self.shape.n_heads), dtype=np.float32)

    def zeros_fill(self, kind: str) -> np.ndarray:
        return np.zeros((self.layers[kind], self.shape.n_heads, self.shape.head_dim), dtype=np.float32)

    def run(self, name: str, feeds: dict[str, np.ndarray]) -> Tensors:
        spec, handle = self.graphs[name]
        return dict(zip(spec.output_names, run_plain(handle, feeds, spec.output_names), strict=True))

    def encode(self, src_ids: np.ndarray, src_mask: np.ndarray, gate: np.ndarray | None = None,
               fill: np.ndarray | None = None) -> Tensors:
        """src_ids (B, S), src_mask (B, S) True at real tokens, gate (B, L, H) (None: keep every head), fill
        (L, H, K) (None: zeros) -> {"memory" (B, S, D), "enc_self_weights" (L, B, H, S, S),
        "enc_self_context" (L, B, H, S, K)}."""
        src_ids = np.ascontiguousarray(src_ids, dtype=np.int64)
        feeds = {"src_ids": src_ids, "src_mask": np.ascontiguousarray(src_mask, dtype=bool),
                 "enc_self_gate": self.ones("enc_self", len(src_ids)) if gate is None else _f32(gate),
                 "enc_self_fill": self.zeros_fill("enc_self") if fill is None else _f32(fill)}
        return self.run("encoder_experiment", feeds)

    def decode(self, tgt_ids: np.ndarray, memory: np.ndarray, src_mask: np.ndarray,
               gates: dict[str, np.ndarray] | None = None, fills: dict[str, np.ndarray] | None = None) -> Tensors:
        """Teacher-forced: tgt_ids (B, T) decoder inputs over memory (B, S, D). gates: {"dec_self": (B, L, H),
        "dec_cross": (B, L, H)} (a missing kind keeps every head); fills: {kind: (L, H, K)} (missing: zeros).
        -> {"layer_states" (L, B, T, D), "dec_self_weights" (L, B, H, T, T), "dec_self_context" (L, B, H, T, K),
        "dec_cross_weights" (L, B, H, T, S), "dec_cross_context" (L, B, H, T, K)}."""
        gates, fills = gates or {}, fills or {}
        tgt_ids = np.ascontiguousarray(tgt_ids, dtype=np.int64)
        feeds = {"tgt_ids": tgt_ids, "memory": _f32(memory), "src_mask": np.ascontiguousarray(src_mask, dtype=bool)}
        for kind in HEAD_KINDS[1:]:
            feeds[f"{kind}_gate"] = _f32(gates[kind]) if kind in gates else self.ones(kind, len(tgt_ids))
            feeds[f"{kind}_fill"] = _f32(fills[kind]) if kind in fills else self.zeros_fill(kind)
        return self.run("decoder_experiment", feeds)

    def last_states(self, tgt_ids: np.ndarray, memory: np.ndarray, src_mask: np.ndarray,
                    gates: dict[str, np.ndarray] | None = None, fills: dict[str, np.ndarray] | None = None
                    ) -> tuple[np.ndarray, Tensors]:
        """`decode` in chunks of rows (DECODE_FLOATS) -> the last layer's states (B, T, D) of every row, and the
        first chunk's whole outputs (row 0's attention, for callers that show it)."""
        rows, t = tgt_ids.shape
        per_row = self.shape.n_decoder_layers * self.shape.n_heads * t * max(t, memory.shape[1])
        size = max(1, DECODE_FLOATS // max(1, per_row))
        states, first = [], None
        for i in range(0, rows, size):
            part = slice(i, i + size)
            out = self.decode(tgt_ids[part], memory[part], src_mask[part],
                              None if gates is None else {k: g[part] for k, g in gates.items()}, fills)
            first = out if first is None else first
            states.append(out["layer_states"][-1])
        return (states[0] if len(states) == 1 else np.concatenate(states)), first

    def step(self, tokens: np.ndarray, memory: np.ndarray, src_mask: np.ndarray, past_k: np.ndarray,
             past_v: np.ndarray, gates: dict[str, np.ndarray], fills: dict[str, np.ndarray]) -> Tensors:
        """`decode` for new tokens (B, T) after a KV cache past_k, past_v (L, B, H, P, K) (P may be 0) ->
        {"states" (B, T, D) the last layer's, "present_k", "present_v" (L, B, H, P + T, K), "dec_cross_weights"}."""
        feeds = {"tokens": np.ascontiguousarray(tokens, dtype=np.int64), "memory": _f32(memory),
                 "src_mask": np.ascontiguousarray(src_mask, dtype=bool), "past_k": _f32(past_k),
                 "past_v": _f32(past_v)}
        for kind in HEAD_KINDS[1:]:
            feeds[f"{kind}_gate"], feeds[f"{kind}_fill"] = _f32(gates[kind]), _f32(fills[kind])
        return self.run("decoder_experiment_step", feeds)

    def project(self, states: np.ndarray) -> np.ndarray:
        """Decoder states (B, T, D) -> log-probabilities (B, T, V) through the output layer (final LayerNorm of a
        pre-LN model, tied projection, log-softmax), in chunks of rows to bound memory."""
        states = _f32(states)
        rows = max(1, PROJECT_FLOATS // max(1, states.shape[1] * self.shape.vocab_size))
        parts = [self.run("logit_lens", {"states": states[i:i + rows]})["log_probs"]
                 for i in range(0, len(states), rows)]
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def token_log_probs(self, states: np.ndarray, targets: np.ndarray) -> np.ndarray:
        """states (B, T, D), targets (B, T) -> the log-probability of each target token (B, T), projected in
        chunks so the (B, T, V) log-probabilities never exist at once."""
        states = _f32(states)
        rows = max(1, PROJECT_FLOATS // max(1, states.shape[1] * self.shape.vocab_size))
        out = np.empty(targets.shape, dtype=np.float32)
        for i in range(0, len(states), rows):
            log_probs = self.run("logit_lens", {"states": states[i:i + rows]})["log_probs"]
            out[i:i + rows] = np.take_along_axis(log_probs, targets[i:i + rows, :, None], axis=2)[..., 0]
        return out


def _f32(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.float32)


def one_source(sentence: Sentence) -> tuple[np.ndarray, np.ndarray]:
    """The sentence's source as a batch of one: ids (1, S) and mask (1, S)."""
    src = np.array([sentence.src_ids], dtype=np.int64)
    return src, np.ones_like(src, dtype=bool)


def attention_maps(model: ExperimentModel, sentence: Sentence) -> dict[str, np.ndarray]:
    """Every attention weight over `sentence`'s translation, teacher-forced through the experiment graphs with no
    head knocked out (one encoder run, one decoder run): {"enc_self": (L, H, S, S), "dec_self": (L, H, T, T),
    "dec_cross": (L, H, T, S)}, row t being the step that chose output token t."""
    src, mask = one_source(sentence)
    encoded = model.encode(src, mask)
    decoded = model.decode(np.array([sentence.tgt_in_ids], dtype=np.int64), encoded["memory"], mask)
    return {"enc_self": encoded["enc_self_weights"][:, 0], "dec_self": decoded["dec_self_weights"][:, 0],
            "dec_cross": decoded["dec_cross_weights"][:, 0]}
