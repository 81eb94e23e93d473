"""The calibration behind the Translate page's verdicts as tables and notes (the page's expander and the model
card show them): the confidence bands, how each verdict fared on held-out outputs, the held-out score bands. Pure
(no streamlit): MethodCalibrations in, markdown out. Split from verdicts.py, which says what one output's verdict is."""
from __future__ import annotations

from runtime import confidence
from runtime.confidence import MethodCalibration

from .verdicts import bound


def bands_table(cal: MethodCalibration | None) -> str | None:
    """The method's bands as a markdown table (what each verdict rests on); None without measured bands."""
    if cal is None or not cal.calibrated or not cal.bands:
        return None
    rows = [f"| {b.label} | {b.outputs} | {b.right} | {cal.band_verdict(b)} |" for b in cal.bands]
    return "| shown confidence | hand-judged outputs | right | verdict |\n|---|--:|--:|---|\n" + "\n".join(rows)


def held_out_table(cal: MethodCalibration | None) -> str | None:
    """Each verdict on outputs its cuts were not chosen on, against what it claims, as a markdown table; None
    without that check (a confidence.json written before it)."""
    if cal is None or not cal.calibrated or not cal.held_out:
        return None
    rows = []
    for verdict in confidence.VERDICTS:
        outputs, right = cal.held_out.get(verdict, (0, 0))
        claim = bound(cal, verdict)
        if claim is None:
            backed = "claims nothing"
        elif outputs < int(cal.rule.get("min_region_outputs", 20)):
            backed = "**weak**: too few to check"
        else:
            backed = "**weak**" if cal.weak(verdict) else "yes"
        rows.append(f"| {verdict} | {outputs} | {right} | {f'{right / outputs:.0%}' if outputs else '–'} | "
                    f"{f'{claim[0]} {claim[1]:.0%} right' if claim else '–'} | {backed} |")
    return ("| verdict | held-out outputs | right | share right | claims | backed? |\n|---|--:|--:|--:|---|---|\n"
            + "\n".join(rows))


def held_out_note(cal: MethodCalibration) -> str:
    """How the held-out check was made, in a sentence."""
    return ("Held out: the judged outputs were split in two halves (every other one of each direction), the cuts "
            "chosen by the same rule on one half, and each output of the other half given the verdict those cuts "
            "make; then the halves swapped. The table above is what the cuts' own outputs say; this one is what a "
            "verdict is worth on outputs it was not fitted to. A weak verdict is shown as \"leans wrong\" or "
            "\"leans right\".")


def rule_note(cal: MethodCalibration) -> str:
    """How an output is placed in a band, and the measuring rule's cuts where the calibration names them."""
    rule = cal.rule
    note = ("An output counts only where it is exactly the text that was judged by hand. A confidence is "
            "placed by the percentage shown.")
    if rule.get("wrong_at_most") is not None and rule.get("right_at_least") is not None:
        note += (f" Probably wrong: at most {rule['wrong_at_most']:.0%} of the judged outputs there were right; "
                 f"probably right: at least {rule['right_at_least']:.0%} were; uncertain between. The cuts "
                 "sit on band edges.")
    return note


def score_table(cal: MethodCalibration | None, kind: str) -> str | None:
    """The held-out outputs per score band of the method's scorer `kind` (what each frequency the page quotes
    rests on) as a markdown table, with how well the score and the confidence rank; None without that scorer."""
    scorer = cal.scorers.get(kind) if cal is not None else None
    if scorer is None:
        return None
    rows = [f"| {b.label} | {b.outputs} | {b.right} | {b.share:.0%} |" for b in scorer.bands]
    auroc = ", ".join(f"{d} {v:.3f}" for d, v in scorer.held_out_auroc.items() if v is not None)
    return ("| score | held-out outputs | right | share right |\n|---|--:|--:|--:|\n" + "\n".join(rows)
            + f"\n\nHeld-out AUROC of this score: {auroc}.")


def score_note(kind: str) -> str:
    """How the score was made and checked, in a sentence."""
    back = (", and how likely the model finds the source when it translates the output back (the source forced)"
            if kind == confidence.BACK else "")
    return ("Score: a logistic regression over the output's mean and lowest token log-probability and its length"
            f"{back}, fitted on one half of the hand-judged outputs and each output of the other half scored, then "
            "the halves swapped: every count above is of outputs the score was not fitted on.")


def score_definition() -> str:
    """What the verdict score is, told apart from the confidence and the search score (the Translate page links
    here: verdicts.SCORE_DEFINITION)."""
    return ("The verdict score (0 to 1) is a logistic regression's estimate that an output is right, from the mean "
            "and lowest log-probability of its tokens, its length and, with the back pass, how likely the model "
            "finds the source when it translates the output back; its features are chosen and its weights fitted on "
            "hand-judged outputs, and every frequency the page quotes is of held-out outputs whose verdict score "
            "fell in the same band. It is not the confidence (the geometric mean of the token probabilities) nor "
            "the search score (the length-normalised log-probability that ranks the beam's hypotheses).")
