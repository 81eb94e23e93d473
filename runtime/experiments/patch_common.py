"""What activation patching shares between the translator and the classifier: which positions of the two inputs
correspond (`align`), one cell's patch (`Patch`), the metric's normalisation and the grid of results.

Alignment rule. Two inputs with the same number of pieces align position by position (i <-> i). When the counts
differ, only the common prefix and the common suffix of the two id sequences align (the pieces there are the same
tokens, the suffix at shifted positions); the pieces between are left out, and `Alignment.note` says which. When no
aligned position holds a piece of the text (only the language tag and </s>, which every source has), patching has
nothing to carry: `align` refuses with the reason.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

Progress = Callable[[int, int], None] | None  # progress(done, total): how many of a grid's runs are done
# |clean − corrupted| below this (nats or logits) and the normalised metric would divide noise by noise
MIN_METRIC_GAP = 1e-3
# Floats the outputs of one patched run may hold (rows × activations per row): a grid runs in chunks of rows this
# size, which also gives the progress callback its steps.
RUN_FLOATS = 4_000_000


@dataclass(frozen=True)
class Alignment:
    """Which corrupted position each clean position is patched into."""

    clean: list[int]  # aligned clean positions ...
    corrupted: list[int]  # ... and the corrupted position each goes to (same length)
    corrupted_length: int
    note: str | None  # a sentence for the page when the counts differ (what was left out)

    def lay_out(self, values: np.ndarray, axis: int) -> np.ndarray:
        """Clean activations with positions on `axis` -> the same at the corrupted run's positions (zeros where
        nothing aligns: their where-mask stays 0)."""
        shape = list(values.shape)
        shape[axis] = self.corrupted_length
        out = np.zeros(shape, dtype=np.float32)
        take = np.take(values, self.clean, axis=axis)
        index = [slice(None)] * values.ndim
        index[axis] = self.corrupted
        out[tuple(index)] = take
        return out


def pieces_text(pieces: Sequence[str]) -> str:
    return " ".join(pieces) if pieces else "nothing"


def align(clean_ids: Sequence[int], corrupted_ids: Sequence[int], clean_pieces: Sequence[str],
          corrupted_pieces: Sequence[str], fixed_ends: bool, noun: str = "source") -> Alignment:
    """The alignment rule (module doc). fixed_ends: the first and last positions are the language tag and </s>,
    present in every source, so they do not count as aligned text. noun: what the inputs are called in messages."""
    n_clean, n_corrupted = len(clean_ids), len(corrupted_ids)
    if n_clean == n_corrupted:
        return Alignment(list(range(n_clean)), list(range(n_clean)), n_corrupted, None)
    prefix = 0
    while prefix < min(n_clean, n_corrupted) and clean_ids[prefix] == corrupted_ids[prefix]:
        prefix += 1
    suffix = 0
    while (suffix < min(n_clean, n_corrupted) - prefix
           and clean_ids[n_clean - 1 - suffix] == corrupted_ids[n_corrupted - 1 - suffix]):
        suffix += 1
    clean = list(range(prefix)) + list(range(n_clean - suffix, n_clean))
    corrupted = list(range(prefix)) + list(range(n_corrupted - suffix, n_corrupted))
    text = [i for i in clean if not fixed_ends or 0 < i < n_clean - 1]
    left_clean = clean_pieces[prefix:n_clean - suffix]
    left_corrupted = corrupted_pieces[prefix:n_corrupted - suffix]
    if not text:
        raise ValueError(f"the clean {noun} has {n_clean} pieces and the corrupted one {n_corrupted}, and no piece "
                         f"of the text is the same at their start or end, so no position aligns: nothing to patch. "
                         f"Make them differ in a word that keeps the number of pieces, or share their beginning "
                         f"or end.")
    note = (f"The clean {noun} has {n_clean} pieces and the corrupted one {n_corrupted}: only the common start "
            f"({prefix} pieces) and end ({suffix} pieces) align and are patched; left out: clean "
            f"'{pieces_text(left_clean)}', corrupted '{pieces_text(left_corrupted)}' (corrupted positions "
            f"{prefix}–{n_corrupted - suffix - 1}).")
    return Alignment(clean, corrupted, n_corrupted, note)


class Patch(NamedTuple):
    """One cell's patch: the clean run's activation at `site` put into the corrupted run.

    site: "enc_resid" / "dec_resid" (residual stream; layer = point 0..L: 0 the embeddings, i after layer i),
    "enc_self" / "dec_self" / "dec_cross" (one head's output; layer, head), "memory" (the encoder's output, read by
    every cross-attention). position: corrupted source position (encoder sites, memory) or target position (decoder
    sites); -1 = every aligned position."""

    site: str
    layer: int = -1
    head: int = -1
    position: int = -1

    def label(self) -> str:
        where = "every aligned position" if self.position < 0 else f"position {self.position}"
        if self.site == "memory":
            return f"encoder memory at {where}"
        if self.site.endswith("resid"):
            side = "encoder" if self.site == "enc_resid" else "decoder"
            point = "embeddings" if self.layer == 0 else f"after layer {self.layer}"
            return f"{side} residual stream ({point}) at {where}"
        names = {"enc_self": "encoder self-attention", "dec_self": "decoder self-attention",
                 "dec_cross": "cross-attention"}
        return f"{names.get(self.site, self.site)} layer {self.layer + 1} head {self.head + 1} at {where}"


def normalise(values: np.ndarray, clean: float, corrupted: float) -> np.ndarray:
    """(patched − corrupted) / (clean − corrupted): 0 = the corrupted run's metric, 1 = the clean run's. Refuses
    (ValueError with the reason) when the two runs' metrics are too close to divide by."""
    gap = clean - corrupted
    if not abs(gap) >= MIN_METRIC_GAP:
        raise ValueError(f"the clean and corrupted runs give almost the same metric ({clean:.4f} and "
                         f"{corrupted:.4f}, {abs(gap):.1e} apart, under {MIN_METRIC_GAP:g}): nothing to normalise "
                         f"by. Pick other tokens or another pair of inputs; the raw values are still shown.")
    return (np.asarray(values, dtype=np.float64) - corrupted) / gap


@dataclass(frozen=True)
class PatchGrid:
    """One grid of patching results: cell (r, c) is the metric with `cells[r][c]` patched alone."""

    site: str  # "enc_resid", "dec_resid", "enc_self", "dec_self", "dec_cross", "memory"
    rows: list[str]  # row labels (points, layers)
    columns: list[str]  # column labels (positions, heads)
    raw: np.ndarray  # (rows, columns): the metric with that cell patched; NaN where nothing was patched
    cells: list[list[Patch | None]]  # each cell's patch (None: a left-out position)
    clean: float  # the metric of the clean run and of the corrupted run
    corrupted: float
    seconds: float  # wall time of the grid
    note: str | None = None  # what the page should say about it (left-out positions, positions that cannot act)

    @property
    def normalised(self) -> np.ndarray:
        """`raw` normalised (see `normalise`; raises ValueError with words when it cannot be)."""
        return normalise(self.raw, self.clean, self.corrupted)


def chunks(rows: int, floats_per_row: int) -> list[slice]:
    """Row slices whose outputs stay within RUN_FLOATS."""
    size = max(1, RUN_FLOATS // max(1, floats_per_row))
    return [slice(i, i + size) for i in range(0, rows, size)]
