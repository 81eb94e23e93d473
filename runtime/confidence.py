"""What a translation's confidence means for a model: one verdict per output ("probably wrong", "uncertain",
"probably right") from the calibration measured for the decoding method that produced it.

`confidence.json` in a model directory is written by the measuring tool (`python -m tx confidence`, see
tx/confidence.py for how it is measured and how the verdict cuts are chosen); the runtime only reads it.
A confidence is always placed by the value a reader sees: `percent` is the rounded percentage the app shows
(f"{confidence:.0%}"), so an output shown as 80% is in the 80–100% band, never in 70–80%.

Format 3 adds, per calibrated method, `scorers`: a score fitted on features of the output (and of its
back-translation) with the held-out outputs in each score band (runtime.confidence_score); `frequency` places an
output among them: "of N held-out outputs like this one, about p% were right", a measured frequency in place of a
label. Format 4 replaces the back scorer's features: the source's log-probability when the output is translated
back with the source forced (runtime.confidence_score), in place of format 3's free back-translation. Files of
format 1–2 still read as before (verdicts only), format 3 with its plain scorer (its back scorer needs a pass the
runtime no longer makes); a newer format than FORMAT is refused (`format_problem` says why), never half-read.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .confidence_score import RETIRED_FEATURES, ScoreBand, Scorer, features, parse_scorer

CONFIDENCE_FILE = "confidence.json"
WRONG, UNCERTAIN, RIGHT = "probably wrong", "uncertain", "probably right"
VERDICTS = (WRONG, UNCERTAIN, RIGHT)
FORMAT = 4  # the newest confidence.json this runtime reads (tx.confidence writes it)
PLAIN, BACK = "plain", "back"  # the two scorers of a method: without and with the back-translation features


@dataclass(frozen=True)
class MethodName:
    """How a reader is told of one decoding method: the one table of these names (the app's Method picker, its
    verdicts, and Verdict.evidence all read it)."""
    title: str  # the method itself: "beam search" (the picker; "beam search is not calibrated")
    outputs: str  # its outputs, as an adjective: "beam-search" ("hand-judged beam-search outputs")


METHOD_NAMES = {"beam": MethodName("beam search", "beam-search"), "greedy": MethodName("greedy", "greedy"),
                "sample": MethodName("sampling", "sampled")}


def method_title(method: str) -> str:
    """"beam search", "greedy", "sampling"; an unknown method by its own name."""
    return METHOD_NAMES[method].title if method in METHOD_NAMES else method


def outputs_name(method: str) -> str:
    """"beam-search", "greedy", "sampled" (as in "hand-judged sampled outputs"); an unknown method by its name."""
    return METHOD_NAMES[method].outputs if method in METHOD_NAMES else method


def percent(confidence: float) -> int:
    """The confidence as the whole percentage the app shows: int(f"{confidence:.0%}")."""
    return int(f"{float(confidence):.0%}".rstrip("%"))


@dataclass(frozen=True)
class Band:
    """Judged outputs whose shown confidence was lo% <= p < hi% (hi = 100 includes 100%)."""
    lo: int
    hi: int
    outputs: int
    right: int

    @property
    def label(self) -> str:
        return f"{self.lo}–{self.hi}%"

    def holds(self, shown: int) -> bool:
        return self.lo <= shown < self.hi or shown == self.hi == 100


@dataclass(frozen=True)
class MethodCalibration:
    """One decoding method's measurement. `calibrated` False: no verdicts, `reason` says why. Outputs shown
    below `wrong_below` % are probably wrong, from `right_from` % (None: never) probably right, else uncertain."""
    method: str
    calibrated: bool
    settings: dict[str, Any] = field(default_factory=dict)
    outputs: int = 0
    right: int = 0
    bands: tuple[Band, ...] = ()
    wrong_below: float = 0.0
    right_from: float | None = None
    reason: str = ""
    rule: dict[str, Any] = field(default_factory=dict)  # the measuring rule's parameters (tx.confidence.RULE)
    # verdict -> (outputs, right) on outputs the cuts were not chosen on (tx.confidence.held_out); {} when the
    # file predates that check
    held_out: dict[str, tuple[int, int]] = field(default_factory=dict)
    # PLAIN / BACK -> the fitted score and its held-out bands (format 3 on); {} in older files
    scorers: dict[str, Scorer] = field(default_factory=dict)

    def verdict(self, shown: int) -> str:
        if shown < self.wrong_below:
            return WRONG
        return RIGHT if self.right_from is not None and shown >= self.right_from else UNCERTAIN

    def weak(self, verdict: str | None) -> bool:
        """Whether the held-out outputs fail to back a sure verdict: those called "probably wrong" were right more
        often than the rule allows (or "probably right" less often), or too few were held out to tell. "Uncertain"
        claims nothing, and without a held-out check there is nothing to say."""
        if verdict not in (WRONG, RIGHT) or not self.held_out:
            return False
        outputs, right = self.held_out.get(verdict, (0, 0))
        if outputs < int(self.rule.get("min_region_outputs", 20)):
            return True
        if verdict == WRONG:
            return right / outputs > float(self.rule.get("wrong_at_most", 0.25))
        return right / outputs < float(self.rule.get("right_at_least", 0.75))

    def band_verdict(self, band: Band) -> str:
        """The band's verdict; a cut inside a band (the measuring tool puts cuts on edges) is said."""
        low, high = self.verdict(band.lo), self.verdict(band.hi - 1)
        return low if low == high else f"{low} under {self.wrong_below:g}%, else {high}"

    def region(self, verdict: str) -> tuple[str, int, int]:
        """(where, outputs, right) over the bands that lie wholly in the verdict's range of shown confidences."""
        lo, hi = {WRONG: (0, self.wrong_below), RIGHT: (self.right_from, 101),
                  UNCERTAIN: (self.wrong_below, 101 if self.right_from is None else self.right_from)}[verdict]
        inside = [b for b in self.bands if lo is not None and b.lo >= lo and b.hi <= hi]
        limits = [f"from {lo:g}%"] * bool(lo) + [f"under {hi:g}%"] * (hi <= 100)
        where = " to ".join(limits) or "at any confidence"
        return where, sum(b.outputs for b in inside), sum(b.right for b in inside)


