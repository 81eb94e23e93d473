"""One request cannot hurt another (issue 42): a bad input fails alone inside a batch of valid ones, a heavy request
does not stall light ones, /health and /ready answer while a search runs, a late request gets its 504 at its
deadline, every error is one sentence, NaN is a 422, and the cost limits hold, steered requests' rows counted; only
the input's faults are 4xx, the service's own a 500 with an error id its log holds. Without Ray: the workers and
lanes in this process (serve_fixtures), over the tiny exported models; the same code runs in the Serve replica."""
from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import math
import re
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
ERROR_ID = re.compile(r"^internal error \(error id ([0-9a-f]{12})\): ")


def limits_with(monkeypatch, **changed) -> costs.CostLimits:
    """The service's cost limits with `changed`, for this test: the tiny model's texts reach none of the real ones
    (64 target positions: beam 16 × 64 = 1,024 row-steps against 4,096; attention="all" at most ~100,000 numbers)."""
    limits = dataclasses.replace(costs.LIMITS, **changed)
    monkeypatch.setattr(costs, "LIMITS", limits)
    return limits


def error_id(sentence: str) -> str:
    """The error id of a 500's sentence, which must say nothing else of the fault."""
    found = ERROR_ID.match(sentence)
    assert found, sentence
    return found.group(1)


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
# through: they are valid JSON strings); the worker must refuse it alone, with a 422 whose sentence starts so.
BAD = {
    "lone surrogate": ({"text": "Hallo \ud800 Welt"}, "text is not valid Unicode: a lone surrogate U+D800"),
    "lone low surrogate": ({"text": "\udfff"}, "text is not valid Unicode: a lone surrogate U+DFFF"),
    "empty": ({"text": ""}, "empty text"),
    "text not a string": ({"text": 5}, "text must be a string, got int"),
    "text None": ({"text": None}, "text must be a string, got NoneType"),
    "unknown language": ({"src_lang": "xx"}, "this model translates"),
    "language not a string": ({"tgt_lang": ["en"]}, "this model translates"),
    "unknown precision": ({"precision": "fp16"}, "precision must be one of"),
    "max_len over the limit": ({"max_len": 512}, "max_len 512 is over this service's limit"),
    # within the max_len limit (2 × 24 source tokens + 50), over the attention limit this test sets
    "attention all over the limit": ({"attention": "all", "max_len": 60, "text": GERMAN[3]}, "attention='all' for 24 "),
}
# What the API's schema never lets through: a worker given it was called wrong by the service's own code, a fault of
# the service's (500), and still of this request's alone.
MALFORMED = {
    "beam not a number": REQUEST | {"method": "beam", "beam": "wide"},
    "missing field": {k: v for k, v in REQUEST.items() if k != "method"},
}


def test_each_bad_input_fails_alone_inside_a_batch_of_valid_ones(worker, monkeypatch):
    limits_with(monkeypatch, attention_values=10_000)  # GERMAN[3] with max_len 60 answers 44,928 numbers
    valid = [REQUEST | {"text": t, "precision": p} for t in GERMAN[:4] for p in ("fp32", "int8")]
    alone = [worker.run([r])[0] for r in valid]
    assert all("error" not in a for a in alone), alone
    for name, bad in [*((n, REQUEST | change) for n, (change, _) in BAD.items()), *MALFORMED.items()]:
        answers = worker.run(valid[:4] + [bad] + valid[4:])
        found = answers.pop(4)
        if name in BAD:
            assert found.get("status") == 422 and found["error"].startswith(BAD[name][1]), (name, found)
        else:
            assert found.get("status") == 500 and error_id(found["error"]), (name, found)
        assert [(a["text"], a["token_ids"]) for a in answers] == [(a["text"], a["token_ids"]) for a in alone], name


def test_a_lone_surrogate_gets_a_sentence_that_says_what_it_is(worker):
    [found] = worker.run([REQUEST | {"text": "Hallo \ud800 Welt"}])
    assert found == {"status": 422, "error": "text is not valid Unicode: a lone surrogate U+D800 at character 6 "
                                             "(half of a UTF-16 pair); send the whole character, or remove it"}


