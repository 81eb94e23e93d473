"""Activation patching on the translator: which activations carry the difference between two sources.

    pair = patch_pair(model, "Der Hund schläft im Garten.", "Die Katze schläft im Garten.")
    grid = encoder_residual_grid(model, pair)   # grid.normalised (L + 1, S): 1 = that patch restores the clean metric
    head_grid(model, pair, "dec_cross"), decoder_residual_grid(model, pair), memory_grid(model, pair)
    retranslate(model, pair, grid.cells[2][3])   # the corrupted source re-translated with that one patch

Two runs: the clean source and the corrupted one, both scoring the same target: the clean source's greedy
translation, teacher-forced (up to the metric's position t; later positions cannot act on it). The metric is the
log-probability difference log p(A) − log p(B) at position t (by default t is the first position where the two
greedy translations differ, A clean's token there and B corrupted's). A patch runs the corrupted source with one
activation replaced by the clean run's at the aligned position (`patch_common.align`); each grid cell is one patch,
reported as the metric and normalised, (patched − corrupted) / (clean − corrupted). The graphs are
`runtime.spec`'s patching graphs (`python -m export DIR --if-stale` adds them to an older export).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..model_files import ModelLoadError
from ..onnx_backend import run_plain
from ..spec import EXPERIMENT_PRECISION, patching_graphs
from ..text import check_texts
from .model import ExperimentModel, Sentence
from .patch_common import Alignment, Patch, Progress, align, chunks

ENCODER_SITES = ("enc_resid", "enc_self", "memory")
DECODER_SITES = ("dec_resid", "dec_self", "dec_cross")
SITES = ENCODER_SITES + DECODER_SITES


def with_patching(model: ExperimentModel) -> ExperimentModel:
    """`model` with the patching graphs' sessions added (once), or a ModelLoadError naming the command."""
    for spec in patching_graphs(model.shape):
        if spec.name in model.graphs:
            continue
        path = model.files.path(spec, EXPERIMENT_PRECISION)
        if not path.is_file():
            raise ModelLoadError(f"{path}: no patching graphs in this model directory (exported before they existed, "
                                 f"or with --no-experiments); add them with `python -m export {model.files.model_dir} "
                                 f"--if-stale` (`make run` does it)")
        model.graphs[spec.name] = (spec, model.files.session(spec, EXPERIMENT_PRECISION, "cpu", None))
    return model


@dataclass(frozen=True)
class Metric:
    """log p(A) − log p(B) at target position t, the target being the clean translation, teacher-forced."""

    position: int  # t
    token_a: int
    token_b: int
    piece_a: str
    piece_b: str
    description: str  # a sentence for the page: what it is and, for the default, why these tokens


@dataclass(frozen=True)
class PatchPair:
    """Everything a grid needs: the two sentences, the alignment, the metric, the clean run's activations."""

    clean: Sentence
    corrupted: Sentence
    alignment: Alignment
    metric: Metric
    clean_value: float  # the metric of the clean run ...
    corrupted_value: float  # ... and of the corrupted run
    target_in: list[int]  # the decoder's inputs: <s> + the clean translation's first t tokens (t + 1 positions)
    # the clean run's activations at the corrupted run's positions: enc_resid (L + 1, S, D), enc_self (L, H, S, K),
    # memory (S, D); and at the target's: dec_resid (L + 1, T, D), dec_self, dec_cross (L, H, T, K)
    values: dict[str, np.ndarray]
    aligned: np.ndarray  # (S,) bool: corrupted source positions that have a clean counterpart

    @property
    def note(self) -> str | None:
        return self.alignment.note


def run(model: ExperimentModel, name: str, feeds: dict[str, np.ndarray], outputs: list[str]) -> list[np.ndarray]:
    spec, handle = with_patching(model).graphs[name]
    return run_plain(handle, feeds, outputs)


