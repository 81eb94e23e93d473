"""The training recipe, checked piece by piece (paper §3, §5.3, §5.4), so that a wrong recipe fails here.

A model can be exact at inference and still be trained wrongly: Adam's betas, the learning-rate
schedule, label smoothing and dropout never show in an eval-mode forward pass. Each test names
the paper's formula and computes it by hand. `tests/test_mutations.py` (slow) plants each wrong
recipe in a copy of the code and checks that a test in this file fails.
"""
from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
import torch.nn.functional as F
from conftest import tiny_classifier, tiny_seq2seq
from torch import nn

import tx
from tx.layers import FeedForward, PositionalEncoding, Residual
from tx.tasks import PretrainConfig, SentimentConfig, SentimentTask, TranslateConfig, TranslateTask
from tx.trainer import TrainConfig, Trainer


# --- the whole model against torch.nn.Transformer --------------------------------------------------------------------
def copy_attention(ours: tx.MultiHeadAttention, theirs: nn.MultiheadAttention) -> None:
    """nn.MultiheadAttention packs W_q, W_k, W_v into one (3D, D) matrix."""
    theirs.in_proj_weight.copy_(torch.cat([ours.w_q.weight, ours.w_k.weight, ours.w_v.weight]))
    theirs.in_proj_bias.copy_(torch.cat([ours.w_q.bias, ours.w_k.bias, ours.w_v.bias]))
    theirs.out_proj.weight.copy_(ours.w_o.weight)
    theirs.out_proj.bias.copy_(ours.w_o.bias)


def copy_linear(ours: nn.Linear | nn.LayerNorm, theirs: nn.Linear | nn.LayerNorm) -> None:
    theirs.weight.copy_(ours.weight)
    theirs.bias.copy_(ours.bias)


def reference_transformer(model: tx.Seq2SeqTransformer) -> nn.Transformer:
    """torch.nn.Transformer with `model`'s weights (ReLU, no dropout, batch-first, same LN placement)."""
    c = model.config
    ref = nn.Transformer(d_model=c.d_model, nhead=c.n_heads, num_encoder_layers=c.n_layers,
                         num_decoder_layers=c.n_decoder_layers, dim_feedforward=c.d_ff, dropout=0.0,
                         activation="relu", batch_first=True, norm_first=c.pre_norm).eval()
    if not c.pre_norm:  # nn.Transformer always ends each stack with a LayerNorm; the paper's post-LN does not
        ref.encoder.norm, ref.decoder.norm = None, None
    with torch.no_grad():
        for ours, theirs in zip(model.encoder.layers, ref.encoder.layers, strict=True):
            copy_attention(ours.self_attn, theirs.self_attn)
            copy_linear(ours.feed_forward.net[0], theirs.linear1)
            copy_linear(ours.feed_forward.net[3], theirs.linear2)
            copy_linear(ours.res_attn.norm, theirs.norm1)
            copy_linear(ours.res_ff.norm, theirs.norm2)
        for ours, theirs in zip(model.decoder.layers, ref.decoder.layers, strict=True):
            copy_attention(ours.self_attn, theirs.self_attn)
            copy_attention(ours.cross_attn, theirs.multihead_attn)
            copy_linear(ours.feed_forward.net[0], theirs.linear1)
            copy_linear(ours.feed_forward.net[3], theirs.linear2)
            copy_linear(ours.res_self.norm, theirs.norm1)
            copy_linear(ours.res_cross.norm, theirs.norm2)
            copy_linear(ours.res_ff.norm, theirs.norm3)
        if c.pre_norm:
            copy_linear(model.encoder.norm, ref.encoder.norm)
            copy_linear(model.decoder.norm, ref.decoder.norm)
    return ref


