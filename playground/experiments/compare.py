"""Edit and compare: two greedy translations (an edited source, int8 against fp32, your trained model against the
shipped one) lined up token by token: what changed, how each shared token's log-prob moved, and how the
cross-attention moved over the tokens both runs share. Pure: runtime Translations in, tables and words out."""
from __future__ import annotations

import difflib
from dataclasses import dataclass

import numpy as np
import pandas as pd

from runtime.text import Translation


@dataclass(frozen=True)
class Piece:
    """One stretch of the token diff: "equal", "replace", "delete" (only in A) or "insert" (only in B)."""
    tag: str
    a: list[str]
    b: list[str]


def token_diff(a: list[str], b: list[str]) -> list[Piece]:
    """The target tokens of A and B as a diff (difflib's longest matching blocks)."""
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return [Piece(tag, a[i1:i2], b[j1:j2]) for tag, i1, i2, j1, j2 in matcher.get_opcodes()]


def diff_words(pieces: list[Piece]) -> str:
    """"4 of 6 tokens are the same; 1 replaced, 1 added." for a reader."""
    same = sum(len(p.a) for p in pieces if p.tag == "equal")
    total_b = sum(len(p.b) for p in pieces)
    counts = {"replace": sum(len(p.b) for p in pieces if p.tag == "replace"),
              "insert": sum(len(p.b) for p in pieces if p.tag == "insert"),
              "delete": sum(len(p.a) for p in pieces if p.tag == "delete")}
    if same == total_b == sum(len(p.a) for p in pieces):
        return f"The two outputs are the same {same} tokens."
    parts = [f"{n} {word}" for n, word in ((counts["replace"], "replaced"), (counts["insert"], "only in B"),
                                          (counts["delete"], "only in A")) if n]
    return f"{same} of B's {total_b} tokens are also in A, in the same order; " + ", ".join(parts) + "."


def word_tokens(t: Translation) -> bool:
    """Whether a translation's tokens are whole words (a toy model's: whitespace-separated, no ▁ word starts), so
    its text is its tokens joined by spaces; the shipped models' subword pieces join without one."""
    content = [token for token in t.tokens if not (token.startswith("<") and token.endswith(">"))]
    return bool(content) and not any("▁" in token for token in content) and " ".join(content) == t.text


def diff_line(pieces: list[Piece], a_words: bool = False, b_words: bool = False) -> str:
    """The diff in one line, as `git diff --word-diff` writes it: [-only in A-]{+only in B+}, subword pieces joined
    with their word starts (▁) shown as spaces; `a_words`/`b_words`: that side's tokens are whole words
    (word_tokens), joined by spaces (a toy model's "0 6 8" read "068")."""
    def text(tokens: list[str], words: bool) -> str:
        return "".join(" " + token for token in tokens) if words else "".join(tokens).replace("▁", " ")

    out = []
    for p in pieces:
        a, b = text(p.a, a_words), text(p.b, b_words)
        if p.tag == "equal":
            out.append(a)
        space = " " if (a or b).startswith(" ") else ""
        if p.tag in ("replace", "delete"):
            out.append(f"{space}[-{a.strip()}-]")
        if p.tag in ("replace", "insert"):
            out.append(f"{'' if p.tag == 'replace' else space}{{+{b.strip()}+}}")
    return "".join(out).strip()


def log_probs(t: Translation) -> np.ndarray:
    """The log-prob the model gave each generated token when it chose it."""
    return np.log(np.maximum(np.asarray(t.token_probs, dtype=np.float64), 1e-30))


