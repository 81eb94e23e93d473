"""runtime.experiments against the served graphs of the same tiny model (no torch here: the PyTorch parity of the
knock-outs and of the reference means is tests/export/test_experiments.py): knocking out nothing is the served
model, the logit lens's last layer is the served distribution, occlusion equals re-running the served model by hand
on the edited sources, and the head-importance batch equals one knock-out at a time."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from export_fixtures import GERMAN, exported, fresh_copy

from runtime.experiments import (
    HEAD_KINDS,
    OCCLUSION_METHODS,
    ExperimentModel,
    Head,
    attention_maps,
    every_head,
    head_importance,
    knockout,
    logit_lens,
    occlusion,
    reference_means,
    spearman,
)
from runtime.experiments import model as experiment_model
from runtime.experiments.heads import gates_for, teacher_forced
from runtime.experiments.model import one_source
from runtime.model_files import ModelLoadError

pytestmark = pytest.mark.exports

ATOL = 1e-4  # fp32 experiment graphs vs the served (fused) graphs


@pytest.fixture(scope="module")
def model():
    return ExperimentModel(exported("translate"))


@pytest.fixture(scope="module")
def sentence(model):
    return model.sentence(GERMAN[2], "de", "en", max_len=8)


def served_log_probs(model, src_ids: list[int], mask: list[bool], tgt_in: list[int]) -> np.ndarray:
    """The served KV-cache decoder stepped through tgt_in by hand: (T, V)."""
    backend = model.translator.backend
    state = backend.encode(np.array([src_ids]), np.array([mask], dtype=bool))
    rows = []
    for token in tgt_in:
        log_probs, state = backend.step(np.array([token]), state)
        rows.append(log_probs[0])
    return np.stack(rows)


def test_knocking_out_no_head_gives_the_served_output_and_log_probs(model, sentence):
    for mode in ("zero", "mean"):
        result = knockout(model, sentence, [], mode=mode)
        assert result.output_ids == sentence.output_ids and not result.changed
        np.testing.assert_allclose(result.token_log_probs, sentence.token_log_probs, atol=ATOL)
        np.testing.assert_allclose(result.original_log_probs, sentence.token_log_probs, atol=ATOL)


def test_a_knockout_retranslates_with_the_knocked_out_models_own_greedy_choices(model, sentence):
    heads = [Head("enc_self", 0, 1), Head("dec_cross", 1, 0)]
    result = knockout(model, sentence, heads, mode="zero")
    assert result.heads == heads and result.mode == "zero" and result.reference is None
    zeros = {kind: model.zeros_fill(kind) for kind in HEAD_KINDS}
    new = dataclasses.replace(sentence, output_ids=result.output_ids)
    forced = teacher_forced(model, new, gates_for(model, [heads]), zeros)[0]
    np.testing.assert_allclose(result.token_log_probs, forced, atol=ATOL)  # the scores are its own
    lens_like = model.project(model.decode(np.array([new.tgt_in_ids]), model.encode(
        *one_source(sentence), gates_for(model, [heads])["enc_self"])["memory"], one_source(sentence)[1],
        {k: gates_for(model, [heads])[k] for k in HEAD_KINDS[1:]})["layer_states"][-1])[0]
    assert lens_like.argmax(-1).tolist() == result.output_ids  # greedy: its own most probable token each time
    src, _ = one_source(sentence)
    assert result.attention["dec_cross"].shape == (2, 4, len(result.output_ids), src.shape[1])
    assert knockout(model, sentence, heads[:1], mode="mean").reference.startswith("each head's mean output")


def test_the_attention_maps_are_the_served_models(model, sentence):
    maps = attention_maps(model, sentence)
    served = model.translator.translate([sentence.text], "de", "en", method="greedy", max_len=8, attention="all")[0]
    assert served.token_ids == sentence.output_ids
    for kind, key in (("enc_self", "encoder"), ("dec_self", "self"), ("dec_cross", "cross")):
        np.testing.assert_allclose(maps[kind], np.stack(served.attention[key]), atol=ATOL, err_msg=kind)


def test_the_logit_lens_last_layer_is_the_served_distribution(model, sentence):
    lens = logit_lens(model, sentence, k=3)
    served = served_log_probs(model, sentence.src_ids, [True] * len(sentence.src_ids), sentence.tgt_in_ids)
    assert np.abs(lens.log_probs[-1] - served).max() <= ATOL
    assert (lens.chosen_rank[-1] == 1).all()  # greedy took the most probable token
    assert lens.top_ids[-1, :, 0].tolist() == sentence.output_ids
    assert lens.top_ids.shape == (2, len(sentence.output_ids), 3) and lens.layers == 2
    assert "post-LN" in lens.normalisation
    for layer in range(lens.layers):  # ranks and probabilities read off the layer's own distribution
        chosen = lens.log_probs[layer, np.arange(len(sentence.output_ids)), sentence.output_ids]
        np.testing.assert_allclose(lens.chosen_prob[layer], np.exp(chosen), rtol=1e-6)
        assert (lens.chosen_rank[layer] == 1 + (lens.log_probs[layer] > chosen[:, None]).sum(-1)).all()
        np.testing.assert_allclose(lens.top_probs[layer], np.exp(np.sort(lens.log_probs[layer], -1)[:, ::-1][:, :3]),
                                   rtol=1e-6)


def test_occlusion_equals_rerunning_the_served_model_by_hand_on_the_edited_sources(model, sentence):
    positions = np.arange(len(sentence.output_ids))
    base = served_log_probs(model, sentence.src_ids, [True] * len(sentence.src_ids), sentence.tgt_in_ids)
    base = base[positions, sentence.output_ids]
    for method in OCCLUSION_METHODS:
        result = occlusion(model, sentence, method)
        assert result.positions == list(range(1, len(sentence.src_ids) - 1))  # the text's pieces only
        np.testing.assert_allclose(result.base, base, atol=ATOL)
        for p, i in enumerate(result.positions):
            if method == "mask":  # <pad> in its place, masked out as padding is
                ids = [*sentence.src_ids[:i], model.tokenizer.pad_id, *sentence.src_ids[i + 1:]]
                keep = [j != i for j in range(len(ids))]
            else:
                ids = sentence.src_ids[:i] + sentence.src_ids[i + 1:]
                keep = [True] * len(ids)
            edited = served_log_probs(model, ids, keep, sentence.tgt_in_ids)[positions, sentence.output_ids]
            np.testing.assert_allclose(result.drop[:, p], base - edited, atol=ATOL, err_msg=f"{method} piece {i}")
        row = result.row(1)
        assert row.pieces == sentence.src_pieces[1:-1] and row.token == sentence.output_pieces[1]
        np.testing.assert_allclose(row.attention, result.attention[:, :, 1, 1:-1].mean(axis=(0, 1)), rtol=1e-6)
        assert row.spearman == pytest.approx(spearman(row.drop, row.attention))


def test_the_head_importance_batch_equals_one_knockout_at_a_time(model, sentence):
    grid = head_importance(model, [sentence, sentence], mode="mean")
    assert grid.reference and "16 everyday" in grid.reference
    fills = reference_means(model).fill
    base = teacher_forced(model, sentence, gates_for(model, [[]]), fills)[0]
    assert grid.base_log_prob == pytest.approx([base.sum()] * 2, abs=ATOL)
    for head in every_head(model)[::3]:  # every third of 24 heads: each kind, each layer
        alone = teacher_forced(model, sentence, gates_for(model, [[head]]), fills)[0]
        assert grid.per_sentence[head.kind][0, head.layer, head.head] == pytest.approx(base.sum() - alone.sum(),
                                                                                        abs=ATOL)
        np.testing.assert_allclose(grid.per_token[head.kind][1][head.layer, head.head], base - alone, atol=ATOL)
    assert {kind: d.shape for kind, d in grid.drop.items()} == {k: (2, 4) for k in ("enc_self", "dec_self",
                                                                                    "dec_cross")}
    ranked = grid.ranked()
    assert len(ranked) == 24 and ranked[0][1] == max(d.max() for d in grid.drop.values())


def test_spearman_on_known_values():
    assert spearman(np.array([1.0, 2, 3, 4]), np.array([10.0, 20, 30, 40])) == pytest.approx(1.0)
    assert spearman(np.array([1.0, 2, 3, 4]), np.array([4.0, 3, 2, 1])) == pytest.approx(-1.0)
    # ties take their mean rank: ranks (1.5, 1.5, 3) vs (1, 2, 3) -> 0.866...
    assert spearman(np.array([5.0, 5, 7]), np.array([1.0, 2, 3])) == pytest.approx(np.sqrt(3) / 2)
    assert np.isnan(spearman(np.array([1.0, 1, 1]), np.array([1.0, 2, 3])))
    assert np.isnan(spearman(np.array([1.0]), np.array([2.0])))


def test_bad_input_gets_a_clear_message(model, sentence):
    with pytest.raises(ValueError, match="unknown attention kind"):
        knockout(model, sentence, [Head("encoder", 0, 0)])
    with pytest.raises(ValueError, match=r"layers 0\.\.1 and heads 0\.\.3"):
        knockout(model, sentence, [Head("dec_cross", 2, 0)])
    with pytest.raises(ValueError, match="mode must be one of"):
        head_importance(model, sentence, mode="random")
    with pytest.raises(ValueError, match="method must be one of"):
        occlusion(model, sentence, method="blank")
    with pytest.raises(ValueError, match="outside the translation"):
        occlusion(model, sentence).row(len(sentence.output_ids))
    with pytest.raises(ValueError, match="empty text"):
        model.sentence("  ")
    with pytest.raises(ValueError, match="k must be"):
        logit_lens(model, sentence, k=0)
    with pytest.raises(ValueError, match="no sentences"):
        head_importance(model, [])


def test_a_model_directory_without_the_experiment_graphs_says_how_to_make_them():
    model_dir = fresh_copy("translate", "no-experiments")
    (model_dir / "onnx" / "logit_lens.fp32.onnx").unlink()
    with pytest.raises(ModelLoadError, match=r"python -m export .* --if-stale"):
        ExperimentModel(model_dir)


def test_decoder_runs_in_chunks_of_rows_give_the_same_numbers(model, sentence, monkeypatch):
    grid, occluded = head_importance(model, sentence), occlusion(model, sentence)
    monkeypatch.setattr(experiment_model, "DECODE_FLOATS", 1)  # one row per decoder run
    chunked, occluded_chunked = head_importance(model, sentence), occlusion(model, sentence)
    for kind in HEAD_KINDS:
        np.testing.assert_allclose(chunked.per_sentence[kind], grid.per_sentence[kind], atol=1e-5)
    np.testing.assert_allclose(occluded_chunked.drop, occluded.drop, atol=1e-5)
    np.testing.assert_allclose(occluded_chunked.attention, occluded.attention, atol=1e-6)
