"""The translation corpus builder: Ding word pairs, the pair filters, dedup, the document split, the aligner and
decontamination (a held-out pair planted in a training source never reaches train.tsv)."""
from __future__ import annotations

import dataclasses

import pytest
from package_fixtures import make_deb, sha256

import corpus as D
from corpus import cli as corpus_cli
from corpus import filters
from corpus import sources as S
from corpus import translate as T
from corpus.align import AlignStats, align_block
from corpus.records import Pair, kind_of


# --- Ding's short entries -------------------------------------------------------------------------------------
def test_ding_word_entries_pair_each_alternative_with_the_other_sides_first():
    lines = ["Haus {n}; Gebäude {n} | Häuser {pl} :: house; building | houses",
             "Apfelsaft {m} :: apple juice",
             "Das ist gut. :: That is good."]
    pairs, stats = D.parse_ding(lines, words=True)
    words = {(p.de, p.en) for p in pairs if p.kind == "word"}
    assert words == {("Haus", "house"), ("Gebäude", "house"), ("Haus", "building"), ("Häuser", "houses"),
                     ("Apfelsaft", "apple juice")}
    assert {p.kind for p in pairs} == {"word", "sentence"} and stats.words == 5
    assert all(p.source == "ding" for p in pairs)
    without, _ = D.parse_ding(lines)  # the default keeps the earlier behaviour: no word pairs
    assert {p.kind for p in without} == {"sentence"}


# --- pair filters ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("de, en, reason", [
    ("%s", "%s files", "markup_or_placeholders_only"),
    ("<b>{0}</b>", "<b>{0}</b> here", "markup_or_placeholders_only"),
    ("Drucken", "Drucken", "untranslated"),
    ("Ein Python-Makro ist eine Funktion in einer .", "A Python macro is a function within a .", "fragment"),
    ("wort " * 130, "word " * 130, "too_long"),
    ("Ja", "Yes, and this sentence goes on for a very long time indeed.", "length_ratio"),
    ("Привет, как дела сегодня?", "Hello, how are you today?", "non_latin_script"),
    ("Click the button to save your document now.", "Click the button to save your document now!",
     "wrong_language"),
])
def test_each_filter_removes_what_it_names(de, en, reason):
    counts: dict[str, int] = {}
    assert list(filters.apply_filters([Pair(de, en, "phrase")], counts)) == []
    assert counts[reason] == 1


def test_good_pairs_pass_every_filter():
    good = [Pair("Klicken Sie auf die Schaltfläche, um das Dokument zu speichern.",
                 "Click the button to save the document.", "sentence"),
            Pair("Datei öffnen", "Open file", "phrase"),
            Pair("%s Dateien gelöscht", "%s files deleted", "phrase")]
    counts: dict[str, int] = {}
    assert list(filters.apply_filters(good, counts)) == good and counts == {"input": 3, "kept": 3}


def test_dedup_drops_exact_and_near_duplicates_first_seen_wins():
    pairs = [Pair("Seite 3 von 10.", "Page 3 of 10.", "sentence", "a"),
             Pair("seite 3 von 10.", "page 3  of 10.", "sentence", "b"),  # exact after normalisation
             Pair("Seite 4 von 12", "Page 4 of 12", "phrase", "c"),  # near: digits and punctuation aside
             Pair("Seite drei", "Page three", "phrase", "d")]
    counts: dict[str, int] = {}
    kept = list(filters.dedup(pairs, set(), set(), counts))
    assert [p.source for p in kept] == ["a", "d"]
    assert counts == {"exact_duplicate": 1, "near_duplicate": 1}


def test_decontamination_removes_a_pair_sharing_either_side_with_a_held_out_set():
    held = filters.HeldOut(["Wo ist der Bahnhof?", "Where is the station?"])
    train = [Pair("Wo ist der Bahnhof?", "Where's the train station?", "sentence"),  # German side held out
             Pair("Wo ist bitte der Bahnhof", "Where is the station?!", "sentence"),  # English side, near key
             Pair("Ja", "Yes", "word"),
             Pair("Der Bahnhof ist dort.", "The station is over there.", "sentence")]
    counts: dict[str, int] = {}
    kept = list(filters.decontaminate(train, held, counts))
    assert [p.de for p in kept] == ["Ja", "Der Bahnhof ist dort."] and counts["overlaps_valid_or_test"] == 2


# --- the document split ---------------------------------------------------------------------------------------
def spell(n: int) -> str:
    """A number as letters ("bcd"), so near-duplicate detection (which ignores digits) sees distinct texts."""
    return "".join("abcdefghij"[int(c)] for c in str(n))


def doc_pairs(n_docs: int, per_doc: int) -> list[Pair]:
    return [Pair(f"Dies ist der Satz {spell(i)} im Dokument {spell(d)}.",
                 f"This is the sentence {spell(i)} in the document {spell(d)}.", "sentence", "docs", f"doc{d}.html")
            for d in range(n_docs) for i in range(per_doc)]


