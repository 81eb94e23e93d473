"""runtime.confidence_score's back pass (format 4, issue 43, 5): the source's log-probability when the output is
translated back with the source forced, worked out by hand, and the one call that makes the pass."""
from __future__ import annotations

import math

import pytest

from runtime.confidence import parse_calibration
from runtime.confidence_score import BACK_FEATURES, FEATURES, back_pass, features
from runtime.text import Translation


def translation(text: str, token_probs: list[float], src_tokens: list[str], prefix_len: int = 0) -> Translation:
    tokens = [f"▁t{i}" for i in range(len(token_probs))]
    return Translation(text, tokens, list(range(len(tokens))), -1.0, src_tokens, False, token_probs=token_probs,
                       prefix_len=prefix_len)


def test_source_log_prob_is_the_sum_over_the_forced_source_tokens_only():
    out = translation("Good morning.", [0.5, 0.8, 1.0], ["<2en>", "▁Guten", "▁Morgen", ".", "</s>"])
    # the back pass forced the source's 3 tokens (probabilities 0.5, 0.25, 1.0), then chose one more (0.9): that
    # step is the model's own choice, not the source, so it is left out: log 0.5 + log 0.25 + log 1 = log 0.125
    back = translation("Guten Morgen. Hallo", [0.5, 0.25, 1.0, 0.9], ["<2de>", "▁Good", "▁morning", ".", "</s>"], 3)
    found = features(out, "Guten Morgen.", back)
    assert set(found) == set(FEATURES) and BACK_FEATURES == ("source_log_prob",)
    assert found["source_log_prob"] == pytest.approx(math.log(0.125), abs=1e-12)
    assert found["mean_log_prob"] == pytest.approx(math.log(0.4) / 3, abs=1e-12)  # (log .5 + log .8 + 0) / 3
    assert "source_log_prob" not in features(out, "Guten Morgen.")  # no back pass: the plain features


def test_a_free_back_translation_is_refused_with_a_message():
    out = translation("Good morning.", [0.5, 0.8, 1.0], ["<2en>", "▁Guten", "▁Morgen", ".", "</s>"])
    free = translation("Guten Morgen.", [0.5, 0.25, 1.0], ["<2de>", "▁Good", "▁morning", ".", "</s>"])
    with pytest.raises(ValueError, match="source_log_prob needs the back pass with the source forced"):
        features(out, "Guten Morgen.", free)


class Recorder:
    """A translator that records its one call (translate_n_best: the served translator's translate takes no
    target_prefix) and answers with forced-looking results."""
    def __init__(self):
        self.calls = []

    def translate_n_best(self, texts, src_lang, tgt_lang, **options):
        self.calls.append((list(texts), src_lang, tgt_lang, options))
        return [[translation(t, [0.5], ["<2de>", "</s>"], 1)] for t in texts]


def test_the_back_pass_forces_each_source_in_one_greedy_call_a_step_past_the_longest():
    outputs = [translation("Good morning.", [0.5], ["<2en>", "▁Guten", "▁Morgen", "</s>"]),
               translation("", [0.5], ["<2en>", "▁Wie", "▁geht", "▁es", "?", "</s>"])]
    recorder = Recorder()
    found = back_pass(recorder, outputs, ["Guten Morgen", "Wie geht es?"], "de", "en")
    assert [b.text for b in found] == ["Good morning.", "."] and len(recorder.calls) == 1
    # back from English into German; an empty output goes back as "."; the longest source has 4 tokens (6 less
    # its tag and </s>), so the pass runs at most 4 + 1 steps
    assert recorder.calls[0] == (["Good morning.", "."], "en", "de",
                                 {"method": "greedy", "max_len": 5, "target_prefix": ["Guten Morgen", "Wie geht es?"]})


def test_a_format_3_back_scorer_is_skipped_and_its_plain_scorer_kept():
    """Format 3's back scorer read a free back-translation (back_chrf, back_mean_log_prob), a pass the runtime no
    longer makes: the file still reads, with its plain score."""
    def scorer(names: list[str]) -> dict:
        return {"features": names, "mean": [0.0] * len(names), "scale": [1.0] * len(names),
                "weights": [0.0] * len(names), "intercepts": {"de-en": 0.0},
                "bands": [{"from": 0.0, "to": 1.0, "outputs": 10, "right": 5}]}

    report = {"format": 3, "methods": {"beam": {
        "calibrated": True, "outputs": 10, "right": 5, "bands": [{"from": 0.0, "to": 1.0, "outputs": 10, "right": 5}],
        "probably_wrong_below": 0.5, "scorers": {
            "plain": scorer(["mean_log_prob", "min_log_prob", "log_tokens"]),
            "back": scorer(["mean_log_prob", "min_log_prob", "log_tokens", "back_chrf", "back_mean_log_prob"])}}}}
    assert set(parse_calibration(report)["beam"].scorers) == {"plain"}
