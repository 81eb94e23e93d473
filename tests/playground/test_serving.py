"""The playground's client of the service (playground/serving/client.py): the served models answer with the
runtime's own Translation and Prediction objects, equal to in-process ones, attention maps included; the service's
4xx sentences become ValueError, an unreachable service a ServiceError that says how to start it. Against the API
on this process (serve_fixtures, tiny exported models; the Ray service is tests/serve/test_serve_ray.py's)."""
from __future__ import annotations

import socket
import threading

import numpy as np
import pytest
from export_fixtures import GERMAN, REVIEWS
from serve_fixtures import free_port, running_api, tiny_models_root

from playground.serving import client
from runtime import OnnxSentimentClassifier, OnnxTranslator
from serve.settings import ServeSettings

pytestmark = pytest.mark.exports


@pytest.fixture(scope="module")
def root():
    return tiny_models_root()


@pytest.fixture(scope="module")
def url(root):
    with running_api(ServeSettings(models_dir=str(root), provider="cpu", threads=1)) as found:
        yield found


def test_served_translations_equal_in_process_ones_with_cross_attention(url, root):
    local = OnnxTranslator(root / "translate", provider="cpu", threads=1)
    served = client.served_model("translate", url, "fp32")
    kw = {"src_lang": "de", "tgt_lang": "en", "method": "beam", "beam": 3, "attention": "cross"}
    found, want = served.translate(GERMAN[:4], **kw), local.translate(GERMAN[:4], **kw)
    assert [t.token_ids for t in found] == [t.token_ids for t in want]
    assert [t.confidence for t in found] == pytest.approx([t.confidence for t in want])
    for got, expected in zip(found, want, strict=True):
        assert len(got.attention["cross"]) == len(expected.attention["cross"])
        np.testing.assert_allclose(got.attention["cross"][-1], expected.attention["cross"][-1], atol=1e-4)
    assert served.max_src_len == local.max_src_len and served.provider.startswith("CPUExecutionProvider, served by")
    assert len(served.last_timings) == 4


def test_served_predictions_equal_in_process_ones(url, root):
    local = OnnxSentimentClassifier(root / "sentiment", provider="cpu", threads=1)
    served = client.served_model("sentiment", url, "fp32")
    texts = [text for _, text in REVIEWS]
    found, want = served.classify(texts, attention=True), local.classify(texts, attention=True)
    assert [p.label for p in found] == [p.label for p in want]
    assert [p.probs["positive"] for p in found] == pytest.approx([p.probs["positive"] for p in want], abs=1e-6)
    assert found[0].attention[0].shape == want[0].attention[0].shape


def test_the_services_messages_and_failures_reach_the_page_as_exceptions(url):
    served = client.served_model("translate", url, "fp32")
    with pytest.raises(ValueError, match=r"this model translates de->en, en->de, not fr->en"):
        served.translate(["Bonjour"], src_lang="fr", tgt_lang="en")
    with pytest.raises(ValueError, match="empty text"):
        served.translate(["ok", " "])
    nowhere = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(client.ServiceError, match=rf"{nowhere} cannot be reached .*make serve"):
        client.served_model("translate", nowhere, "fp32")


@pytest.mark.parametrize("reply", [b"", b"HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/plain\r\n"
                                        b"Content-Length: 21\r\nConnection: close\r\n\r\nInternal Server Error"],
                         ids=["connection dropped", "plain 500"])
def test_a_request_lost_with_its_replica_says_so(reply):
    """What HAProxy does to a request whose replica was killed under it: drop the connection, or a bare 500."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        def answer_once():
            connection, _ = server.accept()
            with connection:
                connection.recv(65536)
                connection.sendall(reply)

        thread = threading.Thread(target=answer_once, daemon=True)
        thread.start()
        service = client.Service(f"http://127.0.0.1:{server.getsockname()[1]}", timeout_s=10)
        with pytest.raises(client.ServiceError, match="most likely stopped under it.*try again"):
            service.request("/translate", {"text": "Hallo"})
        thread.join(5)


def test_the_url_comes_from_tx_serve_url(monkeypatch):
    monkeypatch.delenv(client.SERVE_ENV, raising=False)
    assert client.service_url() is None
    monkeypatch.setenv(client.SERVE_ENV, " http://10.0.0.5:8000/ ")
    assert client.service_url() == "http://10.0.0.5:8000"
