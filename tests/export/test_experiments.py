"""The experiment graphs against the PyTorch model: a head knocked out in ONNX (the graphs' gates) equals the same
head knocked out in PyTorch by a hook on the model's own W_O (its input is the heads' outputs side by side), at every
layer, head and attention kind, zeroed and mean-ablated, in the translator and in the classifier; the reference
means are the heads' mean outputs over the reference set as PyTorch computes them; the logit lens is each decoder
layer's output through the model's own output layer."""
from __future__ import annotations

import dataclasses
import shutil

import numpy as np
import onnxruntime as ort
import pytest
import torch
from conftest import tiny_seq2seq
from export_fixtures import GERMAN, REVIEWS, exported, fresh_copy

from export.onnx_export import DEFAULT_OPSET
from export.pipeline import export_graphs
from runtime.batching import pad
from runtime.experiments import (
    ClassifierExperimentModel,
    ExperimentModel,
    Head,
    classify_head_importance,
    every_head,
    head_importance,
    knockout,
    logit_lens,
)
from runtime.experiments.reference import REFERENCE_REVIEWS, reference_examples, reference_means
from runtime.model_files import read_model_config
from runtime.spec import HEAD_KINDS, ModelShape, experiment_graphs
from tx import load_model_dir

pytestmark = pytest.mark.exports

ATOL = 1e-4  # fp32 onnxruntime vs PyTorch, as the export's own validation


@pytest.fixture(scope="module")
def setup():
    model_dir = exported("translate")
    experiments = ExperimentModel(model_dir)
    sentence = experiments.sentence(GERMAN[4], "de", "en", max_len=8)
    return experiments, sentence, load_model_dir(model_dir)


def attention_module(model, kind: str, layer: int):
    if kind == "enc_self":
        return model.encoder.layers[layer].self_attn
    decoder_layer = model.decoder.layers[layer]
    return decoder_layer.self_attn if kind == "dec_self" else decoder_layer.cross_attn


