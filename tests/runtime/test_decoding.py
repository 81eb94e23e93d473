"""Search algorithms on the step interface (runtime.decoding, numpy): greedy, beam search, sampling, and the PyTorch
KV-cache backends (tx.decoding)."""
import itertools
import math

import numpy as np
import pytest
import torch
from conftest import tiny_seq2seq
from decoding_fixtures import (
    EOS,
    EosRamp,
    HistoryBackend,
    assert_same_hypotheses,
    check_trace,
    gnmt_score,
    padded_batch,
)

import runtime.decoding.beam as beam_module
from runtime.decoding import beam_search, greedy, keep_top_k, keep_top_p, sample, top_k_numpy
from runtime.onnx_backend import OnnxBackend
from tx.decoding import FullPrefixBackend, TorchBackend

BOS = 1


TOP_KS = {"numpy": top_k_numpy, "onnxruntime": OnnxBackend.top_k, "torch": TorchBackend.top_k}


def one_by_one(search, backend, src, mask, **kw):
    """Run `search` on each sentence alone, without its padding."""
    out = []
    for row in range(src.shape[0]):
        n = int(mask[row].sum())
        out.extend(search(backend, src[row:row + 1, :n], mask[row:row + 1, :n], **kw))
    return out


def model_log_prob(model, src: np.ndarray, tokens: list[int]) -> float:
    """log P(tokens | src) under the model by one teacher-forced pass."""
    tgt_in = torch.tensor([[BOS] + tokens[:-1]])
    with torch.no_grad():
        log_probs = model(torch.from_numpy(src), tgt_in).log_softmax(-1)[0]  # (1, T, V) -> (T, V)
    return log_probs.gather(1, torch.tensor(tokens)[:, None]).sum().item()


def exhaustive_best(score_fn, max_len: int, alpha: float, non_eos: list[int]):
    """Best (tokens, score) over every hypothesis the beam search can return: EOS-terminated ones of
    at most max_len tokens, and unfinished ones of exactly max_len tokens."""
    candidates = [seq + (EOS,) for n in range(max_len) for seq in itertools.product(non_eos, repeat=n)]
    candidates += list(itertools.product(non_eos, repeat=max_len))
    scored = [(gnmt_score(score_fn(c), len(c), alpha), c) for c in candidates]
    score, tokens = max(scored, key=lambda x: x[0])
    return list(tokens), score


# --- greedy and beam search -------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_beam_of_one_without_length_penalty_is_greedy(seed):
    torch.manual_seed(seed)
    model = tiny_seq2seq()
    src, mask = padded_batch([7, 3, 5, 9], seed=seed)
    backend = TorchBackend(model)
    g = greedy(backend, src, mask, max_len=12)
    b = beam_search(backend, src, mask, max_len=12, beam=1, length_penalty=0.0)
    assert_same_hypotheses(g, b)


@pytest.mark.parametrize("search, kw", [
    (greedy, {}),
    (beam_search, {"beam": 3, "length_penalty": 0.6}),
    (sample, {"top_k": 1}),  # deterministic, so comparable across batchings
])
def test_batched_equals_one_by_one(search, kw):
    model = tiny_seq2seq()
    src, mask = padded_batch([9, 2, 6, 4, 11])
    backend = TorchBackend(model)
    batched = search(backend, src, mask, **kw)  # default max_len: each sentence's own length + 50
    alone = one_by_one(search, backend, src, mask, **kw)
    assert_same_hypotheses(batched, alone)


@pytest.mark.parametrize("pre_norm", [False, True])
@pytest.mark.parametrize("search, kw", [(greedy, {}), (beam_search, {"beam": 4, "length_penalty": 1.0})])
def test_cached_steps_equal_full_prefix_recompute(pre_norm, search, kw):
    model = tiny_seq2seq(pre_norm)
    src, mask = padded_batch([8, 5, 10])
    cached = search(TorchBackend(model), src, mask, max_len=20, **kw)
    recomputed = search(FullPrefixBackend(model), src, mask, max_len=20, **kw)
    assert_same_hypotheses(cached, recomputed)
    assert max(len(h.tokens) for h in cached) > 5  # long enough for the cache to matter


