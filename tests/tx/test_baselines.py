"""The n-gram baselines (tx.baselines, `python -m tx evaluate sentiment --baselines`) and the negation probe set."""
from __future__ import annotations

import json
import random

import numpy as np
import pytest
from train_fixtures import make_sentiment_data, sentiment_rows

from runtime.tsv import LABELS, read_tsv
from tx import baselines
from tx.evaluation import NEGATION
from tx.tools import evaluate as tx_evaluate


@pytest.fixture(autouse=True, scope="module")
def _sklearn():
    """Skipped where scikit-learn is missing; imported when a test here runs, not at collection, where every xdist
    worker collects every file (1.2 s of each one's start-up)."""
    pytest.importorskip("sklearn")


def synthetic(n: int, seed: int) -> list[dict[str, str]]:
    """The label is decided by one cue word among noise words."""
    rng = random.Random(seed)
    noise = [f"w{i}" for i in range(40)]
    rows = []
    for _ in range(n):
        label = rng.choice(LABELS)
        cue = rng.choice(["great", "lovely", "superb"] if label == "positive" else ["awful", "dull", "poor"])
        words = rng.sample(noise, 6) + [cue]
        rng.shuffle(words)
        rows.append({"label": label, "text": " ".join(words)})
    return rows


@pytest.mark.parametrize("name", baselines.BASELINES)
def test_each_baseline_learns_a_cue_word(name):
    fitted, valid_scores = baselines.fit_baseline(name, synthetic(300, 0), synthetic(60, 1), LABELS)
    scores = baselines.score(fitted, synthetic(100, 2), LABELS)
    assert scores["accuracy"] >= 95 and set(valid_scores) == set(baselines.C_GRID)
    probs = fitted.probs(["w1 w2 great", "w1 w2 awful"])
    assert probs.shape == (2, 2) and probs[0, 1] > 0.5 > probs[1, 1]
    assert 0 <= scores["ece"] <= 100


def test_c_is_picked_on_valid_not_test(monkeypatch):
    """Flip the valid labels: the chosen C must then be the one that does worst on real data, i.e. C is
    read off valid only (a test-tuned search would still pick a good C)."""
    train, valid = synthetic(200, 0), synthetic(60, 1)
    fitted, _ = baselines.fit_baseline("tfidf_lr", train, valid, LABELS, grid=(0.001, 10.0))
    assert fitted.c == 10.0
    flipped = [{**r, "label": LABELS[1 - LABELS.index(r["label"])]} for r in valid]
    fitted, scores = baselines.fit_baseline("tfidf_lr", train, flipped, LABELS, grid=(0.001, 10.0))
    assert scores[0.001] > scores[10.0] and fitted.c == 0.001


def test_nbsvm_ratio_is_the_smoothed_log_count_ratio():
    texts, y = ["good", "good", "fine", "bad"], np.array([1, 1, 1, 0])  # one word each: no bigrams
    vectorizer, _, ratio = baselines._features("nbsvm", texts, y)
    # binarised counts + 1 (positive p, negative q), in the order good, fine, bad
    p, q = np.array([2 + 1, 1 + 1, 0 + 1]), np.array([0 + 1, 0 + 1, 1 + 1])
    expected = np.log((p / p.sum()) / (q / q.sum()))
    got = [ratio[0, vectorizer.vocabulary_[w]] for w in ("good", "fine", "bad")]
    assert np.allclose(got, expected)


def test_cli_writes_baselines_json_with_test_negation_and_cv(tmp_path, capsys):
    data = make_sentiment_data(tmp_path)
    assert tx_evaluate.main(["sentiment", "--baselines", "--data-dir", str(data), "--out", str(tmp_path / "out"),
                             "--cv", "3"]) == 0
    result = json.loads((tmp_path / "out" / "baselines.json").read_text())
    for name in baselines.BASELINES:
        entry = result[name]
        assert entry["c"] in baselines.C_GRID and entry["test"]["reviews"] == 8
        assert entry["negation"]["reviews"] == len(read_tsv(NEGATION))
        assert entry["cv"]["folds"] == 3 and len(entry["cv"]["accuracies"]) == 3
    assert "nbsvm: C=" in capsys.readouterr().out


def test_negation_probe_set_is_balanced_and_unseen():
    rows = read_tsv(NEGATION)
    assert len(rows) >= 40 and {r["label"] for r in rows} == set(LABELS)
    assert sum(r["label"] == "positive" for r in rows) == len(rows) // 2
    assert len({r["text"] for r in rows}) == len(rows)
    from corpus.prepare import evaluation_texts

    assert {r["text"] for r in rows} <= set(evaluation_texts())  # removed from the pretraining corpus
    assert not {r["text"] for r in rows} & {text for _, text in sentiment_rows()}
