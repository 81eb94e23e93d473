"""The Experiments page (issue 35) on the tiny exported test models (tests/app_fixtures.py): its figures draw the
numbers the runtime computes, its state travels in the URL (a malformed link is corrected, and said), and bad input
gets a clear message."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pyarrow as pa
import pytest
from app_fixtures import app_models_root, clean, open_app, values
from streamlit.testing.v1 import AppTest

from playground.experiments import link
from runtime import OnnxTranslator
from runtime import experiments as engine

pytestmark = pytest.mark.exports

PAGE = "pages/9_Experiments.py"
TEXT = "Das Wetter ist heute schön."
REVIEW = "a gem of a film, warm and funny"


def open_page(monkeypatch, params: dict[str, str]) -> AppTest:
    return open_app(monkeypatch, app_models_root(), PAGE, params)


def figure(at: AppTest, title_start: str) -> list[dict]:
    """The rows the chart whose title starts with `title_start` draws, as sent to the browser (Streamlit moves a
    spec's data.values into an Arrow table beside it)."""
    for chart in at.get("vega_lite_chart"):
        title = json.loads(chart.proto.spec)["title"]
        if " ".join(title if isinstance(title, list) else [title]).startswith(title_start):  # wrapped: lines
            return pa.ipc.open_stream(chart.proto.data.data).read_all().to_pylist()
    raise AssertionError(f"no figure titled {title_start!r}")


@pytest.fixture(scope="module")
def translator():
    return OnnxTranslator(app_models_root() / "translate")


def test_edit_and_compare_draws_the_computed_numbers(monkeypatch, translator):
    edited = "Das Wetter ist morgen schön."
    at = open_page(monkeypatch, {"exp": "compare", "text": TEXT, "other": edited})
    clean(at)
    a, b = (translator.translate([t], "de", "en", method="greedy", attention="cross")[0] for t in (TEXT, edited))
    points = figure(at, "Each output token's log-prob")
    np.testing.assert_allclose([p["v"] for p in points if p["series"] == "B: your edit"], np.log(b.token_probs),
                               atol=1e-5)
    np.testing.assert_allclose([p["v"] for p in points if p["series"] == "A: the sentence"], np.log(a.token_probs),
                               atol=1e-5)
    shown = figure(at, "Cross-attention of B")
    expected = np.mean([w.mean(0) for w in b.attention["cross"]], axis=0)
    np.testing.assert_allclose([c["v"] for c in shown], expected.ravel(), atol=1e-5)
    assert dict(at.query_params)["other"] == [edited] or dict(at.query_params)["other"] == edited
    assert len(at.get("download_button")) == 3 * len(at.get("vega_lite_chart")) + 1  # SVG, PNG, CSV each; + HTML


def test_int8_against_fp32_uses_the_int8_model(monkeypatch):
    at = open_page(monkeypatch, {"exp": "compare", "text": TEXT, "against": "int8"})
    clean(at)
    int8 = OnnxTranslator(app_models_root() / "translate", precision="int8")
    b = int8.translate([TEXT], "de", "en", method="greedy", attention="cross")[0]
    points = figure(at, "Each output token's log-prob")
    np.testing.assert_allclose([p["v"] for p in points if p["series"] == "B: int8"], np.log(b.token_probs),
                               atol=1e-5)
    at.radio(key="exp_against").set_value("trained").run()
    clean(at)
    assert any("No model of yours yet" in v for v in values(at.info))


def test_a_model_trained_on_the_train_page_is_compared_on_the_same_input(monkeypatch, tmp_path):
    from playground.training.runs import RunRecord

    run = tmp_path / "run-1"
    shutil.copytree(app_models_root() / "translate", run / "model")  # stands in for an exported toy model
    record = RunRecord(1, {}, str(run), "Run 1: reverse", exported={"log": ""})
    at = open_page(monkeypatch, {"exp": "compare", "text": TEXT, "against": "trained"})
    at.session_state["train_session"] = type("Session", (), {"records": [record]})()
    at.run()
    clean(at)
    assert at.selectbox(key="exp_trained").value == "Run 1: reverse"
    mine = OnnxTranslator(run / "model").translate([TEXT], "de", "en", method="greedy", attention="cross")[0]
    points = figure(at, "Each output token's log-prob")
    np.testing.assert_allclose([p["v"] for p in points if p["series"] == "B: Run 1: reverse"], np.log(mine.token_probs),
                               atol=1e-5)


def test_a_malformed_link_is_corrected_with_a_visible_note(monkeypatch):
    at = open_page(monkeypatch, {"model": "translate:fr-xx", "exp": "nonsense", "text": TEXT,
                                 "heads": "dec_cross.99.1", "position": "abc"})
    clean(at)
    said = " ".join(values(at.warning))
    assert "This link was corrected" in said
    for words in ("translate:fr-xx", "nonsense", "dec_cross.99.1 does not exist", "“abc” is not a whole number"):
        assert words in said, words
    assert at.radio(key="exp_exp").value == "compare"  # the default stands
    assert dict(at.query_params)["exp"] in ("compare", ["compare"])  # the URL now holds the corrected experiment


BAD = [("", "Type a sentence"), ("\u200b \u200b", "Type a sentence"), ("Wort " * 120, "takes at most"),
       ("🙂🙂🙂", "no letters at all"), ("天气很好今天", "a script the model never read")]


def test_bad_input_gets_a_clear_message(monkeypatch):
    at = open_page(monkeypatch, {"exp": "compare", "text": "x"})
    for text, words in BAD:  # one page, five inputs: each rerun says what is wrong
        at.text_input(key="exp_text").set_value(text).run()
        clean(at)
        said = values(at.info) + values(at.warning)
        assert any(words in v for v in said), (text, said)


def test_an_export_without_the_experiment_graphs_names_the_command_that_adds_them(monkeypatch, tmp_path):
    root = tmp_path / "models"
    shutil.copytree(app_models_root() / "translate", root / "translate",
                    ignore=shutil.ignore_patterns("*_experiment.*", "logit_lens.*"))
    at = open_app(monkeypatch, root, PAGE, {"exp": "lens", "text": TEXT})
    assert not at.exception
    assert any("--if-stale" in e for e in values(at.error)), values(at.error)
    at.radio(key="exp_exp").set_value("compare").run()  # the served graphs still do edit-and-compare
    clean(at)


def test_a_sentence_the_model_must_cut_says_so(monkeypatch):
    at = open_page(monkeypatch, {"exp": "compare", "text": "Das Wetter ist heute schön und warm. " * 8})
    clean(at)
    assert any("Input too long" in v for v in values(at.warning))


@pytest.fixture(scope="module")
def experiment_model():
    return engine.ExperimentModel(app_models_root() / "translate")


def test_the_logit_lens_draws_the_engines_numbers(monkeypatch, experiment_model):
    at = open_page(monkeypatch, {"exp": "lens", "text": TEXT, "position": "2"})
    clean(at)
    lens = engine.logit_lens(experiment_model, experiment_model.sentence(TEXT, "de", "en"), k=5)
    cells = figure(at, "The finally chosen token's probability")
    np.testing.assert_allclose([c["v"] for c in cells], lens.chosen_prob.T.ravel(), atol=1e-5)
    assert [c["rank"] for c in cells] == lens.chosen_rank.T.ravel().tolist()
    assert any(lens.normalisation in v for v in values(at.markdown))


def test_knocking_out_heads_and_the_grid_draw_the_engines_numbers(monkeypatch, experiment_model):
    at = open_page(monkeypatch, {"exp": "knockout", "text": TEXT, "heads": "dec_cross.1.2", "ablation": "zero"})
    clean(at)
    sentence = experiment_model.sentence(TEXT, "de", "en")
    result = engine.knockout(experiment_model, sentence, [engine.Head("dec_cross", 0, 1)], "zero")
    points = figure(at, "The original translation: each token")
    np.testing.assert_allclose([p["v"] for p in points if p["series"] == "heads knocked out"],
                               result.original_log_probs, atol=1e-4)
    at.button(key="exp_grid").click().run()
    clean(at)
    grid = engine.head_importance(experiment_model, sentence, "zero")
    cells = figure(at, "Log-prob drop when one head alone is removed")
    expected = np.concatenate([grid.drop[kind].ravel() for kind in ("enc_self", "dec_self", "dec_cross")])
    np.testing.assert_allclose([c["v"] for c in cells], expected, atol=1e-4)
    at.button(key="exp_top").click().run()  # the three heads that matter most, knocked out together
    clean(at)
    top = [link.Head(h.kind, h.layer + 1, h.head + 1) for h, _ in grid.ranked()[:3]]
    assert at.multiselect(key="exp_heads").value == top
    assert dict(at.query_params)["heads"] in (",".join(h.key() for h in top), [",".join(h.key() for h in top)])


def test_occlusion_draws_the_engines_numbers_beside_attention(monkeypatch, experiment_model):
    at = open_page(monkeypatch, {"exp": "occlusion", "text": TEXT, "position": "1"})
    clean(at)
    row = engine.occlusion(experiment_model, experiment_model.sentence(TEXT, "de", "en"), "mask").row(1)
    np.testing.assert_allclose([b["v"] for b in figure(at, "Occlusion:")], row.drop, atol=1e-4)
    np.testing.assert_allclose([b["v"] for b in figure(at, "Cross-attention from")],
                               row.attention, atol=1e-5)
    assert any(f"{row.spearman:+.2f}" in v for v in values(at.markdown))


def test_the_classifiers_experiments_draw_the_engines_numbers(monkeypatch):
    cem = engine.ClassifierExperimentModel(app_models_root() / "sentiment")
    review = cem.review(REVIEW)
    at = open_page(monkeypatch, {"model": "sentiment", "exp": "occlusion", "text": REVIEW})
    clean(at)
    assert at.radio(key="exp_exp").options == ["Knock out heads", "Which words the label needed",
                                               "Patch activations", "Attribute the label"]
    occ = engine.classify_occlusion(cem, review, "mask")
    np.testing.assert_allclose([b["v"] for b in figure(at, "Occlusion:")], occ.drop, atol=1e-4)
    np.testing.assert_allclose([b["v"] for b in figure(at, "Attention each piece receives")], occ.attention,
                               atol=1e-5)
    at.radio(key="exp_exp").set_value("knockout").run()
    at.multiselect(key="exp_heads").set_value([link.Head("enc_self", 1, 2)]).run()
    clean(at)
    result = engine.classify_knockout(cem, review, [engine.Head("enc_self", 0, 1)], "zero")
    shown = figure(at, "Each label's probability")
    np.testing.assert_allclose([b["v"] for b in shown if b["series"] == "heads knocked out"], result.probs, atol=1e-5)
    assert dict(at.query_params)["heads"] in ("enc_self.1.2", ["enc_self.1.2"])


def shown_label(before: str, radio) -> str:
    """The option a browser's radio shows after a run: the one the server sent (set_value), else the label it
    showed before; a label not among the new options shows none, and the next click sends it back anyway."""
    return radio.proto.raw_value if radio.proto.set_value else before


def test_the_experiment_survives_a_model_switch(monkeypatch):
    """Issue 44.1: translator, occlusion, then the classifier: the radio showed no choice while occlusion's
    results stayed, and the next edit fell back to "Knock out heads" (exp=knockout in the URL)."""
    at = open_page(monkeypatch, {"exp": "occlusion", "text": TEXT})
    clean(at)
    before = link.EXPERIMENTS["occlusion"]
    at.radio(key="exp_model").set_value("sentiment").run()
    clean(at)
    radio = at.radio(key="exp_exp")
    assert radio.value == "occlusion"
    assert shown_label(before, radio) == link.CLASSIFIER_EXPERIMENTS["occlusion"]  # what the browser now shows
    at.text_input(key="exp_text").input("a dull, slow film").run()
    clean(at)
    assert at.radio(key="exp_exp").value == "occlusion"
    assert dict(at.query_params)["exp"] in ("occlusion", ["occlusion"])
    assert figure(at, "Occlusion: how much less probable “")  # the classifier's occlusion, drawn


def test_each_model_gets_its_own_experiment_back_after_a_switch(monkeypatch):
    """Issue 49.12: the logit lens at a position, the classifier, then the translator again: the page showed "Knock
    out heads" (the lens and its position lost). Each model keeps its experiment and that experiment's settings."""
    at = open_page(monkeypatch, {"exp": "lens", "text": TEXT, "position": "2"})
    clean(at)
    assert at.selectbox(key="exp_position").value == 2
    at.radio(key="exp_model").set_value("sentiment").run()
    clean(at)
    review = at.text_input(key="exp_text").value
    at.radio(key="exp_exp").set_value("occlusion").run()  # the classifier's own choice, kept for it in turn
    clean(at)
    at.radio(key="exp_model").set_value("translate:de-en").run()
    clean(at)
    radio = at.radio(key="exp_exp")
    assert radio.value == "lens" and shown_label("", radio) == link.EXPERIMENTS["lens"]  # what the browser shows
    assert at.selectbox(key="exp_position").value == 2 and at.text_input(key="exp_text").value == TEXT
    assert url_of(at) == {"model": "translate:de-en", "text": TEXT, "exp": "lens", "position": "2"}
    assert figure(at, "The finally chosen token's probability")  # the lens, drawn
    at.radio(key="exp_model").set_value("sentiment").run()
    clean(at)
    assert at.radio(key="exp_exp").value == "occlusion" and at.text_input(key="exp_text").value == review
    assert figure(at, "Occlusion: how much less probable “")


def url_of(at: AppTest) -> dict[str, str]:
    return {k: v[0] if isinstance(v, list) else v for k, v in dict(at.query_params).items()}


def page_words(at: AppTest) -> str:
    return " ".join(values(at.title) + values(at.markdown) + values(at.caption) + values(at.info)
                    + values(at.warning))


def test_the_classifiers_experiments_speak_of_the_classifier(monkeypatch):
    """Issue 44.6: "Attention says where the decoder looked" under "Experiments on the translator"."""
    at = open_page(monkeypatch, {"model": "sentiment", "exp": "occlusion", "text": REVIEW})
    clean(at)
    assert values(at.title) == ["Experiments on the sentiment classifier"]
    words = page_words(at)
    assert "Attention says where the classifier looked" in words
    assert "decoder" not in words and "translat" not in words.replace("Translator DE", ""), words
    at.radio(key="exp_model").set_value("translate:de-en").run()
    assert values(at.title) == ["Experiments on the translator"]


def test_edit_and_compare_with_b_still_a_says_there_is_nothing_to_compare(monkeypatch):
    """Issue 44.5: on page load (B = A) it said "the largest move is +0.000 (out of 1) at ‘▁He’ → ‘<2en>’" above
    an empty map."""
    at = open_page(monkeypatch, {"exp": "compare", "text": TEXT})
    clean(at)
    assert any("nothing to compare" in i for i in values(at.info)), values(at.info)
    assert not at.get("vega_lite_chart") and "largest move" not in page_words(at)
