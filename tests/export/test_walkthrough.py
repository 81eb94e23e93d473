"""The walkthrough graphs: every intermediate tensor the Walkthrough page shows equals what the PyTorch model
computes at that point (captured with forward hooks on the model's own modules), the shown numbers follow from one
another (softmax of the shown scores = the shown weights, ...), and the last step's distribution is the served
decoder step's."""
from __future__ import annotations

import dataclasses
import math
import shutil

import numpy as np
import onnxruntime as ort
import pytest
import torch
from conftest import tiny_seq2seq
from export_fixtures import GERMAN, REVIEWS, exported, fresh_copy

from export.onnx_export import DEFAULT_OPSET
from export.pipeline import export_graphs
from export.validate import max_difference
from playground.walkthrough.tensors import softmax_check
from runtime.model_files import ModelLoadError
from runtime.onnx_models import OnnxSentimentClassifier
from runtime.spec import ModelShape, walkthrough_graphs
from runtime.walkthrough import ClassifierWalkthrough, TranslationWalkthrough
from tx import load_model_dir

pytestmark = pytest.mark.exports

ATOL = 1e-4  # fp32 onnxruntime vs PyTorch, as the export's own validation


@pytest.fixture(scope="module")
def translation():
    model_dir = exported("translate")
    walkthrough = TranslationWalkthrough(model_dir)
    return walkthrough, walkthrough.run(GERMAN[2], "de", "en", max_len=12), load_model_dir(model_dir)


@pytest.fixture(scope="module")
def classification():
    model_dir = exported("sentiment")
    return ClassifierWalkthrough(model_dir), load_model_dir(model_dir)


def capture(modules: dict[str, torch.nn.Module]) -> tuple[dict[str, torch.Tensor], list]:
    """Forward hooks that keep each named module's output (the first element when it returns a tuple)."""
    seen: dict[str, torch.Tensor] = {}
    handles = []
    for name, module in modules.items():
        def keep(_module, _inputs, output, name=name):
            seen[name] = (output[0] if isinstance(output, tuple) else output).detach()
        handles.append(module.register_forward_hook(keep))
    return seen, handles


def layer_hooks(prefix: str, layers, attention: str, residual: str) -> dict[str, torch.nn.Module]:
    """Per layer: the query projection, W_O, the ReLU, the norm after the attention sublayer, the layer itself."""
    modules = {}
    for i, layer in enumerate(layers):
        mha = getattr(layer, attention)
        modules |= {f"{prefix}{i}.q": mha.w_q, f"{prefix}{i}.out": mha.w_o,
                    f"{prefix}{i}.relu": layer.feed_forward.net[1], f"{prefix}{i}.norm": getattr(layer, residual).norm,
                    f"{prefix}{i}.layer": layer}
    return modules


def close(got: np.ndarray, want: torch.Tensor, what: str) -> None:
    want = want.numpy()
    assert got.shape == want.shape, f"{what}: shape {got.shape}, PyTorch {want.shape}"
    assert np.abs(got - want).max() <= ATOL, f"{what}: max |onnx - torch| = {np.abs(got - want).max():.2e}"