def test_documents_never_straddle_train_and_held_out():
    pairs = doc_pairs(40, 5) + [Pair("Kurz", "Short", "phrase", "docs", "doc0.html")]
    out = T.split_documents(pairs, n_test=23, n_valid=11)
    assert len(out["test"]) == 23 and len(out["valid"]) == 11
    held_docs = {p.doc for p in out["test"] + out["valid"]}
    assert not held_docs & {p.doc for p in out["train"]}
    assert not {p.doc for p in out["test"]} & {p.doc for p in out["valid"]}
    # the rest of a partly used held-out document is used nowhere (it would leak the page into train)
    assert len(out["train"]) == len([p for p in pairs if p.doc not in held_docs])
    assert T.split_documents(list(reversed(pairs)), 23, 11)["test"] == out["test"] or \
        {p.doc for p in T.split_documents(list(reversed(pairs)), 23, 11)["test"]} == {p.doc for p in out["test"]}


# --- sentence alignment inside blocks -------------------------------------------------------------------------
def test_align_block_links_sentences_and_keeps_abbreviations_whole():
    stats = AlignStats()
    out = list(align_block("Klicken Sie auf Datei. Wählen Sie dann z.B. Öffnen. Das Dialogfeld erscheint.",
                           "Click File. Then choose e.g. Open. The dialog appears.", stats))
    assert out == [("Klicken Sie auf Datei.", "Click File."),
                   ("Wählen Sie dann z.B. Öffnen.", "Then choose e.g. Open."),
                   ("Das Dialogfeld erscheint.", "The dialog appears.")]
    assert stats.aligned_blocks == 1 and stats.pairs == 3


def test_align_block_merges_a_split_sentence_and_refuses_restructured_blocks():
    out = list(align_block("Das Dialogfeld erscheint, und Sie können eine Datei auswählen, die geöffnet werden soll.",
                           "The dialog appears. You can select a file to open.", AlignStats()))
    assert out == [("Das Dialogfeld erscheint, und Sie können eine Datei auswählen, die geöffnet werden soll.",
                    "The dialog appears. You can select a file to open.")]
    stats = AlignStats()
    long_de = " ".join(f"Satz {i} ist hier." for i in range(30))
    assert list(align_block(long_de, "One. Two. Three. Four.", stats)) == [] and stats.dropped_blocks == 1


def test_kind_of():
    assert kind_of("Das ist gut.", "That is good.") == "sentence"
    assert kind_of("Datei öffnen", "Open file") == "phrase"
    assert kind_of("Gut.", "Good.") == "phrase"  # too short to be a sentence pair


# --- the whole builder on fixtures ----------------------------------------------------------------------------
def many(n: int) -> str:
    return "".join(f"Satz {{m}} | Das ist wirklich Satz Nummer {i}. :: sentence | This is really sentence number {i}.\n"
                   for i in range(n))


@pytest.fixture
def fixture_corpus(tmp_path, monkeypatch):
    """Ding from a fake .deb plus one fake documentation corpus (its pairs in `docs`), read through the real
    builder; every Ding test and valid sentence is also planted in the documentation corpus."""
    deb = make_deb(tmp_path / "ding.deb", {"usr/share/trans/de-en": many(60) + "Apfel {m} :: apple\n"})
    monkeypatch.setitem(S.SOURCES, "ding", dataclasses.replace(S.SOURCES["ding"], sha256=sha256(deb)))
    ding, _ = D.parse_ding(many(60).splitlines())
    held, _ = D.split_translation(ding, n_test=10, n_valid=5)
    docs = [dataclasses.replace(p, source="libreoffice_help") for p in doc_pairs(30, 4)]
    docs += [Pair(p.de, p.en, "sentence", "libreoffice_help", f"planted{i}.html")
             for i, p in enumerate(held["test"] + held["valid"])]
    monkeypatch.setattr(T, "sources_for", lambda name: {})
    monkeypatch.setattr(T, "read_corpus", lambda name, files, stats: iter(docs))
    return {"ding": deb}


def test_build_translate_splits_filters_and_decontaminates(fixture_corpus):
    splits, manifest = T.build_translate(fixture_corpus, ("ding", "libreoffice_help"), n_test=10, n_valid=5,
                                         docs_test=12, docs_valid=8, log=lambda _: None)
    assert [len(splits[s]) for s in ("test", "valid", "docs_test", "docs_valid")] == [10, 5, 12, 8]
    held = {D.normalize(t) for s in ("test", "valid", "docs_test", "docs_valid") for p in splits[s]
            for t in (p.de, p.en)}
    assert not any(D.normalize(p.de) in held or D.normalize(p.en) in held for p in splits["train"])
    assert {p.source for p in splits["train"]} == {"ding", "libreoffice_help"}
    assert ("Apfel", "apple") in {(p.de, p.en) for p in splits["train"] if p.kind == "word"}
    # the 15 planted Ding test/valid pairs never reach train: removed as duplicates of the held-out pairs
    # (dedup sees Ding first) or, had they differed in form, by decontamination
    counts = manifest["per_source"]["libreoffice_help"]["filters"]
    assert counts.get("exact_duplicate", 0) + counts.get("overlaps_valid_or_test", 0) >= 15
    assert not any(p.doc.startswith("planted") for s in splits.values() for p in s)
    assert manifest["counts"]["train"]["total"] == len(splits["train"])