@pytest.mark.parametrize("pre_norm", [False, True], ids=["post-LN", "pre-LN"])
def test_whole_model_equals_torch_nn_transformer(pre_norm):
    model = tiny_seq2seq(pre_norm=pre_norm, share=False, n_decoder_layers=3)
    ref = reference_transformer(model)
    src = torch.randint(6, 40, (3, 9))
    tgt = torch.randint(6, 40, (3, 7))
    src[0, 6:] = 0  # padding of different lengths in the source
    src[1, 4:] = 0
    with torch.no_grad():
        ours = model.decode(tgt, model.encode(src).memory, model.source_mask(src)).hidden  # (B, T, D)
        theirs = ref(model.positional(model.src_embed(src)), model.positional(model.tgt_embed(tgt)),
                     tgt_mask=nn.Transformer.generate_square_subsequent_mask(7, dtype=torch.bool),
                     src_key_padding_mask=src == 0, memory_key_padding_mask=src == 0, tgt_is_causal=True)
    torch.testing.assert_close(ours, theirs, atol=1e-5, rtol=1e-5)


# --- optimizer and schedule (paper §5.3) ---------------------------------------------------------------------------
class OneBatchTask:
    """The smallest task the trainer accepts: one fixed batch of a tiny classifier."""

    score_name = "score"

    def __init__(self):
        self.batches = [{"input_ids": torch.randint(1, 40, (4, 6)), "labels": torch.tensor([0, 1, 0, 1])}]

    def loss(self, model, batch):
        return F.cross_entropy(model(batch["input_ids"]), batch["labels"], reduction="sum"), 4

    def evaluate(self, model):
        return {"score": 0.0}

    def checkpoint_extra(self):
        return {}

    def save_model_dir(self, model, directory: Path) -> None:
        pass


def paper_lr(step: int, d_model: int, warmup: int) -> float:
    """lrate = d_model^-0.5 · min(step^-0.5, step · warmup^-1.5), step counted from 1 (paper §5.3)."""
    return d_model ** -0.5 * min(step ** -0.5, step * warmup ** -1.5)


def test_adam_hyper_parameters_are_the_papers(tmp_path):
    trainer = Trainer(TrainConfig(out_dir=str(tmp_path)), tiny_classifier(), OneBatchTask(), quiet=True)
    assert isinstance(trainer.optimizer, torch.optim.Adam)
    group = trainer.optimizer.param_groups[0]
    assert group["betas"] == (0.9, 0.98)
    assert group["eps"] == 1e-9
    assert group["weight_decay"] == 0.0


@pytest.mark.parametrize("warmup", [4, 400])
def test_learning_rate_follows_the_papers_formula_at_every_step(tmp_path, warmup):
    d_model = 512
    # With peak lr = (d_model · warmup)^-0.5 our schedule is the paper's formula exactly.
    config = TrainConfig(out_dir=str(tmp_path), lr=(d_model * warmup) ** -0.5, warmup_steps=warmup)
    trainer = Trainer(config, tiny_classifier(), OneBatchTask(), quiet=True)
    steps = sorted({1, 2, warmup // 2, warmup - 1, warmup, warmup + 1, 2 * warmup, 10 * warmup, 100 * warmup})
    seen = {}
    for step in range(1, max(steps) + 1):
        if step in steps:
            seen[step] = trainer.optimizer.param_groups[0]["lr"]  # the lr the step-th update uses
        trainer.scheduler.step()
    for step in steps:
        assert seen[step] == pytest.approx(paper_lr(step, d_model, warmup), rel=1e-9), f"step {step}"


def test_training_steps_use_the_scheduled_rate_and_clip(tmp_path):
    warmup = 4
    config = TrainConfig(out_dir=str(tmp_path), lr=0.01, warmup_steps=warmup, clip_grad=0.5)
    trainer = Trainer(config, tiny_classifier(dropout=0.0), OneBatchTask(), quiet=True)
    for step in range(1, 8):
        assert trainer.optimizer.param_groups[0]["lr"] == pytest.approx(0.01 * min(step / warmup,
                                                                                   math.sqrt(warmup / step)))
        trainer.train_step(trainer.task.batches[0])
    # clipping: the global gradient norm seen by the last update was at most clip_grad
    norm = torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in trainer.model.parameters()
                                                 if p.grad is not None]))
    assert norm <= 0.5 + 1e-6


