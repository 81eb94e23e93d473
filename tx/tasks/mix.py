"""Weighting a corpus by where its rows come from: "ding=1,ding.word=0.1,catalogs=0.3" (the `mix` setting).

A row is used floor(w) times plus once more with probability frac(w) (drawn once, seeded); unlisted
sources weigh 1. Why: 600k one-word dictionary pairs or manual prose must not drown the everyday sentences.
"""
from __future__ import annotations

import random


def parse_mix(text: str) -> dict[str, float]:
    """"ding=1,ding.word=0.1" -> {"ding": 1.0, "ding.word": 0.1}; a clear error for anything else."""
    out: dict[str, float] = {}
    for item in filter(None, (x.strip() for x in text.split(","))):
        key, sep, value = item.partition("=")
        try:
            weight = float(value)
        except ValueError:
            weight = -1.0
        if not sep or not key or weight < 0:
            raise ValueError(f"mix: expected source=weight or source.kind=weight with weight >= 0, got {item!r}")
        out[key.strip()] = weight
    return out


def mix_rows(rows: list[dict[str, str]], mix: dict[str, float], seed: int) -> list[dict[str, str]]:
    """Rows repeated or subsampled by their source (or source.kind) weight; deterministic for a seed."""
    if not mix:
        return rows
    rng = random.Random(seed)
    out = []
    for r in rows:
        source = r.get("source", "")
        w = mix.get(f"{source}.{r.get('kind', '')}", mix.get(source, 1.0))
        copies = int(w) + (rng.random() < w - int(w))
        out.extend([r] * copies)
    return out
