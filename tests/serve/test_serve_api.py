"""The service's HTTP API without Ray (serve_fixtures: the workers in this process, tiny exported models): answers
equal the runtime's, bad input gets a 4xx with the runtime's own message, the health/readiness/docs endpoints, the
timeout; and the batch worker's grouping. The same app behind Ray Serve: test_serve_ray.py."""
from __future__ import annotations

import asyncio
import json
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest
import yaml
from export_fixtures import ENGLISH, GERMAN, REVIEWS
from serve_fixtures import post, running_api, tiny_models_root

from runtime import OnnxSentimentClassifier, OnnxTranslator
from serve import costs
from serve.api import answer
from serve.schemas import TranslateRequest
from serve.settings import ServeSettings
from serve.workers import TranslationWorker

pytestmark = pytest.mark.exports

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def root() -> Path:
    return tiny_models_root()


@pytest.fixture(scope="module")
def url(root):
    with running_api(ServeSettings(models_dir=str(root), provider="cpu", threads=1)) as found:
        yield found


@pytest.fixture(scope="module")
def translator(root) -> OnnxTranslator:
    return OnnxTranslator(root / "translate", provider="cpu", precision="fp32", threads=1)


def body(text: str, **kw) -> dict:
    return {"text": text, "method": "greedy", **kw}


@pytest.mark.parametrize("method", ["greedy", "beam"])
def test_a_translation_is_the_runtimes_with_provider_and_timings(url, translator, method):
    for text in GERMAN[:3]:
        status, found = post(f"{url}/translate", body(text, method=method))
        [want] = translator.translate([text], src_lang="de", tgt_lang="en", method=method)
        assert status == 200, found
        assert (found["text"], found["token_ids"]) == (want.text, want.token_ids)
        assert found["confidence"] == pytest.approx(want.confidence)
        assert found["provider"] == translator.provider == "CPUExecutionProvider"
        assert found["timings"]["batch_size"] == 1 and found["timings"]["model_ms"] > 0


def test_sentiment_gives_the_label_and_calibrated_probabilities_of_the_runtime(url, root):
    classifier = OnnxSentimentClassifier(root / "sentiment", provider="cpu", threads=1)
    for _, text in REVIEWS[:3]:
        status, found = post(f"{url}/sentiment", {"text": text})
        [want] = classifier.classify([text])
        assert status == 200, found
        assert found["label"] == want.label and found["probs"] == pytest.approx(want.probs)
        assert sum(found["probs"].values()) == pytest.approx(1.0)
    status, found = post(f"{url}/sentiment", {"text": REVIEWS[0][1], "attention": True})
    assert status == 200 and np.asarray(found["attention"][0]).shape[-1] == len(found["tokens"])


def runtime_message(translator: OnnxTranslator, text: str, **kw) -> str:
    with pytest.raises(ValueError) as raised:
        translator.translate([text], **{"src_lang": "de", "tgt_lang": "en", "method": "greedy", **kw})
    return str(raised.value)


@pytest.mark.parametrize("text, kw", [("", {}), ("  \n ", {}), (GERMAN[0], {"src_lang": "fr"}),
                                      (GERMAN[0], {"tgt_lang": "de"}), (GERMAN[0], {"method": "nucleus"}),
                                      (GERMAN[0], {"attention": "some"})],
                         ids=["empty", "whitespace", "unknown source", "same language", "unknown method",
                              "unknown attention"])
def test_bad_input_gets_422_with_the_runtimes_own_message(url, translator, text, kw):
    status, found = post(f"{url}/translate", body(text, **kw))
    assert (status, found["detail"]) == (422, runtime_message(translator, text, **kw))


