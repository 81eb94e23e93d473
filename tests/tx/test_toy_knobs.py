"""The two ablation knobs of EncoderConfig (positional encoding, the 1/√d_k scaling): off by choice only, and when
off they really change what the model computes."""
from dataclasses import asdict

import torch
import torch.nn.functional as F

import tx
from tx.config import Seq2SeqConfig


def small(**knobs) -> tx.Seq2SeqTransformer:
    torch.manual_seed(0)
    return tx.Seq2SeqTransformer(Seq2SeqConfig(vocab_size=20, d_model=16, n_heads=2, n_layers=1, d_ff=32,
                                               dropout=0.0, max_len=16, **knobs)).eval()


def test_defaults_are_the_papers_and_old_configs_still_load():
    config = Seq2SeqConfig()
    assert config.positional and config.scale_scores
    old = {k: v for k, v in asdict(config).items() if k not in ("positional", "scale_scores")}  # a checkpoint's
    assert Seq2SeqConfig(**old) == config


def test_unscaled_attention_is_softmax_of_plain_dot_products():
    q, k, v = torch.randn(2, 3, 4, 8), torch.randn(2, 3, 5, 8), torch.randn(2, 3, 5, 8)
    out, weights = tx.attention(q, k, v, scale=1.0)
    by_hand = (q @ k.transpose(-2, -1)).softmax(-1)
    torch.testing.assert_close(weights, by_hand)
    torch.testing.assert_close(out, by_hand @ v)
    torch.testing.assert_close(tx.fast_attention(q, k, v, scale=1.0), out, atol=1e-5, rtol=1e-5)
    mask = tx.key_mask(torch.tensor([[True] * 5, [True] * 2 + [False] * 3]))
    torch.testing.assert_close(tx.fast_attention(q, k, v, mask, scale=1.0), tx.attention(q, k, v, mask, scale=1.0)[0],
                               atol=1e-5, rtol=1e-5)
    default, _ = tx.attention(q, k, v)
    torch.testing.assert_close(default, F.scaled_dot_product_attention(q, k, v))


def test_scale_knob_reaches_every_attention_and_changes_the_output():
    scaled, unscaled = small(), small(scale_scores=False)
    unscaled.load_state_dict(scaled.state_dict())
    heads = [m for m in unscaled.modules() if isinstance(m, tx.MultiHeadAttention)]
    assert len(heads) == 3 and all(m.scale == 1.0 for m in heads)
    assert all(m.scale is None for m in scaled.modules() if isinstance(m, tx.MultiHeadAttention))
    src, tgt = torch.tensor([[3, 4, 5, 6]]), torch.tensor([[1, 7, 8]])
    assert not torch.allclose(scaled(src, tgt), unscaled(src, tgt), atol=1e-4)
    # the explicit path (what the ONNX export traces) and the fused one agree with the knob off too
    memory = unscaled.encode(src).memory
    torch.testing.assert_close(unscaled.encode(src, need_weights=True).memory, memory, atol=1e-5, rtol=1e-5)


def test_without_positions_the_encoder_cannot_tell_order():
    src = torch.tensor([[3, 4, 5, 6, 7]])
    flipped = src.flip(1)
    bag = small(positional=False)
    torch.testing.assert_close(bag.encode(flipped).memory, bag.encode(src).memory.flip(1), atol=1e-5, rtol=1e-5)
    ordered = small()
    assert not torch.allclose(ordered.encode(flipped).memory, ordered.encode(src).memory.flip(1), atol=1e-3)
    # the classifier's encoder takes the knob too
    clf = tx.SentimentClassifier(tx.ClassifierConfig(vocab_size=20, d_model=16, n_heads=2, n_layers=1, d_ff=32,
                                                     dropout=0.0, max_len=16, positional=False)).eval()
    torch.testing.assert_close(clf(flipped), clf(src), atol=1e-5, rtol=1e-5)
