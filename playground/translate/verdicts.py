"""The Translate page's words: what each output's verdict says, where the verdicts come from, and the result
table. Pure (no streamlit): runtime Translations and confidence Verdicts in, strings and tables out. A message
comes as (kind, text), kind "warning" or "info": the page never shows a model output as a green success.

Where confidence.json has a fitted score (format 3 on), an output is told a measured frequency ("of 120 held-out
outputs with a verdict score like this one, about 30% were right"), never a bare label; never for an output with
forced tokens, on which no frequency was measured (FORCED). Where the page holds a hand
judgement of the source (a curated example, examples.tsv), that judgement leads, with the model's number beside
it, and no verdict label is shown: a label that contradicts the ✓ next to it teaches the user to ignore both."""
from __future__ import annotations

from typing import Any

import pandas as pd

from runtime import confidence
from runtime.confidence import Frequency, MethodCalibration, Verdict
from runtime.text import Translation

Message = tuple[str, str]  # ("warning" | "info", text)

# Every frequency was measured on outputs the model chose freely; a forced token the model found unlikely pulls the
# score down, so no measured share applies to an output with forced tokens, and the page says so instead.
FORCED = ("No measured frequency applies to this output: its start was forced (a start you gave or an alternative "
          "you picked), none of the hand-judged outputs the frequencies were measured on had forced words, and a "
          "forced unlikely word pulls the verdict score down")
SCORE_DEFINITION = "Model_card#the-verdict-score"  # the Model card's section that defines the verdict score


def forced(result: Translation, steered: bool = False) -> bool:
    """Whether an output has forced tokens: a target prefix (prefix_len > 0) or a chosen alternative (`steered`:
    the alternative's own token is forced even at the first word, where prefix_len is 0)."""
    return steered or result.prefix_len > 0


def no_verdict_reason(cal: MethodCalibration | None, method: str,
                      calibrations: dict[str, MethodCalibration]) -> str:
    """Why an output of `method` gets no verdict: the method is not calibrated, or the model has no measurement."""
    title = confidence.method_title(method)
    if cal is not None and not cal.calibrated:
        return f"{title} is not calibrated ({cal.reason})"
    if calibrations:
        return f"{title} is not calibrated for this model (its confidence.json measured other methods only)"
    return ("this model has no measured calibration (`python -m tx confidence MODEL_DIR` measures one on "
            "hand-judged outputs)")


def basis(cal: MethodCalibration | None, used: dict[str, Any]) -> str:
    """Where the verdicts come from, and how the settings used differ from the measured ones."""
    if cal is None or not cal.calibrated:
        return ""
    words = f"verdicts measured on {cal.outputs} hand-judged everyday {confidence.outputs_name(cal.method)} outputs"
    measured = (cal.settings.get("beam"), cal.settings.get("length_penalty"))
    if cal.method == "beam" and None not in measured and ((used["beam size"], used["length penalty"]) != measured
                                                          or used["stopping"] != "exact"):
        words += (f" of beam {measured[0]}, α {measured[1]:g} (your settings differ: read the verdict as a rough "
                  "guide)")
    if used["precision"] != "fp32":
        words += f" (fp32 outputs; {used['precision']} shifts confidences slightly)"
    return words


HELD_OUT = "On held-out outputs (cuts chosen on one half of the judged outputs, tried on the other, both ways)"


def bound(cal: MethodCalibration, verdict: str) -> tuple[str, float] | None:
    """What a sure verdict claims about the outputs it is given: ("at most", 0.25) right for "probably wrong",
    ("at least", 0.75) for "probably right"; None for "uncertain"."""
    if verdict == confidence.WRONG:
        return "at most", float(cal.rule.get("wrong_at_most", 0.25))
    if verdict == confidence.RIGHT:
        return "at least", float(cal.rule.get("right_at_least", 0.75))
    return None


def check_words(cal: MethodCalibration | None, verdict: str | None) -> str:
    """How the verdict fared on outputs its cuts were not chosen on; '' where the calibration has no such check."""
    if cal is None or not cal.held_out or verdict is None:
        return ""
    outputs, right = cal.held_out.get(verdict, (0, 0))
    if outputs < int(cal.rule.get("min_region_outputs", 20)):
        few = "none was" if not outputs else f"only {outputs} {'was' if outputs == 1 else 'were'}"
        return f"{HELD_OUT}, {few} called {verdict}: too few to check this verdict"
    words = f"{HELD_OUT}, {right} of the {outputs} called {verdict} were right ({right / outputs:.0%})"
    claim = bound(cal, verdict)
    if claim and cal.weak(verdict):
        words += f", where this verdict stands for {claim[0]} {claim[1]:.0%}"
    return words


def frequency_words(f: Frequency) -> str:
    """'About 30% right: of 120 held-out … (0.20–0.30), about 30% (36) were right.'"""
    return f"About {f.band.share:.0%} right: {f.words}"


