"""The Experiments page's "Attribute a token" (issue 50) on the tiny exported test models (tests/app_fixtures.py):
the scores and deletion curves drawn are the engine's (occlusion, rollout, deletion) and tx's (the gradient
methods), the completeness error and the benchmark's verdict are said, without PyTorch the page keeps occlusion and
rollout and names the extra to install, the link reopens it (a position past the end is corrected, and said), and
bad input gets words."""
from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pytest
from app_fixtures import app_models_root, clean, open_app, values
from streamlit.testing.v1 import AppTest

from playground.experiments import attribution_contrast, attribution_torch, report
from runtime import experiments as engine
from runtime.experiments import deletion
from runtime.experiments.rollout import classifier_rollout, translation_rollout

pytestmark = pytest.mark.exports

PAGE = "pages/9_Experiments.py"
TEXT = "Das Wetter ist heute schön."
BENCH = {"measured": "2026-11-28", "set": "a test set", "names": {"occlusion": "occlusion", "rollout": "rollout"},
         "directions": {"de-en": {"sentences": 3, "methods": {"occlusion": {"mean": 0.2, "se": 0.01},
                                                               "rollout": {"mean": 0.4, "se": 0.02},
                                                               "random": {"mean": 0.5, "se": 0.03}}}}}


@pytest.fixture(scope="module")
def root():
    path = app_models_root()
    (path / "translate" / "experiments").mkdir(exist_ok=True)
    (path / "translate" / "experiments" / "attribution.json").write_text(json.dumps(BENCH), encoding="utf-8")
    return path


def charts(at: AppTest) -> dict[str, list[dict]]:
    """Every chart's rows, by its title's first line."""
    out = {}
    for chart in at.get("vega_lite_chart"):
        title = json.loads(chart.proto.spec)["title"]
        out[(title if isinstance(title, list) else [title])[0]] = pa.ipc.open_stream(
            chart.proto.data.data).read_all().to_pylist()
    return out


def words(at: AppTest) -> str:
    return " ".join(values(at.markdown) + values(at.info) + values(at.warning) + values(at.caption))


def test_every_method_is_drawn_with_the_engines_numbers(monkeypatch, root):
    at = open_app(monkeypatch, root, PAGE, {"exp": "attribute", "text": TEXT, "position": "1"})
    clean(at)
    model = engine.ExperimentModel(root / "translate")
    sentence = model.sentence(TEXT, "de", "en")
    positions = deletion.source_positions(sentence)
    occ = engine.occlusion(model, sentence, "mask").row(1).drop
    rollout = translation_rollout(engine.attention_maps(model, sentence)).source[1, positions]
    drawn = charts(at)
    scores = next(rows for title, rows in drawn.items() if title.startswith("Each method's scores"))
    by_method = {}
    for row in scores:
        by_method.setdefault(row["x"], []).append(row["raw"])
    assert list(by_method) == ["occlusion", "saliency", "input×grad", "IG", "rollout"]
    np.testing.assert_allclose(by_method["occlusion"], occ, atol=1e-5)
    np.testing.assert_allclose(by_method["rollout"], rollout, atol=1e-5)
    curves = next(rows for title, rows in drawn.items() if title.startswith("Deleting pieces"))
    want = deletion.deletion_curves(model, sentence, 1, {
        "occlusion": deletion.order_from_scores(positions, occ), "random": deletion.random_order(positions, 0)})
    for method, name in (("occlusion", "occlusion"), ("random", "random order")):
        drawn_probs = [row["v"] for row in curves if row["method"] == name]
        np.testing.assert_allclose(drawn_probs, want[method].probs, atol=1e-5)
    said = words(at)
    assert "completeness error" in said and "Over 3 held-out sentences" in said and "**occlusion** best" in said
    assert at.query_params["exp"] == "attribute" and at.query_params["position"] == "1"  # the link reopens it


def test_a_refined_integral_says_each_pass_and_its_error(monkeypatch, root):
    """Where IG's first 64 steps miss the target error, tx doubles them; the page says every pass's error and the
    last one's steps (a target of 1e-12 forces the refinement on the tiny model, capped at 256 steps)."""
    import functools

    import tx.attribution

    monkeypatch.setattr(tx.attribution, "AttributionConfig",
                        functools.partial(tx.attribution.AttributionConfig, target_error=1e-12, max_steps=256))
    attribution_torch._attribute.clear()
    try:
        at = open_app(monkeypatch, root, PAGE, {"exp": "attribute", "text": TEXT, "position": "1"})
        clean(at)
    finally:
        attribution_torch._attribute.clear()  # the other tests' numbers are the default config's
    said = words(at)
    assert "Integrated gradients: 256 steps (refined because the completeness error was over 1%: 64 steps gave " \
           in said and ", 128 steps gave " in said