def test_too_long_text_is_refused_unless_truncation_is_asked_for(url, translator):
    long = " ".join(GERMAN * 6)
    status, found = post(f"{url}/translate", body(long))
    room = translator.max_src_len - 2
    assert status == 422 and found["detail"].startswith("text too long: ") and f"at most {room}" in found["detail"]
    assert "truncate=true" in found["detail"]
    status, found = post(f"{url}/translate", body(long, truncate=True))
    assert status == 200 and found["truncated"] and len(found["src_tokens"]) == translator.max_src_len
    status, found = post(f"{url}/translate", body("a" * 20_001))
    assert status == 422 and "20001 characters" in found["detail"]
    status, found = post(f"{url}/sentiment", {"text": " ".join(t for _, t in REVIEWS) * 4})
    assert status == 422 and found["detail"].startswith("text too long: ")


def test_wrong_types_ranges_and_precisions_are_422_naming_the_field(url):
    for bad, field in [({"beam": "wide"}, "beam"), ({"beam": 0}, "beam"), ({"top_p": 1.5}, "top_p"),
                       ({"colour": "red"}, "colour")]:
        status, found = post(f"{url}/translate", body(GERMAN[0], **bad))
        assert status == 422 and field in json.dumps(found["detail"]), (bad, found)
    status, found = post(f"{url}/translate", body(GERMAN[0], precision="fp16"))
    assert (status, found["detail"]) == (422, "precision must be one of fp32, int8, got 'fp16'")


def test_a_request_past_its_timeout_gets_504_and_a_bad_timeout_422(url):
    slow = body(" ".join(GERMAN), method="beam", beam=16, max_len=400, truncate=True)
    status, found = post(f"{url}/translate", slow, headers={"X-Request-Timeout": "0.001"})
    assert status == 504 and found["detail"].startswith("no answer within 0.001 s")
    status, found = post(f"{url}/translate", body(GERMAN[0]), headers={"X-Request-Timeout": "soon"})
    assert status == 422 and "X-Request-Timeout" in found["detail"]


def test_an_answer_that_comes_back_after_the_timeout_is_a_504_too():
    """Should a backend block the event loop the timeout's timer runs on (the replica's searches did, before they
    moved to the lanes' threads), the answer arrives late instead of the timer firing. The client asked for none
    after its timeout, so it still gets the 504."""

    class BlockingBackend:  # what a search on the loop does to it
        async def call(self, task, method, *args):
            time.sleep(0.05)
            return {"text": "late"}

    found = asyncio.run(answer(BlockingBackend(), "translate", {}, ServeSettings(), "0.01"))
    assert found.status_code == 504 and json.loads(found.body)["detail"].startswith("no answer within 0.01 s")
    assert asyncio.run(answer(BlockingBackend(), "translate", {}, ServeSettings(), "5")) == {"text": "late"}


def test_health_readiness_info_and_openapi_docs(url):
    def get(path: str):
        with urllib.request.urlopen(f"{url}{path}", timeout=30) as response:
            return response.status, response.read()

    assert get("/health") == (200, b'{"status":"ok"}')
    status, ready = get("/ready")
    assert status == 200 and json.loads(ready)["ready"] is True
    info = json.loads(get("/info")[1])
    assert info["translate"]["directions"] == [["de", "en"], ["en", "de"]] and info["sentiment"]["labels"]
    paths = json.loads(get("/openapi.json")[1])["paths"]
    assert {"/translate", "/sentiment", "/health", "/ready"} <= set(paths)
    assert get("/docs")[0] == 200


def test_the_worker_groups_compatible_requests_and_one_bad_request_fails_alone(root):
    worker = TranslationWorker.load(root, "cpu", ("fp32",), 1)
    base = TranslateRequest(text="x").model_dump() | {"method": "greedy", "precision": "fp32"}
    requests = [{**base, "text": GERMAN[0]}, {**base, "text": " "}, {**base, "text": GERMAN[1], "method": "beam"},
                {**base, "text": GERMAN[2]}, {**base, "text": ENGLISH[0], "src_lang": "en", "tgt_lang": "de"}]
    answers = worker.run(requests)
    assert answers[1] == {"error": "empty text: text #0 is empty or only whitespace", "status": 422}
    assert [a["timings"]["group_size"] for a in answers if "error" not in a] == [2, 1, 2, 1]
    assert all(a["timings"]["batch_size"] == 5 for a in answers if "error" not in a)
    assert worker.stats()["batch_sizes"] == {"5": 1}


