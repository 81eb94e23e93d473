"""The Attention explorer page on the tiny exported test models (tests/app_fixtures.py): its maps, layers, heads
and positional encoding; bad input; and what issue 25 found (3): the out-of-domain warning the other pages show,
a default example the model translates as judged right by hand, or a note beside the output saying what is known
of it.
"""
from __future__ import annotations

import shutil

import numpy as np
import pytest
from app_fixtures import BAD_INPUTS, array, checked, clean, plotly_figures, read_heatmap, values
from export_fixtures import ENGLISH, GERMAN, REVIEWS

import tx
from runtime import OnnxSentimentClassifier, OnnxTranslator

pytestmark = pytest.mark.exports

ATTENTION = "pages/3_Attention_explorer.py"
OUTSIDE = {"emoji": "😀🎉🔥👍🏽", "chinese": "这部电影很好看", "arabic": "فيلم رائع جدا", "html": "<b>😀😀😀</b>"}


@pytest.fixture
def open_page(open_page):
    """conftest.py's open_page, every page it opens also checked to show no error box."""
    return checked(open_page)


# ---------------------------------------------------------------- maps, layers, heads (were in test_app.py)

def attention_map(at) -> np.ndarray:
    """The page's attention map: markup up to 40 tokens a side (its hovers' 3 decimals), plotly's beyond."""
    markup = [read_heatmap(m.value)["z"] for m in at.markdown if 'class="tx-heat"' in m.value]
    return markup[0] if markup else array(plotly_figures(at)[0]["data"][0]["z"])


def maps_drawn(at) -> int:
    """Maps on the page, plotly's and markup ones."""
    return len(plotly_figures(at)) + sum('class="tx-heat"' in m.value for m in at.markdown)


def test_attention_explorer_kinds_layers_heads_and_positional_encoding(open_page):
    at = open_page("attention")
    clean(at)
    assert any(m.startswith("Greedy translation: ") for m in values(at.info)) and not at.success
    assert maps_drawn(at) == 3  # the attention map, PE, PE similarity
    enc = attention_map(at)
    assert enc.shape[0] == enc.shape[1]  # encoder self-attention: source × source

    at.selectbox(key="attention_kind_translate").select("cross").run()
    cross = attention_map(at)
    at.selectbox(key="attention_kind_translate").select("self").run()
    self_map = attention_map(at)
    assert self_map.shape[0] == self_map.shape[1] == cross.shape[0]
    assert np.allclose(np.triu(self_map, 1), 0.0)  # causal: no weight on later target positions

    at.radio(key="attention_view").set_value("all heads (grid)").run()
    clean(at)
    assert [t["type"] for t in plotly_figures(at)[0]["data"]] == ["heatmap"] * 4

    # The positional encoding is tx.PositionalEncoding's table (computed by the app in numpy, tx in float32).
    at.select_slider(key="attention_pe_d_model").set_value(64).run()
    at.slider(key="attention_pe_positions").set_value(30).run()
    pe, similarity = plotly_figures(at)[-2:]
    np.testing.assert_allclose(array(pe["data"][0]["z"]), tx.PositionalEncoding(64, 30).pe.numpy(), atol=1e-5)
    sim = array(similarity["data"][0]["z"])
    assert sim.shape == (30, 30)
    np.testing.assert_allclose(np.diag(sim), 1.0, atol=1e-5)

    at.radio(key="attention_model").set_value("sentiment").run()
    clean(at)
    assert any(m.startswith("Predicted: ") for m in values(at.info)) and maps_drawn(at) == 3


@pytest.mark.parametrize("case", list(BAD_INPUTS))
def test_attention_explorer_bad_input(open_page, case):
    at = open_page("attention")
    at.text_input(key="attention_text_translate").input(BAD_INPUTS[case]).run()
    clean(at)
    if case in ("empty", "whitespace"):
        assert any("Type a sentence" in m for m in values(at.info))
        assert maps_drawn(at) == 2  # positional encoding only
    else:
        assert maps_drawn(at) == 3
    assert any("truncated" in w for w in values(at.warning)) == (case == "over-long")


# ---------------------------------------------------------------- 3. what issue 25 found

@pytest.mark.parametrize("case", list(OUTSIDE))
def test_attention_explorer_warns_when_the_text_is_outside_what_the_model_knows(open_page, model_root, case):
    at = open_page(ATTENTION)
    at.text_input(key="attention_text_translate").input(OUTSIDE[case]).run()
    clean(at)
    expected = OnnxTranslator(model_root / "translate").translate([OUTSIDE[case]], "de", "en", method="greedy")[0]
    assert expected.warning and expected.warning in values(at.warning)

    at.radio(key="attention_model").set_value("sentiment").run()
    at.text_input(key="attention_text_sentiment").input(OUTSIDE[case]).run()
    clean(at)
    expected = OnnxSentimentClassifier(model_root / "sentiment").classify([OUTSIDE[case]])[0]
    assert expected.warning and expected.warning in values(at.warning)