def model_number(v: Verdict, f: Frequency | None, is_forced: bool = False) -> str:
    """The model's own number without a label: the measured frequency, else the confidence and its band's count;
    for a forced output the confidence alone (FORCED)."""
    if is_forced:
        return f"confidence {v.percent}% ({FORCED[0].lower()}{FORCED[1:]})"
    if f is not None:
        return f"{f.words} (score {f.score:.2f}; confidence {v.percent}%)"
    return f"confidence {v.percent}%" + (f": {v.evidence}" if v.evidence else "")


def hand_message(known: dict[str, str], result_text: str, v: Verdict, f: Frequency | None,
                 is_forced: bool = False) -> Message:
    """The box above a curated example's output: the hand judgement first, the model's number beside it, no
    verdict label (module docstring)."""
    judged = known.get("output") or ""
    same = ("this output is that text" if result_text == judged else
            f"this output differs from the judged one ({judged!r})" if judged else "")
    number = f"The model's own number: {model_number(v, f, is_forced)}."
    if known.get("verdict") == "works":
        return "info", f"✓ Judged right by hand (this model's beam-4 output{'; ' + same if same else ''}). {number}"
    note = known.get("note") or "see the card"
    return "warning", (f"✗ A known failure of this model: judged wrong by hand ({note}"
                       f"{'; ' + same if same else ''}). {number}")


def verdict_message(v: Verdict, cal: MethodCalibration | None, used: dict[str, Any],
                    calibrations: dict[str, MethodCalibration], f: Frequency | None = None,
                    known: dict[str, str] | None = None, result_text: str = "", is_forced: bool = False) -> Message:
    """The box above a single output: a hand judgement where there is one (hand_message); else, for an output with
    forced tokens (`is_forced`), that no measured frequency applies (FORCED); else the measured frequency where the
    model has a score (format 3 on); else its verdict, its confidence, the evidence behind it, and how the verdict
    fared on held-out outputs; a verdict those do not back is called weak, never sure."""
    if known and known.get("verdict") in ("works", "fails"):
        return hand_message(known, result_text, v, f, is_forced)
    if is_forced:
        return "info", f"{FORCED}. Confidence {v.percent}%."
    if f is not None:
        return ("warning" if f.band.share < 0.5 else "info"), f"{frequency_words(f)}. Confidence {v.percent}%."
    shown = f"Confidence {v.percent}%"
    why = "; ".join(part for part in (v.evidence, v.region) if part)
    checked = check_words(cal, v.verdict)
    why += f". {checked}" if checked else ""
    if v.verdict == confidence.WRONG:
        verdict_words = "leans wrong, but this verdict is weak" if v.weak else "probably wrong"
        return "warning", f"Low confidence: {verdict_words}. {shown}: {why}."
    if v.verdict == confidence.UNCERTAIN:
        return "warning", f"Uncertain: this translation may be right or wrong. {shown}: {why}."
    if v.verdict == confidence.RIGHT and v.weak:
        return "warning", f"Leans right, but this verdict is weak (not a guarantee). {shown}: {why}."
    if v.verdict == confidence.RIGHT:
        return "info", f"Probably right (not a guarantee). {shown}: {why}."
    return "info", f"No verdict: {no_verdict_reason(cal, used['method'], calibrations)}. {shown}."


def verdict_name(v: Verdict, f: Frequency | None = None, known: dict[str, str] | None = None,
                 is_forced: bool = False) -> str:
    """The verdict as the batch table and its CSV name it: "✓ judged right by hand" where a hand judgement exists
    (with the model's frequency beside it), "no measured frequency (forced start)" for an output with forced
    tokens, "about 30% right (of 120 held out)" where the model has a score, else "probably wrong", "probably
    right (weak)"..."""
    model_words = ("no measured frequency (forced start)" if is_forced else
                   f"about {f.band.share:.0%} right (of {f.band.outputs} held out)" if f is not None else "")
    if known and known.get("verdict") in ("works", "fails"):
        hand = "✓ judged right by hand" if known["verdict"] == "works" else "✗ judged wrong by hand"
        return hand + (f"; model: {model_words}" if model_words else f"; model: confidence {v.percent}%")
    if model_words:
        return model_words
    if v.verdict is None:
        return "no verdict"
    return f"{v.verdict} (weak)" if v.weak else v.verdict


def confidence_caption(result: Translation, v: Verdict, basis_words: str) -> str:
    """Under a single output: what the confidence is, where the verdicts come from (`basis_words`, basis()), the
    three tokens the model was least sure of, and the search score."""
    unsure = sorted(zip(result.token_probs, result.tokens, strict=True))[:3]
    return (f"Confidence {v.percent}% is the geometric mean of the model's token probabilities"
            + (f"; {basis_words}" if basis_words else "") + f" · least sure of: "
            f"{', '.join(f'{tok!r} ({p:.0%})' for p, tok in unsure)} · search score (length-normalised "
            f"log-probability): {result.score:.3f} · {len(result.tokens)} tokens")