@pytest.mark.parametrize("alpha", [0.0, 0.6, 1.0])
def test_beam_score_is_the_models_own_probability_of_its_tokens(alpha):
    for seed in range(2):
        torch.manual_seed(seed)
        model = tiny_seq2seq()
        src, mask = padded_batch([6, 4, 9], seed=seed)
        for row, b in enumerate(beam_search(TorchBackend(model), src, mask, max_len=15, beam=4,
                                            length_penalty=alpha)):
            n = int(mask[row].sum())
            assert b.log_prob == pytest.approx(model_log_prob(model, src[row:row + 1, :n], b.tokens), abs=1e-4)
            assert b.score == pytest.approx(gnmt_score(b.log_prob, len(b.tokens), alpha), abs=1e-6)


@pytest.mark.parametrize("alpha", [0.0, 0.6, 1.0])
def test_a_beam_with_room_for_every_prefix_never_scores_below_greedy(alpha):
    """A theorem only when no prefix can be pruned (then beam search is exhaustive); a narrow beam may lose the
    greedy path, so the property is checked where it must hold."""
    backend = HistoryBackend(salt=7)
    src, mask = padded_batch([3, 5, 2], vocab=9)
    for g, b in zip(greedy(backend, src, mask, max_len=4),
                    beam_search(backend, src, mask, max_len=4, beam=48, length_penalty=alpha), strict=True):
        assert b.score >= gnmt_score(g.log_prob, len(g.tokens), alpha) - 1e-6  # float32 sums


@pytest.mark.parametrize("alpha, min_len", [(0.0, 0), (0.6, 0), (2.0, 0), (-0.5, 0), (0.6, 2)])
def test_beam_search_with_room_for_every_prefix_is_exact(alpha, min_len):
    """With a beam wide enough to keep every prefix, beam search must equal exhaustive search: checks the
    finished-hypothesis bookkeeping, the max/min length rules and that early stopping never cuts off a winner."""
    max_len = 4
    backend = HistoryBackend(salt=int(alpha * 10) + min_len)
    src, mask = padded_batch([3, 5, 2], vocab=9)
    hyps = beam_search(backend, src, mask, max_len=max_len, beam=48, length_penalty=alpha, min_len=min_len)
    for row, hyp in enumerate(hyps):
        source = tuple(src[row][mask[row]].tolist())
        tokens, score = exhaustive_best(lambda seq, s=source: backend.sequence_log_prob(s, seq, min_len),
                                        max_len, alpha, non_eos=[3, 4])
        assert hyp.tokens == tokens
        assert hyp.score == pytest.approx(score, abs=1e-5)


class LongWinsBackend(HistoryBackend):
    """EOS is the most likely first token, but once a sentence has started, token 3 is nearly certain:
    with a strong length penalty the longest hypothesis wins, though it starts behind."""

    def log_probs_after(self, source, history):
        eos_logit, token_logit = (0.0, -0.5) if not history else (0.0, 3.0)
        return torch.tensor([float("-inf")] * 2 + [eos_logit, token_logit, float("-inf")]).log_softmax(-1).numpy()


def test_early_stopping_waits_for_hypotheses_the_length_penalty_can_still_lift():
    backend = LongWinsBackend()
    src, mask = padded_batch([3])
    hyp = beam_search(backend, src, mask, max_len=10, beam=2, length_penalty=2.0)[0]
    tokens, score = exhaustive_best(lambda seq: backend.sequence_log_prob((), seq), 10, 2.0, non_eos=[3])
    assert len(tokens) == 10  # the setting really favours the long one over the early [EOS]
    assert hyp.tokens == tokens and hyp.score == pytest.approx(score, abs=1e-5)
    # what beam search ranked by, with GNMT's penalty for 10 tokens worked out by hand: ((5 + 10) / 6)² = 6.25
    assert hyp.score == pytest.approx(hyp.log_prob / 6.25, rel=1e-6)


class StepCounter:
    """Counts a backend's decoder steps (and the rows they ran)."""

    def __init__(self, backend):
        self.backend, self.steps, self.rows = backend, 0, 0

    def __getattr__(self, name):
        return getattr(self.backend, name)

    def step(self, tokens, state, attention=False):
        self.steps, self.rows = self.steps + 1, self.rows + len(tokens)
        return self.backend.step(tokens, state, attention)


