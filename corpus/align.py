"""Sentence alignment inside aligned blocks (paragraphs, list items, table cells) of translated documents.

Documents give us blocks already paired by structure (the same `id`, the same position); inside a block the
sentences are split with pysbd (rule-based, language-aware: "z.B.", "3. Mai" do not end a sentence) and
paired with the Gale-Church length-based aligner (NLTK's implementation, Gale & Church 1993), which allows
1-1, 1-2, 2-1, 1-0 and 0-1 links. A block whose sentences cannot be linked one-to-one is kept whole
when both sides are short enough, else dropped.

Imported lazily by the corpus builder: pysbd and nltk come from requirements-data.txt.
"""
from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass

from .io import collapse_spaces

MAX_COUNT_GAP = 1  # blocks whose sentence counts differ by more are not sentence-aligned (kept whole or dropped)
MAX_BLOCK_WORDS = 60  # a block kept whole (when sentence links fail) must be at most this long on each side


@functools.cache
def _segmenter(lang: str):
    import pysbd

    return pysbd.Segmenter(language=lang, clean=False)


def split_sentences(text: str, lang: str) -> list[str]:
    """Sentences of one block of text ("de" or "en"), whitespace-normalised, empty pieces dropped."""
    text = collapse_spaces(text)
    if not text:
        return []
    return [s for s in map(collapse_spaces, _segmenter(lang).segment(text)) if s]


@dataclass
class AlignStats:
    blocks: int = 0
    one_to_one_blocks: int = 0  # both sides split into the same number of sentences, lengths agreeing
    aligned_blocks: int = 0  # Gale-Church needed
    whole_blocks: int = 0  # kept as one pair
    dropped_blocks: int = 0
    pairs: int = 0
    unlinked_sentences: int = 0  # sentences the aligner left without a partner (1-0 / 0-1) or merged links


def _links(de: list[str], en: list[str]) -> list[tuple[list[int], list[int]]]:
    """Gale-Church links grouped into beads: ([de indices], [en indices])."""
    from nltk.translate.gale_church import align_blocks

    pairs = align_blocks([len(s) for s in de], [len(s) for s in en])
    beads: list[tuple[list[int], list[int]]] = []
    for i, j in pairs:
        if beads and (i in beads[-1][0] or j in beads[-1][1]):
            if i not in beads[-1][0]:
                beads[-1][0].append(i)
            if j not in beads[-1][1]:
                beads[-1][1].append(j)
        else:
            beads.append(([i], [j]))
    return beads


def align_block(de_text: str, en_text: str, stats: AlignStats | None = None) -> Iterator[tuple[str, str]]:
    """Sentence pairs of one structurally aligned block. 1-1 beads become pairs; 2-1/1-2 beads become one pair
    of the joined sentences (a translator merged or split them); sentences without partner are dropped."""
    stats = stats if stats is not None else AlignStats()
    stats.blocks += 1
    de, en = split_sentences(de_text, "de"), split_sentences(en_text, "en")
    if not de or not en:
        stats.dropped_blocks += 1
        return
    if len(de) == 1 and len(en) == 1:
        stats.one_to_one_blocks += 1
        stats.pairs += 1
        yield de[0], en[0]
        return
    if abs(len(de) - len(en)) > MAX_COUNT_GAP:  # a restructured paragraph: length alone mis-links it
        beads = []
    else:
        try:
            beads = _links(de, en)
        except Exception:  # nltk raises on degenerate inputs (e.g. zero-length sentences): keep the block whole
            beads = []
    linked = [(b_de, b_en) for b_de, b_en in beads if b_de and b_en and len(b_de) + len(b_en) <= 3]
    covered_de = {i for b, _ in linked for i in b}
    covered_en = {j for _, b in linked for j in b}
    if linked:
        stats.aligned_blocks += 1
        stats.unlinked_sentences += (len(de) - len(covered_de)) + (len(en) - len(covered_en))
        for b_de, b_en in linked:
            stats.pairs += 1
            yield " ".join(de[i] for i in sorted(b_de)), " ".join(en[j] for j in sorted(b_en))
        return
    if len(de_text.split()) <= MAX_BLOCK_WORDS and len(en_text.split()) <= MAX_BLOCK_WORDS:
        stats.whole_blocks += 1
        stats.pairs += 1
        yield " ".join(de), " ".join(en)
        return
    stats.dropped_blocks += 1