def encoder_feeds(model: ExperimentModel, src_ids: Sequence[int], rows: int, values: dict[str, np.ndarray] | None,
                  resid_where: np.ndarray | None = None, head_where: np.ndarray | None = None) -> dict:
    """Feeds of `rows` copies of one source; no values / where: nothing patched."""
    shape, s = model.shape, len(src_ids)
    src = np.repeat(np.array([src_ids], dtype=np.int64), rows, 0)
    layers, h = shape.n_layers, shape.n_heads
    return {"src_ids": src, "src_mask": np.ones_like(src, dtype=bool),
            "resid_value": values["enc_resid"] if values else np.zeros((layers + 1, s, shape.d_model), np.float32),
            "resid_where": np.zeros((rows, layers + 1, s), np.float32) if resid_where is None else resid_where,
            "enc_self_value": values["enc_self"] if values else np.zeros((layers, h, s, shape.head_dim), np.float32),
            "enc_self_where": np.zeros((rows, layers, h, s), np.float32) if head_where is None else head_where}


def decoder_feeds(model: ExperimentModel, tgt_in: Sequence[int], memory: np.ndarray,
                  values: dict[str, np.ndarray] | None, where: dict[str, np.ndarray] | None = None) -> dict:
    """Feeds of one target over a batch of memories (B, S, D); values / where None: nothing patched."""
    shape, t, rows = model.shape, len(tgt_in), len(memory)
    layers, h = shape.n_decoder_layers, shape.n_heads
    feeds = {"tgt_ids": np.repeat(np.array([tgt_in], dtype=np.int64), rows, 0),
             "memory": np.ascontiguousarray(memory, dtype=np.float32),
             "src_mask": np.ones(memory.shape[:2], dtype=bool)}
    zeros = {"dec_resid": np.zeros((layers + 1, t, shape.d_model), np.float32),
             "dec_self": np.zeros((layers, h, t, shape.head_dim), np.float32)}
    for site, name in (("dec_resid", "resid"), ("dec_self", "dec_self"), ("dec_cross", "dec_cross")):
        value = values[site] if values else zeros.get(site, zeros["dec_self"])
        feeds[f"{name}_value"] = value
        feeds[f"{name}_where"] = (where[site] if where else np.zeros((rows, *value.shape[:-1]), np.float32))
    return feeds


def metric_values(model: ExperimentModel, states: np.ndarray, metric: Metric) -> np.ndarray:
    """The last position's states (B, 1, D) -> log p(A) − log p(B) per row (float64)."""
    log_probs = model.project(states)[:, 0].astype(np.float64)  # (B, 1, V) -> (B, V)
    return log_probs[:, metric.token_a] - log_probs[:, metric.token_b]


def one_run(model: ExperimentModel, src_ids: list[int],
            target_in: list[int]) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """One source, nothing patched: its activations at every patch point (no batch axis), and the last position's
    states (1, 1, D)."""
    memory, resid, heads = run(model, "encoder_patch", encoder_feeds(model, src_ids, 1, None),
                               ["memory", "resid", "enc_self_heads"])
    states, dec_resid, dec_self, dec_cross = run(model, "decoder_patch", decoder_feeds(model, target_in, memory, None),
                                                 ["states", "resid", "dec_self_heads", "dec_cross_heads"])
    acts = {"enc_resid": resid[0], "enc_self": heads[0], "memory": memory[0], "dec_resid": dec_resid[0],
            "dec_self": dec_self[0], "dec_cross": dec_cross[0]}
    return acts, states[:, -1:]


def choose_metric(model: ExperimentModel, clean: Sentence, corrupted: Sentence, position: int | None,
                  token_a: int | None, token_b: int | None) -> Metric:
    """The caller's position and tokens, the defaults filling what is None (module doc), or a ValueError."""
    out_c, out_x = clean.output_ids, corrupted.output_ids
    default = position is None
    if default:
        pairs = enumerate(zip(out_c, out_x, strict=False))
        position = next((i for i, (a, b) in pairs if a != b), min(len(out_c), len(out_x)))
        if out_c == out_x:
            raise ValueError(f"both sources translate to the same output ('{clean.translation}'): no position where "
                             f"they differ to measure; choose the target position and the two tokens yourself")
        if position >= len(out_c):
            raise ValueError("the clean translation ends where the corrupted one goes on: choose the target position "
                             "and the two tokens yourself")
    if not 0 <= position < len(out_c):
        raise ValueError(f"target position {position} is outside the clean translation (0..{len(out_c) - 1})")
    differs = position < len(out_x) and out_x[position] != out_c[position]
    token_a = out_c[position] if token_a is None else int(token_a)
    if token_b is None:
        if not differs:
            raise ValueError(f"the corrupted translation has the same token as the clean one at position {position} "
                             f"('{clean.output_pieces[position]}'): choose token B yourself")
        token_b = out_x[position]
    vocab = model.shape.vocab_size
    for name, token in (("A", token_a), ("B", token_b)):
        if not 0 <= token < vocab:
            raise ValueError(f"token {name} ({token}) is outside the vocabulary (0..{vocab - 1})")
    if token_a == token_b:
        raise ValueError("tokens A and B are the same token: their log-probability difference is always 0")
    piece_a, piece_b = model.tokenizer.id_to_token(token_a), model.tokenizer.id_to_token(token_b)
    description = (f"log p('{piece_a}') − log p('{piece_b}') at target position {position} (after "
                   f"'{' '.join(clean.output_pieces[:position]) or '<s>'}'), the clean translation teacher-forced")
    if default:
        description += ("; by default: the first position where the two translations differ, A the clean "
                        "translation's token there and B the corrupted one's")
    return Metric(position, token_a, token_b, piece_a, piece_b, description)