def test_patience_stops_once_enough_hypotheses_finished_and_exact_search_waits():
    src, mask = padded_batch([3])
    exact, patient = StepCounter(LongWinsBackend()), StepCounter(LongWinsBackend())
    best = beam_search(exact, src, mask, max_len=10, beam=2, length_penalty=2.0)[0]
    early = beam_search(patient, src, mask, max_len=10, beam=2, length_penalty=2.0, patience=1.0)[0]
    assert len(best.tokens) == 10 and exact.steps == 10
    # [EOS] finishes at step 1 and [3, EOS] at step 2: two finished hypotheses stop a beam of 2 there
    assert patient.steps == 2 and early.tokens in ([EOS], [3, EOS]) and early.score < best.score


@pytest.mark.parametrize("salt", range(6))
def test_patience_never_decodes_more_and_a_large_one_is_the_exact_search(salt):
    src, mask = padded_batch([3, 5, 2, 4], seed=salt)
    counted = {p: StepCounter(HistoryBackend(salt)) for p in (None, 1.0, 1000.0)}
    found = {p: beam_search(b, src, mask, max_len=8, beam=3, length_penalty=0.6, patience=p)
             for p, b in counted.items()}
    assert_same_hypotheses(found[1000.0], found[None], atol=0)
    assert counted[1.0].rows <= counted[None].rows == counted[1000.0].rows


def test_beam_search_reorders_the_kv_cache_correctly():
    """A real tiny model with a 6-token vocabulary: beam search wide enough to be exact must find the
    exhaustive optimum, which it can only do if every cache row follows its beam."""
    torch.manual_seed(3)
    model = tiny_seq2seq(vocab_size=6)
    src, mask = padded_batch([4, 2], vocab=6)
    hyps = beam_search(TorchBackend(model), src, mask, max_len=3, beam=160, length_penalty=0.6)
    for row, hyp in enumerate(hyps):
        n = int(mask[row].sum())
        tokens, score = exhaustive_best(lambda seq, r=row, n=n: model_log_prob(model, src[r:r + 1, :n], list(seq)),
                                        3, 0.6, non_eos=[0, 1, 3, 4, 5])
        assert hyp.tokens == tokens
        assert hyp.score == pytest.approx(score, abs=1e-4)


def test_small_beam_keeps_history_and_backend_state_in_step_after_swaps():
    """Beam 2 on the fake model, whose state is the token history: if the search reordered the state
    differently from its own bookkeeping, the scores of the returned tokens would not add up."""
    backend = HistoryBackend(salt=7)
    src, mask = padded_batch([4, 6, 3, 5, 5, 7], vocab=9)
    # min_len keeps every sentence going long enough for beams to overtake each other
    hyps = beam_search(backend, src, mask, max_len=10, beam=2, length_penalty=0.6, min_len=4)
    for row, hyp in enumerate(hyps):
        source = tuple(src[row][mask[row]].tolist())
        assert hyp.log_prob == pytest.approx(backend.sequence_log_prob(source, tuple(hyp.tokens)), abs=1e-5)
        assert hyp.finished == (hyp.tokens[-1] == EOS)
        assert EOS not in hyp.tokens[:-1]
    assert any(idx != sorted(idx) for idx in backend.reorders)