def test_nul_and_emoji_are_text_like_any_other_and_answered(worker):
    found = worker.run([REQUEST | {"text": "Hallo\x00 Welt"}, REQUEST | {"text": "Hallo 🌍 Welt"}])
    assert all("error" not in f and f["text"] for f in found), found


@pytest.mark.parametrize("fault", [ValueError, TypeError])
def test_a_search_that_raises_fails_only_its_own_request_as_the_services_fault(worker, monkeypatch, caplog, fault):
    """Should a check miss something the search chokes on, the group is searched again one by one. The input was
    checked: whatever the search raises, a ValueError too, is the service's fault, a 500 naming an error id; the
    exception's text stays in the log, under that id."""
    real = worker.search

    def choking(requests):
        if any(r["text"] == "poison" for r in requests):
            raise fault("TextInputSequence must be str (/srv/models/translate/model.onnx)")
        return real(requests)

    monkeypatch.setattr(worker, "search", choking)
    batch = [REQUEST | {"text": t} for t in (GERMAN[0], "poison", GERMAN[1])]
    with caplog.at_level(logging.ERROR, logger="serve"):
        answers = worker.run(batch)
    assert answers[1]["status"] == 500 and "TextInputSequence" not in answers[1]["error"], answers[1]
    assert fault.__name__ not in answers[1]["error"] and "/srv" not in answers[1]["error"]
    [logged] = [r for r in caplog.records if error_id(answers[1]["error"]) in r.getMessage()]
    assert logged.exc_info[0] is fault and "TextInputSequence must be str" in caplog.text
    assert [a["text"] for a in (answers[0], answers[2])] == [worker.run([r])[0]["text"] for r in batch[::2]]


def test_the_cost_limits_name_the_limit_and_what_would_fit(worker, monkeypatch):
    """Each limit refuses a request one step over it, in its own words, and takes one at it. The tiny model's texts
    reach neither the real row-step nor the real attention limit: this test sets them at its requests."""
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
    limits_with(monkeypatch, beam_steps=16 * tgt - 1)
    [found] = worker.run([wide])
    assert found.get("status") == 422, found
    assert found["error"].startswith(f"beam 16 × {tgt} target tokens is {16 * tgt} row-steps, over this service's "
                                     f"limit of {16 * tgt - 1}: ask for a narrower beam")
    limits_with(monkeypatch, beam_steps=16 * tgt)
    assert "error" not in worker.run([wide])[0]
    values = costs.attention_values(size, src, tgt)
    assert values == size.heads * (size.encoder_layers * src ** 2 + size.decoder_layers * (tgt ** 2 + tgt * src))
    everything = REQUEST | {"text": text, "attention": "all", "max_len": 2 * src + 50, "truncate": True}
    limits_with(monkeypatch, attention_values=values - 1)
    [found] = worker.run([everything])
    assert found.get("status") == 422, found
    assert found["error"].startswith(f"attention='all' for {src} source and up to {tgt} target tokens is {values:,} "
                                     f"numbers, over this service's limit of {values - 1:,}")
    limits_with(monkeypatch, attention_values=values)
    assert "error" not in worker.run([everything])[0]


