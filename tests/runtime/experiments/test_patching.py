"""runtime.experiments' activation patching against the experiment graphs of the same tiny model (no torch here:
every grid cell against PyTorch hooks is tests/export/test_patching.py): with nothing patched the patching graphs
are the experiment graphs; patching nothing gives 0 and patching everything gives 1; a re-translation patched with
the whole clean memory is the clean translation; lengths that differ align as the rule says; bad input gets words.

The tiny model is untrained (it translates everything alike), so the tests choose the metric's position and tokens."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from export_fixtures import GERMAN, REVIEWS, exported, fresh_copy

from runtime.experiments import (
    ClassifierExperimentModel,
    ExperimentModel,
    Patch,
    classify_patching,
    decoder_residual_grid,
    encoder_residual_grid,
    head_grid,
    memory_grid,
    patch_pair,
    retranslate,
    review_pair,
)
from runtime.experiments.classifier_patching import classify_evaluate, run_rows
from runtime.experiments.patching import choose_metric, decoder_feeds, encoder_feeds, evaluate, run
from runtime.model_files import ModelLoadError

pytestmark = pytest.mark.exports

ATOL = 1e-5  # the patching graphs vs the experiment graphs: the same operations, nothing patched
CLEAN, CORRUPTED = GERMAN[2], GERMAN[2].replace("heute", "morgen")  # the same number of pieces (18)
LONGER = GERMAN[2].replace("heute", "heute sehr")  # more pieces: only the common start and end align
CHOSEN = {"position": 2, "token_b": 50}


@pytest.fixture(scope="module")
def model():
    return ExperimentModel(exported("translate"))


@pytest.fixture(scope="module")
def pair(model):
    return patch_pair(model, CLEAN, CORRUPTED, max_len=8, **CHOSEN)


def test_with_nothing_patched_the_patching_graphs_are_the_experiment_graphs(model, pair):
    rng = np.random.default_rng(0)
    src = pair.corrupted.src_ids
    # values anywhere, where = 0: the values must not leak in
    values = {site: rng.standard_normal(v.shape).astype(np.float32) for site, v in pair.values.items()}
    memory, resid, heads = run(model, "encoder_patch", encoder_feeds(model, src, 2, values),
                               ["memory", "resid", "enc_self_heads"])
    want = model.encode(np.array([src, src]), np.ones((2, len(src)), bool))
    np.testing.assert_allclose(memory, want["memory"], atol=ATOL)
    np.testing.assert_allclose(heads, want["enc_self_context"].transpose(1, 0, 2, 3, 4), atol=ATOL)
    assert resid.shape == (2, 3, len(src), 32)
    states, dec_self = run(model, "decoder_patch", decoder_feeds(model, pair.target_in, memory, values),
                           ["states", "dec_self_heads"])
    want = model.decode(np.array([pair.target_in] * 2), memory, np.ones((2, len(src)), bool))
    np.testing.assert_allclose(states, want["layer_states"][-1], atol=ATOL)
    np.testing.assert_allclose(dec_self, want["dec_self_context"].transpose(1, 0, 2, 3, 4), atol=ATOL)


def test_patching_nothing_gives_0_and_patching_everything_gives_1(model, pair):
    assert abs(pair.clean_value - pair.corrupted_value) > 1e-2  # a gap worth normalising by
    last = model.shape.n_layers
    rows = [[], [Patch("memory")], [Patch("enc_resid", 0)], [Patch("enc_resid", last)],
            [Patch("dec_resid", model.shape.n_decoder_layers, -1, pair.metric.position)],
            [Patch("enc_self", layer, head) for layer in range(2) for head in range(4)] + [Patch("enc_resid", 0)]]
    normalised = (evaluate(model, pair, rows) - pair.corrupted_value) / (pair.clean_value - pair.corrupted_value)
    np.testing.assert_allclose(normalised, [0, 1, 1, 1, 1, 1], atol=1e-4)
    # a patch that cannot act (the decoder's embeddings: both runs read the same target) also gives 0
    assert decoder_residual_grid(model, pair).normalised[0] == pytest.approx(np.zeros(len(pair.target_in)), abs=1e-4)


def test_each_grid_has_its_shape_and_counts_its_progress(model, pair):
    seen = []
    grid = encoder_residual_grid(model, pair, progress=lambda done, total: seen.append((done, total)))
    assert grid.raw.shape == (3, len(pair.corrupted.src_ids)) and not np.isnan(grid.raw).any()
    assert seen and seen[-1][0] == seen[-1][1] and [d for d, _ in seen] == list(range(1, len(seen) + 1))
    assert "he→or" in grid.columns  # the differing pieces, clean → corrupted
    assert head_grid(model, pair, "dec_cross").raw.shape == (2, 4)
    memory = memory_grid(model, pair)
    assert memory.raw.shape == (1, len(pair.corrupted.src_ids) + 1) and memory.normalised[0, -1] == pytest.approx(1)
    assert decoder_residual_grid(model, pair).raw.shape == (3, CHOSEN["position"] + 1)


def test_a_retranslation_patched_with_the_whole_clean_memory_is_the_clean_translation(model, pair):
    unpatched = retranslate(model, pair, None)
    assert unpatched.output_ids == pair.corrupted.output_ids and unpatched.label == "nothing patched"
    patched = retranslate(model, pair, Patch("memory"))
    assert patched.output_ids == pair.clean.output_ids
    assert patched.clean == pair.clean.translation and patched.corrupted == pair.corrupted.translation


def test_sources_of_different_lengths_patch_only_the_aligned_positions(model):
    pair = patch_pair(model, CLEAN, LONGER, max_len=8, **CHOSEN)
    assert "only the common start" in pair.note and not pair.aligned.all()
    grid = encoder_residual_grid(model, pair)
    assert np.isnan(grid.raw[:, ~pair.aligned]).all() and not np.isnan(grid.raw[:, pair.aligned]).any()
    assert grid.note == pair.note
    with pytest.raises(ValueError, match="no such aligned position"):
        evaluate(model, pair, [[Patch("enc_resid", 0, -1, int(np.flatnonzero(~pair.aligned)[0]))]])


def test_the_default_metric_is_the_first_position_where_the_translations_differ(model, pair):
    clean = dataclasses.replace(pair.clean, output_ids=[10, 11, 12, 2], output_pieces=["a", "b", "c", "</s>"])
    corrupted = dataclasses.replace(pair.corrupted, output_ids=[10, 11, 13, 2])
    metric = choose_metric(model, clean, corrupted, None, None, None)
    assert (metric.position, metric.token_a, metric.token_b) == (2, 12, 13)
    assert "by default: the first position where the two translations differ" in metric.description
    with pytest.raises(ValueError, match="same output"):
        choose_metric(model, clean, clean, None, None, None)


def test_bad_input_gets_a_clear_message(model):
    cases = [((CLEAN, CLEAN), {}, "the same pieces"), ((CLEAN, "  "), {}, "empty"),
             ((CLEAN, CORRUPTED), {}, "same output"),  # the untrained model: both translate alike
             ((CLEAN, CORRUPTED), {"position": 99}, "outside the clean translation"),
             ((CLEAN, CORRUPTED), {"position": 1}, "choose token B"),
             ((CLEAN, CORRUPTED), {"position": 1, "token_b": 10**6}, "outside the vocabulary"),
             ((GERMAN[0], GERMAN[1]), CHOSEN, "no position aligns")]
    for texts, kwargs, message in cases:
        with pytest.raises(ValueError, match=message):
            patch_pair(model, *texts, max_len=8, **kwargs)
    pair = patch_pair(model, CLEAN, CORRUPTED, max_len=8, **CHOSEN)
    with pytest.raises(ValueError, match="unknown attention kind"):
        head_grid(model, pair, "cross")
    with pytest.raises(ValueError, match="unknown patch site"):
        evaluate(model, pair, [[Patch("mlp", 0)]])
    with pytest.raises(ValueError, match="no such layer or head"):
        evaluate(model, pair, [[Patch("dec_self", 5, 0)]])


def test_a_model_directory_without_the_patching_graphs_says_how_to_make_them():
    model_dir = fresh_copy("translate", "no-patching")
    (model_dir / "onnx" / "decoder_patch.fp32.onnx").unlink()
    with pytest.raises(ModelLoadError, match=r"python -m export .* --if-stale"):
        patch_pair(ExperimentModel(model_dir), CLEAN, CORRUPTED)


# ---------------------------------------------------------------- the classifier
@pytest.fixture(scope="module")
def classifier():
    return ClassifierExperimentModel(exported("sentiment"))


def test_the_classifiers_patching_graph_is_its_experiment_graph_with_nothing_patched(classifier):
    review = classifier.review(REVIEWS[0][1])
    rng = np.random.default_rng(1)
    shape = classifier.shape
    values = {"enc_resid": rng.standard_normal((3, len(review.ids), shape.d_model)).astype(np.float32),
              "enc_self": rng.standard_normal((2, 2, len(review.ids), shape.head_dim)).astype(np.float32)}
    (logits,) = run_rows(classifier, review.ids, 2, values)
    ids = np.array([review.ids] * 2)
    np.testing.assert_allclose(logits, classifier.run(ids, np.ones_like(ids, bool))["logits"], atol=ATOL)


def test_classifier_patching_gives_0_for_nothing_1_for_everything_and_both_grids(classifier):
    clean, corrupted = REVIEWS[0][1], REVIEWS[0][1].replace("warm", "cold")
    pair = review_pair(classifier, clean, REVIEWS[0][1].replace("funny", "sunny"))
    assert pair.note is None  # the same number of pieces
    values = classify_evaluate(classifier, pair, [[], [Patch("enc_resid", 0)], [Patch("enc_resid", 2)]])
    np.testing.assert_allclose((values - pair.corrupted_value) / (pair.clean_value - pair.corrupted_value),
                               [0, 1, 1], atol=1e-4)
    seen = []
    result = classify_patching(classifier, clean, corrupted, progress=lambda d, t: seen.append((d, t)))
    assert "only the common start" in result.pair.note and seen[-1][0] == seen[-1][1]
    assert result.heads.raw.shape == (2, 2) and result.residual.raw.shape == (3, len(result.pair.corrupted.ids))
    assert np.isnan(result.residual.raw[:, ~result.pair.aligned]).all()
    labels = result.pair.clean.labels
    assert result.pair.description.startswith(f"logit('{labels[result.pair.class_a]}')")


def test_classifier_bad_input_gets_a_clear_message(classifier):
    text = REVIEWS[0][1]
    for args, message in [((text, text), "the same pieces"), ((text, ""), "empty"),
                          ((text, "zzz"), "no position aligns"),
                          ((text, text + " ok", "great"), "not one of this model's"),
                          ((text, text + " ok", 0, 0), "the same class")]:
        with pytest.raises(ValueError, match=message):
            review_pair(classifier, *args)