# --- label smoothing (paper §5.4) ----------------------------------------------------------------------------------
class FixedLogits(nn.Module):
    """A "model" whose logits are given: the loss can then be computed by hand."""

    def __init__(self, logits: torch.Tensor):
        super().__init__()
        self.logits = logits

    def forward(self, *_):
        return self.logits


def smoothed_nll(logits: torch.Tensor, target: int, eps: float) -> float:
    """−Σ_v q(v) log p(v) with q = (1 − ε) on the target plus ε/V on every class (pad included, as PyTorch's
    label_smoothing spreads it; the deviation from the Annotated Transformer is documented in tx.trainer)."""
    logp = logits.double().log_softmax(-1)
    vocab = logits.numel()
    return float(-(1 - eps) * logp[target] - eps / vocab * logp.sum())


def test_translation_loss_is_label_smoothed_by_hand_and_skips_padding():
    torch.manual_seed(3)
    logits = torch.randn(2, 3, 7)  # (B, T, V)
    labels = torch.tensor([[4, 2, 0], [5, 0, 0]])  # 0 = <pad>: three positions carry no loss
    task = SimpleNamespace(cfg=SimpleNamespace(label_smoothing=0.1), tokenizer=SimpleNamespace(pad_id=0))
    total, count = TranslateTask.loss(task, FixedLogits(logits), {"src_ids": None, "tgt_ids": None, "labels": labels})
    by_hand = sum(smoothed_nll(logits[b, t], int(labels[b, t]), 0.1) for b, t in [(0, 0), (0, 1), (1, 0)])
    assert count == 3
    assert float(total) == pytest.approx(by_hand, rel=1e-5)


def test_classifier_loss_is_label_smoothed_by_hand():
    torch.manual_seed(4)
    logits = torch.randn(3, 2)
    labels = torch.tensor([1, 0, 1])
    task = SimpleNamespace(cfg=SimpleNamespace(label_smoothing=0.1), tokenizer=SimpleNamespace(pad_id=0))
    batch = {"input_ids": torch.randint(1, 9, (3, 4)), "labels": labels}
    total, count = SentimentTask.loss(task, FixedLogits(logits), batch)
    assert count == 3
    assert float(total) == pytest.approx(sum(smoothed_nll(logits[i], int(labels[i]), 0.1) for i in range(3)),
                                         rel=1e-5)


def test_recipe_defaults_are_the_papers():
    """ε_ls = 0.1 and P_drop = 0.1 for the translator (paper §5.4); the MLM loss is not smoothed."""
    assert TrainConfig().label_smoothing == 0.1
    assert TranslateConfig().label_smoothing == 0.1 and TranslateConfig().model.dropout == 0.1
    assert SentimentConfig().label_smoothing == 0.1
    assert PretrainConfig().label_smoothing == 0.0
    assert TrainConfig().clip_grad > 0


# --- dropout placement (paper §5.4: each sublayer's output, and the sums of embeddings and encodings) ---------------
def zero_share(x: torch.Tensor) -> float:
    return float((x == 0).float().mean())


def test_dropout_applies_to_embeddings_plus_positional_encoding():
    pe = PositionalEncoding(64, 32, dropout=0.5).train()
    out = pe(torch.ones(8, 32, 64))  # x + PE is never exactly 0, so every zero is a dropped unit
    assert 0.4 < zero_share(out) < 0.6
    assert zero_share(pe.eval()(torch.ones(8, 32, 64))) == 0.0


