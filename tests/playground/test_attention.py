"""playground/attention's pure module without Streamlit: the maps and axes of each kind of attention, what is
known of the output shown, the figures and the positional encoding's choices."""
from __future__ import annotations

import numpy as np
from app_fixtures import read_heatmap

from playground import figures
from playground.attention import maps
from runtime.text import Prediction, Translation

SRC, TGT = ["<2en>", "▁Hallo", "</s>"], ["▁Hello", "</s>"]


def translation(text: str = "Hello") -> Translation:
    attention = {"encoder": [np.full((2, 3, 3), 1 / 3)] * 2, "self": [np.full((2, 2, 2), 0.5)] * 2,
                 "cross": [np.full((2, 2, 3), 1 / 3)] * 2}
    return Translation(text, TGT, [5, 2], -0.1, SRC, False, attention)


def test_each_kind_reads_its_own_maps_and_token_axes():
    out = translation()
    assert set(maps.KINDS["translate"]) == {"encoder", "self", "cross"} and list(maps.KINDS["sentiment"]) == ["encoder"]
    for kind, (rows, cols) in {"encoder": (SRC, SRC), "self": (TGT, TGT), "cross": (TGT, SRC)}.items():
        found, query, key = maps.translation_maps(out, kind)
        assert found is out.attention[kind] and (query, key) == (rows, cols)


EXAMPLES = [{"source": "Gut.", "output": "Good.", "verdict": "works", "note": ""},
            {"source": "Schlecht.", "output": "Bad", "verdict": "fails", "note": "missing verb"},
            {"source": "Neu.", "verdict": ""}]


def test_what_is_known_of_a_greedy_output():
    assert maps.judged_note(" Gut. ", "Good.", EXAMPLES) == "✓ This output was judged right by hand."
    assert maps.judged_note("Schlecht.", "Bad", EXAMPLES) == "✗ This output was judged wrong by hand (missing verb)."
    other = maps.judged_note("Gut.", "Fine.", EXAMPLES)
    assert other.startswith("This greedy output was not judged. The output of beam search") and "“Good.”" in other
    for source in ("Neu.", "Unbekannt."):
        assert maps.judged_note(source, "x", EXAMPLES).startswith("This greedy output was not judged: greedy")


def test_whether_the_classifier_is_right_on_a_test_set_review():
    out = Prediction("positive", {"negative": 0.3, "positive": 0.7}, ["▁fine"], False)
    assert maps.known_label_note("positive", out) == "A test-set review labelled positive: the model is right here."
    assert maps.known_label_note("negative", out).endswith("the model is wrong here.")
    assert maps.known_label_note(None, out) == "Not a test-set review: no known label to compare with."


def test_one_head_and_every_head_of_a_layer():
    found, rows, cols = maps.translation_maps(translation(), "cross")
    one = read_heatmap(maps.one_head_map(found, rows, cols, "cross-attention", 1, figures.MEAN))  # markup: it fits
    np.testing.assert_allclose(one["z"], figures.pick_map(found, 1, figures.MEAN), atol=5e-4)
    assert one["z"].shape == (2, 3) and one["title"] == "Cross-attention: layer 1, average of all heads"
    many = [np.full((1, 41, 41), 1 / 41)]
    wide = maps.one_head_map(many, [f"t{i}" for i in range(41)], [f"s{i}" for i in range(41)], "self", 1, 1)
    assert np.asarray(wide["data"][0]["z"]).shape == (41, 41)  # over 40 tokens a side: plotly's map
    grid = maps.heads_figure(found, rows, cols, "cross-attention", 2)
    assert [t.type for t in grid.data] == ["heatmap"] * 2 and "layer 2, all 2 heads" in grid.layout.title.text


def test_the_positional_encoding_starts_on_the_models_own_size():
    assert maps.positional_choices({"d_model": 48, "max_len": 64}) == ([16, 32, 48, 64, 128, 256, 512], 48, 64)
    assert maps.positional_choices({"d_model": 33}) == ([16, 32, 64, 128, 256, 512], 256, 100)  # odd: no table
    assert maps.positional_choices({"max_len": 512})[2] == 100
