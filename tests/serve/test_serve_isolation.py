"""One request cannot hurt another (issue 42): a bad input fails alone inside a batch of valid ones, a heavy request
does not stall light ones, /health and /ready answer while a search runs, a late request gets its 504 at its
deadline, every error is one sentence, NaN is a 422, and the cost limits hold. Without Ray: the workers and lanes
in this process (serve_fixtures), over the tiny exported models; the same code runs in the Serve replica."""
from __future__ import annotations

import asyncio
import json
import math
import threading
import time
import urllib.error
import urllib.request

import pytest
from export_fixtures import GERMAN
from serve_fixtures import post, running_api, tiny_models_root

from serve import costs
from serve.api import build_api
from serve.batcher import Lanes
from serve.inprocess import InProcessBackend
from serve.schemas import TranslateRequest
from serve.settings import ServeSettings
from serve.workers import SentimentWorker, TranslationWorker

pytestmark = pytest.mark.exports

REQUEST = TranslateRequest(text="x").model_dump() | {"method": "greedy"}


@pytest.fixture(scope="module")
def root():
    return tiny_models_root()


@pytest.fixture(scope="module")
def worker(root) -> TranslationWorker:
    return TranslationWorker.load(root, "cpu", ("fp32", "int8"), 1)


@pytest.fixture(scope="module")
def url(root):
    with running_api(ServeSettings(models_dir=str(root), provider="cpu", threads=1)) as found:
        yield found


# Each is what a hostile or careless client can put in one request's fields (the JSON schema lets the first ones
# through: they are valid JSON strings); the worker must refuse it alone.
BAD = {
    "lone surrogate": {"text": "Hallo \ud800 Welt"},
    "lone low surrogate": {"text": "\udfff"},
    "empty": {"text": ""},
    "text not a string": {"text": 5},
    "text None": {"text": None},
    "unknown language": {"src_lang": "xx"},
    "language not a string": {"tgt_lang": ["en"]},
    "unknown precision": {"precision": "fp16"},
    "beam not a number": {"method": "beam", "beam": "wide"},
    "max_len over the limit": {"max_len": 512},
    "attention all over the limit": {"attention": "all", "max_len": 250, "text": " ".join(GERMAN)},
    "missing field": {"method": None},
}


def test_each_bad_input_fails_alone_inside_a_batch_of_valid_ones(worker):
    valid = [REQUEST | {"text": t, "precision": p} for t in GERMAN[:4] for p in ("fp32", "int8")]
    alone = [worker.run([r])[0] for r in valid]
    assert all("error" not in a for a in alone), alone
    for name, change in BAD.items():
        batch = valid[:4] + [REQUEST | change] + valid[4:]
        if name == "missing field":
            batch[4] = {k: v for k, v in REQUEST.items() if k != "method"}
        answers = worker.run(batch)
        bad = answers.pop(4)
        assert bad["status"] == 422 and isinstance(bad["error"], str) and bad["error"], (name, bad)
        assert [(a["text"], a["token_ids"]) for a in answers] == [(a["text"], a["token_ids"]) for a in alone], name


def test_a_lone_surrogate_gets_a_sentence_that_says_what_it_is(worker):
    [found] = worker.run([REQUEST | {"text": "Hallo \ud800 Welt"}])
    assert found == {"status": 422, "error": "text is not valid Unicode: a lone surrogate U+D800 at character 6 "
                                             "(half of a UTF-16 pair); send the whole character, or remove it"}


def test_nul_and_emoji_are_text_like_any_other_and_answered(worker):
    found = worker.run([REQUEST | {"text": "Hallo\x00 Welt"}, REQUEST | {"text": "Hallo 🌍 Welt"}])
    assert all("error" not in f and f["text"] for f in found), found


def test_a_search_that_raises_fails_only_its_own_request(worker, monkeypatch):
    """Should a check miss something the search chokes on, the group is searched again one by one."""
    real = worker.search

    def choking(requests):
        if any(r["text"] == "poison" for r in requests):
            raise TypeError("TextInputSequence must be str")
        return real(requests)

    monkeypatch.setattr(worker, "search", choking)
    batch = [REQUEST | {"text": t} for t in (GERMAN[0], "poison", GERMAN[1])]
    answers = worker.run(batch)
    assert answers[1] == {"status": 500, "error": "internal error (TypeError): TextInputSequence must be str"}
    assert [a["text"] for a in (answers[0], answers[2])] == [worker.run([r])[0]["text"] for r in batch[::2]]