@dataclass(frozen=True)
class Verdict:
    """What one output's confidence says. `verdict` None: no verdict (method not calibrated, or no measurement)."""
    verdict: str | None
    percent: int
    band: Band | None
    calibration: MethodCalibration | None

    @property
    def weak(self) -> bool:
        """A sure-sounding verdict that outputs held out from choosing the cuts do not back (MethodCalibration.weak)."""
        return self.calibration is not None and self.calibration.weak(self.verdict)

    @property
    def evidence(self) -> str:
        """'N of M hand-judged … outputs in this band (lo–hi%) were right', or why there is no such count."""
        if self.calibration is None or not self.calibration.calibrated:
            return ""
        kind = outputs_name(self.calibration.method)
        if self.band is None or not self.band.outputs:
            where = f"this band ({self.band.label})" if self.band else f"{self.percent}%"
            return f"none of the {self.calibration.outputs} hand-judged {kind} outputs had a confidence in {where}"
        return (f"{self.band.right} of {self.band.outputs} hand-judged {kind} outputs in this band "
                f"({self.band.label}) were right")

    @property
    def region(self) -> str:
        """'of all N … under W%, k were right' where the verdict spans more outputs than this band; else ''."""
        if self.verdict is None or self.calibration is None:
            return ""
        where, outputs, right = self.calibration.region(self.verdict)
        if not outputs or (self.band is not None and outputs == self.band.outputs):
            return ""
        return f"of all {outputs} {where}, {right} were right"


def _cut(value: Any) -> float | None:
    return None if value is None else round(float(value) * 100, 2)


def _bands(rows: list[dict[str, Any]]) -> tuple[Band, ...]:
    return tuple(Band(round(float(row["from"]) * 100), round(float(row["to"]) * 100), int(row["outputs"]),
                      int(row["right"])) for row in rows)


