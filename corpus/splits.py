"""Held-out splits decided by a sha1 of the normalised text, so duplicates never straddle them."""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from .io import (
    SENTIMENT_ALL_HEADER,
    SENTIMENT_HEADER,
    SPLITS,
    TRANSLATE_HEADER,
    DataError,
    clean_field,
    normalize,
    stable_hash,
)
from .records import Example, Pair


def _eval_worthy(p: Pair) -> bool:
    """Held-out references should be plain text: no "a/b" alternatives or "…" placeholders left in them."""
    return not any(c in p.de + p.en for c in "/…")


def split_translation(pairs: Sequence[Pair], n_test: int = 1500, n_valid: int = 1000,
                      eval_filter: bool = True) -> tuple[dict[str, list[Pair]], dict[str, int]]:
    """Test/valid take whole groups of sentence pairs (grouped by normalised German) in sha1 order; train gets
    every other pair that shares neither its normalised German nor its normalised English with valid/test."""
    groups: dict[str, list[Pair]] = {}
    for p in pairs:
        if p.kind == "sentence":
            groups.setdefault(normalize(p.de), []).append(p)
    test: list[Pair] = []
    valid: list[Pair] = []
    test_en: set[str] = set()
    for key in sorted(groups, key=lambda k: (stable_hash(k), k)):
        if len(test) >= n_test and len(valid) >= n_valid:
            break
        group = groups[key]
        if eval_filter and not all(_eval_worthy(p) for p in group):
            continue
        ens = {normalize(p.en) for p in group}
        if len(test) + len(group) <= n_test:
            test += group
            test_en |= ens
        elif len(valid) + len(group) <= n_valid and not ens & test_en:
            valid += group
    held = set(map(id, test)) | set(map(id, valid))
    held_de = {normalize(p.de) for p in test + valid}
    held_en = {normalize(p.en) for p in test + valid}
    train, leaked = [], 0
    for p in pairs:
        if id(p) in held:
            continue
        if normalize(p.de) in held_de or normalize(p.en) in held_en:
            leaked += 1
            continue
        train.append(p)
    train.sort(key=lambda p: (stable_hash(normalize(p.de)), p.de, p.en))
    return {"train": train, "valid": valid, "test": test}, {"removed_from_train_shared_side": leaked}


def translate_counts(splits: dict[str, list[Pair]]) -> dict[str, dict[str, int]]:
    counts = {}
    for name, rows in splits.items():
        c = Counter(p.kind for p in rows)
        counts[name] = {"sentence": c["sentence"], "phrase": c["phrase"], "word": c["word"], "total": len(rows)}
    return counts


def translate_files(splits: dict[str, list[Pair]]) -> dict[str, tuple[Sequence[str], list]]:
    return {f"{s}.tsv": (TRANSLATE_HEADER, [(p.de, p.en, p.kind, p.source) for p in splits[s]]) for s in SPLITS}



def dedup_examples(examples: Iterable[Example]) -> tuple[list[Example], dict[str, int]]:
    """Unique by normalised text; texts seen with both labels are dropped entirely."""
    first: dict[str, Example] = {}
    labels: dict[str, set[str]] = {}
    empty = n = 0
    for ex in examples:
        n += 1
        text = clean_field(ex.text)
        if not text:
            empty += 1
            continue
        key = normalize(text)
        first.setdefault(key, Example(ex.label, text))
        labels.setdefault(key, set()).add(ex.label)
    kept = [ex for key, ex in first.items() if len(labels[key]) == 1]
    return kept, {"input": n, "unique": len(kept), "duplicates_dropped": n - empty - len(first),
                  "conflicting_dropped": len(first) - len(kept), "empty_dropped": empty}


def _bucket(text: str) -> float:
    return stable_hash(normalize(text)) % 10_000 / 10_000


def split_sentiment(examples: Sequence[Example], valid_frac: float = 0.1, test_frac: float = 0.1
                    ) -> dict[str, list[Example]]:
    """80/10/10 (by default) by the sha1 bucket of the normalised text; each split in sha1 order."""
    splits: dict[str, list[Example]] = {s: [] for s in SPLITS}
    for ex in sorted(examples, key=lambda e: (stable_hash(normalize(e.text)), e.text)):
        b = _bucket(ex.text)
        splits["test" if b < test_frac else "valid" if b < test_frac + valid_frac else "train"].append(ex)
    return splits


def fold_of(text: str, k: int) -> int:
    """Cross-validation fold of a text: a salted sha1 (independent of the train/valid/test bucket) mod k."""
    return stable_hash("fold:" + normalize(text)) % k


def sentiment_files(splits: dict[str, list[Example]], cv: int) -> dict[str, tuple[Sequence[str], list]]:
    files = {f"{s}.tsv": (SENTIMENT_HEADER, [(e.label, e.text) for e in splits[s]]) for s in SPLITS}
    every = sorted((e for s in SPLITS for e in splits[s]), key=lambda e: (stable_hash(normalize(e.text)), e.text))
    files["all.tsv"] = (SENTIMENT_ALL_HEADER, [(e.label, e.text, fold_of(e.text, cv)) for e in every])
    return files


def sentiment_counts(splits: dict[str, list[Example]], cv: int) -> dict:
    counts: dict = {}
    for name, rows in splits.items():
        c = Counter(e.label for e in rows)
        counts[name] = {"negative": c["negative"], "positive": c["positive"], "total": len(rows)}
    folds = Counter(fold_of(e.text, cv) for s in SPLITS for e in splits[s])
    counts["all"] = {"total": sum(folds.values()), "folds": cv, "per_fold": [folds[i] for i in range(cv)]}
    return counts


def check_cv(cv: int) -> None:
    if cv < 2:
        raise DataError(f"--cv must be at least 2 (got {cv})")