def one_topk_candidates(scores, log_probs, k, width):
    """Reference for beam.top_candidates: each sentence's (k*V) float32 candidate scores ranked in plain Python by
    the interface's order (by value, NaN as +inf; equal values by lower row then lower token); each sentence's
    list cut at its first -inf (the search stops there, so which -inf candidates come after is not its business)."""
    n, vocab = scores.shape[0] // k, log_probs.shape[1]
    candidates = (scores.reshape(n, k)[:, :, None] + log_probs.reshape(n, k, vocab)).reshape(n, k * vocab)
    ranked = []
    for i, row in enumerate(candidates.tolist()):
        order = sorted(range(k * vocab), key=lambda j, row=row: (-math.inf if math.isnan(row[j]) else -row[j], j))
        order = order[:width]
        ranked.append([(row[j], i * k + j // vocab, j % vocab) for j in order])
    return up_to_first_dead(ranked)


def up_to_first_dead(ranked):
    """Each sentence's candidates up to its first -inf one, kept as its score alone (NaN scores as "nan",
    so that equal lists compare equal)."""
    cut = []
    for row in ranked:
        live = [("nan", *c[1:]) if math.isnan(c[0]) else c
                for c in itertools.takewhile(lambda c: c[0] != float("-inf"), row)]
        cut.append(live + ([float("-inf")] if len(live) < len(row) else []))
    return cut


SHORTLIST_CASES = ["random", "dead beams and banned tokens", "tiny vocabulary", "beam 1", "ties", "NaN and inf"]


@pytest.mark.parametrize("top_k", TOP_KS)
@pytest.mark.parametrize("case", SHORTLIST_CASES)
def test_two_stage_candidates_equal_one_topk_over_all_candidates(case, top_k, monkeypatch):
    """The shortlist (each beam's 2k+1 best tokens, then the best of those) must give the same candidates
    in the same order as one ranking of all k*V; with ties (or NaN) it must hand over to one top-k over all,
    whichever backend's top_k runs."""
    n, k, vocab = 3, 4, 50
    g = torch.Generator().manual_seed(SHORTLIST_CASES.index(case))
    if case == "tiny vocabulary":
        vocab = 3  # fewer tokens than 2k + 1: each beam's shortlist is its whole row
    if case == "beam 1":
        k = 1
    log_probs = torch.randn(n * k, vocab, generator=g).mul(3).log_softmax(-1)
    scores = torch.randn(n * k, 1, generator=g).mul(4).sub(6)
    if case == "dead beams and banned tokens":
        scores[[1, 2, 3, 6]] = float("-inf")  # sentence 0 has one live beam, as in the first step
        log_probs[:, [2, 7]] = float("-inf")  # e.g. EOS under min_len
        log_probs[4, :45] = float("-inf")  # a beam with only 5 possible tokens
    if case == "tiny vocabulary":
        scores[[0, 1, 2]] = float("-inf")
    if case == "ties":
        log_probs = log_probs.mul(2).round().div(2)  # many equal values
        scores = scores.round()
    if case == "NaN and inf":
        log_probs[1, 5] = float("nan")  # a broken model: topk ranks NaN first
        scores[6] = float("-inf")
        log_probs[6, 3] = float("inf")  # a dead beam's -inf + inf is NaN too
    shortlist_kept = []  # per sentence ranked in two stages: whether its result was kept (no ties)
    real_distinct = beam_module.distinct

    def recording_distinct(ranked):
        shortlist_kept.append(real_distinct(ranked))
        return shortlist_kept[-1]

    monkeypatch.setattr(beam_module, "distinct", recording_distinct)
    got = beam_module.top_candidates(scores.view(-1).tolist(), log_probs.numpy(), k, 2 * k, TOP_KS[top_k])
    assert up_to_first_dead(got) == one_topk_candidates(scores.numpy(), log_probs.numpy(), k, 2 * k)
    if case == "ties":
        assert False in shortlist_kept
    elif case == "NaN and inf":
        assert shortlist_kept == []  # straight to the one-stage topk
    else:
        assert shortlist_kept == [True] * n


@pytest.mark.parametrize("top_k", TOP_KS)
def test_a_tie_just_past_the_cut_hands_over_to_one_topk(top_k):
    """The 8th and 9th best candidates tie, the 7 before are distinct: the one top-k over all candidates decides
    which of the two is kept (the lower row and token), not the shortlist."""
    g = torch.Generator().manual_seed(300)
    log_probs = torch.randn(4, 50, generator=g).mul(3).log_softmax(-1).mul(4).round().div(4)
    scores = torch.randn(4, 1, generator=g).mul(2).round().div(4)
    best = sorted((scores + log_probs).view(-1).tolist(), reverse=True)[:9]
    assert len(set(best[:8])) == 8 and best[7] == best[8]
    got = beam_module.top_candidates(scores.view(-1).tolist(), log_probs.numpy(), 4, 8, TOP_KS[top_k])
    assert up_to_first_dead(got) == one_topk_candidates(scores.numpy(), log_probs.numpy(), 4, 8)


@pytest.mark.parametrize("beam, min_len", [(4, 0), (4, 3), (3, 1), (1, 0)])
def test_beam_search_with_the_shortlist_equals_beam_search_without(beam, min_len, monkeypatch):
    """Whole searches with the two-stage candidates and with one topk over all (forced by reporting a tie
    every step) must agree exactly: tokens, scores, per-token log-probs, finished flags and attention; over
    many steps, with EOS events, per-sentence length limits and several sentences at once."""
    torch.manual_seed(4)
    backend = EosRamp(TorchBackend(tiny_seq2seq()), ramp=0.2)
    src, mask = padded_batch([9, 2, 6, 4, 11, 5], seed=4)
    kw = dict(max_len=[30, 4, 25, 1, 30, 7], beam=beam, length_penalty=0.6, min_len=min_len, attention=True)
    shortlisted = beam_search(backend, src, mask, **kw)
    monkeypatch.setattr(beam_module, "distinct", lambda ranked: False)
    topk_over_all = beam_search(backend, src, mask, **kw)
    for a, b in zip(shortlisted, topk_over_all, strict=True):
        assert (a.tokens, a.log_prob, a.score, a.finished, a.token_log_probs) == \
            (b.tokens, b.log_prob, b.score, b.finished, b.token_log_probs)
        assert np.array_equal(a.attention, b.attention)
    assert {h.finished for h in shortlisted} == {True, False}  # both kinds of ending happened
    assert len({len(h.tokens) for h in shortlisted if h.finished}) >= 2  # at different steps
    assert max(len(h.tokens) for h in shortlisted) >= 18


@pytest.mark.parametrize("search, kw", [(greedy, {}), (beam_search, {"beam": 3}), (sample, {"seed": 0})])
def test_max_and_min_length_are_respected(search, kw):
    model = tiny_seq2seq()
    src, mask = padded_batch([5, 7, 3])
    hyps = search(TorchBackend(model), src, mask, max_len=[4, 9, 1], **kw)
    for hyp, limit in zip(hyps, [4, 9, 1], strict=True):
        assert 1 <= len(hyp.tokens) <= limit
        assert hyp.finished == (hyp.tokens[-1] == EOS)
        assert EOS not in hyp.tokens[:-1]  # nothing is appended after a sentence ends
    forced = search(TorchBackend(model), src, mask, max_len=12, min_len=6, **kw)
    for hyp in forced:
        assert EOS not in hyp.tokens[:6] and len(hyp.tokens) >= 6


def test_max_len_is_capped_by_the_positional_table():
    model = tiny_seq2seq(max_len=10)
    src, mask = padded_batch([4])
    hyp = greedy(TorchBackend(model), src, mask, max_len=500, min_len=500)[0]
    assert len(hyp.tokens) == 10 and not hyp.finished


def test_finished_rows_collect_nothing_more():
    """A sentence that ends at step 1 keeps exactly [token, EOS] while the others go on."""
    backend = HistoryBackend(salt=1)
    src, mask = padded_batch([3, 4, 5, 6, 2, 3, 7, 4], vocab=9)
    hyps = greedy(backend, src, mask, max_len=10)
    lengths = [len(h.tokens) for h in hyps]
    assert min(lengths) < max(lengths)  # rows really finish at different steps
    for row, hyp in enumerate(hyps):
        source = tuple(src[row][mask[row]].tolist())
        expected = []
        while len(expected) < 10 and EOS not in expected:
            expected.append(int(backend.log_probs_after(source, tuple(expected)).argmax()))
        assert hyp.tokens == expected


@pytest.mark.parametrize("bad, message", [(dict(beam=0), "at least 1"), (dict(max_len=0), "at least 1"),
                                          (dict(patience=0), "patience"), (dict(patience=-1.0), "patience")])
def test_bad_search_arguments_raise_clear_errors(bad, message):
    src, mask = padded_batch([3])
    with pytest.raises(ValueError, match=message):
        beam_search(TorchBackend(tiny_seq2seq()), src, mask, **bad)


# --- sampling ------------------------------------------------------------------------------------------------


def test_sampling_is_reproducible_with_a_seed_and_varies_without():
    model = tiny_seq2seq()
    src, mask = padded_batch([6, 4, 8])
    backend = TorchBackend(model)
    a = sample(backend, src, mask, max_len=15, seed=123, temperature=1.5)
    b = sample(backend, src, mask, max_len=15, seed=123, temperature=1.5)
    c = sample(backend, src, mask, max_len=15, seed=124, temperature=1.5)
    assert [h.tokens for h in a] == [h.tokens for h in b]
    assert [h.tokens for h in a] != [h.tokens for h in c]


@pytest.mark.parametrize("kw", [dict(top_k=1), dict(top_p=1e-6), dict(temperature=1e-4)])
def test_degenerate_sampling_is_greedy(kw):
    model = tiny_seq2seq()
    src, mask = padded_batch([6, 4, 8])
    backend = TorchBackend(model)
    assert_same_hypotheses(sample(backend, src, mask, max_len=15, seed=5, **kw), greedy(backend, src, mask, max_len=15))


def test_sampling_only_draws_from_the_allowed_tokens():
    logits = np.array([[0.0, 3.0, 1.0, 2.0, -1.0]], dtype=np.float32)
    assert np.isfinite(keep_top_k(logits, 2)).tolist() == [[False, True, False, True, False]]
    probs = torch.from_numpy(logits).softmax(-1)[0]  # 0.032 0.636 0.087 0.234 0.012
    assert np.isfinite(keep_top_p(logits, 0.5)).tolist() == [[False, True, False, False, False]]
    assert np.isfinite(keep_top_p(logits, probs[1].item() + 0.01)).tolist() == [[False, True, False, True, False]]
    assert np.isfinite(keep_top_p(logits, 1.0)).all()


@pytest.mark.parametrize("bad, message", [(dict(temperature=0), "temperature"), (dict(top_k=-1), "top_k"),
                                          (dict(top_p=0), "top_p"), (dict(top_p=1.5), "top_p")])
def test_bad_sampling_arguments_raise_clear_errors(bad, message):
    src, mask = padded_batch([3])
    with pytest.raises(ValueError, match=message):
        sample(TorchBackend(tiny_seq2seq()), src, mask, **bad)


# --- attention capture -----------------------------------------------------------------------------------------


def test_attention_maps_have_the_right_shapes_and_ignore_pads():
    model = tiny_seq2seq()
    src, mask = padded_batch([7, 3])
    tgt = np.array([[BOS, 5, 6, 7], [BOS, 8, 0, 0]])
    maps = TorchBackend(model).attention(src, mask, tgt)
    layers, heads = model.config.n_decoder_layers, model.config.n_heads
    assert [w.shape for w in maps["encoder"]] == [(2, heads, 7, 7)] * model.config.n_layers
    assert [w.shape for w in maps["self"]] == [(2, heads, 4, 4)] * layers
    assert [w.shape for w in maps["cross"]] == [(2, heads, 4, 7)] * layers
    for w in maps["cross"] + maps["encoder"]:
        assert w[1, :, :, 3:].max() == 0.0  # nothing on the second sentence's pads
        sums = w.sum(-1)
        assert abs(sums - 1).max() < 1e-5  # every row a distribution over the real source tokens
    for w in maps["self"]:
        upper = torch.triu(torch.ones(4, 4, dtype=torch.bool), diagonal=1).numpy()
        assert w[:, :, upper].max() == 0.0  # causal: no weight on later positions


def test_teacher_forced_attention_equals_what_cached_steps_saw():
    model = tiny_seq2seq()
    src, mask = padded_batch([6, 4])
    tgt = np.array([[BOS, 9, 4, 12, 7], [BOS, 5, 5, 30, 8]])
    maps = TorchBackend(model).attention(src, mask, tgt)
    src, mask, tgt = torch.from_numpy(src), torch.from_numpy(mask), torch.from_numpy(tgt)
    with torch.inference_mode():
        memory = model.encode(src, mask).memory
        cache = model.init_cache(memory)
        for t in range(tgt.size(1)):
            _, cache, step = model.decode(tgt[:, t:t + 1], None, mask, cache=cache, need_weights=True)
            for layer in range(model.config.n_decoder_layers):
                torch.testing.assert_close(torch.from_numpy(maps["cross"][layer][:, :, t]),
                                           step["cross"][layer][:, :, 0])
                torch.testing.assert_close(torch.from_numpy(maps["self"][layer][:, :, t, :t + 1]),
                                           step["self"][layer][:, :, 0])


# --- benchmark -------------------------------------------------------------------------------------------------


def test_benchmark_times_every_case_and_forces_the_minimum_length():
    from bench.decode import format_table, run

    sources, _ = padded_batch([5, 3, 7])
    cases = run(tiny_seq2seq(), [row[row != 0].tolist() for row in sources], min_len=4, max_len=6, repeats=1)
    assert {(c.method, c.batch, c.cached) for c in cases} == {
        (m, b, c) for m in ("greedy", "beam 4") for b in (1, 16) for c in (True, False)}
    assert all(c.sentences == 3 and 12 <= c.tokens <= 18 and c.seconds > 0 for c in cases)
    table = format_table(cases)
    assert table.count("\n") == len(cases) + 1 and "x" in table  # header, rule, one row per case with speed-ups


@pytest.mark.parametrize("search, kw", [(greedy, {}), (beam_search, {"beam": 4, "length_penalty": 0.6}),
                                        (sample, {"seed": 3, "top_k": 5})])
@pytest.mark.parametrize("backend_class", [TorchBackend, FullPrefixBackend])
def test_attention_recorded_by_the_search_equals_a_teacher_forced_pass(search, kw, backend_class):
    """The maps the Translate page shows come from the search's own steps: they must be exactly what one
    teacher-forced pass over the chosen tokens gives (this checks that beams carry their maps when reordered),
    and the per-token log-probabilities must add up to the hypothesis' log_prob."""
    model = tiny_seq2seq()
    src, mask = padded_batch([7, 4, 9], seed=2)
    backend = backend_class(model)
    hyps = search(backend, src, mask, max_len=12, attention=True, **kw)
    plain = search(backend, src, mask, max_len=12, **kw)
    assert [h.tokens for h in hyps] == [h.tokens for h in plain], "recording attention changes no output"
    for row, hyp in enumerate(hyps):
        n = int(mask[row].sum())
        inputs = np.array([[BOS] + hyp.tokens[:-1]])
        cross = TorchBackend(model).attention(src[row:row + 1, :n], mask[row:row + 1, :n], inputs)["cross"]
        want = np.stack([layer[0] for layer in cross])  # L × (1, H, T, S) -> (L, H, T, S)
        got = hyp.attention.transpose(1, 2, 0, 3)[..., :n]  # (T, L, H, S) -> (L, H, T, S), pads cut
        np.testing.assert_allclose(got, want, atol=1e-5, rtol=1e-5)
        assert len(hyp.token_log_probs) == len(hyp.tokens)
        assert sum(hyp.token_log_probs) == pytest.approx(hyp.log_prob, abs=1e-4)
        assert hyp.log_prob == pytest.approx(model_log_prob(model, src[row:row + 1, :n], hyp.tokens), abs=1e-4)


# --- beam search's trace ----------------------------------------------------------------------------------


# the last case: later hypotheses beat the first finished one (sentence 0 has 4 bests in turn)
@pytest.mark.parametrize("beam, alpha, max_len, ramp, seed", [(1, 0.0, 12, 0.2, 0), (3, 0.6, 12, 0.2, 0),
                                                              (4, 1.0, 5, 0.2, 0), (4, 1.0, 12, 0.5, 2)])
def test_beam_trace_changes_nothing_and_its_best_path_is_the_result(beam, alpha, max_len, ramp, seed):
    torch.manual_seed(seed)
    src, mask = padded_batch([7, 3, 5])
    trace = check_trace(EosRamp(TorchBackend(tiny_seq2seq()), ramp=ramp), src, mask, max_len=max_len, beam=beam,
                        length_penalty=alpha)
    kept = [r for r in trace[0] if r["status"] == "kept"]
    assert all(r["parent"] is None for r in trace[0]) and len(kept) <= 3 * beam


class EventLog:
    """A BeamObserver that writes down the events it is told, in order."""

    def __init__(self):
        self.events = []

    def begin(self, beam, alpha):
        self.events.append(("begin", beam, alpha))

    def offered(self, rank, status, better):
        self.events.append(("offered", status))

    def ranked(self, sentence, length, candidates, kept, live):
        self.events.append(("ranked", sentence, length, len(kept) if live else 0))

    def step_done(self):
        self.events.append(("step_done",))


def test_an_observer_is_told_each_step_in_the_order_the_protocol_says():
    torch.manual_seed(0)
    src, mask = padded_batch([7, 3, 5])
    log = EventLog()
    hyps = beam_search(EosRamp(TorchBackend(tiny_seq2seq()), ramp=1.0), src, mask, max_len=8, beam=3,
                       length_penalty=0.6, observer=log)
    assert [h.finished for h in hyps] == [False, True, True]  # the case: EOS offers, and max-length ones at the end
    assert log.events[0] == ("begin", 3, 0.6) and log.events[-1] == ("step_done",)
    steps = [list(group) for done, group in itertools.groupby(log.events[1:], key=lambda e: e == ("step_done",))
             if not done]
    assert len(steps) == log.events.count(("step_done",)) == 8
    for length, step in enumerate(steps, 1):
        ranked = [e for e in step if e[0] == "ranked"]
        assert [e[1:3] for e in ranked] == [(s, length) for s in range(3)]  # sentence by sentence, this length
        assert step[-1][0] == "ranked"  # a sentence's offers come before its ranking
        assert (("offered", "max_len") in step) == (length == 8)
    assert sum(e == ("offered", "finished") for e in log.events) > 0
