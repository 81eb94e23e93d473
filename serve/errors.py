"""Every error the service answers is one sentence: `{"detail": "<sentence>"}`.

FastAPI's own answers are lists of field errors (`[{"loc": ["body", "beam"], "msg": "Input should be ..."}]`) or
"There was an error parsing the body"; a NaN in a field once made the error answer itself fail to serialise (a
500: "Out of range float values are not JSON compliant"). Here they become sentences that name the field, quote
the value safely (never NaN into JSON), and say what would be accepted.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

MAX_QUOTED = 40  # characters of a bad value quoted back: enough to recognise it, never a 20,000-character echo
PARSE_ERROR = ("the request body could not be read as JSON: send one UTF-8 JSON object (no invalid bytes, nested "
               "at most a few hundred levels), with Content-Type: application/json")


def quoted(value: Any) -> str:
    """A bad value as the sentence shows it: short, and a float NaN or infinity written as Python's repr."""
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    text = repr(value)
    return text if len(text) <= MAX_QUOTED else text[:MAX_QUOTED - 1] + "…"


def field_name(loc: Sequence[Any]) -> str:
    """("body", "beam") -> "beam"; ("body",) -> "the body"; nested -> "a.b"."""
    parts = [str(p) for p in loc if p != "body"]
    return ".".join(parts) if parts else "the body"


def one_error(error: dict[str, Any], known: Iterable[str]) -> str:
    """One pydantic error as a clause naming its field."""
    field, kind, message = field_name(error.get("loc", ())), error.get("type", ""), error.get("msg", "")
    if kind == "missing":
        return f"{field} is required"
    if kind == "extra_forbidden":
        return f"{field} is not a field of this request (known: {', '.join(known)})"
    if kind == "json_invalid":
        reason = (error.get("ctx") or {}).get("error")
        return f"the body is not valid JSON ({reason})" if reason else "the body is not valid JSON"
    if kind == "string_too_long" and isinstance(error.get("input"), str):  # never the 20,000 characters back
        most = (error.get("ctx") or {}).get("max_length")
        return f"{field} too long: {len(error['input'])} characters, the service takes at most {most} per request"
    if kind in ("model_attributes_type", "dict_type"):
        return "the body must be a JSON object, e.g. {\"text\": \"Guten Morgen\"}"
    sentence = message.replace("Input should be", "should be", 1) if message.startswith("Input should be") else message
    if "input" in error:
        return f"{field} {sentence}, got {quoted(error['input'])}"
    return f"{field}: {sentence}"


def validation_sentence(errors: Sequence[dict[str, Any]], known: Iterable[str] = ()) -> str:
    """Pydantic's field errors as one sentence: "invalid request: beam should be less than or equal to 16, got
    40; temperature should be a finite number, got nan"."""
    known = list(known)
    clauses = list(dict.fromkeys(one_error(e, known) for e in errors)) or ["the request does not fit its schema"]
    return "invalid request: " + "; ".join(clauses)
