"""extend_paths' alternatives and forced prefixes in a batch whose sentences' prefixes differ in length (the search
checks rows for prefix tokens and splits only up to the longest prefix, then skips those checks): every hypothesis
equals the one written out here from the fake model's own distributions, one sentence at a time."""
import random

import numpy as np
import pytest
from decoding_fixtures import HistoryBackend

from runtime.decoding import greedy, sample, top_k_numpy

BOS, EOS = 1, 2


class FakeModel(HistoryBackend):
    """Next-token log-probs: a fixed random function of (source, history); its state is the histories themselves,
    so a wrong row order or a missing split shows as a wrong token (decoding_fixtures.HistoryBackend, with 9 tokens
    and its own draw)."""

    vocab = 9

    def log_probs_after(self, source: tuple[int, ...], history: tuple[int, ...]) -> np.ndarray:
        rng = random.Random(f"{source}/{history}")
        logits = np.array([-np.inf, -np.inf] + [rng.gauss(0, 2) for _ in range(self.vocab - 2)])
        return (logits - np.logaddexp.reduce(logits)).astype(np.float32)


SOURCES = [(5, 6, 7), (4, 4), (8, 3, 5, 6)]
PREFIXES = [[], [3, 4], [5, 3, 6, 4]]  # lengths 0, 2, 4: the longest splits at the last step that checks rows
MAX_LEN = 9


def batch():
    ids = np.zeros((len(SOURCES), max(map(len, SOURCES))), dtype=np.int64)
    for i, s in enumerate(SOURCES):
        ids[i, :len(s)] = s
    return ids, ids != 0


def greedy_from(model: FakeModel, source: tuple[int, ...], tokens: list[int]) -> list[int]:
    """tokens, then the most probable token (the first of equals) until EOS or MAX_LEN tokens."""
    tokens = list(tokens)
    while tokens[-1:] != [EOS] and len(tokens) < MAX_LEN:
        tokens.append(int(np.argmax(model.log_probs_after(source, tuple(tokens)))))
    return tokens


def expected_log_probs(model: FakeModel, source: tuple[int, ...], tokens: list[int]) -> list[float]:
    return [float(model.log_probs_after(source, tuple(tokens[:t]))[token]) for t, token in enumerate(tokens)]


@pytest.mark.parametrize("k", [1, 3])
def test_each_sentence_splits_after_its_own_prefix_and_completes_greedily(k):
    model = FakeModel()
    ids, mask = batch()
    hyps = greedy(model, ids, mask, MAX_LEN, BOS, EOS, target_prefix=PREFIXES, alternatives=k)
    assert len(hyps) == len(SOURCES) * k
    for s, (source, prefix) in enumerate(zip(SOURCES, PREFIXES, strict=True)):
        _, top = top_k_numpy(model.log_probs_after(source, tuple(prefix))[None], k)
        for j, token in enumerate(top[0].tolist()):
            want = greedy_from(model, source, prefix + [token])
            hyp = hyps[s * k + j]
            assert hyp.tokens == want, (s, j)
            assert hyp.token_log_probs == expected_log_probs(model, source, want)
            assert hyp.finished == (want[-1] == EOS)


def test_every_forced_token_is_taken_up_to_the_longest_prefix():
    model = FakeModel()
    ids, mask = batch()
    hyps = greedy(model, ids, mask, MAX_LEN, BOS, EOS, target_prefix=PREFIXES)
    for hyp, source, prefix in zip(hyps, SOURCES, PREFIXES, strict=True):
        assert hyp.tokens == greedy_from(model, source, prefix)


def test_sampled_alternatives_start_with_the_prefix_and_the_top_tokens():
    model = FakeModel()
    ids, mask = batch()
    hyps = sample(model, ids, mask, MAX_LEN, BOS, EOS, seed=3, target_prefix=PREFIXES, alternatives=2)
    for s, (source, prefix) in enumerate(zip(SOURCES, PREFIXES, strict=True)):
        _, top = top_k_numpy(model.log_probs_after(source, tuple(prefix))[None], 2)
        assert [h.tokens[:len(prefix) + 1] for h in hyps[2 * s:2 * s + 2]] == [prefix + [t] for t in top[0].tolist()]
