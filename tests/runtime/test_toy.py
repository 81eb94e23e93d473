"""runtime.toy, the toy tasks' torch-free contract: the limits the page states are the ones it checks, the reserved
tokens are the tokenizer's own plus the direction's tag, a verdict says what is wrong or what was found, and a toy
model's held-out pairs come back as they were written."""
from __future__ import annotations

from runtime import toy
from runtime.tokenizer import SPECIALS

GOOD_TSV = b"".join(f"{i} {i + 1}\t{i + 1} {i}\n".encode() for i in range(toy.MIN_ROWS))


def test_the_stated_limits_are_the_checked_ones():
    for number in (f"{toy.MAX_ROWS:,} rows", f"{toy.MAX_TOKENS} tokens a side", f"{toy.MAX_VOCAB:,} distinct tokens",
                   f"{toy.MAX_BYTES // 10**6} MB"):
        assert number in toy.UPLOAD_LIMITS
    assert toy.check(b"x\ty\n" * (toy.MAX_BYTES // 4 + 1), "a.tsv")["error"] == toy.too_big(toy.MAX_BYTES + 4)


def test_reserved_tokens_are_the_tokenizers_specials_and_the_directions_tag():
    assert toy.RESERVED == (*SPECIALS, "<2out>") and toy.TAG == f"<2{toy.DIRECTION[1]}>"
    for token in toy.RESERVED:
        verdict = toy.check(GOOD_TSV + f"a {token}\tb\n".encode(), "a.tsv")
        assert verdict == {"ok": False, "error": f"line {toy.MIN_ROWS + 1}: {token!r} is reserved for the model's own "
                                                 "use"}


def test_a_good_file_gets_its_counts_and_a_bad_one_its_line():
    assert toy.check(b"source\ttarget\n" + GOOD_TSV, "pairs.txt") == {
        "ok": True, "rows": toy.MIN_ROWS, "vocabulary": toy.MIN_ROWS + 1, "kind": "tsv", "skipped_header": True}
    assert toy.check(GOOD_TSV + b"a\tb\tc\n", "pairs.tsv") == {
        "ok": False, "error": f"line {toy.MIN_ROWS + 1}: 3 field(s), expected source<TAB>target (exactly one tab)"}
    assert toy.check(b"good film,pos\n" * toy.MIN_ROWS, "reviews.csv")["kind"] == "csv"


def test_held_out_pairs_come_back_as_written(tmp_path):
    assert toy.read_held_out(tmp_path) == []  # a model directory without them: nothing to try
    toy.write_held_out(tmp_path, [(["1", "2"], ["2", "1"]), (["a"], ["b", "c"])])
    assert (tmp_path / toy.HELD_OUT_FILE).read_text(encoding="utf-8") == "1 2\t2 1\na\tb c\n"
    assert toy.read_held_out(tmp_path) == [("1 2", "2 1"), ("a", "b c")]


def test_the_try_it_box_warns_of_symbols_the_model_never_saw_and_only_of_those():
    """Issue 34.5: digits given to a digit-trained model were told "mostly outside what the model was trained on"
    (runtime.coverage's rule for German and English: no letters at all)."""
    tag, eos, unk = toy.TAG, "</s>", "<unk>"
    assert toy.unseen_warning("5 4 3 2 1 0", [tag, "5", "4", "3", "2", "1", "0", eos]) is None
    assert toy.unseen_warning("5 x 3 x", [tag, "5", unk, "3", unk, eos]) == (
        "1 of the input's symbols was never in this model's training (`x`): it reads each as <unk>, so its output "
        "for them means little.")
    many = "a b c d e f 1"
    assert toy.unseen_warning(many, [tag, *[unk] * 6, "1", eos]).startswith(
        "6 of the input's symbols were never in this model's training (`a`, `b`, `c`, `d`, `e` and 1 more)")
