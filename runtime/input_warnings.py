"""The warning every translation of a text carries: its source, or its target prefix, mostly outside what the
model knows (`runtime.coverage`)."""
from __future__ import annotations

from .coverage import coverage
from .coverage import warning as coverage_warning


def input_warnings(text: str, src_tokens: list[str], prefix_text: str | None, prefix_tokens: list[str]) -> str | None:
    """The warning of every translation of `text`: its source, and its target prefix, mostly outside what the
    model knows (src_tokens: the source's tokens, tag and </s> included; prefix_tokens: the prefix's)."""
    warnings = [coverage_warning(coverage(text, src_tokens[1:-1]))]
    if prefix_text and prefix_text.strip():
        prefix_warning = coverage_warning(coverage(prefix_text, prefix_tokens))
        warnings.append(prefix_warning and f"The target prefix: {prefix_warning}")
    return " ".join(w for w in warnings if w) or None
