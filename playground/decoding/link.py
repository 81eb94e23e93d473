"""The Decoding explorer's state in its URL: the sliders' ranges, and reading and writing a shared link."""
from __future__ import annotations

from typing import Any, NamedTuple

from ..links import MAX_LINK_TEXT_CHARS, Correction, direction_of, in_range, link_text


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
    not show is moved to the slider's nearest end; a text over MAX_LINK_TEXT_CHARS is cut as link_text cuts it.
    The step's upper end depends on the sentence, so the page clamps it (step_slider)."""
    values: dict[str, Any] = {}
    corrections: list[Correction] = []
    direction = direction_of(raw, directions, corrections)
    if direction:
        values["direction"] = direction
    if "text" in raw:
        text = str(raw["text"])
        values["text"] = link_text(text)
        if values["text"] != text:
            corrections.append(Correction("text", text, f"the text cut to {len(values['text']):,} characters",
                                          f"is {len(text):,} characters long (a link holds at most "
                                          f"{MAX_LINK_TEXT_CHARS:,})"))
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
        values[name] = parse(value)
        corrections += [correction] if correction else []
    return values, corrections


def url_of(values: dict[str, Any]) -> dict[str, str]:
    """The page's values as its link's query parameters, the text cut to what a link carries (link_text)."""
    params = {k: "-".join(v) if isinstance(v, tuple) else str(v) for k, v in values.items()}
    if "text" in params:
        params["text"] = link_text(params["text"])
    return params
