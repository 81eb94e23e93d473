"""One input through the model with every intermediate tensor, from onnxruntime (the Walkthrough page's numbers).

    from runtime.walkthrough import TranslationWalkthrough, ClassifierWalkthrough
    trace = TranslationWalkthrough("models/translate").run("Guten Morgen!", "de", "en")
    trace.encoder["enc_self_weights"]  # (L, H, S, S): every encoder layer's attention weights
    trace.decoder["log_probs"][t]  # (V,): the distribution the greedy search chose output token t from

The translator's input is walked through the encoder, then the decoder runs teacher-forced over
<s> + the greedy translation, so position t's distribution is the one the search chose output token t
from. The graphs (`runtime.spec`'s walkthrough specs, fp32) are made by the export; a model directory
exported before they existed gets them with `python -m export DIR --if-stale`.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .decoding import greedy
from .model_files import ModelFiles, ModelLoadError, load_tokenizer
from .onnx_backend import run_plain
from .onnx_models import OnnxSentimentClassifier, OnnxTranslator
from .providers import SessionHandle
from .spec import BATCH, WALKTHROUGH_PRECISION, GraphSpec, walkthrough_graphs
from .text import check_texts

Tensors = dict[str, np.ndarray]


def without_batch(spec: GraphSpec, outputs: list[np.ndarray]) -> Tensors:
    """One row's tensors: the batch axis (first, or second after the layer axis) dropped."""
    trace = {}
    for tensor, array in zip(spec.outputs, outputs, strict=True):
        axis = tensor.dims.index(BATCH) if BATCH in tensor.dims else None
        trace[tensor.name] = array if axis is None else np.take(array, 0, axis=axis)
    return trace


def open_walkthrough(files: ModelFiles, provider: str, threads: int | None) -> dict[str, tuple[GraphSpec,
                                                                                               SessionHandle]]:
    """The walkthrough graphs' sessions by spec name, or a ModelLoadError that says how to make them."""
    sessions = {}
    for spec in walkthrough_graphs(files.shape):
        if not files.path(spec, WALKTHROUGH_PRECISION).is_file():
            raise ModelLoadError(f"{files.path(spec, WALKTHROUGH_PRECISION)}: no walkthrough graphs in this model "
                                 f"directory (exported before they existed, or with --no-walkthrough); add them with "
                                 f"`python -m export {files.model_dir} --if-stale` (`make run` does it)")
        sessions[spec.name] = (spec, files.session(spec, WALKTHROUGH_PRECISION, provider, threads))
    return sessions


def run_graph(graph: tuple[GraphSpec, SessionHandle], feeds: dict[str, np.ndarray]) -> Tensors:
    spec, handle = graph
    return without_batch(spec, run_plain(handle, feeds, spec.output_names))


@dataclass
class TranslationTrace:
    src_ids: list[int]  # what the encoder saw: <2xx> tag, the text's pieces, </s>
    src_pieces: list[str]
    output_ids: list[int]  # the greedy translation, </s> included when it was reached
    output_pieces: list[str]
    tgt_in_ids: list[int]  # the decoder's inputs: <s> + output_ids[:-1]
    text: str  # the greedy translation, detokenised
    truncated: bool  # the input was cut to the model's length limit
    warning: str | None  # pieces the tokenizer does not know (runtime.coverage)
    encoder: Tensors  # encoder_walkthrough's outputs, batch axis dropped
    decoder: Tensors  # decoder_walkthrough's outputs, batch axis dropped