def test_decontamination_catches_a_planted_test_pair_in_another_form(fixture_corpus, monkeypatch):
    """A held-out sentence planted with different punctuation passes exact dedup; decontamination removes it."""
    ding, _ = D.parse_ding(many(60).splitlines())
    test_pair = D.split_translation(ding, n_test=10, n_valid=5)[0]["test"][0]
    planted = Pair(test_pair.de.rstrip(".") + "!", test_pair.en, "sentence", "libreoffice_help", "x.html")
    monkeypatch.setattr(T, "read_corpus", lambda name, files, stats: iter([planted]))
    splits, manifest = T.build_translate(fixture_corpus, ("ding", "libreoffice_help"), n_test=10, n_valid=5,
                                         docs_test=0, docs_valid=0, log=lambda _: None)
    assert manifest["per_source"]["libreoffice_help"]["filters"]["overlaps_valid_or_test"] == 1
    assert planted.de not in {p.de for p in splits["train"]}


def test_everyday_dev_set_is_well_formed_and_never_in_train(fixture_corpus):
    rows = T.read_everyday()
    assert len(rows) >= 200 and len({r["de"] for r in rows}) == len(rows)
    assert all(r["de"].strip() and r["en"].strip() and r["topic"] for r in rows)
    splits, _ = T.build_translate(fixture_corpus, ("ding",), n_test=10, n_valid=5, log=lambda _: None)
    everyday = {D.normalize(t) for r in rows for t in (r["de"], r["en"])}
    assert not any(D.normalize(p.de) in everyday or D.normalize(p.en) in everyday for p in splits["train"])


def test_unknown_corpus_is_a_clear_error(fixture_corpus):
    with pytest.raises(D.DataError, match="corpora must include ding"):
        T.build_translate(fixture_corpus, ("libreoffice_help",), log=lambda _: None)
    with pytest.raises(D.DataError, match="unknown source"):
        D.fetch(".", ["nope"])


def test_reserved_django_catalogs_are_read_only_for_decontamination(tmp_path, fixture_corpus, monkeypatch):
    """Django's catalogs are reserved for evaluation: a training pair sharing a side with them is removed."""
    from package_fixtures import make_wheel

    po = ('msgid ""\nmsgstr "Content-Type: text/plain; charset=UTF-8\\n"\n\n'
          'msgid "Enter a valid email address."\nmsgstr "Bitte gültige E-Mail-Adresse eingeben."\n')
    french = po.replace("Bitte", "X")  # another language's catalog: not read
    wheel = make_wheel(tmp_path / "django.whl", {"django/conf/locale/de/LC_MESSAGES/django.po": po,
                                                 "django/conf/locale/fr/LC_MESSAGES/django.po": french})
    real_sources_for = S.sources_for
    monkeypatch.setattr(T, "sources_for", lambda name: real_sources_for(name) if name == "eval_only" else {})
    assert T.reserved_eval_texts({"django_eval": wheel}) == ["Bitte gültige E-Mail-Adresse eingeben.",
                                                             "Enter a valid email address."]
    planted = Pair("Geben Sie eine gültige E-Mail-Adresse ein.", "Enter a valid email address.", "sentence",
                   "catalogs", "x/y")
    monkeypatch.setattr(T, "read_corpus", lambda name, files, stats: iter([planted]))
    splits, manifest = T.build_translate({**fixture_corpus, "django_eval": wheel}, ("ding", "catalogs"),
                                         n_test=10, n_valid=5, log=lambda _: None)
    assert planted.de not in {p.de for p in splits["train"]}
    assert manifest["per_source"]["catalogs"]["filters"]["overlaps_valid_or_test"] == 1
    assert manifest["reserved_for_evaluation"]["texts"] == 2


def test_corpus_card_renders_the_manifest(fixture_corpus, tmp_path, capsys):
    import json

    _, manifest = T.build_translate(fixture_corpus, ("ding", "libreoffice_help"), n_test=10, n_valid=5,
                                    docs_test=12, docs_valid=8, log=lambda _: None)
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(manifest))
    assert corpus_cli.main(["card", "--manifest", str(path)]) == 0
    out = capsys.readouterr().out
    train = manifest["per_source"]["libreoffice_help"]["train"]["total"]
    assert "| libreoffice_help | 135 |" in out and f"| {train:,} |" in out and "| docs_test | 12 | 12 |" in out
    assert corpus_cli.main(["card", "--manifest", str(tmp_path / "missing.json")]) == 1
