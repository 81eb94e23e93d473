"""Word alignment from cross-attention: for each target word, the source word it attended to most.

Attention is not alignment: this model was never trained to align (no alignment loss, no supervised head), so
its cross-attention shows where a step looked, which often but not always is the word it translates. Which
attention to read was chosen by measurement (`python -m bench alignment`, docs/alignment.md): every (layer, head),
each layer's mean and the mean of all, read at the step that produced a target piece (shift 0) or at the next
step, where that piece is the decoder's input (shift 1), scored against word pairs the Ding dictionary confirms
in held-out sentence pairs. `DEFAULT_HEADS` is the best of them.

Words are BPE pieces joined: a piece starting with "▁" starts a word, any other piece continues the word before
it. Specials (the `<2xx>` tag, `<s>`, `</s>`, `<pad>`, `<unk>`) are no words and are left out.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

WORD_START = "▁"  # Metaspace's mark of a preceding space
SPECIAL = ("<pad>", "<s>", "</s>", "<unk>")


@dataclass(frozen=True)
class AlignmentHeads:
    """Which cross-attention is read as alignment."""

    layer: int | None  # decoder layer (0-based; -1 the last); None: the mean over every layer
    head: int | None  # head within the layer; None: the mean over its heads
    shift: int  # 0: the step that produced the target piece; 1: the next step, which read it as input

    def describe(self) -> str:
        layer = "all layers" if self.layer is None else "last layer" if self.layer == -1 else f"layer {self.layer}"
        head = "mean of heads" if self.head is None else f"head {self.head}"
        return f"{layer}, {head}, shift {self.shift}"


# The best agreement with Ding-confirmed word pairs on held-out sentences (docs/alignment.md, 1,500 test pairs a
# direction, 9,372 scored target words): the shipped translator's last decoder layer (2 of 0-2), its heads
# averaged, at the step that produced the piece: 0.683 on the half that did not choose it (best on both halves),
# against 0.671 for its best single head, 0.636 for all layers' mean and 0.458 for the diagonal.
DEFAULT_HEADS = AlignmentHeads(layer=-1, head=None, shift=0)


@dataclass
class WordAlignment:
    """Target words, source words, and for each target word the source word(s) it aligns to."""

    source_words: list[str]  # the source text's words (pieces joined, specials left out)
    target_words: list[str]  # the output's words, likewise
    links: list[list[int]]  # per target word, indices into source_words: the most attended word (none if no mass)
    weights: np.ndarray  # (target words, source words) float32: the attention mass per word, rows sum to 1
    heads: AlignmentHeads  # which attention it was read from


def is_special(token: str) -> bool:
    return token in SPECIAL or (token.startswith("<2") and token.endswith(">"))


def words(tokens: Sequence[str]) -> list[tuple[str, list[int]]]:
    """[(word, the indices of its pieces in tokens)]: pieces joined, a "▁" piece starting a word, specials out."""
    out: list[tuple[str, list[int]]] = []
    joined = False  # whether the previous token was a piece of the current word (a special breaks words)
    for i, token in enumerate(tokens):
        if is_special(token):
            joined = False
            continue
        if token.startswith(WORD_START) or not joined or not out:
            out.append((token.removeprefix(WORD_START), [i]))
        else:
            out[-1] = (out[-1][0] + token, out[-1][1] + [i])
        joined = True
    return [(w, pieces) for w, pieces in out if w]  # a lone "▁" piece is no word


def piece_attention(cross: Sequence[np.ndarray], heads: AlignmentHeads, n_target: int) -> np.ndarray:
    """(n_target, S) float64: the chosen attention for each target piece, from per-layer (H, T, S) maps whose row
    t is the step that produced target piece t. With shift 1, piece t reads row t + 1; a last piece with no
    next row (the output was cut by its max length) keeps its own row."""
    layers = cross if heads.layer is None else [cross[heads.layer]]
    picked = [w.astype(np.float64) if heads.head is None else w[heads.head:heads.head + 1].astype(np.float64)
              for w in layers]
    mean = np.mean([w.mean(axis=0) for w in picked], axis=0)  # (T, S)
    rows = np.minimum(np.arange(n_target) + heads.shift, mean.shape[0] - 1)
    return mean[rows]


def align(cross: Sequence[np.ndarray], src_tokens: Sequence[str], tgt_tokens: Sequence[str],
          heads: AlignmentHeads = DEFAULT_HEADS) -> WordAlignment:
    """The word alignment of one translation.

    cross: per decoder layer, (H, T, S) cross-attention whose row t is the step that produced tgt_tokens[t]
    (`Translation.attention["cross"]`); src_tokens: what the encoder saw (tag and </s> included)."""
    if not cross:
        raise ValueError("alignment needs the cross-attention of the translation (none was given)")
    if cross[0].shape[-2] < len(tgt_tokens) or cross[0].shape[-1] != len(src_tokens):
        raise ValueError(f"cross-attention of shape {cross[0].shape} does not cover {len(tgt_tokens)} target and "
                         f"{len(src_tokens)} source tokens")
    source, target = words(src_tokens), words(tgt_tokens)
    pieces = piece_attention(cross, heads, len(tgt_tokens))  # (T, S)
    weights = np.zeros((len(target), len(source)))
    for j, (_, src_pieces) in enumerate(source):
        summed = pieces[:, src_pieces].sum(axis=1)  # (T,) mass on the word's pieces
        for i, (_, tgt_pieces) in enumerate(target):
            weights[i, j] = summed[tgt_pieces].mean()
    totals = weights.sum(axis=1, keepdims=True)  # mass on real words (the tag and </s> take the rest)
    weights = np.divide(weights, totals, out=np.zeros_like(weights), where=totals > 0)
    # none where the chosen attention left no mass on any real word (e.g. all on </s>)
    links = [[int(row.argmax())] if total > 0 else [] for row, total in zip(weights, totals[:, 0], strict=True)]
    return WordAlignment([w for w, _ in source], [w for w, _ in target], links, weights.astype(np.float32), heads)
