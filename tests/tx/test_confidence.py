"""tx.confidence and `python -m tx confidence`: per decoding method, the verdict cuts are measured on hand-judged
outputs, sit on band edges and follow the documented rule."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from export_fixtures import GERMAN, exported, fresh_copy

from runtime.confidence import CONFIDENCE_FILE, percent, read_calibration
from tx.confidence import auroc, band_counts, band_verdict, choose_cuts, halves, held_out
from tx.inference import Translator
from tx.tools.confidence import main

pytestmark = pytest.mark.exports


def test_auroc_by_hand():
    scores = np.array([0.9, 0.8, 0.3, 0.5, 0.5])
    right = np.array([True, True, False, False, True])
    # right scores 0.9, 0.8, 0.5 against wrong 0.3, 0.5: 3 + 2 + (1 + 0.5) = 5.5 of 6 pairs
    assert auroc(scores, right) == pytest.approx(5.5 / 6)
    assert np.isnan(auroc(scores, np.ones(5, dtype=bool)))


def test_outputs_are_counted_in_the_band_their_shown_percentage_reads_as():
    shown = np.array([percent(c) for c in (0.2999, 0.2949, 0.7996, 0.7949, 1.0, 0.995)])
    right = np.array([True, False, True, False, True, True])
    counts = band_counts(shown, right, (0, 30, 80, 100))
    # 0.2999 shows as 30% (30–80), 0.7996 as 80% (80–100), 0.995 as 100% (the last band includes 100%)
    assert counts == [(1, 0), (2, 1), (3, 3)]


def test_verdict_cuts_sit_on_band_edges_by_the_documented_rule():
    edges = (0, 30, 40, 50, 60, 70, 80, 90, 100)
    # (outputs, right) per band: the shipped model's beam measurement
    counts = [(0, 0), (3, 0), (45, 3), (119, 7), (138, 26), (95, 29), (57, 32), (23, 20)]
    # 60–70% was right 19% (<= 25%) of the time, 70–80% 31%: probably wrong below 70; 90–100% 87% (>= 75%)
    assert choose_cuts(counts, edges) == (70, 90)
    assert band_verdict(60, 70, 70, 90) == "probably wrong" and band_verdict(70, 80, 70, 90) == "uncertain"
    assert band_verdict(90, 100, 70, 90) == "probably right"
    # a dense band over the bound stops the cut even when the pooled share would pass: never a cut inside it
    assert choose_cuts([(100, 5), (40, 12), (100, 5)], (0, 50, 60, 100), wrong_at_most=0.25) == (50, None)
    # a sparse band (fewer than 10 outputs) counts through the pool only
    assert choose_cuts([(100, 5), (4, 3), (100, 5)], (0, 50, 60, 100), wrong_at_most=0.25)[0] == 100
    # nothing qualifies: nothing is called wrong or right
    assert choose_cuts([(50, 25), (50, 25)], (0, 50, 100)) == (0, None)
    # too few outputs for a region: no verdict from it
    assert choose_cuts([(10, 0), (10, 10)], (0, 50, 100)) == (0, None)


def test_the_halves_take_every_other_output_of_each_direction():
    kept = {"en-de": [(0.1, False), (0.2, True), (0.3, False)], "de-en": [(0.9, True), (0.8, False)]}
    assert halves(kept) == [[(0.9, True), (0.1, False), (0.3, False)], [(0.8, False), (0.2, True)]]


def test_held_out_verdicts_come_from_cuts_chosen_on_the_other_half():
    """Issue 34, 6, worked by hand with two bands (0–50, 50–100%) and regions of at least 2 outputs."""
    rule = {"wrong_at_most": 0.25, "right_at_least": 0.75, "min_band_outputs": 1, "min_region_outputs": 2}
    first = [(0.1, False), (0.2, False), (0.3, False), (0.9, True)]
    second = [(0.1, False), (0.4, True), (0.6, True), (0.8, True), (0.7, False)]
    report = held_out([first, second], rule, (0, 50, 100))
    # on the second half, under 50% was right 1 of 2 and over 50% 2 of 3: no cut, so the first half is all
    # "uncertain" (1 of 4 right); on the first half, under 50% was right 0 of 3 (wrong below 50%) and 50–100%
    # holds one output, too few for "probably right": the second half gets 2 wrong (0.1, 0.4; 1 right) and 3
    # uncertain (2 right)
    assert report["cuts"] == [{"chosen_on": 5, "probably_wrong_below": 0.0, "probably_right_from": None},
                              {"chosen_on": 4, "probably_wrong_below": 0.5, "probably_right_from": None}]
    assert report["verdicts"] == {"probably wrong": {"outputs": 2, "right": 1, "share_right": 0.5},
                                  "uncertain": {"outputs": 7, "right": 3, "share_right": 0.4286},
                                  "probably right": {"outputs": 0, "right": 0, "share_right": None}}


def test_cli_measures_each_method_on_the_models_own_judged_outputs(capsys):
    model_dir = fresh_copy("translate", "confidence")
    translator = Translator.from_dir(exported("translate"))
    outputs = translator.translate(GERMAN, "de", "en", method="beam")
    greedy = translator.translate(GERMAN, "de", "en", method="greedy")
    rows = ["direction\tsource\thypothesis\tcorrect\tnote"]
    for i, (text, out) in enumerate(zip(GERMAN, outputs, strict=True)):
        hypothesis = out.text if i else "a text the model did not write"
        rows.append(f"de-en\t{text}\t{hypothesis}\t{'yes' if i % 2 else 'no'}\t")
    (model_dir / "everyday_judged.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    assert main([str(model_dir)]) == 0
    result = json.loads((model_dir / CONFIDENCE_FILE).read_text(encoding="utf-8"))
    beam = result["methods"]["beam"]
    assert beam["skipped_changed_outputs"] == 1 and beam["outputs"] == len(GERMAN) - 1
    assert sum(b["outputs"] for b in beam["bands"]) == len(GERMAN) - 1
    assert beam["settings"] == {"beam": 4, "length_penalty": 0.6}
    same = sum(g.text == o.text for i, (g, o) in enumerate(zip(greedy, outputs, strict=True)) if i)
    assert result["methods"]["greedy"]["outputs"] == same  # greedy counts only where it wrote the judged text
    sample = result["methods"]["sample"]
    assert sample["calibrated"] is False and "random" in sample["reason"]
    for entry in (beam, result["methods"]["greedy"]):
        cuts = [entry["probably_wrong_below"], entry["probably_right_from"]]
        assert all(c is None or round(c * 100) in result["rule"]["edges_percent"] for c in cuts)
    calibrations = read_calibration(model_dir)
    assert set(calibrations) == {"beam", "greedy", "sample"} and not calibrations["sample"].calibrated
    assert calibrations["beam"].wrong_below == round(beam["probably_wrong_below"] * 100, 2)
    assert read_calibration(model_dir / "missing") == {}
    for entry in (beam, result["methods"]["greedy"]):  # every counted output is held out once (issue 34, 6)
        held = entry["held_out"]["verdicts"]
        assert sum(v["outputs"] for v in held.values()) == entry["outputs"]
        assert sum(v["right"] for v in held.values()) == entry["right"]
    assert calibrations["beam"].held_out == {v: (c["outputs"], c["right"]) for v, c in
                                             beam["held_out"]["verdicts"].items()}
    printed = capsys.readouterr().out
    assert "sample: not calibrated" in printed and "held out (cuts chosen on the other half): probably wrong" in printed


def test_cli_says_when_there_is_nothing_judged(tmp_path, capsys):
    assert main([str(tmp_path)]) == 2
    assert "everyday_judged.tsv" in capsys.readouterr().err


# ---------------------------------------------------------------- issue 43, 5: the score (format 3, 4: the back pass)
def test_chrf_by_hand():
    from runtime.confidence_score import chrf

    assert chrf("abc", "abc") == 1.0 and chrf("abc", "xyz") == 0.0
    # "ab" vs "abc": 1-grams P 2/2 R 2/3, 2-grams P 1/1 R 1/2 (3-grams longer than "ab": left out)
    p, r = 1.0, (2 / 3 + 1 / 2) / 2
    assert abs(chrf("ab", "abc") - 5 * p * r / (4 * p + r)) < 1e-12
    assert chrf("a b", "ab") == 1.0  # spaces removed, as sacrebleu does


def test_the_logistic_fit_has_a_zero_gradient_and_heavy_penalty_leaves_the_group_rates():
    from tx.confidence import fit_logistic

    rng = np.random.default_rng(0)
    x = rng.normal(size=(60, 2))
    groups = np.arange(60) % 2
    y = (x[:, 0] + 0.5 * rng.normal(size=60) > 0).astype(float)
    w, b = fit_logistic(x, y, groups, 2, l2=1.0)
    p = 1 / (1 + np.exp(-(b[groups] + x @ w)))
    assert np.abs(x.T @ (p - y) + 1.0 * w).max() < 1e-6  # the penalised likelihood's gradient is zero
    assert all(abs(np.sum(p[groups == g] - y[groups == g])) < 1e-6 for g in (0, 1))  # intercepts unpenalised
    assert w[0] > 1 and abs(w[1]) < abs(w[0])
    y = np.array([1.0, 0, 0, 0] * 15)  # group 0 right 1 in 2, group 1 never... with a huge penalty:
    w, b = fit_logistic(x, y, groups, 2, l2=1e9)
    assert np.abs(w).max() < 1e-6 and abs(b[0] - 0.0) < 1e-6 and b[1] < -15  # logit(1/2) = 0, logit(0) → -inf


def test_score_bands_merge_fixed_bands_until_each_holds_enough():
    from tx.confidence import score_bands

    scores = np.array([0.05] * 3 + [0.15] * 2 + [0.55] * 4 + [1.0])
    right = np.array([0, 0, 0, 1, 0, 1, 1, 0, 1, 1], dtype=bool)
    bands = score_bands(scores, right, 3)
    # 0–0.1 holds 3; 0.1–0.6 holds 2 + 4 (first reaching 3 at 0.6); 0.6–1.0 holds 1, too few: joins the one below
    assert [(b["from"], b["to"], b["outputs"], b["right"]) for b in bands] == [(0.0, 0.1, 3, 0), (0.1, 1.0, 7, 5)]


def test_the_score_is_reported_on_outputs_it_was_not_fitted_on_and_the_runtime_computes_the_same():
    """Held-out AUROC is of each half scored by the fit on the other half alone, and the runtime's Scorer gives the
    score tx fitted (same standardisation, weights and intercepts)."""
    from runtime.confidence_score import FEATURES, parse_scorer
    from tx.confidence import RULE, fit_scorer, scorers

    rng = np.random.default_rng(1)
    kept, found = {}, {}
    for d in ("de-en", "en-de"):
        right = rng.random(60) < 0.4
        kept[d] = [(0.5, bool(r)) for r in right]
        found[d] = [{"mean_log_prob": float(r) + rng.normal(0, 0.7), "min_log_prob": rng.normal(),
                     "log_tokens": rng.normal(), "source_log_prob": rng.normal()}
                    for r in right]
    result, why = scorers(found, kept, RULE)
    assert not why and set(result) == {"plain", "back"}
    assert all(0.7 < v < 1 for v in result["plain"]["held_out_auroc"].values())  # one informative feature
    assert sum(b["outputs"] for b in result["back"]["bands"]) == 120
    assert all(b["outputs"] >= RULE["min_region_outputs"] for b in result["back"]["bands"])
    rows = [(d, f, ok) for d in kept for f, (_, ok) in zip(found[d], kept[d], strict=True)]
    entry = fit_scorer(rows, ("mean_log_prob", "min_log_prob", "log_tokens"), ["de-en", "en-de"])
    scorer = parse_scorer({**entry, "bands": [{"from": 0, "to": 1, "outputs": 1, "right": 1}]})
    by_hand = entry["intercepts"]["en-de"] + sum(
        w * (rows[70][1][n] - m) / s for n, w, m, s in zip(entry["features"], entry["weights"], entry["mean"],
                                                           entry["scale"], strict=True))
    assert abs(scorer.score(rows[70][1], "en-de") - 1 / (1 + np.exp(-by_hand))) < 1e-12
    with pytest.raises(ValueError, match="no score fitted for direction 'fr-en'"):
        scorer.score(rows[70][1], "fr-en")
    # held out means it: each half scored by the fit on the other half alone (the halves of tx.confidence.halves),
    # with the feature set that half chose (tests/tx/test_confidence_selection.py)
    halves_ = [[r for d in kept for r in [x for x in rows if x[0] == d][start::2]] for start in (0, 1)]
    scores, labels = [], []
    chosen = result["back"]["selection"]["chosen_on_each_half"]
    assert all("source_log_prob" in c and set(c) <= set(FEATURES) for c in chosen)
    for k in (0, 1):
        other = parse_scorer({**fit_scorer(halves_[1 - k], tuple(chosen[k]), ["de-en", "en-de"]),
                              "bands": [{"from": 0, "to": 1, "outputs": 1, "right": 1}]})
        scores += [other.score(f, d) for d, f, _ in halves_[k]]
        labels += [ok for *_, ok in halves_[k]]
    assert result["back"]["held_out_auroc"]["all"] == round(auroc(np.array(scores), np.array(labels)), 4)
    result, why = scorers({"de-en": found["de-en"][:6]}, {"de-en": kept["de-en"][:6]}, RULE)
    assert result == {} and why.startswith("too few outputs to fit a score on: 6 counted")


def test_old_files_read_as_before_and_newer_ones_are_refused_clearly():
    from runtime.confidence import format_problem, frequency, parse_calibration

    old = {"format": 2, "methods": {"beam": {"calibrated": True, "outputs": 10, "right": 5, "bands": [
        {"from": 0.0, "to": 1.0, "outputs": 10, "right": 5}], "probably_wrong_below": 0.5}}}
    calibrations = parse_calibration(old)
    assert calibrations["beam"].wrong_below == 50 and calibrations["beam"].scorers == {}
    assert frequency(calibrations, "beam", None, "x", "de-en") is None  # no score: the page keeps the verdicts
    assert format_problem(old) is None
    newer = {**old, "format": 5}
    assert parse_calibration(newer) == {}
    assert format_problem(newer).startswith("confidence.json is format 5, newer than this runtime reads (up to 4)")
    broken = json.loads(json.dumps(old))
    broken["format"] = 3
    broken["methods"]["beam"]["scorers"] = {"plain": {"features": ["no_such_feature"], "mean": [0], "scale": [1],
                                                      "weights": [0], "intercepts": {}, "bands": []}}
    assert parse_calibration(broken) == {}  # never half-read


def test_the_shipped_score_ranks_better_held_out_than_the_confidence():
    """The committed confidence.json (issue 43, 5): the back-pass score's held-out AUROC beats the confidence's on
    both methods and directions (format 4: by the source's log-probability with the source forced)."""
    report = json.loads((Path(__file__).resolve().parents[2] / "models" / "translate" / CONFIDENCE_FILE)
                        .read_text(encoding="utf-8"))
    assert report["format"] == 4
    for method in ("beam", "greedy"):
        entry = report["methods"][method]
        assert "source_log_prob" in entry["scorers"]["back"]["features"]
        held = entry["scorers"]["back"]["held_out_auroc"]
        assert held["all"] > entry["auroc"] + 0.03
        assert all(held[d] > entry["directions"][d]["auroc"] for d in ("de-en", "en-de"))


def test_the_back_pass_forces_the_source_as_the_forward_pass_tokenised_it():
    """runtime.confidence_score.back_pass on a real model: the back pass's forced tokens are the source's own tokens
    (as the encoder saw them, tag and </s> off), so source_log_prob is the log-probability of exactly the source."""
    from runtime.confidence_score import back_pass, features

    translator = Translator.from_dir(exported("translate"))
    outputs = translator.translate(GERMAN[:3], "de", "en", method="greedy")
    backs = back_pass(translator, outputs, GERMAN[:3], "de", "en")
    for out, back in zip(outputs, backs, strict=True):
        assert back.tokens[:back.prefix_len] == out.src_tokens[1:-1]
        lp = np.log(np.maximum(back.token_probs[:back.prefix_len], 1e-9)).sum()
        assert features(out, "x", back)["source_log_prob"] == pytest.approx(float(lp), abs=1e-9)