def _held_out(entry: dict[str, Any]) -> dict[str, tuple[int, int]]:
    verdicts = (entry.get("held_out") or {}).get("verdicts") or {}
    return {verdict: (int(counts["outputs"]), int(counts["right"])) for verdict, counts in verdicts.items()}


def parse_calibration(report: Any) -> dict[str, MethodCalibration]:
    """{method: MethodCalibration} from a confidence.json's content; {} when it is not one, or is of a newer
    format than this runtime reads (format_problem)."""
    if format_problem(report):
        return {}
    try:
        calibrations = {}
        rule = dict(report.get("rule") or {})
        for method, entry in report["methods"].items():
            if not entry.get("calibrated"):
                calibrations[method] = MethodCalibration(method, False, dict(entry.get("settings") or {}),
                                                  reason=str(entry.get("reason") or "not measured"), rule=rule)
                continue
            calibrations[method] = MethodCalibration(
                method, True, dict(entry.get("settings") or {}), int(entry["outputs"]), int(entry["right"]),
                _bands(entry["bands"]), _cut(entry["probably_wrong_below"]) or 0.0,
                _cut(entry.get("probably_right_from")), rule=rule, held_out=_held_out(entry),
                scorers={kind: parse_scorer(scorer) for kind, scorer in (entry.get("scorers") or {}).items()
                         if not set(RETIRED_FEATURES).intersection(scorer["features"])})
        return calibrations
    except (TypeError, KeyError, ValueError, AttributeError):
        return {}


def format_problem(report: Any) -> str | None:
    """Why a confidence.json's content cannot be read by this runtime (a newer format), else None."""
    version = report.get("format", 1) if isinstance(report, dict) else 1
    if isinstance(version, int) and version > FORMAT:
        return (f"confidence.json is format {version}, newer than this runtime reads (up to {FORMAT}): update the "
                "runtime, or write the file again with `python -m tx confidence MODEL_DIR`")
    return None


def read_calibration(model_dir: str | Path) -> dict[str, MethodCalibration]:
    """The per-method calibration of a model directory; {} when it has no readable confidence.json."""
    try:
        return parse_calibration(json.loads((Path(model_dir) / CONFIDENCE_FILE).read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return {}


def judge(calibrations: dict[str, MethodCalibration], method: str, confidence: float) -> Verdict:
    """The verdict on an output of `method` with this confidence, placed by its shown percentage."""
    shown = percent(confidence)
    calibration = calibrations.get(method)
    if calibration is None or not calibration.calibrated:
        return Verdict(None, shown, None, calibration)
    band = next((b for b in calibration.bands if b.holds(shown)), None)
    return Verdict(calibration.verdict(shown), shown, band, calibration)


@dataclass(frozen=True)
class Frequency:
    """Where one output's score falls among the held-out judged outputs of its method: `band` holds how many of
    them scored alike and how many of those were right."""
    score: float
    band: ScoreBand
    method: str
    back: bool  # whether the score used the back-translation

    @property
    def words(self) -> str:
        """'of 120 held-out hand-judged beam-search outputs with a verdict score like this one (0.20–0.40), about
        30% (36) were right'."""
        return (f"of {self.band.outputs} held-out hand-judged {outputs_name(self.method)} outputs with a verdict score "
                f"like this one ({self.band.label}), about {self.band.share:.0%} ({self.band.right}) were right")


def frequency(calibrations: dict[str, MethodCalibration], method: str, translation: Any, source: str,
              direction: str, back: Any | None = None) -> Frequency | None:
    """The measured frequency for an output of `method` (`back`: its back-translation, used where the method has
    a scorer for it); None where the calibration has no scorer (format < 3, method not calibrated, direction not
    fitted)."""
    calibration = calibrations.get(method)
    if calibration is None or not calibration.calibrated:
        return None
    kind = BACK if back is not None and BACK in calibration.scorers else PLAIN
    scorer = calibration.scorers.get(kind)
    if scorer is None or direction not in scorer.intercepts:
        return None
    score = scorer.score(features(translation, source, back if kind == BACK else None), direction)
    band = scorer.band(score)
    return None if band is None else Frequency(score, band, method, kind == BACK)
