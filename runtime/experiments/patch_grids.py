"""The translator's patching grids (one patch per cell, every cell in one batched evaluation) and a cell's
re-translation. See runtime.experiments.patching for the pair, the metric and the patch points.

    encoder_residual_grid   (L + 1) × corrupted source position   site "enc_resid"
    decoder_residual_grid   (L + 1) × target position 0..t        site "dec_resid"
    head_grid(kind)         layer × head, at every aligned position   "enc_self" | "dec_self" | "dec_cross"
    memory_grid             1 × (source position + "all")          site "memory"
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..spec import HEAD_KINDS
from .model import ExperimentModel
from .patch_common import Patch, PatchGrid, Progress
from .patching import DECODER_SITES, PatchPair, decoder_feeds, evaluate, patched_memory, run, where_arrays


def point_labels(layers: int) -> list[str]:
    return ["embeddings"] + [f"after layer {i}" for i in range(1, layers + 1)]


def source_labels(pair: PatchPair) -> list[str]:
    """Each corrupted source position's piece; "clean→corrupted" where the aligned clean piece differs."""
    clean_at = dict(zip(pair.alignment.corrupted, pair.alignment.clean, strict=True))
    labels = []
    for j, piece in enumerate(pair.corrupted.src_pieces):
        other = pair.clean.src_pieces[clean_at[j]] if j in clean_at else None
        labels.append(piece if other in (None, piece) else f"{other}→{piece}")
    return labels


def grid_of(model: ExperimentModel, pair: PatchPair, site: str, rows: list[str], columns: list[str],
            cells: list[list[Patch | None]], progress: Progress, note: str | None = None) -> PatchGrid:
    """Evaluate every cell that has a patch (one row each, in one batch); NaN where it has none."""
    start = time.perf_counter()
    flat = [cell for row in cells for cell in row if cell is not None]
    values = iter(evaluate(model, pair, [[cell] for cell in flat], progress))
    raw = np.array([[np.nan if cell is None else next(values) for cell in row] for row in cells])
    return PatchGrid(site, rows, columns, raw, cells, pair.clean_value, pair.corrupted_value,
                     time.perf_counter() - start, note)


def encoder_residual_grid(model: ExperimentModel, pair: PatchPair, progress: Progress = None) -> PatchGrid:
    """The encoder's residual stream, (L + 1) points × corrupted source positions (left-out positions NaN)."""
    points = model.shape.n_layers + 1
    cells = [[Patch("enc_resid", p, -1, j) if pair.aligned[j] else None for j in range(len(pair.aligned))]
             for p in range(points)]
    return grid_of(model, pair, "enc_resid", point_labels(points - 1), source_labels(pair), cells, progress,
                   pair.note)


def decoder_residual_grid(model: ExperimentModel, pair: PatchPair, progress: Progress = None) -> PatchGrid:
    """The decoder's residual stream, (L + 1) points × target positions 0..t."""
    points, t = model.shape.n_decoder_layers + 1, len(pair.target_in)
    cells = [[Patch("dec_resid", p, -1, j) for j in range(t)] for p in range(points)]
    columns = model.tokenizer.tokens(pair.target_in)
    note = ("Both runs read the same target tokens, so their embeddings (the first row) are the same and patching "
            "them changes nothing; positions after t cannot reach position t (causal attention) and are not shown.")
    return grid_of(model, pair, "dec_resid", point_labels(points - 1), columns, cells, progress, note)


def head_grid(model: ExperimentModel, pair: PatchPair, kind: str, progress: Progress = None) -> PatchGrid:
    """One attention kind's heads, layer × head, each patched at every aligned position (every target position
    0..t for the decoder's kinds)."""
    if kind not in HEAD_KINDS:
        raise ValueError(f"unknown attention kind {kind!r}: one of {', '.join(HEAD_KINDS)}")
    layers = model.layers[kind]
    cells = [[Patch(kind, layer, head, -1) for head in range(model.shape.n_heads)] for layer in range(layers)]
    return grid_of(model, pair, kind, [f"layer {i + 1}" for i in range(layers)],
                   [f"head {h + 1}" for h in range(model.shape.n_heads)], cells, progress,
                   pair.note if kind == "enc_self" else None)


def memory_grid(model: ExperimentModel, pair: PatchPair, progress: Progress = None) -> PatchGrid:
    """The encoder's memory (its output, what every cross-attention reads) patched at one source position, and in
    the last cell at every aligned position at once."""
    cells = [[Patch("memory", -1, -1, j) if pair.aligned[j] else None for j in range(len(pair.aligned))]
             + [Patch("memory")]]
    return grid_of(model, pair, "memory", ["memory"], source_labels(pair) + ["all"], cells, progress, pair.note)


GRIDS: dict[str, Callable[..., PatchGrid]] = {
    "enc_resid": encoder_residual_grid, "dec_resid": decoder_residual_grid, "memory": memory_grid,
    **{kind: (lambda model, pair, progress=None, kind=kind: head_grid(model, pair, kind, progress))
       for kind in HEAD_KINDS}}


# ---------------------------------------------------------------- one cell's re-translation
@dataclass(frozen=True)
class Retranslation:
    """The corrupted source re-translated (greedy) with one patch, beside both original translations."""

    patch: Patch | None
    output_ids: list[int]
    output_pieces: list[str]
    translation: str
    clean: str  # the clean source's translation
    corrupted: str  # the corrupted source's, unpatched

    @property
    def label(self) -> str:
        return "nothing patched" if self.patch is None else self.patch.label()


def retranslate(model: ExperimentModel, pair: PatchPair, patch: Patch | None) -> Retranslation:
    """Greedy re-translation of the corrupted source with `patch` applied (None: unpatched, the served output).
    Encoder patches act on the memory once; a decoder patch puts the clean value at its target position(s) while
    generating, once the output reaches them (the clean run has values for positions 0..t only). One
    teacher-forced decoder run per generated token (the lengths are short)."""
    where = where_arrays(model, pair, [[patch]] if patch else [[]])
    memory = patched_memory(model, pair, where)  # (1, S, D)
    tokenizer = model.tokenizer
    max_len = pair.corrupted.max_len or len(pair.corrupted.src_ids) + 50
    max_len = min(max_len, model.files.max_len)
    tokens: list[int] = []
    while len(tokens) < max_len and (not tokens or tokens[-1] != tokenizer.eos_id):
        tgt_in = [tokenizer.bos_id, *tokens]
        n = len(tgt_in)
        values, step_where = {}, {}
        for site in DECODER_SITES:  # the clean values fit positions 0..t: cut or zero-pad them to n positions
            value = pair.values[site][..., :n, :]
            pad = [(0, 0)] * value.ndim
            pad[-2] = (0, n - value.shape[-2])
            values[site] = np.pad(value, pad)
            w = where[site][..., :n]
            step_where[site] = np.pad(w, [(0, 0)] * (w.ndim - 1) + [(0, n - w.shape[-1])])
        (states,) = run(model, "decoder_patch", decoder_feeds(model, tgt_in, memory, values, step_where), ["states"])
        tokens.append(int(model.project(states[:, -1:])[0, 0].argmax()))
    return Retranslation(patch, tokens, tokenizer.tokens(tokens), tokenizer.decode(tokens), pair.clean.translation,
                         pair.corrupted.translation)
