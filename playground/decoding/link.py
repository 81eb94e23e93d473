"""The Decoding explorer's state in its URL: the sliders' ranges, and reading and writing a shared link."""
from __future__ import annotations

from typing import Any, NamedTuple


class Knob(NamedTuple):
    """A sampling slider's range: the page draws it from here and a link's value must fall inside it."""
    label: str
    low: float
    high: float
    default: float
    step: float


KNOBS = {"temperature": Knob("Temperature", 0.1, 3.0, 1.0, 0.05), "top_k": Knob("Top-k (0 = off)", 0, 100, 0, 1),
         "top_p": Knob("Top-p (1 = off)", 0.05, 1.0, 1.0, 0.05), "beam": Knob("Beam size", 1, 8, 4, 1)}


def parse_url(raw: dict[str, str], directions: list[tuple[str, str]]) -> dict[str, Any]:
    """The query parameters a link carries, as widget values (keys without the page prefix). A value that does not
    parse, or that its slider could not show (out of range, NaN), is dropped: the page's default stands. The step's
    upper end depends on the sentence, so the page clamps it."""
    parsers = {"direction": lambda v: next(d for d in directions if "-".join(d) == v), "text": str,
               "step": int, "temperature": float, "top_k": int, "top_p": float, "beam": int}
    found = {}
    for name, parse in parsers.items():
        if name in raw:
            try:
                found[name] = parse(raw[name])
            except (StopIteration, ValueError):
                pass
    for name, knob in KNOBS.items():
        if name in found and not knob.low <= found[name] <= knob.high:  # NaN fails both comparisons
            del found[name]
    if found.get("step", 1) < 1:
        del found["step"]
    return found


def url_of(values: dict[str, Any]) -> dict[str, str]:
    return {k: "-".join(v) if isinstance(v, tuple) else str(v) for k, v in values.items()}