def knock_out(model, heads, fills: dict[str, np.ndarray] | None) -> list:
    """Forward pre-hooks on each head's W_O that replace the head's slice of its input (the concatenated head
    outputs, (B, T, H·K)) by zeros or by its fill."""
    handles = []
    n_heads = model.config.n_heads
    for kind, layer, head in heads:
        mha = attention_module(model, kind, layer)
        value = torch.zeros(mha.d_k) if fills is None else torch.from_numpy(fills[kind][layer, head])

        def replace(_module, args, head=head, value=value):
            b, t, d = args[0].shape
            x = args[0].reshape(b, t, n_heads, d // n_heads).clone()
            x[:, :, head] = value
            return (x.reshape(b, t, d),)
        handles.append(mha.w_o.register_forward_pre_hook(replace))
    return handles


@torch.inference_mode()
def torch_token_log_probs(model, sentence, heads=(), fills=None) -> np.ndarray:
    """The PyTorch model's log-probability of each token of the sentence's translation, teacher-forced."""
    handles = knock_out(model, heads, fills)
    try:
        logits = model(torch.tensor([sentence.src_ids]), torch.tensor([sentence.tgt_in_ids]))[0]
    finally:
        for handle in handles:
            handle.remove()
    return logits.log_softmax(-1)[torch.arange(len(sentence.output_ids)), sentence.output_ids].numpy()


@pytest.mark.parametrize("mode", ["zero", "mean"])
def test_every_head_knocked_out_in_onnx_equals_the_same_head_knocked_out_in_pytorch(setup, mode):
    experiments, sentence, model = setup
    fills = reference_means(experiments).fill if mode == "mean" else None
    grid = head_importance(experiments, sentence, mode=mode)
    base = torch_token_log_probs(model, sentence)
    assert grid.base_log_prob[0] == pytest.approx(base.sum(), abs=ATOL)
    for head in every_head(experiments):  # 3 kinds × 2 layers × 4 heads
        knocked = torch_token_log_probs(model, sentence, [head], fills)
        np.testing.assert_allclose(grid.per_token[head.kind][0][head.layer, head.head], base - knocked, atol=ATOL,
                                   err_msg=f"{head.label()} ({mode})")
    assert max(np.abs(d).max() for d in grid.drop.values()) > 1e-3  # the knock-outs did change something


@torch.inference_mode()
def test_a_knocked_out_retranslation_is_pytorchs_greedy_under_the_same_hooks(setup):
    experiments, sentence, model = setup
    heads = [Head("enc_self", 1, 2), Head("dec_self", 0, 1), Head("dec_cross", 1, 3)]
    result = knockout(experiments, sentence, heads, mode="mean")
    handles = knock_out(model, heads, reference_means(experiments).fill)
    try:
        src, tokens, log_probs = torch.tensor([sentence.src_ids]), [], []
        while len(tokens) < sentence.max_len and (not tokens or tokens[-1] != experiments.tokenizer.eos_id):
            step = model(src, torch.tensor([[experiments.tokenizer.bos_id, *tokens]]))[0, -1].log_softmax(-1)
            tokens.append(int(step.argmax()))
            log_probs.append(float(step[tokens[-1]]))
    finally:
        for handle in handles:
            handle.remove()
    assert result.output_ids == tokens
    np.testing.assert_allclose(result.token_log_probs, log_probs, atol=ATOL)


@torch.inference_mode()
def test_mean_ablation_uses_the_mean_it_claims(setup):
    """Each head's fill is its mean output (W_O's input slice) over every real position of the reference set."""
    experiments, _, model = setup
    examples = reference_examples(experiments)
    assert len(examples) == 32  # 16 pairs, both directions
    src, src_mask = (torch.from_numpy(a) for a in pad([s for s, _ in examples], 0))
    tgt, tgt_mask = (torch.from_numpy(a) for a in pad([t for _, t in examples], 0))
    seen, handles = {}, []
    for kind in HEAD_KINDS:
        for layer in range(2):
            def keep(_module, args, key=(kind, layer)):
                seen[key] = args[0]
            handles.append(attention_module(model, kind, layer).w_o.register_forward_pre_hook(keep))
    try:
        memory = model.encode(src, src_mask).memory
        model.decode(tgt, memory, src_mask)
    finally:
        for handle in handles:
            handle.remove()
    means = reference_means(experiments)
    for (kind, layer), concat in seen.items():
        mask = src_mask if kind == "enc_self" else tgt_mask
        b, t, d = concat.shape
        per_head = concat.reshape(b, t, 4, d // 4)[mask]  # (positions, H, K): real positions only
        np.testing.assert_allclose(means.fill[kind][layer], per_head.mean(0).numpy(), atol=1e-5,
                                   err_msg=f"{kind} layer {layer}")
        assert means.positions[kind] == int(mask.sum())
    assert "16 everyday DE–EN sentence pairs" in means.description


@torch.inference_mode()
def test_the_logit_lens_is_every_decoder_layers_output_through_the_models_output_layer(setup):
    experiments, sentence, model = setup
    lens = logit_lens(experiments, sentence)
    outputs = {}
    handles = [layer.register_forward_hook(lambda _m, _a, out, i=i: outputs.__setitem__(i, out[0]))
               for i, layer in enumerate(model.decoder.layers)]
    try:
        model(torch.tensor([sentence.src_ids]), torch.tensor([sentence.tgt_in_ids]))
    finally:
        for handle in handles:
            handle.remove()
    for i, out in outputs.items():
        want = model.generator(model.decoder.norm(out))[0].log_softmax(-1).numpy()
        assert np.abs(lens.log_probs[i] - want).max() <= ATOL, f"layer {i}"


@pytest.mark.parametrize("mode", ["zero", "mean"])
@torch.inference_mode()
def test_every_classifier_head_knocked_out_in_onnx_equals_the_same_in_pytorch(mode):
    model_dir = exported("sentiment")
    experiments, model = ClassifierExperimentModel(model_dir), load_model_dir(model_dir)
    review = experiments.review(REVIEWS[2][1])
    means = reference_means(experiments)
    fills = means.fill if mode == "mean" else None
    grid = classify_head_importance(experiments, review, mode)
    ids = torch.tensor([review.ids])

    def label_log_prob(heads) -> float:
        handles = [h for kind, layer, head in heads for h in knock_out_encoder(model, layer, head, fills)]
        try:
            return float(model.classify(ids, torch.ones_like(ids, dtype=torch.bool)).logits.log_softmax(-1)[
                0, review.label_index])
        finally:
            for handle in handles:
                handle.remove()
    base = label_log_prob([])
    for head in every_head(experiments):
        assert grid.per_sentence["enc_self"][0, head.layer, head.head] == pytest.approx(
            base - label_log_prob([head]), abs=ATOL), f"{head.label()} ({mode})"
    if mode == "mean":  # the means are the heads' mean outputs over the reference reviews, as PyTorch has them
        seen, handles = {}, [layer.self_attn.w_o.register_forward_pre_hook(
            lambda _m, args, i=i: seen.__setitem__(i, args[0])) for i, layer in enumerate(model.encoder.layers)]
        ids, mask = (torch.from_numpy(a) for a in pad([experiments.tokenizer.encode(t) for t in REFERENCE_REVIEWS],
                                                      0))
        try:
            model.classify(ids, mask)
        finally:
            for handle in handles:
                handle.remove()
        for layer, concat in seen.items():
            b, t, d = concat.shape
            want = concat.reshape(b, t, 2, d // 2)[mask].mean(0).numpy()
            np.testing.assert_allclose(means.fill["enc_self"][layer], want, atol=1e-5)


def knock_out_encoder(model, layer: int, head: int, fills) -> list:
    """knock_out for an encoder-only model: the hook on its encoder layer's W_O."""
    mha = model.encoder.layers[layer].self_attn
    value = torch.zeros(mha.d_k) if fills is None else torch.from_numpy(fills["enc_self"][layer, head])

    def replace(_module, args):
        b, t, d = args[0].shape
        x = args[0].reshape(b, t, mha.n_heads, mha.d_k).clone()
        x[:, :, head] = value
        return (x.reshape(b, t, d),)
    return [mha.w_o.register_forward_pre_hook(replace)]


@pytest.mark.slow
@torch.inference_mode()
def test_a_pre_ln_lens_applies_the_final_layernorm_to_every_layer(tmp_path):
    """Pre-LN: the stream between layers is not normalised; the lens puts the decoder's final LayerNorm in front of
    the projection for every layer, and the gates still act like hooks on W_O."""
    model = tiny_seq2seq(pre_norm=True)
    config = dataclasses.asdict(model.config)
    shape = ModelShape.from_config("seq2seq", config)
    # the three graphs the lens reads (the search's step graph is not needed here: an export costs ~5-9 s each)
    used = ("encoder_experiment", "decoder_experiment", "logit_lens")
    jobs = [(spec, ["fp32"]) for spec in experiment_graphs(shape) if spec.name in used]
    entries, failures = export_graphs(model, config, tmp_path, jobs, None, "", DEFAULT_OPSET, lambda _: None)
    assert not failures and all(e["ok"] for e in entries)
    sessions = {spec.name: ort.InferenceSession(str(tmp_path / spec.file_name("fp32")))
                for spec in experiment_graphs(shape) if spec.name in used}
    src, tgt = torch.tensor([[7, 8, 9, 10, 2]]), torch.tensor([[1, 11, 12, 13]])
    keep = torch.ones_like(src, dtype=torch.bool)
    gate = np.ones((1, 2, 4), dtype=np.float32)
    gate_off = gate.copy()
    gate_off[0, 1, 2] = 0.0  # dec_cross layer 1 head 2
    fill = np.zeros((2, 4, 8), dtype=np.float32)
    (memory, *_) = sessions["encoder_experiment"].run(None, {"src_ids": src.numpy(), "src_mask": keep.numpy(),
                                                              "enc_self_gate": gate, "enc_self_fill": fill})
    states = sessions["decoder_experiment"].run(["layer_states"], {
        "tgt_ids": tgt.numpy(), "memory": memory, "src_mask": keep.numpy(), "dec_self_gate": gate,
        "dec_self_fill": fill, "dec_cross_gate": gate_off, "dec_cross_fill": fill})[0]
    handles = knock_out(model, [Head("dec_cross", 1, 2)], None)
    outputs = {}
    handles += [layer.register_forward_hook(lambda _m, _a, out, i=i: outputs.__setitem__(i, out[0]))
                for i, layer in enumerate(model.decoder.layers)]
    try:
        logits = model(src, tgt)
    finally:
        for handle in handles:
            handle.remove()
    for i in range(2):
        lens = sessions["logit_lens"].run(None, {"states": states[i]})[0]
        want = model.generator(model.decoder.norm(outputs[i])).log_softmax(-1).numpy()
        np.testing.assert_allclose(lens, want, atol=ATOL)
        raw = model.generator(outputs[i]).log_softmax(-1).numpy()  # without the norm: another distribution
        assert np.abs(raw - want).max() > 1e-2
    np.testing.assert_allclose(lens, logits.log_softmax(-1).numpy(), atol=ATOL)  # last layer = the model's output


@pytest.mark.slow
def test_if_stale_adds_the_experiment_graphs_to_an_older_export_without_redoing_the_others():
    from export.__main__ import main

    model_dir = fresh_copy("translate", "older-export-experiments")
    onnx_dir = model_dir / "onnx"
    stored = read_model_config(model_dir)
    # an older export lacks them all; two missing ones (the smallest) show the same: made, and nothing else redone
    missing = [spec for spec in experiment_graphs(ModelShape.from_config("seq2seq", stored["config"]))
               if spec.name in ("encoder_experiment", "logit_lens")]
    assert len(missing) == 2
    for spec in missing:
        (onnx_dir / spec.file_name("fp32")).unlink()
    kept = {p.name: p.stat().st_mtime_ns for p in onnx_dir.glob("*.onnx")}
    assert main([str(model_dir), "--if-stale"]) == 0
    assert {p.name: p.stat().st_mtime_ns for p in onnx_dir.glob("*.onnx") if p.name in kept} == kept
    experiments = ExperimentModel(model_dir)  # the added graphs load and run
    logit_lens(experiments, experiments.sentence(GERMAN[0], max_len=4))
    assert main([str(model_dir), "--if-stale"]) == 0  # now up to date
    shutil.rmtree(model_dir)
