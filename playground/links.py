"""A shared link's values that a page cannot use as given (a layer the model lacks, a temperature off its slider,
a step that is not a number): each is corrected, and the page says so, naming the parameter, the value the link
held and the value used. Pure: no streamlit; the pages' widgets show `note(...)` in a warning."""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

SHOWN_CHARS = 40  # a long bad value is cut in the note


class Correction(NamedTuple):
    name: str  # the query parameter
    given: str  # its value in the link
    used: str  # what the page uses instead, as it is shown ("3", "layer 2", "the first step")
    why: str  # what was wrong with it, as a clause ("is not a number")


def shown(value: str) -> str:
    """A link's value as the note quotes it: cut when long, backticks dropped so the quote stays one."""
    value = str(value).replace("`", "")
    return value if len(value) <= SHOWN_CHARS else value[:SHOWN_CHARS] + "…"


def note(corrections: Iterable[Correction]) -> str | None:
    """One sentence per corrected value; None when the link was used as given."""
    lines = [f"`{c.name}={shown(c.given)}` {c.why}: {c.used} is used instead." for c in corrections]
    if not lines:
        return None
    return "This link was corrected. " + " ".join(lines)


def in_range(name: str, given: str, value: float, low: float, high: float, noun: str = "") -> tuple[float,
                                                                                                Correction | None]:
    """`value` clamped to [low, high], and the correction when it had to be. `noun` names the values in the note
    ("layers" -> "is outside this model's layers 1–2"); without one the range is the slider's."""
    if low <= value <= high:
        return value, None
    used = low if value < low else high
    span = f"{low:g}–{high:g}"
    why = f"is outside this model's {noun} {span}" if noun else f"is outside the slider's range {span}"
    return used, Correction(name, given, f"{used:g}", why)


def direction_of(raw: dict[str, str], directions: Sequence[tuple[str, str]],
                 corrections: list[Correction]) -> tuple[str, str] | None:
    """A link's "direction" ("de-en") as one of the model's directions; None when absent, and when it is not one
    of them (the correction, to the first direction, is added to `corrections`)."""
    if "direction" not in raw:
        return None
    match = next((d for d in directions if "-".join(d) == raw["direction"]), None)
    if match is None:
        known = ", ".join("-".join(d) for d in directions)
        corrections.append(Correction("direction", raw["direction"], "-".join(directions[0]),
                                      f"is not a direction this model translates ({known})"))
    return match


# The text a link carries (every page's): about ten sentences. Its URL stays near this size for German or English
# (a character outside ASCII is 6 to 12 characters once percent-encoded); 30,000 characters of text made a
# 35,427-character URL.
MAX_LINK_TEXT_CHARS = 1000


def link_text(text: str) -> str:
    """The text as a link carries it: all of it up to MAX_LINK_TEXT_CHARS, else its whole lines that fit (the
    first line cut when it alone is longer), so a shared link translates whole sentences."""
    if len(text) <= MAX_LINK_TEXT_CHARS:
        return text
    cut = text[:MAX_LINK_TEXT_CHARS]
    end = cut.rfind("\n")
    return cut[:end] if end > 0 else cut


def link_text_note(text: str) -> str | None:
    """What the page says when its link holds less of the text than the text box (None when it holds all)."""
    carried = link_text(text)
    if carried == text:
        return None
    return (f"The text in this page's link was cut to {len(carried):,} characters (a link holds at most "
            f"{MAX_LINK_TEXT_CHARS:,}, whole lines where they fit): the text box keeps all {len(text):,}.")