def test_without_pytorch_occlusion_and_rollout_stay_and_the_extra_is_named(monkeypatch, root):
    monkeypatch.setattr(attribution_torch, "unavailable", lambda: "PyTorch is not installed here: pip install x")
    at = open_app(monkeypatch, root, PAGE, {"exp": "attribute", "text": TEXT, "position": "0"})
    clean(at)
    scores = next(rows for title, rows in charts(at).items() if title.startswith("Each method's scores"))
    assert sorted({row["x"] for row in scores}) == ["occlusion", "rollout"]
    assert "PyTorch is not installed here" in words(at)


def test_a_position_past_the_end_is_corrected_and_bad_input_gets_words(monkeypatch, root):
    at = open_app(monkeypatch, root, PAGE, {"exp": "attribute", "text": TEXT, "position": "999"})
    clean(at)
    assert "past this translation's last token" in words(at)
    at.text_input(key="exp_text").set_value("   ").run()
    clean(at)
    assert not at.get("vega_lite_chart") and at.info


def test_the_classifier_attributes_its_label_with_the_engines_numbers(monkeypatch, root):
    review_text = "a gem of a film, warm and funny"
    at = open_app(monkeypatch, root, PAGE, {"model": "sentiment", "exp": "attribute", "text": review_text})
    clean(at)
    model = engine.ClassifierExperimentModel(root / "sentiment")
    review = model.review(review_text)
    ids = np.array([review.ids])
    rollout = classifier_rollout(model.run(ids, np.ones_like(ids, dtype=bool))["enc_self_weights"][:, 0])
    drawn = charts(at)
    scores = next(rows for title, rows in drawn.items() if title.startswith("Each method's scores"))
    by_method = {}
    for row in scores:
        by_method.setdefault(row["x"], []).append(row["raw"])
    assert len(by_method) == 5 and len(by_method["saliency"]) == len(review.ids)
    np.testing.assert_allclose(by_method["occlusion"], engine.classify_occlusion(model, review).drop, atol=1e-5)
    np.testing.assert_allclose(by_method["rollout"], rollout, atol=1e-5)
    assert any(title.startswith("Deleting pieces") for title in drawn)
    assert "completeness error" in words(at) and f"says **{review.label}**" in words(at)


def test_the_target_prefix_is_drawn_with_the_librarys_numbers_and_in_its_csv(monkeypatch, root):
    at = open_app(monkeypatch, root, PAGE, {"exp": "attribute", "text": TEXT, "position": "2"})
    clean(at)
    model = engine.ExperimentModel(root / "translate")
    sentence = model.sentence(TEXT, "de", "en")
    want = attribution_torch.translation(sentence.src_ids, sentence.tgt_in_ids, 2, sentence.output_ids[2])
    drawn = charts(at)
    prefix = next(rows for title, rows in drawn.items() if title.startswith("The target prefix's scores"))
    by_method: dict[str, list] = {}
    for row in prefix:
        by_method.setdefault(row["x"], []).append(row)
    assert list(by_method) == ["saliency", "input×grad", "IG"]  # occlusion and rollout have none over the prefix
    labels = [row["y"] for row in by_method["IG"]]
    assert labels == [f"{i} {p}" for i, p in enumerate(["<s>", *sentence.output_pieces[:2]])]
    for method, short in (("saliency", "saliency"), ("input_x_gradient", "input×grad"),
                          ("integrated_gradients", "IG")):
        np.testing.assert_allclose([row["raw"] for row in by_method[short]], want["prefix"][method], atol=1e-5)
    # one scale for the source's figure and the prefix's: each method divided by its largest |score| over both
    source = next(rows for title, rows in drawn.items() if title.startswith("Each method's scores"))
    for short in ("saliency", "input×grad", "IG"):
        both = [row for row in [*source, *prefix] if row["x"] == short]
        top = max(abs(row["raw"]) for row in both)
        np.testing.assert_allclose([row["v"] for row in both], [row["raw"] / top for row in both], atol=1e-4)
    csv_text = report.csv({"data": {"values": prefix}}).decode()  # the figure's CSV download: the rows it draws
    assert csv_text.splitlines()[0] == "x,y,v,raw" and len(csv_text.splitlines()) == 1 + 3 * 3
    assert "rollout reads the source's path alone" not in words(at)  # said only when there are no prefix scores
    assert any("have no scores here" in c for c in values(at.caption))


