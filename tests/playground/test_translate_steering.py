"""playground/translate/steering.py: the prefix a clicked word stands for, the alternatives' rows against the
model's own next-token distribution, the n-best rows, and the page's URL read back
with corrections. Numbers worked out by hand on made-up tokens, or from runtime.decoding.prefix_log_probs."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from playground import links
from playground.links import note
from playground.translate import steering

DIRECTIONS = [("de", "en"), ("en", "de")]
METHODS = ("beam", "greedy", "sample")
TOKENS = ["▁The", "▁do", "g", "▁is", "▁sleep", "ing", ".", "</s>"]  # words: The, dog, is, sleeping.


def test_a_clicked_word_stands_for_the_words_before_it():
    assert steering.word_starts(TOKENS) == [("The", 0), ("dog", 1), ("is", 3), ("sleeping.", 4)]
    assert steering.prefix_before(TOKENS, 0) == ""
    assert steering.prefix_before(TOKENS, 1) == "The"
    assert steering.prefix_before(TOKENS, 2) == "The dog"  # the word's two pieces joined, not "The do"
    assert steering.prefix_before(TOKENS, 3) == "The dog is"
    with pytest.raises(ValueError, match="word 5 is not in this output of 4"):
        steering.prefix_before(TOKENS, 4)


def test_repeated_words_get_labels_a_button_row_can_tell_apart():
    starts = steering.word_starts(["▁the", "▁cat", "▁and", "▁the", "▁dog", "▁the"])
    assert steering.word_labels(starts) == ["the", "cat", "and", "the (2)", "dog", "the (3)"]


def alternative(tokens, prefix_len, probs, text="x"):
    return SimpleNamespace(tokens=tokens, prefix_len=prefix_len, token_probs=probs, text=text)


def test_a_chosen_alternative_stands_for_the_prefix_and_its_token():
    a = alternative(["▁The", "▁ca", "t", "▁sleeps", "</s>"], 1, [0.5, 0.25, 0.9, 0.8, 0.9], "The cat sleeps")
    assert steering.chosen_prefix(a) == "The ca"  # forced "The", then the alternative's own piece
    assert steering.alternative_word(a) == "cat"  # the word that piece starts, as the completion spells it
    [row] = steering.alternative_rows([a])
    assert row == {"token": "▁ca", "word": "cat", "probability": 0.25, "translation": "The cat sleeps"}


def test_nbest_rows_keep_the_search_order_and_number_from_one():
    found = [SimpleNamespace(text="a", score=-0.51234, confidence=0.6), SimpleNamespace(text="b", score=-0.9,
                                                                                          confidence=0.5)]
    assert steering.nbest_rows(found) == [{"rank": 1, "translation": "a", "score": -0.5123, "confidence": 0.6},
                                          {"rank": 2, "translation": "b", "score": -0.9, "confidence": 0.5}]


def test_a_link_is_read_back_as_the_page_wrote_it():
    url = steering.url_of(("en", "de"), "The dog sleeps.", "beam", 6, 3, " Der Hund ")
    assert url == {"direction": "en-de", "text": "The dog sleeps.", "method": "beam", "beam": "6", "n": "3",
                   "prefix": "Der Hund"}
    found, fixes = steering.parse_link(url, DIRECTIONS, METHODS)
    assert fixes == []
    assert found == {"direction": ("en", "de"), "text": "The dog sleeps.", "method": "beam", "beam": 6, "n": 3,
                     "prefix": "Der Hund"}
    assert "prefix" not in steering.url_of(("de", "en"), "x", "greedy", 4, 3, "  ")
    assert "n" not in steering.url_of(("de", "en"), "x", "greedy", 4, 3, "")  # n-best is beam search's


@pytest.mark.parametrize("prefix, why", [("The </s> dog", "special token"), ("<2de> Der", "special token"),
                                         ("two\nlines", "control character"), ("x" * 301, "longer than 300")])
def test_a_malformed_prefix_is_dropped_with_a_notice(prefix, why):
    found, fixes = steering.parse_link({"text": "Hallo", "prefix": prefix}, DIRECTIONS, METHODS)
    assert "prefix" not in found and found["text"] == "Hallo"
    [fix] = fixes
    assert fix.name == "prefix" and why in fix.why and fix.used == "no prefix"
    assert note(fixes).startswith("This link was corrected. `prefix=")


def test_other_bad_values_are_corrected_to_what_the_sliders_allow():
    found, fixes = steering.parse_link({"direction": "fr-en", "method": "nucleus", "beam": "40", "n": "nine"},
                                       DIRECTIONS, METHODS)
    assert found == {"beam": 16, "n": 1}  # every number the link names, as the sliders will hold it
    assert [(f.name, f.used) for f in fixes] == [("direction", "de-en"), ("method", "beam"), ("beam", "16"),
                                                 ("n", "1")]
    found, fixes = steering.parse_link({"beam": "4", "n": "7"}, DIRECTIONS, METHODS)
    assert found == {"beam": 4, "n": 4} and "1–4" in fixes[0].why  # n-best cannot pass the beam


@pytest.mark.parametrize("raw, beam, n", [
    ({"beam": "abc", "n": "999"}, 4, 4),  # issue 49.11: the note said 16 (the slider's end), the page held 4
    ({"n": "999"}, 4, 4),  # no beam in the link: the page's first beam bounds n
    ({"beam": "0", "n": "5"}, 1, 1),  # a beam of 1 lists no n best
    ({"beam": "99", "n": "abc"}, 16, 1),
    ({"method": "greedy", "n": "3"}, 4, 1),  # n-best is beam search's: the page's n-best size is 1
    ({"method": "nucleus", "beam": "x", "n": "9"}, 4, 4),  # the method's default is beam search
])
def test_a_corrected_number_is_said_as_the_page_then_holds_it(raw, beam, n):
    """Each correction's value is the one `found` gives the sliders (one value, computed once): n's bound is the
    beam the page ends up with, not the link's unusable one, nor the slider's end."""
    found, fixes = steering.parse_link(raw, DIRECTIONS, METHODS)
    held = {"beam": found.get("beam", steering.DEFAULT_BEAM), "n": found.get("n", 1)}
    assert held == {"beam": beam, "n": n}
    said = {f.name: f.used for f in fixes if f.name in held}
    assert said and all(said[name] == str(held[name]) for name in said), (said, held)


def test_a_links_text_is_cut_to_whole_lines_under_the_cap():
    cap = links.MAX_LINK_TEXT_CHARS
    assert links.link_text("Hallo.") == "Hallo." and links.link_text_note("Hallo.") is None
    lines = "Das Wetter ist heute schön.\n" * 2000  # 56,000 characters
    carried = links.link_text(lines)
    assert len(carried) <= cap and lines.startswith(carried) and not carried.endswith("\n")
    assert carried.split("\n") == ["Das Wetter ist heute schön."] * len(carried.split("\n"))  # whole lines
    assert links.link_text("x" * 30_000) == "x" * cap  # one long line: cut inside it
    url = steering.url_of(("de", "en"), lines, "beam", 4, 1, "")
    assert url["text"] == carried
    said = links.link_text_note(lines)
    assert f"cut to {len(carried):,} characters" in said and "the text box keeps all 56,000" in said
    found, fixes = steering.parse_link({"text": lines}, DIRECTIONS, METHODS)  # a link made by hand reads the same
    assert found["text"] == carried
    assert [(f.name, f.used) for f in fixes] == [("text", f"the text cut to {len(carried):,} characters")]


@pytest.mark.exports
def test_alternatives_first_tokens_are_the_top_k_of_the_next_token_distribution():
    """The rows the page shows for a clicked word: their tokens and probabilities are the 5 likeliest of
    prefix_log_probs after the words before it (one teacher-forced pass, computed here independently)."""
    from export_fixtures import GERMAN, exported

    from runtime import OnnxTranslator
    from runtime.batching import pad
    from runtime.decoding import prefix_log_probs

    model = OnnxTranslator(exported("translate"))
    [plain] = model.translate([GERMAN[2]], "de", "en", method="greedy")
    prefix = steering.prefix_before(plain.tokens, 0)
    [alts] = model.translate_n_best([GERMAN[2]], "de", "en", method="greedy", target_prefix=[prefix],
                                    return_alternatives=True, num_hypotheses=steering.ALTERNATIVES)
    src_ids, src_mask = pad([model.source_ids(GERMAN[2], "en")[0]], model.tokenizer.pad_id)
    log_probs = prefix_log_probs(model.backend, src_ids, src_mask, [model.prefix_ids(prefix)],
                                 bos_id=model.tokenizer.bos_id)[0]
    top = np.argsort(-log_probs, kind="stable")[:steering.ALTERNATIVES]
    rows = steering.alternative_rows(alts)
    assert [model.tokenizer.id_to_token(int(i)) for i in top] == [r["token"] for r in rows]
    assert [r["probability"] for r in rows] == pytest.approx(np.exp(log_probs[top]).tolist(), rel=1e-4)
