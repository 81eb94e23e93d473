"""The body cap holds for bodies sent in chunks too (issue 49, item 2): the API counts a body without a
Content-Length as it arrives and answers 413 the moment it passes MAX_BODY_BYTES, without reading the rest, while
/health stays fast and the serving process' memory stays bounded; a chunked body under the cap is answered as one
with a length; the schema takes a text of at most the service's 20,000 characters, and the cap admits the largest
such body. Without Ray: the API on uvicorn in this process (serve_fixtures), over the tiny exported models; the same
middleware runs in the Serve replica (through the front: test_serve_front.py)."""
from __future__ import annotations

import json
import socket
import threading
import time
import urllib.request

import pytest
from export_fixtures import GERMAN
from serve_fixtures import (
    HealthProbe,
    chunked_post,
    endless_text,
    post,
    reset_peak_rss,
    rss_mb,
    running_api,
    tiny_models_root,
)

from serve import fault_injection, front
from serve.api import MAX_BODY_BYTES
from serve.schemas import MAX_CHARS
from serve.settings import ServeSettings

pytestmark = pytest.mark.exports

MiB = 1024 * 1024
ATTACKERS, BODY = 6, 48 * MiB  # the six 48 MiB chunked bodies, all at once
CHUNKED_413 = (f"the request body passed {MAX_BODY_BYTES} bytes as it arrived (sent in chunks, without a "
               f"Content-Length); this service takes at most {MAX_BODY_BYTES}")


@pytest.fixture(scope="module")
def url():
    with running_api(ServeSettings(models_dir=str(tiny_models_root()), provider="cpu", threads=1)) as found:
        yield found


def port_of(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


def greedy(text: str) -> bytes:
    return json.dumps({"text": text, "method": "greedy"}).encode()


def test_chunked_bodies_over_the_cap_get_413_at_once_while_health_stays_fast_and_memory_bounded(url):
    post(f"{url}/translate", {"text": GERMAN[0], "method": "greedy"})  # the models warm, the loop running
    answers: list = [None] * ATTACKERS
    reset_peak_rss()  # the server is this process (uvicorn in a thread): its peak from here on
    before = rss_mb()
    start = time.monotonic()
    with HealthProbe(url) as probe:
        time.sleep(0.3)  # a few probes before, to compare with
        threads = [threading.Thread(target=lambda i=i: answers.__setitem__(
            i, chunked_post(port_of(url), "/translate", endless_text(BODY), wait_s=60))) for i in range(ATTACKERS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(90)
        time.sleep(0.3)
    took = time.monotonic() - start
    grew = rss_mb(peak=True) - before
    health = [seconds for status, seconds in probe.found if status == 200]
    print(f"\n413 after {[round(a.answer_s, 3) for a in answers]} s, body sent by then "
          f"{[round(a.body_sent / MiB, 2) for a in answers]} MiB; /health: {len(health)} probes of "
          f"{len(probe.found)}, max {max(health):.3f} s, median {sorted(health)[len(health) // 2]:.3f} s; RSS "
          f"{before:.0f} MiB, peak +{grew:.1f} MiB; {took:.1f} s in all")
    for answer in answers:
        assert (answer.status, answer.detail[:len(CHUNKED_413)]) == (413, CHUNKED_413), answer
        assert answer.closed, "the connection was kept open after the 413, so the server would read the rest"
        assert answer.answer_s < 5, f"the 413 came {answer.answer_s:.1f} s in: the body was read past the cap"
        assert answer.body_sent < BODY / 4, f"{answer.body_sent} bytes sent before the 413: read past the cap"
    assert len(health) == len(probe.found) >= 5, probe.found
    assert max(health) < 1.0, f"/health took {max(health):.2f} s while the bodies came"
    assert grew < 64, f"the serving process grew {grew:.0f} MiB for {ATTACKERS} bodies of 48 MiB"


def test_a_length_over_the_cap_is_refused_from_the_headers_and_the_rest_never_read(url):
    sock = socket.create_connection(("127.0.0.1", port_of(url)), timeout=10)
    try:
        sock.sendall(f"POST /translate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     f"Content-Length: {BODY}\r\n\r\n".encode() + b'{"text": "' + b"a" * 1000)
        raw = fault_injection.read_until_closed(sock, 5)
    finally:
        sock.close()
    assert raw is not None, "the connection was still open 5 s after a 48 MiB Content-Length: waiting for the rest"
    status, headers, body = fault_injection.parse_answer(raw)
    assert status == 413 and headers["connection"] == "close"
    assert json.loads(body)["detail"].startswith(f"the request body is {BODY} bytes; this service takes at most "
                                                 f"{MAX_BODY_BYTES}")


def test_a_chunked_body_under_the_cap_is_answered_as_if_it_had_a_length(url):
    body = greedy(GERMAN[1])
    answer = chunked_post(port_of(url), "/translate", [body[i:i + 7] for i in range(0, len(body), 7)])
    with urllib.request.urlopen(urllib.request.Request(f"{url}/translate", body,
                                                       {"Content-Type": "application/json"}), timeout=60) as response:
        want = json.loads(response.read())
    assert answer.status == 200, answer
    assert not answer.closed, "a 200 closed its kept-alive connection: a 413's close would prove nothing"
    # the largest text the schema takes (20,000 characters, each a 6-byte JSON escape) is read whole: the cap admits
    # it, and the answer is the model's own (too many tokens), not a 413
    largest = json.dumps({"text": "ä" * MAX_CHARS, "method": "greedy"}).encode()
    assert 6 * MAX_CHARS < len(largest) <= MAX_BODY_BYTES
    answer = chunked_post(port_of(url), "/translate", [largest[i:i + 4096] for i in range(0, len(largest), 4096)])
    assert answer.status == 422 and answer.detail.startswith("text too long: ") and "tokens" in answer.detail, answer
    assert want["text"]  # and the first, chunked, got the same as with a length
    status, found = post(f"{url}/translate", json.loads(body))
    assert status == 200 and found["token_ids"] == want["token_ids"]


def test_the_schema_takes_at_most_the_services_characters_and_the_front_the_apis_bytes(url):
    with urllib.request.urlopen(f"{url}/openapi.json", timeout=30) as response:
        schemas = json.loads(response.read())["components"]["schemas"]
    assert schemas["TranslateRequest"]["properties"]["text"]["maxLength"] == MAX_CHARS
    assert schemas["SentimentRequest"]["properties"]["text"]["maxLength"] == MAX_CHARS
    for path in ("/translate", "/sentiment"):  # refused by the schema, before a worker sees it
        status, found = post(f"{url}{path}", {"text": "a" * (MAX_CHARS + 1)})
        assert (status, found["detail"]) == (422, f"invalid request: text too long: {MAX_CHARS + 1} characters, "
                                                  f"the service takes at most {MAX_CHARS} per request")
    assert front.FrontLimits().body_bytes == MAX_BODY_BYTES  # the front refuses what the API would
