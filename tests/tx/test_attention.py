"""attention() and MultiHeadAttention against PyTorch's own implementations."""
import pytest
import torch
import torch.nn.functional as F

import tx


def qkv(b=2, h=4, t=5, s=7, k=8):
    return torch.randn(b, h, t, k), torch.randn(b, h, s, k), torch.randn(b, h, s, k)


@pytest.mark.parametrize("mask_kind", ["none", "padding", "causal", "random"])
def test_attention_matches_sdpa(mask_kind):
    q, k, v = qkv(t=7)
    mask = {
        "none": None,
        "padding": tx.key_mask(torch.tensor([[True] * 7, [True] * 4 + [False] * 3])),
        "causal": tx.causal_mask(7),
        "random": torch.rand(2, 4, 7, 7) > 0.3,
    }[mask_kind]
    if mask is not None:
        mask = mask | torch.eye(7, dtype=torch.bool)  # every row keeps a key, so SDPA is well-defined
    out, weights = tx.attention(q, k, v, mask)
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    torch.testing.assert_close(out, ref, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 4, 7), atol=1e-5, rtol=0)
    if mask is not None:
        assert (weights[~mask.expand_as(weights)] == 0).all()


def test_fast_path_matches_explicit_path_with_weights():
    q, k, v = qkv()
    mask = tx.key_mask(torch.tensor([[True] * 7, [True] * 3 + [False] * 4]))
    out, _ = tx.attention(q, k, v, mask)
    torch.testing.assert_close(tx.fast_attention(q, k, v, mask), out, atol=1e-5, rtol=1e-5)


def test_fully_masked_rows_give_zeros_not_nan():
    q, k, v = qkv()
    mask = torch.zeros(2, 1, 1, 7, dtype=torch.bool)
    mask[0, ..., :3] = True  # sentence 0 has keys, sentence 1 has none
    out, weights = tx.attention(q, k, v, mask)
    fast = tx.fast_attention(q, k, v, mask)
    for o in (out, fast):
        assert not torch.isnan(o).any()
        assert (o[1] == 0).all()
    assert (weights[1] == 0).all()
    torch.testing.assert_close(fast, out, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("need_weights", [False, True])
def test_multihead_attention_matches_torch(need_weights):
    d, h = 32, 4
    ours = tx.MultiHeadAttention(d, h).eval()
    ref = torch.nn.MultiheadAttention(d, h, batch_first=True).eval()
    with torch.no_grad():
        ref.in_proj_weight.copy_(torch.cat([ours.w_q.weight, ours.w_k.weight, ours.w_v.weight]))
        ref.in_proj_bias.copy_(torch.cat([ours.w_q.bias, ours.w_k.bias, ours.w_v.bias]))
        ref.out_proj.weight.copy_(ours.w_o.weight)
        ref.out_proj.bias.copy_(ours.w_o.bias)
    x, mem = torch.randn(3, 6, d), torch.randn(3, 9, d)
    keep = torch.ones(3, 9, dtype=torch.bool)
    keep[1, 5:] = False
    out, w = ours(x, mem, mem, tx.key_mask(keep), need_weights=need_weights)
    ref_out, ref_w = ref(x, mem, mem, key_padding_mask=~keep, need_weights=True, average_attn_weights=False)
    torch.testing.assert_close(out, ref_out, atol=1e-5, rtol=1e-5)
    if need_weights:
        torch.testing.assert_close(w, ref_w, atol=1e-5, rtol=1e-5)
    else:
        assert w is None


def test_heads_must_divide_width():
    with pytest.raises(ValueError, match="divisible"):
        tx.MultiHeadAttention(30, 4)
    with pytest.raises(ValueError, match="divisible"):
        tx.Seq2SeqConfig(d_model=30, n_heads=4)


def test_causal_mask_with_past_offsets_queries():
    m = tx.causal_mask(2, past_len=3)[0, 0]
    assert m.tolist() == [[True, True, True, True, False], [True, True, True, True, True]]
    assert torch.equal(tx.causal_mask(4)[0, 0], torch.ones(4, 4, dtype=torch.bool).tril())