def aligned_rows(a: Translation, b: Translation) -> pd.DataFrame:
    """One row per diff position: A's token and log-prob, B's token and log-prob, B − A where both hold the same
    token (a replaced pair is lined up one to one; a token only one side has leaves the other side empty)."""
    la, lb = log_probs(a), log_probs(b)
    rows = []
    matcher = difflib.SequenceMatcher(None, a.tokens, b.tokens, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        for k in range(max(i2 - i1, j2 - j1)):
            i, j = i1 + k if i1 + k < i2 else None, j1 + k if j1 + k < j2 else None
            rows.append({"diff": tag, "position_a": i, "token_a": a.tokens[i] if i is not None else "",
                         "log_prob_a": float(la[i]) if i is not None else None,
                         "position_b": j, "token_b": b.tokens[j] if j is not None else "",
                         "log_prob_b": float(lb[j]) if j is not None else None,
                         "change": float(lb[j] - la[i]) if tag == "equal" else None})
    return pd.DataFrame(rows, columns=["diff", "position_a", "token_a", "log_prob_a", "position_b", "token_b",
                                       "log_prob_b", "change"])


def mean_cross(t: Translation, layer: int | None = None) -> np.ndarray:
    """The cross-attention (T, S) averaged over heads, of one layer (0-based) or averaged over all layers."""
    cross = np.stack([np.asarray(w, dtype=np.float64) for w in t.attention["cross"]])  # (L, H, T, S)
    return (cross.mean(axis=0) if layer is None else cross[layer]).mean(axis=0)


def matched(a: list[str], b: list[str]) -> list[tuple[int, int]]:
    """Index pairs (i in a, j in b) of the tokens the diff says both sides share."""
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return [(block.a + k, block.b + k) for block in matcher.get_matching_blocks() for k in range(block.size)]


@dataclass(frozen=True)
class AttentionChange:
    """B's cross-attention minus A's over the target rows and source columns both share (by the token diff)."""
    rows: list[str]  # the shared target tokens
    columns: list[str]  # the shared source tokens
    change: np.ndarray  # (rows, columns): B − A
    a: np.ndarray  # A's full map (T_a, S_a)
    b: np.ndarray  # B's full map (T_b, S_b)


def attention_change(a: Translation, b: Translation, layer: int | None = None) -> AttentionChange:
    map_a, map_b = mean_cross(a, layer), mean_cross(b, layer)
    rows, columns = matched(a.tokens, b.tokens), matched(a.src_tokens, b.src_tokens)
    change = np.array([[map_b[j, q] - map_a[i, p] for p, q in columns] for i, j in rows], dtype=np.float64)
    return AttentionChange([a.tokens[i] for i, _ in rows], [a.src_tokens[p] for p, _ in columns],
                           change.reshape(len(rows), len(columns)), map_a, map_b)


def moved(change: AttentionChange) -> bool:
    """Whether B's cross-attention differs from A's anywhere the two share (identical runs give identical numbers)."""
    return bool(change.change.size) and bool(np.abs(change.change).max() > 0)


def change_words(change: AttentionChange) -> str:
    if not change.change.size:
        return ("The two runs share no target token (or no source token), so there is no cell to subtract: the two "
                "maps are shown side by side instead.")
    if not moved(change):  # "the largest move is +0.000 at ‘▁He’ → ‘<2en>’" named a cell that did not move
        return (f"B's cross-attention equals A's over all the {len(change.rows)} target and {len(change.columns)} "
                "source tokens both runs share: nothing moved, so there is no map of the change.")
    i, j = np.unravel_index(np.argmax(np.abs(change.change)), change.change.shape)
    return (f"Over the {len(change.rows)} target and {len(change.columns)} source tokens both runs share, the largest "
            f"move is {change.change[i, j]:+.3f} (out of 1) at “{change.rows[i]}” → “{change.columns[j]}”; the mean "
            f"absolute move is {np.abs(change.change).mean():.4f}. Tokens only one run has are left out of this map.")


def rank_gap(attention: np.ndarray, drop: np.ndarray) -> tuple[int | None, int | None]:
    """Where attention and occlusion disagree most: the piece ranked highest by attention relative to occlusion
    (looked at, not needed), and the one ranked highest by occlusion relative to attention (needed, not looked
    at); None when no piece is ranked higher on that side (ranks 1 = largest)."""
    if len(attention) < 2:
        return None, None
    rank_a = np.argsort(np.argsort(-np.asarray(attention), kind="stable"), kind="stable")
    rank_d = np.argsort(np.argsort(-np.asarray(drop), kind="stable"), kind="stable")
    gap = rank_d - rank_a  # > 0: attention ranks it higher than occlusion does
    looked, needed = int(np.argmax(gap)), int(np.argmin(gap))
    return (looked if gap[looked] > 0 else None), (needed if gap[needed] < 0 else None)
