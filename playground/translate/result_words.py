"""The Translate page's heading of a result and the warnings about a batch's inputs. Pure (no streamlit):
runtime Translations in, strings out (what each output's verdict says is verdicts.py's)."""
from __future__ import annotations

from typing import Any

from runtime.text import Translation


def method_label(used: dict[str, Any]) -> str:
    """The decoding a result was made with, for its heading: "beam 4, α 0.6", "greedy", "sampling (…)"."""
    if used["method"] == "beam":
        early = ", stopped once a beam's worth finished" if used["stopping"] != "exact" else ""
        return f"beam {used['beam size']}, α {used['length penalty']:g}{early}"
    if used["method"] == "sample":
        return (f"sampling (temperature {used['temperature']:g}, top-k {used['top-k']}, top-p {used['top-p']:g}, "
                f"seed {used['seed']})")
    return "greedy"


def headline(direction: str, used: dict[str, Any], provider: str, ms: float) -> str:
    """The result's heading: direction (as the page labels it), decoding, precision, provider and time."""
    return f"{direction} · {method_label(used)} · {used['precision']} on {provider} · {ms:.0f} ms"


def truncation_warning(results: list[Translation], max_src_len: int) -> str | None:
    cut = [i + 1 for i, r in enumerate(results) if r.truncated]
    if not cut:
        return None
    return (f"Input too long: line(s) {', '.join(map(str, cut))} exceeded the model's {max_src_len}-token limit "
            "and were truncated; only their beginning was translated.")


def outside_warning(results: list[Translation]) -> str | None:
    """For a batch: the lines mostly outside what the model knows (a single line shows its own warning)."""
    outside = [i + 1 for i, r in enumerate(results) if r.warning]
    if not outside:
        return None
    return (f"Line(s) {', '.join(map(str, outside))} are mostly outside what the model was trained on "
            "(German and English only): their translations mean little.")
