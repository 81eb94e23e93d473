"""Your own data in the processed layout: `import-translate` and `import-sentiment`."""
from __future__ import annotations

import csv
import dataclasses
import io
import re
from collections.abc import Callable, Iterable
from pathlib import Path

from .io import (
    FORMAT,
    KINDS,
    SENTIMENT_ALL_HEADER,
    SENTIMENT_HEADER,
    SPLIT_HASH,
    SPLITS,
    TRANSLATE_HEADER,
    DataError,
    clean_field,
    normalize,
    now,
    read_lines,
    read_text,
    sha256_file,
    stable_hash,
    write_outputs,
)
from .records import Example, Pair
from .splits import (
    check_cv,
    dedup_examples,
    sentiment_counts,
    sentiment_files,
    split_sentiment,
    split_translation,
    translate_counts,
    translate_files,
)

USER_LABELS = {"0": "negative", "1": "positive", "neg": "negative", "pos": "positive",
               "negative": "negative", "positive": "positive", "rotten": "negative", "fresh": "positive"}
# --- user data: translation -----------------------------------------------------------------------------------
_SPLIT_NAMES = {"train": ("train",), "valid": ("valid", "val", "dev"),
                "test": ("test", "test2016", "test_2016_flickr")}



def _find(folder: Path, stem: str, suffix: str) -> Path | None:
    for name in (f"{stem}{suffix}", f"{stem}{suffix}.gz"):
        if (folder / name).is_file():
            return folder / name
    return None


def read_parallel_tsv(path: str | Path) -> list[Pair]:
    """A TSV with a `de`/`en` header (any order, other columns ignored except `kind`) or exactly 2 columns de, en."""
    path = Path(path)
    rows = list(csv.reader(io.StringIO(read_text(path), newline=""), delimiter="\t", quoting=csv.QUOTE_NONE))
    if not rows:
        raise DataError(f"{path}: empty input")
    head = [h.strip().lower() for h in rows[0]]
    if "de" in head and "en" in head:
        i_de, i_en = head.index("de"), head.index("en")
        i_kind = head.index("kind") if "kind" in head else None
        body, start, width = rows[1:], 2, len(head)
    else:
        i_de, i_en, i_kind, body, start, width = 0, 1, None, rows, 1, 2
    pairs = []
    for n, row in enumerate(body, start):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != width:
            raise DataError(f"{path}:{n}: expected {width} tab-separated columns "
                            f"({'the header' if start == 2 else 'de, en'}), found {len(row)}")
        de, en = clean_field(row[i_de]), clean_field(row[i_en])
        kind = row[i_kind].strip() if i_kind is not None else "sentence"
        if kind not in KINDS:
            raise DataError(f"{path}:{n}: unknown kind {kind!r} (expected sentence or phrase)")
        if de and en:
            pairs.append(Pair(de, en, kind, "imported", path.name))
    if not pairs:
        raise DataError(f"{path}: empty input (no de/en pairs)")
    return pairs


def read_parallel_files(de_path: str | Path, en_path: str | Path) -> list[Pair]:
    """Two line-aligned files (Multi30k's train.de / train.en). Lines empty on both sides are skipped."""
    de_path, en_path = Path(de_path), Path(en_path)
    de_lines, en_lines = read_lines(de_path), read_lines(en_path)
    if len(de_lines) != len(en_lines):
        raise DataError(f"misaligned parallel files: {de_path} has {len(de_lines)} lines, "
                        f"{en_path} has {len(en_lines)}")
    pairs = []
    for n, (de, en) in enumerate(zip(de_lines, en_lines, strict=True), 1):
        de, en = clean_field(de), clean_field(en)
        if bool(de) != bool(en):
            raise DataError(f"misaligned parallel files: line {n} is empty in "
                            f"{de_path if not de else en_path} but not in the other file")
        if de:
            pairs.append(Pair(de, en, "sentence", "imported", de_path.name))
    if not pairs:
        raise DataError(f"{de_path}: empty input")
    return pairs


def read_parallel(src: str | Path) -> dict[str, list[Pair]]:
    """A parallel corpus: one TSV file (train only), a pair of aligned files given as `PREFIX` (PREFIX.de and
    PREFIX.en exist), or a folder with {train,valid|val|dev,test}.tsv or .de/.en files (optionally .gz)."""
    src = Path(src)
    if src.is_file():
        return {"train": read_parallel_tsv(src)}
    if not src.is_dir():
        de, en = src.with_name(src.name + ".de"), src.with_name(src.name + ".en")
        if de.is_file() and en.is_file():
            return {"train": read_parallel_files(de, en)}
        raise DataError(f"{src} not found (expected a TSV file, a folder, or PREFIX with PREFIX.de/PREFIX.en)")
    parts: dict[str, list[Pair]] = {}
    for split, stems in _SPLIT_NAMES.items():
        for stem in stems:
            tsv, de, en = _find(src, stem, ".tsv"), _find(src, stem, ".de"), _find(src, stem, ".en")
            if tsv:
                parts[split] = read_parallel_tsv(tsv)
            elif de and en:
                parts[split] = read_parallel_files(de, en)
            elif de or en:
                raise DataError(f"{de or en} has no {'English' if de else 'German'} counterpart "
                                f"({stem}.{'en' if de else 'de'}) in {src}")
            else:
                continue
            break
    if "train" not in parts:
        raise DataError(f"no training data in {src}: expected train.tsv, or train.de + train.en (Multi30k layout)")
    return parts