def test_the_cost_limits_name_the_limit_and_what_would_fit(worker):
    size = worker.size
    [long_max] = worker.run([REQUEST | {"text": GERMAN[0], "max_len": 512}])
    src = len(worker.models["fp32"].tokenizer.encode(GERMAN[0])) + 2
    cap = 2 * src + 50
    assert long_max["error"].startswith(f"max_len 512 is over this service's limit for this text: at most 2 × its "
                                        f"{src} source tokens + 50 = {cap}")
    assert "error" not in worker.run([REQUEST | {"text": GERMAN[0], "max_len": cap}])[0]
    text = " ".join(GERMAN * 2)
    src = min(len(worker.models["fp32"].tokenizer.encode(text)), worker.models["fp32"].source_room) + 2
    wide = REQUEST | {"text": text, "method": "beam", "beam": 16, "max_len": 2 * src + 50, "truncate": True}
    tgt = min(2 * src + 50, size.max_target_len)
    [found] = worker.run([wide])
    if 16 * tgt > costs.LIMITS.beam_steps:
        assert found["error"].startswith(f"beam 16 × {tgt} target tokens is {16 * tgt} row-steps")
    values = costs.attention_values(size, src, tgt)
    assert values == size.heads * (size.encoder_layers * src ** 2 + size.decoder_layers * (tgt ** 2 + tgt * src))
    [found] = worker.run([REQUEST | {"text": text, "attention": "all", "max_len": 2 * src + 50, "truncate": True}])
    assert ("error" in found) == (values > costs.LIMITS.attention_values), found