def test_without_pytorch_the_prefix_is_said_to_need_the_gradient_methods(monkeypatch, root):
    monkeypatch.setattr(attribution_torch, "unavailable", lambda: "PyTorch is not installed here: pip install x")
    at = open_app(monkeypatch, root, PAGE, {"exp": "attribute", "text": TEXT, "position": "1"})
    clean(at)
    assert not any(title.startswith("The target prefix") for title in charts(at))
    assert "No scores over the target prefix" in words(at)


def gradient_scores(at: AppTest) -> dict[str, list[float]]:
    scores = next(rows for title, rows in charts(at).items() if title.startswith("Each method's scores"))
    by_method: dict[str, list[float]] = {}
    for row in scores:
        by_method.setdefault(row["x"], []).append(row["raw"])
    return by_method


def test_rather_than_b_passes_the_contrast_says_what_it_means_and_the_link_keeps_it(monkeypatch, root):
    model = engine.ExperimentModel(root / "translate")
    sentence = model.sentence(TEXT, "de", "en")
    served = engine.logit_lens(model, sentence).log_probs[-1, 1]  # (V,) the last layer's: the served distribution
    offered = model.tokenizer.tokens(attribution_contrast.alternatives(served, sentence.output_ids[1]))
    b = offered[1]
    at = open_app(monkeypatch, root, PAGE, {"exp": "attribute", "text": TEXT, "position": "1", "rather": b})
    clean(at)
    choice = at.selectbox(key="exp_rather")
    assert choice.options[1:] == [f"{p}  (p = {np.exp(served[model.tokenizer.token_to_id(p)]):.3g})"
                                  for p in offered] and choice.value == b
    positions = deletion.source_positions(sentence)
    a = sentence.output_pieces[1]
    want = attribution_torch.translation(sentence.src_ids, sentence.tgt_in_ids, 1, sentence.output_ids[1],
                                         model.tokenizer.token_to_id(b))
    plain = attribution_torch.translation(sentence.src_ids, sentence.tgt_in_ids, 1, sentence.output_ids[1])
    drawn = gradient_scores(at)
    np.testing.assert_allclose(drawn["IG"], want["scores"]["integrated_gradients"][positions], atol=1e-5)
    assert not np.allclose(drawn["IG"], plain["scores"]["integrated_gradients"][positions], atol=1e-5)
    assert f"log p(“{a}”) − log p(“{b}”)" in words(at)
    assert at.query_params["rather"] == b  # the link keeps B
    choice.set_value("").run()  # back to none: log p(A) alone, and the link drops B
    clean(at)
    np.testing.assert_allclose(gradient_scores(at)["IG"], plain["scores"]["integrated_gradients"][positions],
                               atol=1e-5)
    assert "rather" not in at.query_params and "rather than" not in words(at)


@pytest.mark.parametrize("bad, said", [("zz-no-such-piece", "is not a piece of this model's vocabulary"),
                                       (None, "is token A at position 1")])
def test_a_links_bad_b_is_corrected_with_words(monkeypatch, root, bad, said):
    bad = bad or engine.ExperimentModel(root / "translate").sentence(TEXT, "de", "en").output_pieces[1]
    at = open_app(monkeypatch, root, PAGE, {"exp": "attribute", "text": TEXT, "position": "1", "rather": bad})
    clean(at)
    assert said in " ".join(values(at.warning)) and at.selectbox(key="exp_rather").value == ""
    assert "rather" not in at.query_params


def test_the_classifier_contrasts_its_label_with_the_other(monkeypatch, root):
    review_text = "a gem of a film, warm and funny"
    review = engine.ClassifierExperimentModel(root / "sentiment").review(review_text)
    other = next(label for label in review.labels if label != review.label)
    at = open_app(monkeypatch, root, PAGE, {"model": "sentiment", "exp": "attribute", "text": review_text,
                                            "rather": other})
    clean(at)
    want = attribution_torch.classification(review.ids, review.label_index, review.labels.index(other))
    plain = attribution_torch.classification(review.ids, review.label_index)
    np.testing.assert_allclose(gradient_scores(at)["IG"], want["scores"]["integrated_gradients"], atol=1e-5)
    assert not np.allclose(gradient_scores(at)["IG"], plain["scores"]["integrated_gradients"], atol=1e-5)
    assert f"the logit of “{review.label}” minus the logit of “{other}”" in words(at)
    assert at.query_params["rather"] == other
    at = open_app(monkeypatch, root, PAGE, {"model": "sentiment", "exp": "attribute", "text": review_text,
                                            "rather": review.label})
    clean(at)
    assert "is not another label of this classifier" in " ".join(values(at.warning))
