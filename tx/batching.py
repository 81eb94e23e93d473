"""Length-bucketed training batches under a token budget (padding them is runtime.batching.pad, shared with inference).

Why buckets: a batch pads every row to its longest one, so mixing a 5-token phrase with a
60-token sentence wastes most of the compute. Sorting by length (with a little noise so the
buckets differ between seeds) and filling each batch up to `max_tokens` padded tokens keeps
the padding small while every batch costs about the same.
"""
from __future__ import annotations

import random
from collections.abc import Sequence


def token_batches(lengths: Sequence[int], max_tokens: int, seed: int = 0, max_rows: int = 1024) -> list[list[int]]:
    """Indices grouped so that rows × longest length <= max_tokens; batch order shuffled.

    lengths: each example's cost in tokens (e.g. max of source and target length). An example
    longer than max_tokens gets a batch of its own rather than being dropped.
    """
    rng = random.Random(seed)
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], rng.random()))
    batches: list[list[int]] = []
    current: list[int] = []
    longest = 0
    for i in order:
        longest_if_added = max(longest, lengths[i])
        if current and (longest_if_added * (len(current) + 1) > max_tokens or len(current) >= max_rows):
            batches.append(current)
            current, longest_if_added = [], lengths[i]
        current.append(i)
        longest = longest_if_added
    if current:
        batches.append(current)
    rng.shuffle(batches)
    return batches
