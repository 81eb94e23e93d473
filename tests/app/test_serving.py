"""The pages as the service's client (TX_SERVE_URL; playground/serving/): Translate and Sentiment answer through
the service, say so, and draw the same result as in-process; an unreachable service is an error box, not a
traceback; the Latency page times a "served (HTTP)" column beside in-process onnxruntime. The service here is the
API on this process over the same tiny models (tests/serve_fixtures.py): the Ray one is tests/serve/'s."""
from __future__ import annotations

import pytest
from app_fixtures import clean, free_port, open_app, values
from serve_fixtures import running_api

from playground.serving.client import SERVE_ENV
from runtime import OnnxSentimentClassifier, OnnxTranslator
from serve.settings import ServeSettings

pytestmark = pytest.mark.exports


@pytest.fixture(scope="module")
def service(model_root):
    with running_api(ServeSettings(models_dir=str(model_root), provider="cpu", threads=1)) as url:
        yield url


@pytest.fixture
def served(service, monkeypatch):
    monkeypatch.setenv(SERVE_ENV, service)
    return service


def test_translate_answers_through_the_service_and_says_so(served, model_root, monkeypatch):
    at = open_app(monkeypatch, model_root, "translate")
    text = at.text_area(key="translate_text_de").value
    at.button(key="translate_go").click().run()
    clean(at)
    assert any(f"served by {served}" in c for c in values(at.caption)), values(at.caption)
    [want] = OnnxTranslator(model_root / "translate").translate([text], "de", "en", method="beam", beam=4)
    assert any(want.text in s for s in values(at.code)), values(at.code)


def test_sentiment_answers_through_the_service(served, model_root, monkeypatch):
    at = open_app(monkeypatch, model_root, "sentiment")
    text = at.text_area(key="sentiment_text").value
    at.button(key="sentiment_go").click().run()
    clean(at)
    [want] = OnnxSentimentClassifier(model_root / "sentiment").classify([text])
    assert any(f"**{want.label}**" in m and f"{want.probs[want.label]:.1%}" in m for m in values(at.markdown))


def test_an_unreachable_service_is_an_error_box_naming_it(model_root, monkeypatch):
    nowhere = f"http://127.0.0.1:{free_port()}"
    monkeypatch.setenv(SERVE_ENV, nowhere)
    at = open_app(monkeypatch, model_root, "sentiment")
    assert any(nowhere in e and "cannot be reached" in e for e in values(at.error)), values(at.error)


def test_latency_times_the_served_column_beside_in_process(served, model_root, monkeypatch):
    at = open_app(monkeypatch, model_root, "latency")
    at.radio(key="latency_task").set_value("sentiment").run()
    at.slider(key="latency_runs").set_value(5).run()
    at.slider(key="latency_warmup").set_value(0).run()
    at.button(key="latency_go").click().run()
    clean(at)
    table = next(d.value for d in at.dataframe if "p50 ms" in d.value.columns)
    rows = dict(zip(table["system"], table.iloc[:, -1], strict=True))
    assert "served (HTTP) fp32" in rows and rows["served (HTTP) fp32"] == "same on 1 of 1 input(s)", rows