def _dedup_pairs(pairs: Iterable[Pair]) -> list[Pair]:
    seen, out = set(), []
    for p in pairs:
        key = (normalize(p.de), normalize(p.en))
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out


def import_translate(src: str | Path, out_dir: str | Path, valid_frac: float = 0.05, test_frac: float = 0.05,
                     log: Callable[[str], None] = print) -> dict:
    """Write a user's parallel corpus in the processed layout; missing valid/test parts are carved out of train
    by hash (whole groups of identical German), and train loses any pair sharing a side with valid/test."""
    src, out_dir = Path(src), Path(out_dir)
    parts = {k: _dedup_pairs(v) for k, v in read_parallel(src).items()}
    log(f"import: {', '.join(f'{k} {len(v):,}' for k, v in parts.items())} pairs from {src}")
    train = parts["train"]
    n_test = 0 if "test" in parts else max(1, round(test_frac * len(train)))
    n_valid = 0 if "valid" in parts else max(1, round(valid_frac * len(train)))
    if len(train) < n_test + n_valid + 1:
        raise DataError(f"{src}: only {len(train)} training pairs, too few to carve out valid/test")
    carved, _ = split_translation([dataclasses.replace(p, kind="sentence") for p in train], n_test, n_valid,
                                  eval_filter=False)
    by_key = {(p.de, p.en): p for p in train}  # keep the user's kinds
    restore = lambda rows: [by_key[(p.de, p.en)] for p in rows]
    splits = {"test": parts.get("test") or restore(carved["test"]),
              "valid": parts.get("valid") or restore(carved["valid"])}
    held_de = {normalize(p.de) for s in ("valid", "test") for p in splits[s]}
    held_en = {normalize(p.en) for s in ("valid", "test") for p in splits[s]}
    carved_keys = {(p.de, p.en) for s in ("valid", "test") if s not in parts for p in splits[s]}
    splits["train"], removed = [], 0
    for p in train:
        if (p.de, p.en) in carved_keys:
            continue
        if normalize(p.de) in held_de or normalize(p.en) in held_en:
            removed += 1
        else:
            splits["train"].append(p)
    if not splits["train"]:
        raise DataError(f"{src}: no training pairs left after removing those shared with valid/test")
    manifest = {
        **_provenance("translate", src, parts),
        "columns": list(TRANSLATE_HEADER),
        "format": FORMAT,
        "counts": translate_counts(splits),
        "rules": ["pairs deduplicated by normalised (de, en) within each part; kind 'sentence' unless given",
                  f"missing valid/test parts carved from train by the {SPLIT_HASH} of the German side "
                  f"(valid {valid_frac:.0%}, test {test_frac:.0%})",
                  "train: minus any pair sharing a normalised German or English side with valid/test"],
        "split": {"hash": f"{SPLIT_HASH} of the German side", "removed_from_train_shared_side": removed},
    }
    write_outputs(out_dir, translate_files(splits), manifest)
    return manifest


def _provenance(task: str, src: Path, parts: Iterable[str]) -> dict:
    """The manifest fields every import starts with: the task, when, and what was imported from where."""
    return {"task": task, "created": now(),
            "source": {"path": str(src), "files": _hash_inputs(src), "imported_parts": sorted(parts)},
            "licence": "user-supplied (unknown)"}


def _hash_inputs(src: Path) -> dict[str, str]:
    files = [src] if src.is_file() else sorted(p for p in src.rglob("*") if p.is_file()) if src.is_dir() else \
        [src.with_name(src.name + ".de"), src.with_name(src.name + ".en")]
    if len(files) > 50:  # IMDb has 100k files: record how many, not every hash
        return {"count": str(len(files))}
    return {str(p.relative_to(src) if src.is_dir() else p.name): sha256_file(p) for p in files}


# --- user data: sentiment -------------------------------------------------------------------------------------
_LABEL_COLUMNS = ("label", "sentiment", "polarity", "category")
_TEXT_COLUMNS = ("text", "review", "sentence", "snippet")


def map_label(label: str, where: str = "") -> str:
    key = label.strip().lower()
    if key not in USER_LABELS:
        raise DataError(f"{where}unknown label {label!r} (expected 0/1, neg/pos or negative/positive)")
    return USER_LABELS[key]


