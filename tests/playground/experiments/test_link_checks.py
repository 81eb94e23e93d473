"""The Experiments page's link (read back exactly; a malformed one corrected, each correction said) and its bad-input
words. Pure: no model, no Streamlit."""
from __future__ import annotations

from playground.experiments import checks, link
from runtime.text import Translation

SHAPE = link.Shape({"enc_self": 3, "dec_self": 3, "dec_cross": 3}, 8)
SHAPES = {"translate:de-en": SHAPE, "translate:en-de": SHAPE, "sentiment": link.Shape({"enc_self": 2}, 4)}


def test_an_experiments_link_reads_back_as_it_was_written():
    state = link.Experiment("translate:en-de", "The weather is nice.", "knockout",
                            heads=[link.Head("dec_cross", 3, 8), link.Head("enc_self", 1, 1)], ablation="mean")
    found, notes = link.parse_url(state.url(), SHAPES)
    assert notes == []
    assert found == {"model": "translate:en-de", "text": "The weather is nice.", "exp": "knockout",
                     "heads": [link.Head("dec_cross", 3, 8), link.Head("enc_self", 1, 1)], "ablation": "mean"}
    compare = link.Experiment("translate:de-en", "Ich bin hier.", "compare", against="edit", other="Du bist hier.")
    assert link.parse_url(compare.url(), SHAPES)[0]["other"] == "Du bist hier."
    lens = link.Experiment("translate:de-en", "Ich bin hier.", "lens", position=4)
    assert link.parse_url(lens.url(), SHAPES)[0]["position"] == 4


def test_a_malformed_link_is_corrected_and_each_correction_is_said():
    raw = {"model": "translate:fr-en", "exp": "magic", "against": "gpt", "ablation": "half",
           "heads": "dec_cross.9.1,dec_self.1.99,bogus,enc_self.2.3,enc_self.2.3", "position": "-2", "text": "x" * 1000}
    found, notes = link.parse_url(raw, SHAPES)
    assert "model" not in found and "exp" not in found and "against" not in found and "ablation" not in found
    assert found["heads"] == [link.Head("enc_self", 2, 3)]  # the one real head, once
    assert "position" not in found
    assert len(found["text"]) == link.MAX_TEXT
    said = " ".join(notes)
    for words in ("translate:fr-en", "magic", "gpt", "half", "dec_cross.9.1 does not exist",
                  "dec_self.1.99 does not exist", "“bogus” is not a head", "“-2” is not a whole number", "cut to"):
        assert words in said, words
    assert len(notes) == 9


def test_a_classifier_link_offers_the_classifiers_experiments_and_heads():
    found, notes = link.parse_url({"model": "sentiment", "exp": "occlusion", "heads": "enc_self.2.4,dec_cross.1.1"},
                                  SHAPES)
    assert found == {"model": "sentiment", "exp": "occlusion", "heads": [link.Head("enc_self", 2, 4)]}
    assert len(notes) == 1 and "“dec_cross.1.1” is not a head of this model" in notes[0]
    found, notes = link.parse_url({"model": "sentiment", "exp": "lens"}, SHAPES)
    assert "exp" not in found and "“lens” is not a known exp for this model" in notes[0]
    assert link.Shape.of({"n_layers": 2, "n_heads": 4}, classifier=True).layers == {"enc_self": 2}


def test_a_position_past_the_end_moves_to_the_last_with_a_note():
    assert link.clamp_position(2, 5) == (2, None)
    position, note = link.clamp_position(9, 5)
    assert position == 4 and "past this translation's last token" in note


def test_shape_of_a_model_config():
    shape = link.Shape.of({"n_layers": 2, "n_decoder_layers": 3, "n_heads": 4})
    assert shape.layers == {"enc_self": 2, "dec_self": 3, "dec_cross": 3}
    assert len(shape.all_heads()) == (2 + 3 + 3) * 4


def translation(truncated=False, warning=None) -> Translation:
    return Translation("x", ["▁x", "</s>"], [5, 2], -1.0, ["<2en>", "▁x", "</s>"], truncated, warning=warning)


def test_bad_input_gets_a_clear_message():
    assert "Type a sentence" in checks.text_problem("")
    assert "Type a sentence" in checks.text_problem("  \u200b\ufeff ")  # invisible characters only
    assert "at most" in checks.text_problem("Wort " * 200)
    assert checks.text_problem("Das Wetter ist schön.") is None
    assert checks.translation_notes(translation(), "x") == []
    assert "Input too long" in checks.translation_notes(translation(truncated=True), "x")[0]
    emoji = "This text is mostly outside what the model was trained on: it has no letters at all"
    assert checks.translation_notes(translation(warning=emoji), "🙂🙂")[0] == emoji
