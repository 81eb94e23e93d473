"""playground/translate's pure modules without Streamlit: the sidebar's settings as search arguments and as what a
result is kept under, the verdict wording, the result table and the cross-attention figure."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from playground import figures
from playground.translate import calibration_tables, cross, result_words, settings, verdicts
from runtime import confidence, confidence_score
from runtime.text import Translation
from runtime.tsv import read_tsv

CALIBRATION = {"rule": {"wrong_at_most": 0.1, "right_at_least": 0.8}, "methods": {
    "beam": {"calibrated": True, "settings": {"beam": 4, "length_penalty": 0.6}, "outputs": 100, "right": 50,
             "bands": [{"from": 0.0, "to": 0.5, "outputs": 40, "right": 2},
                       {"from": 0.5, "to": 0.8, "outputs": 30, "right": 15},
                       {"from": 0.8, "to": 1.0, "outputs": 30, "right": 27}],
             "probably_wrong_below": 0.5, "probably_right_from": 0.8},
    "sample": {"calibrated": False, "reason": "a sampled output is random"}}}
CALIBRATIONS = confidence.parse_calibration(CALIBRATION)


def decoding(**changes) -> settings.Decoding:
    chosen = {"direction": ("de", "en"), "method": "beam", "beam": 4, "length_penalty": 0.6, "stop_early": False,
              "temperature": 1.0, "top_k": 0, "top_p": 1.0, "seed": 0, "precision": "fp32", "provider": "cpu"}
    return settings.Decoding(**{**chosen, **changes})


def translation(text: str = "Good morning.", confidence_: float = 0.3, **changes) -> Translation:
    tokens = ["▁Good", "▁morning", ".", "</s>"]
    found = {"text": text, "tokens": tokens, "token_ids": [5, 6, 7, 2], "score": -0.25,
             "src_tokens": ["<2en>", "▁Guten", "▁Morgen", "</s>"], "truncated": False,
             "token_probs": [0.9, 0.2, 0.5, 0.95], "confidence": confidence_,
             "attention": {"cross": [np.full((2, 4, 4), 0.25), np.full((2, 4, 4), 0.25)]}}
    return Translation(**{**found, **changes})


def test_one_method_name_table_names_every_method():
    from runtime.text import METHODS

    assert set(confidence.METHOD_NAMES) == set(METHODS)
    assert [confidence.method_title(m) for m in METHODS] == ["beam search", "greedy", "sampling"]
    assert [confidence.outputs_name(m) for m in METHODS] == ["beam-search", "greedy", "sampled"]
    assert confidence.method_title("nucleus") == "nucleus"  # an unknown method keeps its own name


def test_only_the_methods_own_settings_count_and_the_first_change_is_named():
    beam = decoding().settings("Hallo")
    assert list(beam) == ["direction", "text", "method", "precision", "provider", "length penalty", "beam size",
                          "stopping"]
    assert beam["stopping"] == "exact" and decoding(stop_early=True).settings("x")["stopping"] != "exact"
    assert "temperature" not in beam and "beam size" not in decoding(method="sample").settings("x")
    assert decoding(temperature=0.5).settings("Hallo") == beam  # a sampling slider under beam search changes none
    assert settings.first_change(beam, beam) is None
    assert settings.first_change(beam, decoding(precision="int8", beam=2).settings("Hallo")) == "precision"
    assert settings.first_change({}, beam) == "direction"


def test_the_search_gets_the_choices_and_stops_early_only_in_beam_search():
    asked = decoding(stop_early=True).search()
    assert (asked["src_lang"], asked["tgt_lang"], asked["attention"], asked["patience"]) == ("de", "en", "cross", 1.0)
    assert decoding(stop_early=True, method="greedy").search()["patience"] is None
    assert decoding().search()["patience"] is None


def test_a_low_confidence_output_is_probably_wrong_with_its_evidence():
    used = decoding().settings("x")
    verdict = confidence.judge(CALIBRATIONS, "beam", 0.3)
    kind, said = verdicts.verdict_message(verdict, CALIBRATIONS["beam"], used, CALIBRATIONS)
    assert kind == "warning" and said.startswith("Low confidence: probably wrong. Confidence 30%: ")
    assert "2 of 40 hand-judged beam-search outputs in this band (0–50%) were right" in said
    kind, said = verdicts.verdict_message(confidence.judge(CALIBRATIONS, "beam", 0.9), CALIBRATIONS["beam"], used,
                                          CALIBRATIONS)
    assert kind == "info" and said.startswith("Probably right (not a guarantee). Confidence 90%")


def test_no_verdict_says_why():
    sampled = decoding(method="sample").settings("x")
    kind, said = verdicts.verdict_message(confidence.judge(CALIBRATIONS, "sample", 0.3), CALIBRATIONS["sample"],
                                          sampled, CALIBRATIONS)
    assert kind == "info" and said == ("No verdict: sampling is not calibrated (a sampled output is random). "
                                       "Confidence 30%.")
    assert "measured other methods only" in verdicts.no_verdict_reason(None, "greedy", CALIBRATIONS)
    assert "python -m tx confidence" in verdicts.no_verdict_reason(None, "greedy", {})


def test_the_basis_says_when_the_settings_differ_from_the_measured_ones():
    cal = CALIBRATIONS["beam"]
    assert verdicts.basis(cal, decoding().settings("x")) == (
        "verdicts measured on 100 hand-judged everyday beam-search outputs")
    assert "your settings differ" in verdicts.basis(cal, decoding(beam=2).settings("x"))
    assert "your settings differ" in verdicts.basis(cal, decoding(stop_early=True).settings("x"))
    assert "int8 shifts confidences" in verdicts.basis(cal, decoding(precision="int8").settings("x"))
    assert verdicts.basis(CALIBRATIONS["sample"], decoding(method="sample").settings("x")) == ""


def test_a_batch_names_the_lines_of_each_verdict():
    judged = [confidence.judge(CALIBRATIONS, "beam", c) for c in (0.3, 0.6, 0.2, 0.95)]
    boxes = verdicts.batch_messages(judged, CALIBRATIONS["beam"], decoding().settings("x"), CALIBRATIONS)
    assert boxes == [("warning", "Low confidence (probably wrong): line(s) 1, 3."),
                     ("warning", "Uncertain: line(s) 2 may be right or wrong."),
                     ("info", "Probably right (not a guarantee): line(s) 4.")]


def test_the_result_table_and_the_warnings_over_it():
    results = [translation(), translation("Hi", 0.9, truncated=True, warning="outside")]
    judged = [confidence.judge(CALIBRATIONS, "beam", r.confidence) for r in results]
    table = verdicts.results_table(["Guten Morgen", "Hallo"], results, judged)
    assert list(table.columns) == ["source", "translation", "verdict", "confidence", "score", "truncated"]
    assert list(table["verdict"]) == ["probably wrong", "probably right"]
    unjudged = verdicts.results_table(["Hallo"], results[:1], [confidence.judge({}, "beam", 0.3)])
    assert list(unjudged["verdict"]) == ["no verdict"]
    words = result_words
    assert words.truncation_warning(results, 128).startswith("Input too long: line(s) 2 exceeded the model's 128")
    assert words.outside_warning(results).startswith("Line(s) 2 are mostly outside")
    assert words.truncation_warning(results[:1], 128) is None and words.outside_warning(results[:1]) is None


def test_headline_and_confidence_caption():
    used = decoding(method="sample", temperature=0.7, top_k=5, seed=3).settings("x")
    assert result_words.headline("DE → EN", used, "CPUExecutionProvider", 12.4) == (
        "DE → EN · sampling (temperature 0.7, top-k 5, top-p 1, seed 3) · fp32 on CPUExecutionProvider · 12 ms")
    assert result_words.method_label(decoding(stop_early=True).settings("x")) == (
        "beam 4, α 0.6, stopped once a beam's worth finished")
    caption = verdicts.confidence_caption(translation(), confidence.judge(CALIBRATIONS, "beam", 0.3), "said")
    assert caption.startswith("Confidence 30% is the geometric mean of the model's token probabilities; said")
    assert "least sure of: '▁morning' (20%), '.' (50%), '▁Good' (90%)" in caption and "4 tokens" in caption


def test_the_bands_table_and_the_rule():
    table = calibration_tables.bands_table(CALIBRATIONS["beam"])
    assert table.splitlines()[2:] == ["| 0–50% | 40 | 2 | probably wrong |", "| 50–80% | 30 | 15 | uncertain |",
                                      "| 80–100% | 30 | 27 | probably right |"]
    assert calibration_tables.bands_table(CALIBRATIONS["sample"]) is None
    assert calibration_tables.bands_table(None) is None
    assert "at most 10% of the judged outputs there were right" in calibration_tables.rule_note(CALIBRATIONS["beam"])


def test_the_cross_attention_is_one_head_or_the_mean_as_markup_and_every_head_of_a_layer_as_a_grid():
    """A long input's map (over 40 tokens a side) stays plotly's: the markup takes ~100 bytes a cell."""
    from app_fixtures import read_heatmap

    rng = np.random.default_rng(0)
    chosen = translation(attention={"cross": [rng.dirichlet(np.ones(4), size=(2, 4)) for _ in range(2)]})  # L×(H,T,S)
    one = read_heatmap(cross.cross_map(chosen, 2, 1))
    np.testing.assert_allclose(one["z"], np.asarray(chosen.attention["cross"][1][0]), atol=5e-4)
    assert one["title"] == "Cross-attention (layer 2, head 1)"
    assert one["x_tokens"] == chosen.src_tokens and one["y_tokens"] == chosen.tokens
    mean = read_heatmap(cross.cross_map(chosen, figures.MEAN, figures.MEAN))
    np.testing.assert_allclose(mean["z"], np.mean(chosen.attention["cross"], axis=(0, 1)), atol=5e-4)
    assert [t.type for t in cross.heads_figure(chosen, 1).data] == ["heatmap"] * 2
    long = translation(src_tokens=[f"s{i}" for i in range(41)], attention={"cross": [np.full((2, 4, 41), 1 / 41)]})
    assert cross.cross_map(long, 1, 1)["data"][0]["type"] == "heatmap"  # beyond 40 tokens: plotly's map


def checked_calibration(held_out: dict[str, dict[str, int]]) -> confidence.MethodCalibration:
    """CALIBRATION's beam search with the rule's bounds and a held-out check (tx.confidence.held_out's layout)."""
    beam = {**CALIBRATION["methods"]["beam"], "held_out": {"verdicts": held_out}}
    rule = {"wrong_at_most": 0.25, "right_at_least": 0.75, "min_band_outputs": 10, "min_region_outputs": 20}
    return confidence.parse_calibration({"rule": rule, "methods": {"beam": beam}})["beam"]


def test_a_verdict_the_held_out_outputs_back_stays_sure_and_says_how_it_fared():
    """Issue 34, 6: 36 of 305 held-out outputs called probably wrong were right (12%, within the 25% bound)."""
    cal = checked_calibration({"probably wrong": {"outputs": 305, "right": 36},
                               "uncertain": {"outputs": 175, "right": 81},
                               "probably right": {"outputs": 0, "right": 0}})
    assert not cal.weak(confidence.WRONG) and cal.weak(confidence.RIGHT) and not cal.weak(confidence.UNCERTAIN)
    used = decoding().settings("x")
    kind, said = verdicts.verdict_message(confidence.judge({"beam": cal}, "beam", 0.3), cal, used, {"beam": cal})
    assert kind == "warning" and said.startswith("Low confidence: probably wrong. Confidence 30%: ")
    assert said.endswith("On held-out outputs (cuts chosen on one half of the judged outputs, tried on the other, "
                         "both ways), 36 of the 305 called probably wrong were right (12%).")
    assert verdicts.check_words(cal, confidence.RIGHT).endswith(
        "both ways), none was called probably right: too few to check this verdict")
    assert calibration_tables.held_out_table(cal).splitlines()[2:] == [
        "| probably wrong | 305 | 36 | 12% | at most 25% right | yes |",
        "| uncertain | 175 | 81 | 46% | – | claims nothing |",
        "| probably right | 0 | 0 | – | at least 75% right | **weak**: too few to check |"]


def test_a_verdict_the_held_out_outputs_do_not_back_says_it_is_weak():
    cal = checked_calibration({"probably wrong": {"outputs": 40, "right": 12},  # 30% right: over the 25% bound
                               "uncertain": {"outputs": 50, "right": 25},
                               "probably right": {"outputs": 19, "right": 19}})  # all right, but under 20 outputs
    assert cal.weak(confidence.WRONG) and cal.weak(confidence.RIGHT)
    used, calibrations = decoding().settings("x"), {"beam": cal}
    kind, said = verdicts.verdict_message(confidence.judge(calibrations, "beam", 0.3), cal, used, calibrations)
    assert kind == "warning" and said.startswith("Low confidence: leans wrong, but this verdict is weak. ")
    assert said.endswith("12 of the 40 called probably wrong were right (30%), where this verdict stands for at "
                         "most 25%.")
    kind, said = verdicts.verdict_message(confidence.judge(calibrations, "beam", 0.9), cal, used, calibrations)
    assert kind == "warning" and said.startswith("Leans right, but this verdict is weak (not a guarantee). ")
    assert said.endswith("only 19 were called probably right: too few to check this verdict.")
    judged = [confidence.judge(calibrations, "beam", c) for c in (0.3, 0.6, 0.95)]
    assert verdicts.batch_messages(judged, cal, used, calibrations) == [
        ("warning", "Low confidence (leans wrong; a weak verdict, see below): line(s) 1."),
        ("warning", "Uncertain: line(s) 2 may be right or wrong."),
        ("warning", "Leans right (a weak verdict, see below; not a guarantee): line(s) 3.")]
    table = verdicts.results_table(["a", "b", "c"], [translation(confidence_=c) for c in (0.3, 0.6, 0.95)], judged)
    assert list(table["verdict"]) == ["probably wrong (weak)", "uncertain", "probably right (weak)"]
    assert "| probably wrong | 40 | 12 | 30% | at most 25% right | **weak** |" in calibration_tables.held_out_table(cal)


def test_without_a_held_out_check_nothing_is_called_weak():
    cal = CALIBRATIONS["beam"]
    assert not cal.held_out and not cal.weak(confidence.WRONG) and calibration_tables.held_out_table(cal) is None
    assert verdicts.check_words(cal, confidence.WRONG) == ""


# ---------------------------------------------------------------- issue 43, 5: verdicts that hold
SHIPPED = Path(__file__).resolve().parents[2] / "models" / "translate"
LABELS = ("probably wrong", "probably right", "uncertain", "low confidence", "leans")


def scorer_entry(intercept: float, bands: list[tuple[float, float, int, int]], back: bool = False) -> dict:
    names = list(confidence_score.FEATURES if back else confidence_score.FEATURES[:3])
    return {"features": names, "mean": [0.0] * len(names), "scale": [1.0] * len(names),
            "weights": [0.0] * len(names), "intercepts": {"de-en": intercept, "en-de": intercept},
            "held_out_auroc": {"all": 0.9},
            "bands": [{"from": lo, "to": hi, "outputs": n, "right": k} for lo, hi, n, k in bands]}


def test_the_pages_own_checked_examples_never_get_a_label_that_contradicts_their_mark():
    """Issue 43, 5: every ✓ example of the shipped examples.tsv, read against the shipped confidence.json, whatever
    confidence and score its output gets (0.1%–100%, every method): the hand judgement leads, the model's number
    stands beside it, and no verdict label is shown, in the box over one output and in the batch table."""
    calibrations = confidence.read_calibration(SHIPPED)
    assert calibrations["beam"].scorers  # the shipped file has a fitted score (format 3)
    checked = [row for row in read_tsv(SHIPPED / "examples.tsv") if row["verdict"] == "works"]
    assert len(checked) >= 7
    for row in checked:
        direction = row["direction"]
        for method in ("beam", "greedy", "sample"):
            for p in (0.001, 0.3, 0.45, 0.64, 0.8, 0.95, 1.0):
                out = translation(row["output"], p, token_probs=[p] * 4)
                v = confidence.judge(calibrations, method, p)
                f = confidence.frequency(calibrations, method, out, row["source"], direction)
                kind, said = verdicts.verdict_message(v, calibrations.get(method), {"method": method}, calibrations,
                                                      f, row, out.text)
                assert said.startswith("✓ Judged right by hand (this model's beam-4 output; this output is that "
                                       "text). The model's own number: "), said
                assert not any(label in said.lower() for label in LABELS), said
                name = verdicts.verdict_name(v, f, row)
                assert name.startswith("✓ judged right by hand; model: ") and not any(
                    label in name.lower() for label in LABELS), name


def test_a_scored_output_is_told_the_measured_frequency_of_its_band():
    report = {"format": 3, "methods": {"beam": {
        **CALIBRATION["methods"]["beam"],
        "scorers": {"plain": scorer_entry(-2.0, [(0.0, 0.5, 120, 36), (0.5, 1.0, 30, 27)])}}}}
    calibrations = confidence.parse_calibration(report)
    out = translation(confidence_=0.3)
    f = confidence.frequency(calibrations, "beam", out, "Guten Morgen.", "de-en")
    assert round(f.score, 6) == round(1 / (1 + np.exp(2.0)), 6)  # all weights 0: sigmoid(intercept)
    v = confidence.judge(calibrations, "beam", 0.3)
    kind, said = verdicts.verdict_message(v, calibrations["beam"], {"method": "beam"}, calibrations, f)
    assert (kind, said) == ("warning", "About 30% right: of 120 held-out hand-judged beam-search outputs with a "
                                       "verdict score like this one (0.00–0.50)"
                                       ", about 30% (36) were right. Confidence 30%.")
    assert verdicts.verdict_name(v, f) == "about 30% right (of 120 held out)"
    assert "| 0.00–0.50 | 120 | 36 | 30% |" in calibration_tables.score_table(calibrations["beam"], confidence.PLAIN)
    boxes = verdicts.batch_messages([v], calibrations["beam"], {"method": "beam"}, calibrations, [f], [False])
    assert not any("probably" in text or "Uncertain" in text for _, text in boxes)


# Outputs with forced tokens, and the verdict score told apart from the confidence and the search score
FORCED_REPORT = {"format": 3, "methods": {"beam": {
    **CALIBRATION["methods"]["beam"],
    "scorers": {"plain": scorer_entry(-2.0, [(0.0, 0.5, 120, 36), (0.5, 1.0, 30, 27)])}}}}
SCORED = confidence.parse_calibration(FORCED_REPORT)


def measured(out):
    return (confidence.judge(SCORED, "beam", out.confidence),
            confidence.frequency(SCORED, "beam", out, "Guten Morgen.", "de-en"))


def test_outputs_with_forced_tokens_are_told_that_no_measured_frequency_applies():
    prefixed = translation(prefix_len=2)
    assert verdicts.forced(prefixed) and verdicts.forced(translation(), steered=True)  # an alternative at word 1
    assert not verdicts.forced(translation())
    v, f = measured(prefixed)
    assert f is not None  # the runtime would place it: the page must not
    kind, said = verdicts.verdict_message(v, SCORED["beam"], {"method": "beam"}, SCORED, f,
                                          is_forced=True)
    assert said == f"{verdicts.FORCED}. Confidence 30%."
    assert "held-out" not in said and "%" not in verdicts.FORCED and "right" not in said.lower()
    assert said.count(". ") == 1  # one sentence, then the confidence
    assert not any(label in said.lower() for label in LABELS)
    assert verdicts.verdict_name(v, f, is_forced=True) == "no measured frequency (forced start)"
    known = {"verdict": "works", "output": prefixed.text}
    _, hand = verdicts.verdict_message(v, SCORED["beam"], {"method": "beam"}, SCORED, f, known,
                                       prefixed.text, is_forced=True)
    assert hand.startswith("✓ Judged right by hand") and "held-out" not in hand and "no measured frequency" in hand
    boxes = verdicts.batch_messages([v, v], SCORED["beam"], {"method": "beam"}, SCORED, [f, f],
                                    [False, False], [True, False])
    texts = " ".join(text for _, text in boxes)
    assert "Line(s) 1: no measured frequency applies" in texts
    assert not any(label in texts.lower() for label in LABELS)  # line 2 is read in the table, line 1 is told
    table = verdicts.results_table(["a", "b"], [prefixed, translation()], [v, v], [f, f], None, [True, False])
    assert list(table["verdict"]) == ["no measured frequency (forced start)", "about 30% right (of 120 held out)"]


def test_the_verdict_score_is_told_apart_from_the_confidence_and_the_search_score_with_a_link():
    out = translation(score=-2.587, confidence_=0.64)
    v, f = measured(out)
    line = verdicts.score_line(f, v, out)
    assert line.startswith(f"Verdict score {f.score:.2f}: ")
    assert "(Model_card#the-verdict-score)" in line
    assert "confidence (64%" in line and "search score (-2.587" in line
    assert "verdict score like this one" in f.words
    caption = verdicts.confidence_caption(out, v, "")
    assert "search score (length-normalised log-probability): -2.587" in caption
    definition = calibration_tables.score_definition()
    assert "not the confidence" in definition and "search score" in definition