def test_a_batch_of_wide_beams_runs_as_bounded_searches_with_the_same_answers(worker):
    beams = [REQUEST | {"text": t, "method": "beam", "beam": 16} for t in GERMAN[:6]]
    together = worker.run(beams)
    assert {a["timings"]["group_size"] for a in together} == {costs.LIMITS.search_rows // 16, 6 % 4}
    assert [a["token_ids"] for a in together] == [worker.run([b])[0]["token_ids"] for b in beams]


# Steered requests of issue 49's example: beam 4 × 16 alternatives over 60 target tokens is 64 rows (3,840 row-steps,
# under the 4,096 limit), a whole search's `search_rows`; greedy with 16 alternatives is 16 rows.
BEAM_ALTERNATIVES = {"method": "beam", "beam": 4, "num_hypotheses": 16, "return_alternatives": True, "max_len": 60}
GREEDY_ALTERNATIVES = {"method": "greedy", "num_hypotheses": 16, "return_alternatives": True, "max_len": 60}


def test_steered_requests_batched_together_are_cut_to_search_rows(worker, monkeypatch):
    """Alternatives and hypotheses are rows of the search as much as the beam is: a batch of steered requests runs
    as searches of at most `search_rows` rows, each text's answer the same as alone."""
    assert costs.LIMITS.search_rows == 64
    searched = []
    real = worker.search

    def counted(requests):
        searched.append(len(requests))
        return real(requests)

    monkeypatch.setattr(worker, "search", counted)
    beams = [REQUEST | BEAM_ALTERNATIVES | {"text": t} for t in GERMAN[:3]]
    greedy = [REQUEST | GREEDY_ALTERNATIVES | {"text": t} for t in GERMAN[:5]]
    together = worker.run(beams + greedy)
    assert all("error" not in a for a in together), together
    assert searched == [1, 1, 1, 4, 1]  # 64 rows each, then 4 × 16 and 1 × 16 rows
    alone = [worker.run([r])[0] for r in (beams[0], greedy[4])]
    assert [[h["token_ids"] for h in a["hypotheses"]] for a in (together[0], together[7])] == \
        [[h["token_ids"] for h in a["hypotheses"]] for a in alone]


def test_a_request_beside_steered_ones_in_their_lane_stays_within_its_time(worker):
    """16 steered requests (64 rows each) share a batch of the heavy lane, and their clients stop waiting during
    its first searches (a timeout, a closed connection). A request queued behind them in the same lane waits at most
    for the bounded search in progress: the lane leaves the rest out. Cut as beams alone (4 rows each), the 16 were
    one search of 1,024 rows, which nothing could stop: the request behind them waited for all of it."""
    steered = [REQUEST | BEAM_ALTERNATIVES | {"text": GERMAN[i % 4]} for i in range(16)]
    beside = REQUEST | {"text": GERMAN[4], "attention": "all", "max_len": 20}
    assert all(worker.heavy(r) for r in [*steered, beside])  # one lane: the heavy one
    one_search = min(timed(worker.run, steered[:1]) for _ in range(2))  # one 64-row search, warm
    gives_up = one_search  # the steered clients leave during the batch's second search
    its_time = gives_up + 3 * one_search + 0.3  # the search in progress, one more (a race), its own, and slack
    whole = 16 * one_search  # what the lane spent on them before: 1,024 rows, the same work as 16 searches of 64

    async def scenario():
        lanes = Lanes(worker.run, worker.heavy, max_batch_size=16, wait_s=0.005, heavy_batch_size=16)
        leaving = [asyncio.create_task(asyncio.wait_for(lanes.submit(r), gives_up)) for r in steered]
        await asyncio.sleep(0.02)  # the 16 are one batch, running
        start = time.perf_counter()
        try:
            found = await asyncio.wait_for(lanes.submit(beside), its_time)
        except TimeoutError:
            found = None
        took = time.perf_counter() - start
        left = await asyncio.gather(*leaving, return_exceptions=True)
        return found, took, left

    found, took, left = asyncio.run(scenario())
    assert all(isinstance(f, TimeoutError) for f in left)
    assert found is not None and "error" not in found, (
        f"the request beside the steered ones was not answered within its {its_time:.2f} s (took {took:.2f} s; "
        f"one search of 64 rows: {one_search:.2f} s, the 16 steered ones' whole work: {whole:.2f} s)")


def timed(run, *args) -> float:
    start = time.perf_counter()
    run(*args)
    return time.perf_counter() - start


class GatedWorker:
    """A worker whose heavy requests wait until the test lets them go (at most `hold_s`): what a 30 s search does
    to the others."""

    def __init__(self, hold_s: float = 30):
        self.release = threading.Event()
        self.started = threading.Event()
        self.hold_s = hold_s

    def heavy(self, request):
        return request["text"] == "heavy"

    def run(self, requests):
        if any(r["text"] == "heavy" for r in requests):
            self.started.set()
            assert self.release.wait(self.hold_s), "never released"
        return [{"text": r["text"].upper()} for r in requests]


def test_a_heavy_request_does_not_stall_light_ones_nor_the_loop():
    """While the heavy search is held (in its lane's thread), light requests are answered and the event loop keeps
    ticking: no gap between its 10 ms ticks comes near the hold. Were the search run on the loop, the loop would
    stand still for the whole hold (3 s here)."""
    worker = GatedWorker(hold_s=3)
    gaps = []

    async def ticking():
        last = time.monotonic()
        while not worker.release.is_set():
            await asyncio.sleep(0.01)
            gaps.append(time.monotonic() - last)
            last = time.monotonic()

    async def scenario():
        ticker = asyncio.create_task(ticking())
        lanes = Lanes(worker.run, worker.heavy, max_batch_size=16, wait_s=0.005)
        heavy = asyncio.create_task(lanes.submit({"text": "heavy"}))
        await asyncio.to_thread(worker.started.wait, 5)
        light = await asyncio.wait_for(asyncio.gather(*[lanes.submit({"text": f"light {i}"}) for i in range(5)]), 5)
        await asyncio.sleep(0.3)  # the heavy search still held: the loop goes on ticking
        held = not heavy.done()
        worker.release.set()
        await ticker
        return light, await heavy, held

    light, heavy, held = asyncio.run(scenario())
    assert len(gaps) >= 10 and max(gaps) < 1.0, f"the event loop stood still for {max(gaps):.2f} s"
    assert held and [f["text"] for f in light] == [f"LIGHT {i}" for i in range(5)] and heavy == {"text": "HEAVY"}


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


class BrokenWorker:
    """A model whose every call fails inside the service, saying where its files are."""

    def heavy(self, request):
        return False

    def run(self, requests=None):
        raise RuntimeError("no session for /srv/models/sentiment/model.onnx")

    info = stats = run


def test_the_services_own_faults_are_500s_with_an_id_the_log_holds_and_bad_input_is_still_a_422(worker, monkeypatch,
                                                                                                caplog):
    """A fault in a search (a ValueError too), in a lane's batch and in a route: each a 500 whose body names an error
    id and nothing of the fault (no exception text, class or path); the log holds the traceback under that id. The
    input's own faults stay 422s with their sentence."""
    from fastapi.testclient import TestClient

    real = worker.search

    def failing(requests):
        if any(r["text"] == GERMAN[2] for r in requests):
            raise ValueError("cannot read /srv/models/translate/model.onnx: protobuf parsing failed")
        return real(requests)

    monkeypatch.setattr(worker, "search", failing)
    backend = InProcessBackend({"translate": worker, "sentiment": BrokenWorker()})
    with caplog.at_level(logging.ERROR, logger="serve"), \
            TestClient(build_api(backend, ServeSettings()), raise_server_exceptions=False) as client:
        faults = {"search": client.post("/translate", json={"text": GERMAN[2], "method": "greedy"}),
                  "batch": client.post("/sentiment", json={"text": "a gem of a film"}),
                  "route": client.get("/info")}
        good = client.post("/translate", json={"text": GERMAN[1], "method": "greedy"})
        empty = client.post("/translate", json={"text": " ", "method": "greedy"})
        wrong = client.post("/translate", json={"text": GERMAN[1], "src_lang": "fr"})
    for where, found in faults.items():
        body = found.json()
        assert found.status_code == 500 and list(body) == ["detail"], (where, body)
        said = body["detail"]
        assert not any(inside in said for inside in ("srv", "model.onnx", "protobuf", "session", "Error")), said
        [logged] = [r for r in caplog.records if error_id(said) in r.getMessage()]
        assert logged.exc_info and str(logged.exc_info[1]) in caplog.text, where
    assert good.status_code == 200 and good.json()["text"]
    assert (empty.status_code, empty.json()) == (422, {"detail": "empty text: text #0 is empty or only whitespace"})
    assert wrong.status_code == 422 and wrong.json()["detail"] == "this model translates de->en, en->de, not fr->en"


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
