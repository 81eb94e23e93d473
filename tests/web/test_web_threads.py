"""The page served cross-origin isolated (`python -m web serve --isolated`, as `make run` does) runs onnxruntime-web
on several wasm threads and translates to the same ids as on one thread; served without the headers (as
`python -m http.server` or most free hosts do) it runs on one thread. Each page says which it runs."""
from __future__ import annotations

import pytest
from web_fixtures import static_server

pytestmark = [pytest.mark.browser, pytest.mark.exports]

SENTENCES = [("Das Wetter ist heute schön.", "en"), ("Wo ist der Bahnhof?", "en"),
             ("The children are playing in the garden.", "de")]
PTHREAD_SCRIPT = "/ort-wasm-simd-threaded.mjs"  # the script of onnxruntime-web's thread pool workers


@pytest.fixture(scope="module")
def isolated_url(web_folder):
    with static_server(web_folder, isolated=True) as url:
        yield url


@pytest.fixture
def isolated_page(chromium, isolated_url):
    context = chromium.new_context()
    page = context.new_page()
    page.goto(isolated_url + "/")
    page.wait_for_selector("body[data-ready='1']")
    page.evaluate("window.txWeb.load('int8')")
    yield page
    context.close()


def translations(page) -> list[dict]:
    """(tokens, threads) of each sentence, greedy and beam 4, in the page's worker."""
    return [page.evaluate("([text, tgt, method]) => window.txWeb.translateIds(window.txWeb.prepare(text, tgt).srcIds,"
                          " {method, beam: 4, alpha: 0.6}).then(h => ({tokens: h.tokens, threads: h.threads}))",
                          [text, tgt, method])
            for method in ("greedy", "beam") for text, tgt in SENTENCES]


def shown_timing(page) -> str:
    page.fill("#source", SENTENCES[0][0])
    page.evaluate("window.txWeb.translateTyped()")
    return page.inner_text("#timing")


def test_isolated_page_runs_on_threads_with_the_one_thread_ids(isolated_page, web_page):
    assert isolated_page.evaluate("self.crossOriginIsolated") is True
    cores = isolated_page.evaluate("navigator.hardwareConcurrency")
    if cores < 2:
        pytest.skip("one core: the page asks for min(4, cores) threads")
    threads = int(isolated_page.evaluate("document.body.dataset.threads"))
    assert threads == min(4, cores)
    assert f"on {threads} threads (cross-origin isolated)" in isolated_page.inner_text("#status")
    # the threads are real: onnxruntime-web started its pool, workers of its own script beside the page's worker
    assert any(worker.url.endswith(PTHREAD_SCRIPT) for worker in isolated_page.workers)
    threaded, one_thread = translations(isolated_page), translations(web_page)
    assert {t["threads"] for t in threaded} == {threads} and {t["threads"] for t in one_thread} == {1}
    assert [t["tokens"] for t in threaded] == [t["tokens"] for t in one_thread]
    assert f"ms in this browser on {threads} threads" in shown_timing(isolated_page)


def test_a_page_without_the_headers_runs_on_one_thread_and_says_so(web_page):
    assert web_page.evaluate("self.crossOriginIsolated") is False
    assert web_page.evaluate("document.body.dataset.threads") == "1"
    assert "on 1 thread (not cross-origin isolated" in web_page.inner_text("#status")
    assert not any(worker.url.endswith(PTHREAD_SCRIPT) for worker in web_page.workers)
    assert "ms in this browser on 1 thread ·" in shown_timing(web_page)
