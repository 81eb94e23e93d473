"""Tiny corpora in the processed layout (what `python -m corpus prepare` writes), for the training tests
(tests/tx/test_train.py, test_baselines.py, test_pretrain.py)."""
from __future__ import annotations

import random
from pathlib import Path

NOUNS = [("Hund", "dog"), ("Katze", "cat"), ("Haus", "house"), ("Baum", "tree"), ("Wagen", "car"),
         ("Garten", "garden"), ("Vogel", "bird"), ("Tisch", "table")]


ADJECTIVES = [("groß", "big"), ("klein", "small"), ("alt", "old"), ("schön", "beautiful"), ("grün", "green")]


POSITIVE = ["wonderful", "moving", "funny", "brilliant", "charming", "delightful", "sharp", "warm"]


NEGATIVE = ["dull", "tedious", "boring", "clumsy", "shallow", "awful", "lifeless", "bland"]


THINGS = ["film", "movie", "story", "comedy", "drama"]


def write_rows(path: Path, header: list[str], rows: list[list[str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join("\t".join(map(str, r)) for r in [header, *rows]) + "\n", encoding="utf-8")


def translate_rows() -> list[list[str]]:
    rows = []
    for (de_n, en_n) in NOUNS:
        for (de_a, en_a) in ADJECTIVES:
            rows.append([f"Der {de_n} ist {de_a}.", f"The {en_n} is {en_a}.", "sentence"])
            rows.append([f"ein {de_a}er {de_n}", f"a {en_a} {en_n}", "phrase"])
    random.Random(0).shuffle(rows)
    return rows


def sentiment_rows() -> list[list[str]]:
    rows = []
    for i, thing in enumerate(THINGS):
        for j, (pos, neg) in enumerate(zip(POSITIVE, NEGATIVE, strict=True)):
            other = POSITIVE[(i + j + 1) % len(POSITIVE)]
            rows.append(["positive", f"a {pos} and {other} {thing}"])
            rows.append(["negative", f"a {neg} , {NEGATIVE[(i + j + 1) % len(NEGATIVE)]} {thing}"])
    random.Random(0).shuffle(rows)
    return rows


def make_translate_data(root: Path) -> Path:
    rows, folder = translate_rows(), root / "translate"
    sentences = [r for r in rows if r[2] == "sentence"]
    valid, test = sentences[:6], sentences[6:12]
    held = {r[0] for r in valid + test}
    write_rows(folder / "train.tsv", ["de", "en", "kind"], [r for r in rows if r[0] not in held])
    write_rows(folder / "valid.tsv", ["de", "en", "kind"], valid)
    write_rows(folder / "test.tsv", ["de", "en", "kind"], test)
    return folder


def make_sentiment_data(root: Path) -> Path:
    rows, folder = sentiment_rows(), root / "sentiment"
    write_rows(folder / "train.tsv", ["label", "text"], rows[16:])
    write_rows(folder / "valid.tsv", ["label", "text"], rows[:8])
    write_rows(folder / "test.tsv", ["label", "text"], rows[8:16])
    write_rows(folder / "all.tsv", ["label", "text", "fold"], [[*r, i % 3] for i, r in enumerate(rows)])
    return folder


