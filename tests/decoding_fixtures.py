"""What the search tests share (tests/runtime/test_decoding.py, tests/runtime/test_alternatives.py,
tests/app/test_decoding_explorer.py): random padded sources, a fake model whose state is its history, a model that
meets EOS at many lengths, and the beam-tree checks."""
import random

import numpy as np
import pytest
import torch

from runtime.decoding import BeamTree, beam_search, top_k_numpy

BOS, EOS = 1, 2


def gnmt_score(log_prob: float, length: int, alpha: float) -> float:
    """The score beam search ranks by, written here from GNMT's definition (Wu et al. 2016, eq. 14:
    lp(Y) = (5 + |Y|)^α / (5 + 1)^α) rather than imported: a test that took it from runtime.decoding would agree
    with any mistake made there."""
    return log_prob / ((5 + length) ** alpha / 6**alpha)


def padded_batch(lengths: list[int], vocab: int = 40, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Random sources of the given lengths, right-padded with 0: ids (B, S) int64, mask (B, S) bool."""
    g = torch.Generator().manual_seed(seed)
    ids = torch.zeros(len(lengths), max(lengths), dtype=torch.long)
    for i, n in enumerate(lengths):
        ids[i, :n] = torch.randint(4, vocab, (n,), generator=g)
    return ids.numpy(), ids.numpy() != 0


def assert_same_hypotheses(a, b, atol=1e-4):
    assert [h.tokens for h in a] == [h.tokens for h in b]
    assert [h.finished for h in a] == [h.finished for h in b]
    for x, y in zip(a, b, strict=True):
        assert x.score == pytest.approx(y.score, abs=atol)
        assert x.log_prob == pytest.approx(y.log_prob, abs=atol)


class EosRamp:
    """A tiny random model with EOS made likelier at every step, so beam search meets EOS at many lengths:
    beams that end beside live ones, finished hypotheses, sentences stopping while others go on."""

    def __init__(self, backend, ramp: float):
        self.backend, self.ramp, self.steps = backend, ramp, 0
        self.max_source_len, self.max_target_len, self.top_k = backend.max_source_len, backend.max_target_len, \
            backend.top_k

    def encode(self, src_ids, src_mask):
        self.steps = 0
        return self.backend.encode(src_ids, src_mask)

    def step(self, tokens, state, attention=False):
        log_probs, state = self.backend.step(tokens, state, attention=attention)
        log_probs = torch.from_numpy(log_probs.copy())
        log_probs[:, EOS] += self.ramp * self.steps - 2.0
        self.steps += 1
        return log_probs.log_softmax(-1).numpy(), state

    def reorder(self, state, index):
        return self.backend.reorder(state, index)

    def cross_attention(self, state):
        return self.backend.cross_attention(state)


def trace_best_path(trace: list[list[dict]], sentence: int) -> tuple[list[int], float]:
    """The tokens and score of the one record of `sentence` marked best, following parent links."""
    nodes = {r["id"]: r for step in trace for r in step if r["sentence"] == sentence}
    (node,) = [r for r in nodes.values() if r["best"]]
    score, tokens = node["score"], []
    while node is not None:
        tokens.append(node["token"])
        node = nodes.get(node["parent"])
    return tokens[::-1], score


def check_trace(backend, src, mask, **kw):
    plain = beam_search(backend, src, mask, **kw)
    tree = BeamTree()
    traced = beam_search(backend, src, mask, observer=tree, **kw)
    trace = tree.steps
    assert_same_hypotheses(plain, traced)  # tracing changes no output
    assert trace and all(step for step in trace)
    for step in trace:
        for r in step:
            assert r["status"] in {"kept", "finished", "max_len", "stopped", "pruned"}
            assert r["score"] == pytest.approx(gnmt_score(r["log_prob"], r["step"], kw["length_penalty"]))
    for s, hyp in enumerate(plain):
        tokens, score = trace_best_path(trace, s)
        assert tokens == hyp.tokens and score == pytest.approx(hyp.score)
    return trace


class HistoryBackend:
    """A fake model whose next-token distribution is a fixed random function of (source, history).

    Its state is the token history itself, so `reorder` is trivially right: a reference for the
    search's bookkeeping. Only tokens 2 (EOS), 3 and 4 can be produced. It records every reorder.
    """

    vocab = 5
    max_source_len = max_target_len = None
    top_k = staticmethod(top_k_numpy)

    def __init__(self, salt: int = 0):
        self.salt = salt
        self.reorders: list[list[int]] = []

    def log_probs_after(self, source: tuple[int, ...], history: tuple[int, ...]) -> np.ndarray:
        rng = random.Random(f"{self.salt}/{source}/{history}")
        logits = torch.tensor([float("-inf"), float("-inf")] + [rng.gauss(0, 2) for _ in range(3)])
        return logits.log_softmax(-1).numpy()

    def encode(self, src_ids, src_mask):
        sources = [tuple(row[m].tolist()) for row, m in zip(src_ids, src_mask, strict=True)]
        return sources, [() for _ in sources]

    def step(self, tokens, state, attention=False):
        sources, histories = state
        histories = [h + (t,) for h, t in zip(histories, tokens.tolist(), strict=True)]
        return np.stack([self.log_probs_after(s, h[1:]) for s, h in zip(sources, histories, strict=True)]), \
            (sources, histories)

    def reorder(self, state, index):
        self.reorders.append(index.tolist())
        return tuple([part[i] for i in index.tolist()] for part in state)

    def sequence_log_prob(self, source: tuple[int, ...], tokens: tuple[int, ...], min_len: int = 0) -> float:
        total = 0.0
        for t, token in enumerate(tokens):
            lp = self.log_probs_after(source, tokens[:t])
            total += float("-inf") if (token == EOS and t < min_len) else float(lp[token])
        return total
