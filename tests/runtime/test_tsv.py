"""runtime.tsv: the TSV files the corpus writes, training reads and the app reads (a model directory's samples.tsv).

The first two tests moved from tests/corpus/test_data.py with the functions they test."""
from __future__ import annotations

import csv

import pytest

from runtime import tsv


def test_tsv_round_trip_is_exact_with_dictreader(tmp_path):
    rows = [("Er sagte: \"Ja\"\tdann\nnein", "He said 'yes'\r\nthen  no", "sentence", "ding"),
            ("ß ü „x“", "😀 1,5", "phrase", "")]
    path = tmp_path / "t.tsv"
    tsv.write_tsv(path, tsv.TRANSLATE_HEADER, rows)
    with open(path, encoding="utf-8", newline="") as f:
        back = list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    assert back == [{"de": 'Er sagte: "Ja" dann nein', "en": "He said 'yes' then no", "kind": "sentence",
                     "source": "ding"},
                    {"de": "ß ü „x“", "en": "😀 1,5", "kind": "phrase", "source": ""}]
    assert tsv.read_tsv(path) == back
    assert not list(tmp_path.glob(".*tmp"))


def test_read_tsv_errors(tmp_path):
    with pytest.raises(tsv.DataError, match="prepare"):
        tsv.read_tsv(tmp_path / "missing.tsv")
    (tmp_path / "bad.tsv").write_text("de\ten\tkind\nonly\ttwo\n", encoding="utf-8")
    with pytest.raises(tsv.DataError, match="bad.tsv:2"):
        tsv.read_tsv(tmp_path / "bad.tsv")


def test_round_trip_of_dict_rows_keyed_by_the_header(tmp_path):
    path = tmp_path / "sub" / "s.tsv"
    rows = [{"label": "positive", "text": "a  fine\tfilm\x00"}, {"label": "negative", "text": "\u200bdull "}]
    tsv.write_tsv(path, tsv.SENTIMENT_HEADER, rows)
    assert path.read_text(encoding="utf-8") == "label\ttext\npositive\ta fine film\nnegative\tdull\n"
    assert tsv.read_tsv(path) == [{"label": "positive", "text": "a fine film"}, {"label": "negative", "text": "dull"}]
    assert [p.name for p in path.parent.iterdir()] == ["s.tsv"]  # no temporary left beside it


def test_a_row_of_the_wrong_length_is_never_written(tmp_path):
    with pytest.raises(ValueError, match="row has 1 fields"):
        tsv.write_tsv(tmp_path / "t.tsv", tsv.SENTIMENT_HEADER, [("positive", "ok"), ("positive",)])
    assert not (tmp_path / "t.tsv").exists()


@pytest.mark.parametrize("body", ["label\ttext\npositive\n", "label\ttext\npositive\tgood\textra\n"],
                         ids=["missing field", "extra field"])
def test_a_row_with_a_missing_or_extra_field_names_file_and_line(tmp_path, body):
    path = tmp_path / "samples.tsv"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(tsv.DataError, match=r"samples.tsv:2: expected 2 tab-separated fields"):
        tsv.read_tsv(path)


def test_not_utf8_and_unreadable_files_are_data_errors(tmp_path):
    (tmp_path / "latin1.tsv").write_bytes("label\ttext\npositive\tsch\xf6n\n".encode("latin-1"))
    with pytest.raises(tsv.DataError, match=r"latin1.tsv: not UTF-8 \(invalid start byte at byte 23\)"):
        tsv.read_tsv(tmp_path / "latin1.tsv")
    (tmp_path / "folder.tsv").mkdir()
    with pytest.raises(tsv.DataError, match="folder.tsv: cannot read"):
        tsv.read_tsv(tmp_path / "folder.tsv")


def test_the_format_constants_the_two_sides_agree_on():
    assert tsv.TRANSLATE_HEADER[:2] == tsv.TRANSLATE_MIN_HEADER == ("de", "en")
    assert tsv.SENTIMENT_ALL_HEADER[:2] == tsv.SENTIMENT_HEADER and tsv.LABELS == ("negative", "positive")