def test_settings_refuse_unknown_keys_and_batches_the_replica_cannot_hold():
    with pytest.raises(ValueError, match="unknown setting.*workers.*known: .*translate_replicas"):
        ServeSettings.from_dict({"workers": 2})
    with pytest.raises(ValueError, match="layout must be one of one, split, got 'two'"):
        ServeSettings(layout="two")
    with pytest.raises(ValueError, match="max_ongoing_requests"):
        ServeSettings(max_batch_size=64, max_ongoing_requests=32)


@pytest.mark.slow  # importing Ray takes ~3.5 s
def test_the_serve_config_file_is_valid_for_serve_deploy():
    schema = pytest.importorskip("ray.serve.schema")
    config = yaml.safe_load((REPO / "serve" / "config.yaml").read_text(encoding="utf-8"))
    parsed = schema.ServeDeploySchema.model_validate(config)
    [app] = parsed.applications
    assert app.import_path == "serve.deployments:app_builder"
    settings = ServeSettings.from_dict(app.args)
    from serve.deployments import app_builder

    assert app_builder(app.args) is not None and settings.max_batch_size == ServeSettings().max_batch_size
    assert {d.name for d in app.deployments} == {"Service"} and settings.layout == "one"


@pytest.mark.slow  # imports Ray
def test_a_replica_of_the_one_layout_refuses_beyond_what_it_may_hold():
    """ReplicaBackend counts the requests in its lanes (Serve's own limits let a burst through behind HAProxy) and
    answers 503 beyond max_ongoing + max_queued; the count falls back as answers leave."""
    pytest.importorskip("ray.serve")
    from serve.api import ServiceError
    from serve.deployments import ReplicaBackend

    class FakeService:
        settings = ServeSettings(max_batch_size=2, max_ongoing_requests=2, max_queued_requests=1)

        def __init__(self):
            self.release = asyncio.Event()
            self.lanes = {"translate": self}
            self.workers = {"translate": TranslationWorker({}, size=costs.TranslatorSize(1, 1, 1, 8))}

        async def submit(self, request):
            await self.release.wait()
            return {"text": request["text"]}

        def load(self):
            return {}

    async def burst():
        service = FakeService()
        backend = ReplicaBackend(service)
        held = [asyncio.create_task(backend.call("translate", "translate", {"text": str(i)})) for i in range(3)]
        await asyncio.sleep(0)
        with pytest.raises(ServiceError) as refused:
            await asyncio.wait_for(backend.call("translate", "translate", {"text": "one too many"}), 5)
        service.release.set()
        answers = await asyncio.gather(*held)
        return refused.value, answers, backend.held, await backend.call("translate", "stats")

    refused, answers, held_after, stats = asyncio.run(burst())
    assert refused.status == 503 and refused.message.startswith("overloaded: this replica already holds 3 requests")
    assert [a["text"] for a in answers] == ["0", "1", "2"] and held_after == 0 and stats["requests"] == 0


def test_a_backend_that_cannot_answer_gives_its_status_and_sentence_on_every_route():
    from fastapi.testclient import TestClient

    from serve.api import ServiceError, build_api

    class GoneBackend:
        async def call(self, task, method, *args):
            raise ServiceError(503, f"the {task} replica serving this request stopped")

    client = TestClient(build_api(GoneBackend(), ServeSettings()))
    for method, path, kw in [("get", "/info", {}), ("get", "/stats", {}),
                             ("post", "/translate", {"json": body(GERMAN[0])})]:
        found = getattr(client, method)(path, **kw)
        assert (found.status_code, found.json()) == (503, {"detail": "the translate replica serving this request "
                                                                     "stopped"}), path
    assert client.get("/ready").json()["detail"].startswith("not ready: the translate replica")
