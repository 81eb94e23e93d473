"""The Decoding explorer's state in its URL: the sliders' ranges, and reading and writing a shared link."""
from __future__ import annotations

from typing import Any, NamedTuple

from ..links import Correction, direction_of, in_range


class Knob(NamedTuple):
    """A sampling slider's range: the page draws it from here and a link's value must fall inside it."""
    label: str
    low: float
    high: float
    default: float
    step: float


KNOBS = {"temperature": Knob("Temperature", 0.1, 3.0, 1.0, 0.05), "top_k": Knob("Top-k (0 = off)", 0, 100, 0, 1),
         "top_p": Knob("Top-p (1 = off)", 0.05, 1.0, 1.0, 0.05), "beam": Knob("Beam size", 1, 8, 4, 1)}


def parse_url(raw: dict[str, str], directions: list[tuple[str, str]]) -> tuple[dict[str, Any], list[Correction]]:
    """The query parameters a link carries, as widget values (keys without the page prefix), and what had to be
    corrected on the way. A value that does not parse gives way to the page's default; a number its slider could
    not show is moved to the slider's nearest end. The step's upper end depends on the
    sentence, so the page clamps it (step_slider)."""
    found: dict[str, Any] = {}
    corrections: list[Correction] = []
    direction = direction_of(raw, directions, corrections)
    if direction:
        found["direction"] = direction
    if "text" in raw:
        found["text"] = str(raw["text"])
    numbers = {"step": (int, 1, "1"), **{name: (int if isinstance(knob.default, int) else float, knob.low,
                                                f"{knob.default:g}") for name, knob in KNOBS.items()}}
    for name, (parse, lowest, default) in numbers.items():
        if name not in raw:
            continue
        try:
            value = parse(raw[name])
            if value != value:  # NaN: no number at all
                raise ValueError(name)
        except ValueError:
            kind = "a whole number" if parse is int else "a number"
            corrections.append(Correction(name, raw[name], default, f"is not {kind}"))
            continue
        knob = KNOBS.get(name)
        high = knob.high if knob else float("inf")
        value, correction = in_range(name, raw[name], value, lowest, high)
        if correction and not knob:  # the step has no upper end here: only "below 1" can be wrong
            correction = correction._replace(why="is below the first step")
        found[name] = parse(value)
        corrections += [correction] if correction else []
    return found, corrections


def url_of(values: dict[str, Any]) -> dict[str, str]:
    return {k: "-".join(v) if isinstance(v, tuple) else str(v) for k, v in values.items()}