def read_labelled(path: str | Path) -> list[Example]:
    """label,text rows from a .csv (comma, standard quoting) or .tsv/.txt (tab, no quoting); a header naming a
    label and a text column (any order) is used when present, otherwise exactly two columns: label, text."""
    path = Path(path)
    name = path.name.removesuffix(".gz")
    text = read_text(path)
    if name.endswith(".csv"):
        rows = list(csv.reader(io.StringIO(text, newline="")))
    elif name.endswith((".tsv", ".txt")):
        rows = list(csv.reader(io.StringIO(text, newline=""), delimiter="\t", quoting=csv.QUOTE_NONE))
    else:
        raise DataError(f"{path}: unknown format (expected .tsv, .txt or .csv)")
    records = [(n, r) for n, r in enumerate(rows, 1) if any(c.strip() for c in r)]
    if not records:
        raise DataError(f"{path}: empty input")
    head = [h.strip().lower() for h in records[0][1]]
    i_label = next((head.index(c) for c in _LABEL_COLUMNS if c in head), None)
    i_text = next((head.index(c) for c in _TEXT_COLUMNS if c in head), None)
    if i_label is not None and i_text is not None:
        body, width = records[1:], len(head)
    else:
        i_label, i_text, body, width = 0, 1, records, 2
    examples = []
    for n, row in body:
        if len(row) != width:
            raise DataError(f"{path}: row {n}: expected {width} columns (label, text), found {len(row)}")
        examples.append(Example(map_label(row[i_label], f"{path}: row {n}: "), row[i_text]))
    if not examples:
        raise DataError(f"{path}: empty input (header only)")
    return examples


def _find_imdb(src: Path) -> Path | None:
    for root in (src, src / "aclImdb"):
        if (root / "train" / "pos").is_dir() and (root / "train" / "neg").is_dir():
            return root
    return None


def read_imdb(root: str | Path) -> dict[str, list[Example]]:
    """The aclImdb layout: {train,test}/{pos,neg}/*.txt (unsup/ ignored); `<br />` tags become spaces."""
    root = Path(root)
    parts: dict[str, list[Example]] = {}
    for split in ("train", "test"):
        examples = []
        for folder, label in (("neg", "negative"), ("pos", "positive")):
            for f in sorted((root / split / folder).glob("*.txt")):
                examples.append(Example(label, re.sub(r"<br\s*/?>", " ", read_text(f))))
        if examples:
            parts[split] = examples
    if "train" not in parts:
        raise DataError(f"{root}: no reviews in train/pos or train/neg")
    return parts


def read_sentiment_source(src: str | Path) -> dict[str, list[Example]]:
    src = Path(src)
    if src.is_file():
        return {"train": read_labelled(src)}
    if not src.is_dir():
        raise DataError(f"{src} not found")
    imdb = _find_imdb(src)
    if imdb:
        return read_imdb(imdb)
    parts = {}
    for split, stems in _SPLIT_NAMES.items():
        for stem in stems:
            candidates = [src / f"{stem}{ext}" for ext in (".tsv", ".csv", ".txt") if (src / f"{stem}{ext}").is_file()]
            if candidates:
                parts[split] = read_labelled(candidates[0])
                break
    if "train" not in parts:
        raise DataError(f"no training data in {src}: expected train.tsv/train.csv or aclImdb/train/{{pos,neg}}/")
    return parts


def import_sentiment(src: str | Path, out_dir: str | Path, cv: int = 10, valid_frac: float = 0.1,
                     test_frac: float = 0.1, log: Callable[[str], None] = print) -> dict:
    """Write user reviews in the processed layout. Missing valid/test parts are carved from train by hash;
    a text in more than one part stays only in the held-out one (test before valid before train)."""
    check_cv(cv)
    src, out_dir = Path(src), Path(out_dir)
    parts = read_sentiment_source(src)
    log(f"import: {', '.join(f'{k} {len(v):,}' for k, v in parts.items())} reviews from {src}")
    unique, dedup = dedup_examples(e for s in ("test", "valid", "train") for e in parts.get(s, []))
    part_of = {}
    for s in ("train", "valid", "test"):  # later parts win: a shared text goes to the held-out split
        for e in parts.get(s, []):
            part_of[normalize(clean_field(e.text))] = s
    carved = split_sentiment(unique, valid_frac if "valid" not in parts else 0.0,
                             test_frac if "test" not in parts else 0.0)
    splits: dict[str, list[Example]] = {s: [] for s in SPLITS}
    for s in SPLITS:
        for e in carved[s]:
            given = part_of[normalize(e.text)]
            splits[s if given == "train" else given].append(e)
    for s in SPLITS:
        splits[s].sort(key=lambda e: (stable_hash(normalize(e.text)), e.text))
        if not splits[s]:
            raise DataError(f"{src}: the {s} split would be empty ({len(unique)} unique reviews)")
    manifest = {
        **_provenance("sentiment", src, parts),
        "columns": list(SENTIMENT_HEADER),
        "all_columns": list(SENTIMENT_ALL_HEADER),
        "format": FORMAT,
        "counts": sentiment_counts(splits, cv),
        "extraction": dedup,
        "rules": ["labels 0/neg/negative -> negative, 1/pos/positive -> positive",
                  "deduplicated by normalised text; texts with both labels dropped",
                  f"missing valid/test parts carved from train by the {SPLIT_HASH}",
                  f"all.tsv: every unique example with fold = salted sha1 of the normalised text mod {cv}"],
        "split": {"hash": SPLIT_HASH, "cv_folds": cv},
    }
    write_outputs(out_dir, sentiment_files(splits, cv), manifest)
    return manifest