def patch_pair(model: ExperimentModel, clean_text: str, corrupted_text: str, src_lang: str = "de",
               tgt_lang: str = "en", position: int | None = None, token_a: int | None = None,
               token_b: int | None = None, max_len: int | None = None) -> PatchPair:
    """Translate both sources (greedy), align them, choose the metric, and record the clean run's activations.
    Bad input (empty text, the same text twice, nothing aligned, a bad position or token) raises ValueError."""
    check_texts([clean_text, corrupted_text])
    with_patching(model)
    clean = model.sentence(clean_text, src_lang, tgt_lang, max_len)
    corrupted = model.sentence(corrupted_text, src_lang, tgt_lang, max_len)
    return pair_from(model, clean, corrupted, position, token_a, token_b)


def pair_from(model: ExperimentModel, clean: Sentence, corrupted: Sentence, position: int | None = None,
              token_a: int | None = None, token_b: int | None = None) -> PatchPair:
    """`patch_pair` from two greedy translations already made (a page has them: `sentence_from`)."""
    with_patching(model)
    if clean.src_ids == corrupted.src_ids:
        raise ValueError("the two sources are the same pieces: patching one into the other changes nothing")
    alignment = align(clean.src_ids, corrupted.src_ids, clean.src_pieces, corrupted.src_pieces, fixed_ends=True)
    metric = choose_metric(model, clean, corrupted, position, token_a, token_b)
    target_in = clean.tgt_in_ids[:metric.position + 1]
    clean_acts, clean_states = one_run(model, clean.src_ids, target_in)
    _, corrupted_states = one_run(model, corrupted.src_ids, target_in)
    values = {site: alignment.lay_out(clean_acts[site], axis) for site, axis in
              (("enc_resid", 1), ("enc_self", 2), ("memory", 0))}
    values |= {site: clean_acts[site] for site in DECODER_SITES}
    aligned = np.zeros(len(corrupted.src_ids), dtype=bool)
    aligned[alignment.corrupted] = True
    both = metric_values(model, np.concatenate([clean_states, corrupted_states]), metric)
    return PatchPair(clean, corrupted, alignment, metric, float(both[0]), float(both[1]), target_in, values, aligned)


# ---------------------------------------------------------------- many patches, one batch
def where_arrays(model: ExperimentModel, pair: PatchPair, rows: Sequence[Sequence[Patch]]) -> dict[str, np.ndarray]:
    """One where-mask row per entry of `rows` (the patches applied together in that row), per site."""
    n, shape = len(rows), model.shape
    s, t, h = len(pair.corrupted.src_ids), len(pair.target_in), shape.n_heads
    le, ld = shape.n_layers, shape.n_decoder_layers
    where = {"enc_resid": np.zeros((n, le + 1, s), np.float32), "enc_self": np.zeros((n, le, h, s), np.float32),
             "memory": np.zeros((n, s), np.float32), "dec_resid": np.zeros((n, ld + 1, t), np.float32),
             "dec_self": np.zeros((n, ld, h, t), np.float32), "dec_cross": np.zeros((n, ld, h, t), np.float32)}
    for r, patches in enumerate(rows):
        for patch in patches:
            mark(where[check_site(patch)][r], pair, patch)
    return where