def heads(x: torch.Tensor, n_heads: int) -> torch.Tensor:
    b, t, d = x.shape
    return x.view(b, t, n_heads, d // n_heads).transpose(1, 2)[0]  # (1, T, D) -> (H, T, K)


@torch.inference_mode()
def test_every_encoder_step_equals_the_pytorch_model(translation):
    _, trace, model = translation
    src = torch.tensor([trace.src_ids])
    keep = torch.ones_like(src, dtype=torch.bool)
    seen, handles = capture(layer_hooks("enc", model.encoder.layers, "self_attn", "res_attn"))
    try:
        encoded = model.encode(src, keep, need_weights=True)
    finally:
        for h in handles:
            h.remove()
    e, heads_n = trace.encoder, model.config.n_heads
    close(e["src_embed"], model.src_embed.table(src)[0], "embedding rows")
    close(e["src_embed_scaled"], model.src_embed(src)[0], "× √d_model")
    close(e["src_positions"], model.positional.pe[:src.size(1)], "positional encoding")
    close(e["src_x0"], model.positional(model.src_embed(src))[0], "embedding + PE")
    for i in range(model.config.n_layers):
        close(e["enc_self_q"][i], heads(seen[f"enc{i}.q"], heads_n), f"layer {i} Q")
        close(e["enc_self_weights"][i], encoded.weights[i][0], f"layer {i} attention weights")
        close(e["enc_self_out"][i], seen[f"enc{i}.out"][0], f"layer {i} W_O output")
        close(e["enc_self_stream"][i], seen[f"enc{i}.norm"][0], f"layer {i} residual + LayerNorm")
        close(e["enc_ff_hidden"][i], seen[f"enc{i}.relu"][0], f"layer {i} ReLU units")
        close(e["enc_ff_stream"][i], seen[f"enc{i}.layer"][0], f"layer {i} output")
    close(e["memory"], encoded.memory[0], "memory")


@torch.inference_mode()
def test_every_decoder_step_equals_the_pytorch_model(translation):
    _, trace, model = translation
    src, tgt = torch.tensor([trace.src_ids]), torch.tensor([trace.tgt_in_ids])
    keep = torch.ones_like(src, dtype=torch.bool)
    memory = model.encode(src, keep).memory
    seen, handles = capture({**layer_hooks("self", model.decoder.layers, "self_attn", "res_self"),
                             **{f"cross{i}.q": layer.cross_attn.w_q for i, layer in enumerate(model.decoder.layers)}})
    try:
        decoded = model.decode(tgt, memory, keep, need_weights=True)
    finally:
        for h in handles:
            h.remove()
    d, heads_n = trace.decoder, model.config.n_heads
    for i in range(model.config.n_decoder_layers):
        close(d["dec_self_q"][i], heads(seen[f"self{i}.q"], heads_n), f"layer {i} self-attention Q")
        close(d["dec_cross_q"][i], heads(seen[f"cross{i}.q"], heads_n), f"layer {i} cross-attention Q")
        close(d["dec_self_weights"][i], decoded.weights["self"][i][0], f"layer {i} causal weights")
        close(d["dec_cross_weights"][i], decoded.weights["cross"][i][0], f"layer {i} cross weights")
        close(d["dec_ff_hidden"][i], seen[f"self{i}.relu"][0], f"layer {i} ReLU units")
        close(d["dec_ff_stream"][i], seen[f"self{i}.layer"][0], f"layer {i} output")
    logits = model.generator(decoded.hidden)[0]
    close(d["logits"], logits, "logits")
    close(d["log_probs"], logits.log_softmax(-1), "log-probabilities")


def test_the_last_step_is_the_served_decoder_step_and_greedy_took_its_top_token(translation):
    walkthrough, trace, _ = translation
    backend = walkthrough.translator.backend
    state = backend.encode(np.array([trace.src_ids]), np.ones((1, len(trace.src_ids)), dtype=bool))
    for t, token in enumerate(trace.tgt_in_ids):
        log_probs, state = backend.step(np.array([token]), state)  # the lean KV-cache graph the app serves
        assert np.abs(trace.decoder["log_probs"][t] - log_probs[0]).max() <= ATOL, f"position {t}"
        if t < len(trace.output_ids):
            assert int(trace.decoder["log_probs"][t].argmax()) == trace.output_ids[t]


def test_another_token_at_one_position_then_greedy(translation):
    walkthrough, trace, _ = translation
    same = walkthrough.alternative(trace, 1, trace.output_ids[1], max_len=12)  # greedy's own choice: the same
    assert same.output_ids == trace.output_ids
    assert same.log_prob == pytest.approx(same.greedy_log_prob, abs=1e-4)
    second_best = int(np.argsort(-trace.decoder["log_probs"][1])[1])
    other = walkthrough.alternative(trace, 1, second_best, max_len=12)
    assert other.output_ids[:2] == [trace.output_ids[0], second_best]
    backend = walkthrough.translator.backend  # the score is the model's own log-probability of that output
    state = backend.encode(np.array([trace.src_ids]), np.ones((1, len(trace.src_ids)), dtype=bool))
    total, last, best = 0.0, walkthrough.tokenizer.bos_id, []
    for token in other.output_ids:
        log_probs, state = backend.step(np.array([last]), state)
        total, last = total + float(log_probs[0, token]), token
        best.append(int(log_probs[0].argmax()))
    assert other.log_prob == pytest.approx(total, abs=1e-4)
    assert other.output_ids[2:] == best[2:]  # after the forced token: the most probable one at every step
    with pytest.raises(ValueError, match="outside the output"):
        walkthrough.alternative(trace, len(trace.output_ids) + 1, 5)


def test_the_shown_numbers_follow_from_one_another(translation, classification):
    _, trace, model = translation
    for tensors, prefix in ((trace.encoder, "enc_self"), (trace.decoder, "dec_self"), (trace.decoder, "dec_cross")):
        for layer in range(len(tensors[f"{prefix}_scores"])):
            part = {name.removeprefix(f"{prefix}_"): value[layer] for name, value in tensors.items()
                    if name.startswith(f"{prefix}_")}
            d_k = part["q"].shape[-1]
            np.testing.assert_allclose(part["scores"], part["q"] @ np.swapaxes(part["k"], -1, -2), atol=1e-4)
            np.testing.assert_allclose(part["scaled"], part["scores"] / math.sqrt(d_k), rtol=1e-5, atol=1e-6)
            assert softmax_check(part["masked"], part["weights"]) < 1e-5
            np.testing.assert_allclose(part["context"], part["weights"] @ part["v"], atol=1e-5)
            concat = np.swapaxes(part["context"], 0, 1).reshape(part["context"].shape[1], -1)  # (H, T, K) -> (T, D)
            np.testing.assert_allclose(part["concat"], concat, atol=1e-6)
            np.testing.assert_allclose(part["sum"], part["in"] + part["out"], atol=1e-5)  # post-LN: in = stream
            masked = ~np.isfinite(part["masked"])
            if prefix == "dec_self":  # −∞ exactly above the diagonal: a position never sees a later one
                t = masked.shape[-1]
                assert (masked == np.triu(np.ones((t, t), dtype=bool), 1)).all()
            else:
                assert not masked.any()  # one unpadded sentence: nothing to mask
    steps = classification[0].run(REVIEWS[0][1]).steps
    config = classification[1].config
    pool = steps["encoded"].max(axis=0) if config.pooling == "max" else steps["encoded"].mean(axis=0)
    np.testing.assert_allclose(steps["pooled"], pool, atol=1e-6)
    temperature = config.temperature
    np.testing.assert_allclose(steps["logits"], steps["head_logits"] / temperature, rtol=1e-5)
    probs = np.exp(steps["logits"] - steps["logits"].max())
    np.testing.assert_allclose(steps["probs"], probs / probs.sum(), atol=1e-6)


def test_the_classifier_walkthrough_gives_the_served_probabilities(classification):
    walkthrough, _ = classification
    served = OnnxSentimentClassifier(exported("sentiment")).classify([text for _, text in REVIEWS])
    for (_, text), prediction in zip(REVIEWS, served, strict=True):
        trace = walkthrough.run(text)
        assert trace.pieces == prediction.tokens
        np.testing.assert_allclose(trace.steps["probs"], [prediction.probs[label] for label in trace.labels],
                                   atol=1e-5)


def test_bad_input_and_long_input(translation, classification):
    walkthrough, _, _ = translation
    with pytest.raises(ValueError, match="empty text"):
        walkthrough.run("   ", "de", "en")
    long = walkthrough.run(" ".join(GERMAN * 10), "de", "en", max_len=3)
    assert long.truncated and len(long.src_ids) == walkthrough.translator.max_src_len
    assert long.encoder["memory"].shape[0] == len(long.src_ids)
    emoji = classification[0].run("🙂🙂 ✈️")
    assert emoji.steps["probs"].shape == (2,)


def test_a_model_directory_without_the_walkthrough_graphs_says_how_to_make_them():
    model_dir = fresh_copy("translate", "no-walkthrough")
    (model_dir / "onnx" / "decoder_walkthrough.fp32.onnx").unlink()
    with pytest.raises(ModelLoadError, match=r"python -m export .* --if-stale"):
        TranslationWalkthrough(model_dir)


def test_max_difference_counts_equal_infinities_as_equal_and_nan_as_failure():
    inf = np.float32("-inf")
    assert max_difference(np.array([inf, 1.0]), np.array([inf, 1.5])) == 0.5
    assert not max_difference(np.array([inf, 1.0]), np.array([0.0, 1.0])) <= 1e-4  # −∞ vs a number fails
    assert np.isnan(max_difference(np.array([np.nan]), np.array([np.nan])))


@pytest.mark.slow
def test_if_stale_adds_the_walkthrough_graphs_to_an_older_export_without_redoing_the_served_ones():
    from export.__main__ import main

    model_dir = fresh_copy("sentiment", "older-export")
    onnx_dir = model_dir / "onnx"
    (onnx_dir / "classifier_walkthrough.fp32.onnx").unlink()
    served = {p.name: p.stat().st_mtime_ns for p in onnx_dir.glob("classifier*.onnx")}
    assert main([str(model_dir), "--if-stale"]) == 0
    assert (onnx_dir / "classifier_walkthrough.fp32.onnx").is_file()
    assert {p.name: p.stat().st_mtime_ns for p in onnx_dir.glob("classifier*.onnx") if "walkthrough" not in p.name} \
        == served
    ClassifierWalkthrough(model_dir).run(REVIEWS[0][1])  # the added graph loads and runs
    assert main([str(model_dir), "--if-stale"]) == 0  # now up to date
    shutil.rmtree(model_dir)


@pytest.mark.slow
@torch.inference_mode()
def test_a_pre_ln_model_walks_through_too(tmp_path):
    """Pre-LN puts the norm before each sublayer and one more after the stack: the walkthrough's `in` is then the
    normed stream and the memory / hidden state carry the final norm."""
    model = tiny_seq2seq(pre_norm=True)
    stored = {"kind": "seq2seq", "config": dataclasses.asdict(model.config)}
    shape = ModelShape.from_config("seq2seq", stored["config"])
    jobs = [(spec, ["fp32"]) for spec in walkthrough_graphs(shape)]
    entries, failures = export_graphs(model, stored["config"], tmp_path, jobs, None, "", DEFAULT_OPSET, lambda _: None)
    assert not failures and all(e["ok"] for e in entries)
    src, tgt = torch.tensor([[7, 8, 9, 10, 2]]), torch.tensor([[1, 11, 12, 13]])
    keep = torch.ones_like(src, dtype=torch.bool)
    encoder = ort.InferenceSession(str(tmp_path / "encoder_walkthrough.fp32.onnx"))
    e = dict(zip([o.name for o in encoder.get_outputs()], encoder.run(None, {"src_ids": src.numpy(),
                                                                              "src_mask": keep.numpy()}), strict=True))
    memory = model.encode(src, keep).memory
    np.testing.assert_allclose(e["memory"], memory.numpy(), atol=ATOL)
    normed = model.encoder.layers[0].res_attn.norm(model.positional(model.src_embed(src)))
    np.testing.assert_allclose(e["enc_self_in"][0], normed.numpy(), atol=ATOL)  # LayerNorm(x) enters the sublayer
    np.testing.assert_allclose(e["enc_self_stream"][0], e["enc_self_sum"][0], atol=1e-6)  # no norm after the sum
    decoder = ort.InferenceSession(str(tmp_path / "decoder_walkthrough.fp32.onnx"))
    d = dict(zip([o.name for o in decoder.get_outputs()], decoder.run(None, {
        "tgt_ids": tgt.numpy(), "memory": memory.numpy(), "src_mask": keep.numpy()}), strict=True))
    logits = model.generator(model.decode(tgt, memory, keep).hidden)
    np.testing.assert_allclose(d["log_probs"], logits.log_softmax(-1).numpy(), atol=ATOL)