def test_a_batch_of_wide_beams_runs_as_bounded_searches_with_the_same_answers(worker):
    beams = [REQUEST | {"text": t, "method": "beam", "beam": 16} for t in GERMAN[:6]]
    together = worker.run(beams)
    assert {a["timings"]["group_size"] for a in together} == {costs.LIMITS.search_rows // 16, 6 % 4}
    assert [a["token_ids"] for a in together] == [worker.run([b])[0]["token_ids"] for b in beams]


class GatedWorker:
    """A worker whose heavy requests wait until the test lets them go: what a 30 s search does to the others."""

    def __init__(self):
        self.release = threading.Event()
        self.started = threading.Event()

    def heavy(self, request):
        return request["text"] == "heavy"

    def run(self, requests):
        if any(r["text"] == "heavy" for r in requests):
            self.started.set()
            assert self.release.wait(30), "never released"
        return [{"text": r["text"].upper()} for r in requests]


def test_a_heavy_request_does_not_stall_light_ones_nor_the_loop():
    worker = GatedWorker()

    async def scenario():
        lanes = Lanes(worker.run, worker.heavy, max_batch_size=16, wait_s=0.005)
        heavy = asyncio.create_task(lanes.submit({"text": "heavy"}))
        await asyncio.to_thread(worker.started.wait, 5)
        light = await asyncio.wait_for(asyncio.gather(*[lanes.submit({"text": f"light {i}"}) for i in range(5)]), 5)
        ticks = 0
        for _ in range(3):  # the loop itself is free while the heavy search runs in its thread
            await asyncio.sleep(0.01)
            ticks += 1
        assert not heavy.done()
        worker.release.set()
        return light, await heavy, ticks

    light, heavy, ticks = asyncio.run(scenario())
    assert [f["text"] for f in light] == [f"LIGHT {i}" for i in range(5)] and heavy == {"text": "HEAVY"}
    assert ticks == 3


def test_while_a_search_runs_health_and_ready_answer_and_a_late_request_gets_its_504_at_the_deadline(root):
    from fastapi.testclient import TestClient

    gated = GatedWorker()
    sentiment = SentimentWorker.load(root, "cpu", ("fp32",), 1)
    translate = TranslationWorker.load(root, "cpu", ("fp32",), 1)
    translate.heavy, translate.run = gated.heavy, gated.run  # the translator's search is held
    backend = InProcessBackend({"translate": translate, "sentiment": sentiment})
    with TestClient(build_api(backend, ServeSettings())) as client:
        held = threading.Thread(target=client.post, args=("/translate",), kwargs={"json": {"text": "heavy"}})
        held.start()
        assert gated.started.wait(10)
        start = time.monotonic()
        assert client.get("/health").json() == {"status": "ok"}
        assert client.get("/ready").json()["ready"] is True
        late = client.post("/translate", json={"text": "heavy"}, headers={"X-Request-Timeout": "0.5"})
        took = time.monotonic() - start
        assert late.status_code == 504 and late.json()["detail"].startswith("no answer within 0.5 s")
        assert not gated.release.is_set() and took < 5  # answered while the search still held its lane
        gated.release.set()
        held.join(10)


def raw_post(url: str, data: bytes, content_type: str = "application/json") -> tuple[int, str, dict]:
    request = urllib.request.Request(url, data, {"Content-Type": content_type})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.headers["Content-Type"], json.loads(response.read())
    except urllib.error.HTTPError as e:
        return e.code, e.headers["Content-Type"], json.loads(e.read())


@pytest.mark.parametrize("route, field", [("translate", "temperature"), ("translate", "length_penalty"),
                                          ("translate", "top_p"), ("translate", "patience"),
                                          ("sentiment", "attention")])
@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_a_422_sentence_naming_the_field(url, route, field, value):
    data = f'{{"text": "Hallo Welt", "{field}": {value}}}'.encode()
    status, kind, found = raw_post(f"{url}/{route}", data)
    assert (status, kind) == (422, "application/json") and isinstance(found["detail"], str), found
    assert found["detail"].startswith(f"invalid request: {field} ") and repr(float(value)) in found["detail"]


@pytest.mark.parametrize("data, says", [
    (b'{"text": "Hallo", "beam": 40}', "invalid request: beam should be less than or equal to 16, got 40"),
    (b'{"text": "Hallo", "beam": "wide"}', "invalid request: beam should be a valid integer"),
    (b'{"txt": "Hallo"}', "invalid request: text is required; txt is not a field of this request (known: text,"),
    (b'{"text": "Hallo",', "invalid request: the body is not valid JSON"),
    (b'["Hallo"]', "invalid request: the body must be a JSON object"),
    (b'{"text": "Hallo \xff\xfe Welt"}', "the request body could not be read as JSON"),
    (b'[' * 20_000 + b']' * 20_000, "the request body could not be read as JSON"),
], ids=["range", "type", "unknown and missing field", "truncated JSON", "not an object", "invalid UTF-8",
        "nested 20,000 deep"])
def test_every_error_is_one_sentence(url, data, says):
    status, kind, found = raw_post(f"{url}/translate", data)
    assert 400 <= status < 500 and kind == "application/json", (status, found)
    assert list(found) == ["detail"] and isinstance(found["detail"], str) and found["detail"].startswith(says)


def test_a_body_over_the_limit_is_refused_before_it_is_read_and_unknown_routes_are_sentences(url):
    status, _, found = raw_post(f"{url}/translate", b'{"text": "' + b"a" * 200_000 + b'"}')
    assert status == 413 and found["detail"].startswith("the request body is 200012 bytes")
    status, found = post(f"{url}/nowhere", {})
    assert status == 404 and found == {"detail": "no such route: POST /nowhere (the API: /docs)"}


def test_info_names_the_models_and_limits_not_the_machines_paths(url, root):
    with urllib.request.urlopen(f"{url}/info", timeout=30) as response:
        info = json.loads(response.read())
    with urllib.request.urlopen(f"{url}/ready", timeout=30) as response:
        ready = json.loads(response.read())
    said = json.dumps(info) + json.dumps(ready)
    assert str(root) not in said and "/" + root.name not in said
    assert info["translate"]["model"] == "translate" and ready["models"] == {"translate": "translate",
                                                                             "sentiment": "sentiment"}
    assert info["translate"]["limits"]["max_len_per_source"] == costs.LIMITS.max_len_per_source
    assert not any(isinstance(v, float) and not math.isfinite(v) for v in info["translate"]["limits"].values())


def test_concurrent_requests_with_bad_ones_among_them_each_get_their_own_answer(url):
    from serve_fixtures import concurrently

    good = [{"text": t, "method": "greedy"} for t in GERMAN[:8]]
    alone = [post(f"{url}/translate", g)[1]["token_ids"] for g in good]
    bad = [{"text": "Hallo \ud800 Welt", "method": "greedy"}, {"text": "", "method": "greedy"}]
    bodies = [b for pair in zip(good, bad * 4, strict=True) for b in pair]
    found = concurrently(f"{url}/translate", bodies, concurrency=16)
    assert [f[0] for f in found] == [200, 422] * 8
    assert [f[1]["token_ids"] for f in found[::2]] == alone
