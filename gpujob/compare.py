"""The ship decision: a candidate ships only if its BLEU is higher than the shipped model's on every evaluation set
and in both directions (Ding test, docs test, everyday; DE→EN and EN→DE), from `python -m tx evaluate`'s files.
"""
from __future__ import annotations

import json
from pathlib import Path

from tx.evaluation import eval_files

SETS = ("test", "docs_test", "everyday")  # the Ding test split, the documentation test split, the everyday dev set
DIRECTIONS = ("de-en", "en-de")


def read_bleu(eval_dir: Path) -> dict[tuple[str, str], float]:
    """{(set, direction): BLEU} from the eval JSON files `python -m tx evaluate --out eval_dir` wrote."""
    out = {}
    for split in SETS:
        path = eval_dir / eval_files(split)[0]
        if path.is_file():
            for direction, scores in json.loads(path.read_text())["directions"].items():
                out[(split, direction)] = float(scores["bleu"])
    return out


def compare(candidate: dict[tuple[str, str], float], shipped: dict[tuple[str, str], float]
            ) -> tuple[bool, list[tuple[str, str, float | None, float | None, bool]]]:
    """(better on every set and direction, rows (set, direction, candidate BLEU, shipped BLEU, better)). A score
    missing on either side counts as not better: the decision needs every set."""
    rows = []
    for split in SETS:
        for direction in DIRECTIONS:
            c, s = candidate.get((split, direction)), shipped.get((split, direction))
            rows.append((split, direction, c, s, c is not None and s is not None and c > s))
    return all(r[-1] for r in rows), rows


def render(rows) -> str:
    fmt = lambda v: "   -" if v is None else f"{v:5.2f}"
    return "\n".join([f"{'set':<10} {'dir':<6} {'new':>6} {'shipped':>8}"] +
                     [f"{s:<10} {d:<6} {fmt(c):>6} {fmt(o):>8}  {'better' if b else 'NOT better'}"
                      for s, d, c, o, b in rows])
