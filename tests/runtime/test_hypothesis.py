"""GNMT's length penalty (runtime/decoding/hypothesis.py), pinned with numbers worked out by hand from the paper's
definition (Wu et al. 2016, eq. 14): lp(Y) = (5 + |Y|)^α / (5 + 1)^α, score = log P(Y) / lp(Y). Issue 34 found that
((5 + |Y|) / 5)^α passed every test, which took its expected values from the same function."""
import pytest

from runtime.decoding.hypothesis import length_penalty, normalized_score


@pytest.mark.parametrize("length, alpha, expected", [
    (1, 0.6, 1.0),  # (5 + 1) / 6 = 1: a one-token output is never rescaled
    (7, 1.0, 2.0),  # 12 / 6
    (13, 0.5, 1.7320508075688772),  # (18 / 6) ** 0.5 = √3
    (19, 2.0, 16.0),  # (24 / 6) ** 2 = 4²
    (25, 0.0, 1.0),  # α = 0 turns it off
])
def test_length_penalty_is_gnmts(length, alpha, expected):
    assert length_penalty(length, alpha) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("log_prob, length, alpha, expected", [
    (-6.0, 7, 1.0, -3.0),  # -6 / 2
    (-10.0, 19, 0.5, -5.0),  # -10 / √4
    (-4.5, 3, 0.0, -4.5),  # no penalty
])
def test_a_score_is_the_log_probability_over_the_penalty(log_prob, length, alpha, expected):
    assert normalized_score(log_prob, length, alpha) == pytest.approx(expected, rel=1e-12)
