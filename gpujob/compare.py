"""The ship decision, from `python -m tx evaluate`'s files: a candidate translator ships when, over the six rows
(Ding test, docs test, everyday; DE→EN and EN→DE),

(a) its mean BLEU over the rows rises,
(b) both everyday directions rise (the sentences people actually type), and
(c) no row falls by more than MAX_FALL_BLEU (a fall of exactly that much is allowed).

Why not "higher on every row": a candidate trained on the documentation and everyday mix doubled the docs and
everyday scores while losing 0.6 BLEU on the Ding test; one noisy row must not veto that, but a real
loss on any set still does. A score missing on either side means no decision: not shipped, the missing one named.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from tx.evaluation import eval_files

SETS = ("test", "docs_test", "everyday")  # the Ding test split, the documentation test split, the everyday dev set
DIRECTIONS = ("de-en", "en-de")
MUST_RISE_SET = "everyday"  # rule (b): both its directions must rise; it is what the translator is for
MAX_FALL_BLEU = 1.0  # rule (c): the most BLEU any row may fall; a fall of exactly this much is allowed
BLEU_DECIMALS = 2  # tx.evaluation writes BLEU to 2 decimals: differences are compared at that precision, so
#                    8.05 -> 7.05 is a fall of exactly 1.0 (in floats 8.05 - 7.05 is 1.0000000000000009)


@dataclass(frozen=True)
class Row:
    """One set and direction: both scores, and what the rules say about it."""

    split: str  # the evaluation set: one of SETS
    direction: str  # "de-en" or "en-de"
    candidate: float | None  # the candidate's BLEU; None when its evaluation file lacks it
    shipped: float | None  # the shipped model's BLEU; None when its evaluation file lacks it
    change: float | None  # candidate - shipped, rounded to BLEU_DECIMALS; None when a score is missing
    passes: bool  # does this row pass every rule that looks at single rows (missing score, (b), (c))?
    note: str  # which rule it passes or fails, in words, for the table

    @property
    def name(self) -> str:
        return f"{self.split} {self.direction}"


@dataclass(frozen=True)
class Decision:
    """What `compare` decided, with everything the table and the report show."""

    ship: bool  # every rule passed and every score present
    rows: list[Row]  # one per set and direction, in SETS x DIRECTIONS order
    mean_candidate: float | None  # the candidate's mean BLEU over the rows; None when a score is missing
    mean_shipped: float | None  # the shipped model's mean BLEU over the rows; None when a score is missing
    reasons: list[str]  # one sentence per failed rule (or missing score); empty when it ships

    def to_json(self) -> dict:
        return {**asdict(self), "rules": {"mean_rises": True, "must_rise": MUST_RISE_SET,
                                          "max_fall_bleu": MAX_FALL_BLEU}}


def read_bleu(eval_dir: Path) -> dict[tuple[str, str], float]:
    """{(set, direction): BLEU} from the eval JSON files `python -m tx evaluate --out eval_dir` wrote."""
    out = {}
    for split in SETS:
        path = eval_dir / eval_files(split)[0]
        if path.is_file():
            for direction, scores in json.loads(path.read_text())["directions"].items():
                out[(split, direction)] = float(scores["bleu"])
    return out


def bleu_change(candidate: float, shipped: float) -> float:
    return round(candidate - shipped, BLEU_DECIMALS)


def missing_sides(candidate: float | None, shipped: float | None) -> str:
    sides = [side for side, score in (("candidate", candidate), ("shipped", shipped)) if score is None]
    return " and ".join(sides)


def judge_row(split: str, direction: str, candidate: float | None, shipped: float | None) -> tuple[Row, list[str]]:
    """The row and the reasons it gives for not shipping (a missing score, rule (b), rule (c))."""
    name = f"{split} {direction}"
    if candidate is None or shipped is None:
        missing = missing_sides(candidate, shipped)
        return (Row(split, direction, candidate, shipped, None, False, f"FAILS: no {missing} score"),
                [f"{name} has no {missing} score"])
    change = bleu_change(candidate, shipped)
    reasons, notes = [], []
    if split == MUST_RISE_SET:
        if change > 0:
            notes.append(f"{MUST_RISE_SET} rises")
        else:
            notes.append(f"FAILS: {MUST_RISE_SET} must rise")
            reasons.append(f"{name} does not rise ({shipped:.2f} -> {candidate:.2f})")
    if -change > MAX_FALL_BLEU:
        notes.append(f"FAILS: falls {-change:.2f} (more than {MAX_FALL_BLEU})")
        reasons.append(f"{name} falls {-change:.2f} BLEU (more than {MAX_FALL_BLEU})")
    elif change < 0:
        notes.append(f"falls {-change:.2f} (at most {MAX_FALL_BLEU})")
    elif split != MUST_RISE_SET:
        notes.append("rises" if change > 0 else "unchanged")
    passes = not reasons
    note = ("passes: " if passes else "") + ", ".join(notes)
    return Row(split, direction, candidate, shipped, change, passes, note), reasons


def mean(values: list[float | None]) -> float | None:
    return None if any(v is None for v in values) else sum(values) / len(values)


def compare(candidate: dict[tuple[str, str], float], shipped: dict[tuple[str, str], float]) -> Decision:
    """The ship decision for BLEU by (set, direction) of the candidate and the shipped model (as `read_bleu` gives
    them); pure: it reads and prints nothing."""
    rows, reasons = [], []
    for split in SETS:
        for direction in DIRECTIONS:
            row, why = judge_row(split, direction, candidate.get((split, direction)),
                                 shipped.get((split, direction)))
            rows.append(row)
            reasons += why
    mean_candidate, mean_shipped = mean([r.candidate for r in rows]), mean([r.shipped for r in rows])
    # with a score missing the mean is undefined; the missing score is already the reason
    if mean_candidate is not None and mean_shipped is not None and bleu_change(mean_candidate, mean_shipped) <= 0:
        reasons.insert(0, f"the mean BLEU does not rise ({mean_shipped:.2f} -> {mean_candidate:.2f})")
    return Decision(not reasons, rows, mean_candidate, mean_shipped, reasons)


def verdict(decision: Decision) -> str:
    """One line: "ships: ..." or "not shipped: " and every rule that failed."""
    if decision.ship:
        rise = bleu_change(decision.mean_candidate, decision.mean_shipped)
        return (f"ships: the mean BLEU rises {rise:.2f}, both {MUST_RISE_SET} directions rise, no set falls more "
                f"than {MAX_FALL_BLEU} BLEU")
    return "not shipped: " + "; ".join(decision.reasons)


def render(decision: Decision) -> str:
    """The table (each row, then the mean) and the verdict line."""
    score = lambda v: "-" if v is None else f"{v:.2f}"
    signed = lambda v: "-" if v is None else f"{v:+.2f}"
    lines = [f"{'set':<10} {'dir':<6} {'candidate':>9} {'shipped':>8} {'change':>7}  rule"]
    for r in decision.rows:
        lines.append(f"{r.split:<10} {r.direction:<6} {score(r.candidate):>9} {score(r.shipped):>8} "
                     f"{signed(r.change):>7}  {r.note}")
    mean_change = (None if decision.mean_candidate is None or decision.mean_shipped is None
                   else bleu_change(decision.mean_candidate, decision.mean_shipped))
    mean_note = ("FAILS: no mean (a score is missing)" if mean_change is None
                 else "passes: rises" if mean_change > 0 else "FAILS: must rise")
    lines.append(f"{'mean':<17} {score(decision.mean_candidate):>9} {score(decision.mean_shipped):>8} "
                 f"{signed(mean_change):>7}  {mean_note}")
    lines.append(verdict(decision))
    return "\n".join(lines)