@pytest.mark.parametrize("pre_norm", [False, True])
def test_residual_drops_the_sublayer_output_not_the_stream(pre_norm):
    torch.manual_seed(0)
    res = Residual(16, dropout=1.0, pre_norm=pre_norm).train()  # p = 1: the sublayer's output is dropped whole
    x = torch.randn(2, 5, 16)
    with torch.no_grad():
        res.norm.weight.uniform_(0.5, 1.5)
        res.norm.bias.uniform_(-0.5, 0.5)
    y = torch.randn(2, 5, 16)  # not constant along D: LayerNorm would cancel a constant shift
    out = res(x, lambda h: y)
    torch.testing.assert_close(out, x if pre_norm else res.norm(x))
    res.eval()
    torch.testing.assert_close(res(x, lambda h: y), x + y if pre_norm else res.norm(x + y))


def dropout_calls(model: nn.Module, run) -> dict[str, float]:
    """Run `run()` in train mode and return {module name: p} of every nn.Dropout that was called."""
    calls: dict[str, float] = {}
    hooks = [m.register_forward_hook(lambda mod, *_, name=name: calls.__setitem__(name, mod.p))
             for name, m in model.named_modules() if isinstance(m, nn.Dropout)]
    model.train()
    try:
        run()
    finally:
        for h in hooks:
            h.remove()
    return calls


def test_the_translator_applies_dropout_where_the_paper_says():
    model = tiny_seq2seq(dropout=0.1, n_layers=2)
    src, tgt = torch.randint(6, 40, (2, 5)), torch.randint(6, 40, (2, 4))
    calls = dropout_calls(model, lambda: model(src, tgt))
    expected = {"positional.dropout"}  # embeddings + PE, for the source and for the target (one module)
    for i in range(2):
        expected |= {f"encoder.layers.{i}.res_attn.dropout", f"encoder.layers.{i}.res_ff.dropout",
                     f"decoder.layers.{i}.res_self.dropout", f"decoder.layers.{i}.res_cross.dropout",
                     f"decoder.layers.{i}.res_ff.dropout"}
    missing = expected - set(calls)
    assert not missing, f"dropout never applied at {sorted(missing)}"
    assert all(calls[name] == 0.1 for name in expected), {n: calls[n] for n in expected}


def test_the_classifier_applies_dropout_to_embeddings_sublayers_and_the_pooled_vector():
    model = tiny_classifier(dropout=0.3)
    calls = dropout_calls(model, lambda: model(torch.randint(6, 40, (2, 5))))
    expected = {"positional.dropout", "dropout"} | {f"encoder.layers.{i}.{r}.dropout" for i in range(2)
                                                    for r in ("res_attn", "res_ff")}
    assert expected <= set(calls), sorted(expected - set(calls))
    assert all(calls[name] == 0.3 for name in expected)


def test_attention_weights_are_dropped_in_training_only():
    attn = tx.MultiHeadAttention(16, 2, dropout=1.0)
    x = torch.randn(2, 3, 16)
    attn.train()
    out, _ = attn(x, x, x)
    torch.testing.assert_close(out, attn.w_o.bias.expand_as(out))  # every weight dropped: only W^O's bias is left
    attn.eval()
    assert not torch.allclose(attn(x, x, x)[0], attn.w_o.bias.expand_as(out))


# --- the feed-forward network (paper §3.3) --------------------------------------------------------------------------
def test_feed_forward_is_max_0_then_linear_by_hand():
    torch.manual_seed(1)
    ffn = FeedForward(8, 32, dropout=0.0).eval()
    x = torch.randn(3, 8)
    w1, b1 = ffn.net[0].weight, ffn.net[0].bias
    w2, b2 = ffn.net[3].weight, ffn.net[3].bias
    inner = x @ w1.T + b1
    assert (inner < 0).any(), "the check needs negative pre-activations"
    torch.testing.assert_close(ffn(x), inner.clamp(min=0) @ w2.T + b2)


def test_every_layers_feed_forward_has_the_relu():
    model = tiny_seq2seq()
    for layer in [*model.encoder.layers, *model.decoder.layers]:
        ffn = layer.feed_forward
        x = torch.randn(4, model.config.d_model)
        expected = F.relu(x @ ffn.net[0].weight.T + ffn.net[0].bias) @ ffn.net[3].weight.T + ffn.net[3].bias
        torch.testing.assert_close(ffn(x), expected)