def test_attention_explorer_has_no_warning_for_ordinary_text(open_page):
    at = open_page(ATTENTION)
    at.text_input(key="attention_text_translate").input(GERMAN[5]).run()
    assert not any("outside what the model" in w for w in values(at.warning))


def test_attention_explorer_default_is_a_hand_judged_example_with_what_is_known_of_its_output(open_page):
    at = open_page(ATTENTION)
    # the fixture's examples.tsv: de-en GERMAN[2] judged right ("works"), GERMAN[1] judged wrong
    assert at.text_input(key="attention_text_translate").value == GERMAN[2]
    note = " ".join(values(at.caption))
    # the tiny model's greedy output is not the judged one: the page says so rather than leave it unremarked
    assert "The weather is nice today." in note and "not judged" in note, note
    at.radio(key="attention_direction").set_value(("en", "de")).run()
    clean(at)
    assert at.text_input(key="attention_text_translate").value == ENGLISH[2]  # the other direction's default

    at.text_input(key="attention_text_translate").input(ENGLISH[1]).run()  # judged wrong by hand
    assert any("judged wrong by hand" in c and "missing verb" in c for c in values(at.caption)), values(at.caption)
    at.text_input(key="attention_text_translate").input(ENGLISH[5]).run()  # never judged
    assert any("not judged" in c for c in values(at.caption))


def test_attention_explorer_prefers_an_example_whose_greedy_output_was_judged_right(open_page, model_root,
                                                                                     tmp_path):
    root = tmp_path / "models"
    shutil.copytree(model_root / "translate", root / "translate")
    shutil.copytree(model_root / "sentiment", root / "sentiment")
    greedy = OnnxTranslator(root / "translate").translate([GERMAN[4]], "de", "en", method="greedy")[0].text
    # a judged-right example whose greedy output differs comes first; the page picks the one greedy gets as judged
    (root / "translate" / "examples.tsv").write_text(
        "direction\tsource\toutput\tverdict\tnote\n"
        f"de-en\t{GERMAN[2]}\tThe weather is nice today.\tworks\t\n"
        f"de-en\t{GERMAN[4]}\t{greedy}\tworks\t\n", encoding="utf-8")
    at = open_page(ATTENTION, root=root)
    assert at.text_input(key="attention_text_translate").value == GERMAN[4]
    assert any(m == f"Greedy translation: {greedy}" for m in values(at.info))
    assert any("judged right by hand" in c for c in values(at.caption)), values(at.caption)


def test_attention_explorer_says_whether_the_model_is_right_on_a_test_set_review(open_page, model_root):
    at = open_page(ATTENTION)
    at.radio(key="attention_model").set_value("sentiment").run()
    clean(at)
    text = at.text_input(key="attention_text_sentiment").value
    (label,) = [label for label, review in REVIEWS if review == text]  # the default: a test-set review
    predicted = OnnxSentimentClassifier(model_root / "sentiment").classify([text])[0].label
    verdict = "right" if predicted == label else "wrong"
    assert f"A test-set review labelled {label}: the model is {verdict} here." in values(at.caption)
    at.text_input(key="attention_text_sentiment").input("an unseen review").run()
    assert "Not a test-set review: no known label to compare with." in values(at.caption)


def test_picking_a_map_or_moving_the_positional_encoding_does_not_run_the_model_again(open_page, monkeypatch):
    """Issue 52: the model runs once per text; kind, layer, head and view are one fragment over its kept output."""
    runs = []
    original = OnnxTranslator.translate
    monkeypatch.setattr(OnnxTranslator, "translate", lambda self, *a, **k: runs.append(a) or original(self, *a, **k))
    at = open_page("attention")
    clean(at)
    first, opened = attention_map(at), len(runs)  # the default example's choice may translate too (cached)
    assert runs[-1][0] == [at.text_input(key="attention_text_translate").value]
    at.selectbox(key="attention_kind_translate").select("cross").run()
    at.radio(key="attention_view").set_value("all heads (grid)").run()
    at.slider(key="attention_pe_positions").set_value(30).run()
    at.selectbox(key="attention_kind_translate").select("encoder").run()
    at.radio(key="attention_view").set_value("one head").run()
    clean(at)
    assert len(runs) == opened, "a pick must redraw from the kept run, not run the model again"
    assert attention_map(at).shape == first.shape
    at.text_input(key="attention_text_translate").input(GERMAN[5]).run()
    clean(at)
    assert len(runs) == opened + 1 and runs[-1][0] == [GERMAN[5]]  # a new text runs it
