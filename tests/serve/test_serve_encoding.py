"""Answers leave the lanes as JSON bytes, made in the lane's thread a leaf at a time (serve/encoding.py): the same
bytes Starlette would send for the dict, never a long GIL-holding call, never on the event loop."""
from __future__ import annotations

import asyncio
import json
import logging
import math
import threading

import numpy as np
import pytest

from serve import encoding
from serve.encoding import JsonAnswer, encode, encoded, to_json
from serve.inprocess import InProcessBackend
from serve.workers import maps

STARLETTE = {"ensure_ascii": False, "allow_nan": False, "separators": (",", ":")}


def attention_all(layers: int = 2, heads: int = 4, rows: int = 30, cols: int = 40) -> dict:
    """An attention="all"-shaped answer: maps as the worker makes them (rounded nested lists)."""
    rng = np.random.default_rng(0)
    grid = [rng.random((heads, rows, cols)) for _ in range(layers)]
    return {"text": "Der Hund schläft – „im Garten“ 🐕", "confidence": 0.25, "tokens": ["▁Der", "▁Hund"],
            "token_ids": [5, 6], "token_probs": [0.5, 1e-7], "score": -3.25, "prefix_len": 0, "warning": None,
            "truncated": False, "src_tokens": 12, "empty": [], "nested_empty": [[]], "pair": (1, 2.5),
            "attention": {"encoder": maps(grid), "self": maps(grid), "cross": maps(grid)},
            "hypotheses": [{"text": "a", "token_probs": [0.1, 0.2]}, {"text": "b", "token_probs": []}],
            "timings": {"batch_size": 3, "model_ms": 12.5}}


@pytest.mark.parametrize("value", [attention_all(), [], {}, [[1, [2, {"a": None}]], "x"], 3.0, "ü", None,
                                   {"a": [True, False]}, [(1, 2), (3, [4])]])
def test_the_bytes_are_the_ones_starlette_sends_for_the_dict(value):
    assert to_json(value) == json.dumps(value, **STARLETTE)


def test_no_single_dumps_call_gets_more_than_one_row_of_a_map(monkeypatch):
    sizes = []
    real = json.dumps

    def counting(value, **kw):
        sizes.append(len(value) if isinstance(value, (list, tuple, dict)) else 1)
        return real(value, **kw)

    monkeypatch.setattr(encoding.json, "dumps", counting)
    answer = attention_all(rows=30, cols=40)
    assert json.loads(encode(answer)) == json.loads(real(answer, **STARLETTE))
    assert max(sizes) == 40, max(sizes)  # one attention row (or a token list): a short hold of the GIL each


def test_errors_stay_sentences_and_a_nan_is_a_500_not_a_broken_body(caplog):
    assert encode({"error": "bad", "status": 422}) == {"error": "bad", "status": 422}
    with caplog.at_level(logging.ERROR, logger="serve"):
        found = encode({"text": "x", "confidence": math.nan})
    assert found["status"] == 500 and found["error"].startswith("internal error (error id "), found
    assert "ValueError" not in found["error"] and "JSON compliant" not in found["error"]  # the service's insides
    [logged] = caplog.records  # the log says what, under the id the client got
    assert logged.getMessage().split()[2] in found["error"] and "NaN or infinity" in logged.getMessage()
    assert isinstance(encode({"text": "x"}), JsonAnswer)


def test_the_in_process_backend_encodes_in_the_lanes_thread_not_on_the_event_loop(monkeypatch):
    threads = []
    real = encoding.to_json

    def recording(value):
        threads.append(threading.current_thread())
        return real(value)

    monkeypatch.setattr(encoding, "to_json", recording)

    class Worker:
        def heavy(self, request):
            return request["text"] == "heavy"

        def run(self, requests):
            return [{"text": r["text"].upper(), "attention": attention_all()["attention"]} for r in requests]

    backend = InProcessBackend({"translate": Worker()})

    async def both():
        loop = threading.current_thread()
        found = await asyncio.gather(backend.call("translate", "translate", {"text": "light"}),
                                     backend.call("translate", "translate", {"text": "heavy"}))
        return loop, found

    loop, (light, heavy) = asyncio.run(both())
    assert isinstance(light, JsonAnswer) and json.loads(light)["text"] == "LIGHT"
    assert json.loads(heavy)["attention"] == attention_all()["attention"]
    assert threads and loop not in set(threads), set(threads)  # every piece made off the loop


def test_encoded_keeps_the_workers_order_and_errors():
    run = encoded(lambda requests: [{"text": r} if r != "bad" else {"error": "no", "status": 422} for r in requests])
    found = run(["a", "bad", "c"])
    assert [json.loads(found[0]), found[1], json.loads(found[2])] == [{"text": "a"}, {"error": "no", "status": 422},
                                                                      {"text": "c"}]
