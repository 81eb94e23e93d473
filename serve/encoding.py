"""Answers turned into JSON bytes in the lane's thread, a small piece at a time, never on the event loop.

Why: a FastAPI route that returns a dict has it walked by `jsonable_encoder` (pure Python, every number) and then
rendered, on the replica's event loop. For an `attention="all"` answer (7.3 MB of JSON, about a million numbers)
that took 0.93 + 0.28 s (measured on the shipped translator, int8), and four such answers froze the loop
for 5.8 s: a light greedy request that arrived meanwhile waited that long (`python -m bench serve_load --faults`,
heavy neighbours: max 5,011 ms against a 23 ms median alone). Made here instead, where the search ran, the same
bytes take 0.22 s, and the loop waits at most for one leaf (a row of attention, a token list): `json.dumps` holds
the GIL for a whole call, so the pieces are kept small and the loop's thread gets its turn between them.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from .faults import internal_error

# Starlette's JSONResponse settings: the same bytes as a route returning the dict would send
DUMPS = {"ensure_ascii": False, "allow_nan": False, "separators": (",", ":")}


class JsonAnswer(bytes):
    """A successful answer, already JSON: the API sends it as it is."""


def to_json(value: Any) -> str:
    """json.dumps(value, **DUMPS), built from one json.dumps call per leaf (a scalar, or a list holding no list or
    dict), so that no single call holds the GIL for long."""
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return "{" + ",".join(f"{json.dumps(k, **DUMPS)}:{to_json(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)) and any(isinstance(v, (list, tuple, dict)) for v in value):
        return "[" + ",".join(to_json(v) for v in value) + "]"
    return json.dumps(value, **DUMPS)


def encode(answer: dict[str, Any]) -> JsonAnswer | dict[str, Any]:
    """An answer as JSON bytes; an error answer ({"error", "status"}) stays a dict for the API to word."""
    if "error" in answer:
        return answer
    try:
        return JsonAnswer(to_json(answer).encode())
    except ValueError as e:  # NaN or infinity: a bug of the service, a 500 (its log says which), never a broken body
        return {"error": internal_error("encoding an answer that holds NaN or infinity (JSON has neither)", e),
                "status": 500}


def encoded(run: Callable[[list[dict[str, Any]]], list[dict[str, Any]]]):
    """`run` (a worker's batch call) whose answers come back encoded: what a lane runs in its thread."""
    def run_encoded(requests: list[dict[str, Any]]) -> list[JsonAnswer | dict[str, Any]]:
        return [encode(answer) for answer in run(requests)]

    run_encoded.__name__ = f"encoded_{getattr(run, '__name__', 'run')}"
    return run_encoded