def check_site(patch: Patch) -> str:
    if patch.site not in SITES:
        raise ValueError(f"unknown patch site {patch.site!r}: one of {', '.join(SITES)}")
    return patch.site


def mark(row: np.ndarray, pair: PatchPair, patch: Patch) -> None:
    """Set one patch's where-mask to 1 in one row's array of its site (a ValueError for a cell it lacks)."""
    encoder = patch.site in ENCODER_SITES
    length = row.shape[-1]
    if patch.position < 0:
        positions = pair.aligned if encoder else np.ones(length, dtype=bool)
    elif patch.position >= length or (encoder and not pair.aligned[patch.position]):
        raise ValueError(f"{patch.label()}: no such aligned position (0..{length - 1}"
                         + (", aligned ones only)" if encoder else ")"))
    else:
        positions = np.arange(length) == patch.position
    if patch.site == "memory":
        row[positions] = 1.0
        return
    if not 0 <= patch.layer < row.shape[0] or (row.ndim == 3 and not 0 <= patch.head < row.shape[1]):
        raise ValueError(f"{patch.label()}: no such layer or head in this model")
    if row.ndim == 3:
        row[patch.layer, patch.head, positions] = 1.0
    else:
        row[patch.layer, positions] = 1.0


def patched_memory(model: ExperimentModel, pair: PatchPair, where: dict[str, np.ndarray],
                   progress=None) -> np.ndarray:
    """The corrupted source's memory (rows, S, D) with each row's encoder and memory patches; the encoder runs
    once per distinct row of encoder patches."""
    n, s = len(where["memory"]), len(pair.corrupted.src_ids)
    keys = np.concatenate([where["enc_resid"].reshape(n, -1), where["enc_self"].reshape(n, -1)], axis=1)
    distinct, inverse = np.unique(keys, axis=0, return_inverse=True)
    split = where["enc_resid"][0].size
    resid_where = distinct[:, :split].reshape(-1, *where["enc_resid"].shape[1:])
    head_where = distinct[:, split:].reshape(-1, *where["enc_self"].shape[1:])
    shape = model.shape
    parts = []
    for part in chunks(len(distinct), (2 * shape.n_layers + 2) * s * shape.d_model):
        feeds = encoder_feeds(model, pair.corrupted.src_ids, len(resid_where[part]), pair.values,
                              np.ascontiguousarray(resid_where[part]), np.ascontiguousarray(head_where[part]))
        parts.append(run(model, "encoder_patch", feeds, ["memory"])[0])
        progress and progress(len(parts))
    memory = np.concatenate(parts)[inverse.reshape(-1)]  # (rows, S, D)
    w = where["memory"][:, :, None]  # (rows, S) -> (rows, S, 1)
    return memory * (1.0 - w) + pair.values["memory"][None] * w


def evaluate(model: ExperimentModel, pair: PatchPair, rows: Sequence[Sequence[Patch]],
             progress: Progress = None) -> np.ndarray:
    """The metric (rows,) with each row's patches applied together (an empty row: the corrupted run)."""
    where = where_arrays(model, pair, rows)
    n, shape = len(rows), model.shape
    s, t = len(pair.corrupted.src_ids), len(pair.target_in)
    n_distinct = len(np.unique(np.concatenate([where["enc_resid"].reshape(n, -1), where["enc_self"].reshape(n, -1)],
                                              axis=1), axis=0))
    encoder_parts = chunks(n_distinct, (2 * shape.n_layers + 2) * s * shape.d_model)
    decoder_parts = chunks(n, (3 * shape.n_decoder_layers + 2) * t * shape.d_model
                           + shape.n_decoder_layers * shape.n_heads * t * max(s, t))
    total = len(encoder_parts) + len(decoder_parts)
    report = (lambda done: progress(done, total)) if progress else None
    memory = patched_memory(model, pair, where, report)
    out = np.empty(n, dtype=np.float64)
    for i, part in enumerate(decoder_parts):
        feeds = decoder_feeds(model, pair.target_in, memory[part], pair.values,
                              {site: where[site][part] for site in DECODER_SITES})
        (states,) = run(model, "decoder_patch", feeds, ["states"])
        out[part] = metric_values(model, states[:, -1:], pair.metric)
        report and report(len(encoder_parts) + i + 1)
    return out