def score_line(f: Frequency, v: Verdict, result: Translation) -> str:
    """One line telling the verdict score apart from the confidence and the search score, with a link to where the
    verdict score is defined."""
    return (f"Verdict score {f.score:.2f}: the fitted chance of being right from the output's token "
            f"log-probabilities, its length{' and the back-translation pass' if f.back else ''} "
            f"([how it is defined]({SCORE_DEFINITION})); not the confidence ({v.percent}%, the geometric mean of the "
            f"token probabilities) nor the search score ({result.score:.3f}, the length-normalised log-probability).")


def batch_messages(verdicts: list[Verdict], cal: MethodCalibration | None, used: dict[str, Any],
                   calibrations: dict[str, MethodCalibration], frequencies: list[Frequency | None] | None = None,
                   hand: list[bool] | None = None, is_forced: list[bool] | None = None) -> list[Message]:
    """Above a batch's table: the lines of each verdict, one box per verdict that any line got; lines with a
    measured frequency (format 3 on) or a hand judgement (`hand`) are read in the table and get no label here, and
    lines with forced tokens (`is_forced`) are told that no measured frequency applies (FORCED)."""
    frequencies = frequencies or [None] * len(verdicts)
    hand = hand or [False] * len(verdicts)
    is_forced = is_forced or [False] * len(verdicts)
    messages: list[Message] = []
    if any(is_forced):
        messages.append(("info", f"Line(s) {', '.join(str(i + 1) for i, x in enumerate(is_forced) if x)}: "
                              f"{FORCED[0].lower()}{FORCED[1:]}."))
        frequencies = [None if x else f for f, x in zip(frequencies, is_forced, strict=True)]
    if any(f is not None for f in frequencies):
        messages.append(("info", "The verdict column gives each line's measured frequency: of the held-out hand-judged "
                              "outputs whose score was like the line's, the share that were right."))
    if any(hand):
        messages.append(("info", f"Line(s) {', '.join(str(i + 1) for i, h in enumerate(hand) if h)} were judged by "
                              "hand (the page's examples): the table shows that judgement beside the model's "
                              "number."))
    labelled = [f is None and not h and not x for f, h, x in zip(frequencies, hand, is_forced, strict=True)]
    grouped = {verdict: ", ".join(str(i + 1) for i, v in enumerate(verdicts)
                                  if v.verdict == verdict and labelled[i]) for verdict in confidence.VERDICTS}
    weak = {verdict: cal is not None and cal.weak(verdict) for verdict in confidence.VERDICTS}
    if grouped[confidence.WRONG]:
        verdict_words = "leans wrong; a weak verdict, see below" if weak[confidence.WRONG] else "probably wrong"
        messages.append(("warning", f"Low confidence ({verdict_words}): line(s) {grouped[confidence.WRONG]}."))
    if grouped[confidence.UNCERTAIN]:
        messages.append(("warning", f"Uncertain: line(s) {grouped[confidence.UNCERTAIN]} may be right or wrong."))
    if grouped[confidence.RIGHT] and weak[confidence.RIGHT]:
        messages.append(("warning", f"Leans right (a weak verdict, see below; not a guarantee): line(s) "
                                 f"{grouped[confidence.RIGHT]}."))
    elif grouped[confidence.RIGHT]:
        messages.append(("info", f"Probably right (not a guarantee): line(s) {grouped[confidence.RIGHT]}."))
    if any(v.verdict is None and labelled[i] for i, v in enumerate(verdicts)):
        messages.append(("info", f"No verdict: {no_verdict_reason(cal, used['method'], calibrations)}."))
    return messages


def results_table(lines: list[str], results: list[Translation], verdicts: list[Verdict],
                  frequencies: list[Frequency | None] | None = None,
                  known: list[dict[str, str] | None] | None = None,
                  is_forced: list[bool] | None = None) -> pd.DataFrame:
    """One row per line: what the page shows as a batch and what the CSV download holds."""
    frequencies = frequencies or [None] * len(verdicts)
    known = known or [None] * len(verdicts)
    is_forced = is_forced or [False] * len(verdicts)
    return pd.DataFrame({"source": lines, "translation": [r.text for r in results],
                         "verdict": [verdict_name(v, f, k, x) for v, f, k, x in zip(verdicts, frequencies, known,
                                                                                     is_forced, strict=True)],
                         "confidence": [round(r.confidence, 3) for r in results],
                         "score": [round(r.score, 4) for r in results],
                         "truncated": [r.truncated for r in results]})