class TranslationWalkthrough:
    """The translator's walkthrough graphs plus its fp32 search (for the translation the decoder is walked over)."""

    def __init__(self, model_dir: str | Path, provider: str = "cpu", threads: int | None = None):
        self.translator = OnnxTranslator(model_dir, provider, "fp32", threads)
        files = ModelFiles.open(model_dir, "seq2seq")
        self.graphs = open_walkthrough(files, provider, threads)
        self.tokenizer = self.translator.tokenizer
        files.check_tokenizer(self.tokenizer, self.graphs["encoder_walkthrough"][1])

    def run(self, text: str, src_lang: str = "de", tgt_lang: str = "en",
            max_len: int | None = None) -> TranslationTrace:
        check_texts([text])
        out = self.translator.translate([text], src_lang, tgt_lang, method="greedy", max_len=max_len)[0]
        src_ids, truncated = self.translator.source_ids(text, tgt_lang)
        src = np.array([src_ids], dtype=np.int64)
        mask = np.ones_like(src, dtype=bool)
        encoder = run_graph(self.graphs["encoder_walkthrough"], {"src_ids": src, "src_mask": mask})
        tgt_in = [self.tokenizer.bos_id] + out.token_ids[:-1] if out.token_ids else [self.tokenizer.bos_id]
        decoder = run_graph(self.graphs["decoder_walkthrough"],
                            {"tgt_ids": np.array([tgt_in], dtype=np.int64), "memory": encoder["memory"][None],
                             "src_mask": mask})
        return TranslationTrace(src_ids, self.tokenizer.tokens(src_ids), list(out.token_ids),
                                self.tokenizer.tokens(out.token_ids), tgt_in, out.text, truncated, out.warning,
                                encoder, decoder)

    def alternative(self, trace: TranslationTrace, position: int, token_id: int,
                    max_len: int | None = None) -> Alternative:
        """Take `token_id` at output position `position` instead of greedy's choice, then continue greedily."""
        if not 0 <= position <= len(trace.output_ids):
            raise ValueError(f"position {position} is outside the output (0..{len(trace.output_ids)})")
        src = np.array([trace.src_ids], dtype=np.int64)
        prefix = trace.output_ids[:position] + [int(token_id)]
        (hyp,) = greedy(self.translator.backend, src, np.ones_like(src, dtype=bool), max_len,
                        self.tokenizer.bos_id, self.tokenizer.eos_id, prefix=prefix)
        positions = np.arange(len(trace.output_ids))
        greedy_log_prob = float(trace.decoder["log_probs"][positions, trace.output_ids].sum())
        return Alternative(list(hyp.tokens), self.tokenizer.tokens(hyp.tokens), self.tokenizer.decode(hyp.tokens),
                           float(hyp.log_prob), greedy_log_prob)


@dataclass
class Alternative:
    """Where the translation goes when position t takes another token, greedy after it."""

    output_ids: list[int]  # the first t tokens of the greedy output, the chosen token, then greedy
    output_pieces: list[str]
    text: str
    log_prob: float  # summed over the output, the forced token's included
    greedy_log_prob: float  # the greedy output's, for comparison


@dataclass
class ClassificationTrace:
    ids: list[int]  # the text's pieces, cut to the model's limit
    pieces: list[str]
    labels: list[str]
    truncated: bool
    warning: str | None
    steps: Tensors  # classifier_walkthrough's outputs, batch axis dropped


class ClassifierWalkthrough:
    """The classifier's walkthrough graph, with the same input handling as `OnnxSentimentClassifier`."""

    def __init__(self, model_dir: str | Path, provider: str = "cpu", threads: int | None = None):
        self.classifier = OnnxSentimentClassifier(model_dir, provider, "fp32", threads)
        files = ModelFiles.open(model_dir, "classifier")
        self.graphs = open_walkthrough(files, provider, threads)
        self.tokenizer = load_tokenizer(files)
        files.check_tokenizer(self.tokenizer, self.graphs["classifier_walkthrough"][1])

    def run(self, text: str) -> ClassificationTrace:
        prediction = self.classifier.classify([text])[0]  # the checks, truncation and coverage of the served path
        ids = self.tokenizer.encode(text)[:self.classifier.max_len]
        feeds = {"input_ids": np.array([ids], dtype=np.int64), "attention_mask": np.ones((1, len(ids)), dtype=bool)}
        steps = run_graph(self.graphs["classifier_walkthrough"], feeds)
        return ClassificationTrace(ids, self.tokenizer.tokens(ids), list(self.classifier.labels),
                                   prediction.truncated, prediction.warning, steps)
