"""The static page in chromium: it translates in a Web Worker as the Python runtime does, says what the app says
about bad input, keeps every request on its own origin, and works offline once loaded."""
from __future__ import annotations

import numpy as np
import pytest

from runtime import OnnxTranslator

pytestmark = [pytest.mark.browser, pytest.mark.exports]

TEXT = "Das Wetter ist heute schön."


@pytest.fixture(scope="module")
def python_int8(web_python_model):
    return OnnxTranslator(web_python_model, provider="cpu", precision="int8")


def translate_on_page(page, text: str, method: str = "greedy") -> str:
    page.select_option("#method", method)
    page.fill("#source", text)
    page.evaluate("window.txWeb.translateTyped()")
    return page.inner_text("#output")


def page_log_probs(page, text: str, tokens: list[int]) -> list[float]:
    """The page's log-probability of each of `tokens`, forced in order (greedy with them as its prefix)."""
    return page.evaluate("([text, tokens]) => window.txWeb.translateIds(window.txWeb.prepare(text, 'en').srcIds, "
                         "{method: 'greedy', prefix: tokens}).then(h => h.tokenLogProbs)", [text, tokens])


def test_greedy_int8_in_a_worker_agrees_with_python_and_stays_on_the_origin(web_page, web_url, python_int8):
    expected = python_int8.translate([TEXT], "de", "en", method="greedy")[0]
    shown = translate_on_page(web_page, TEXT)
    ids = web_page.evaluate("text => window.txWeb.translateIds(window.txWeb.prepare(text, 'en').srcIds, "
                            "{method: 'greedy'}).then(h => h.tokens)", TEXT)
    assert shown == web_page.evaluate("ids => window.txWeb.tokenizer.decode(ids)", ids)
    # The tiny model's weights are random: its next-token distributions are nearly flat, so a late step may tie
    # within float rounding (wasm's kernels sum in another order than x86's). Its first steps must agree, and every
    # step's log-probability on Python's path; tests/web/test_web_parity.py holds the trained model to every id.
    assert ids[:8] == expected.token_ids[:8]
    python = [float(p) for p in np.log(expected.token_probs)]
    assert np.abs(np.array(page_log_probs(web_page, TEXT, expected.token_ids)) - python).max() < 1e-4
    assert "1 thread" in web_page.inner_text("#status")  # http.server sends no isolation headers: one thread
    # the graphs ran in the worker: the page itself never loaded onnxruntime
    assert web_page.evaluate("typeof window.ort") == "undefined"
    assert any(url.endswith("decoder.int8.onnx.gz") for url in web_page.requests)
    assert [url for url in web_page.requests if not url.startswith(web_url + "/")] == []


def test_the_size_is_said_before_anything_loads(chromium, web_url, web_folder):
    page = chromium.new_page()
    page.goto(web_url + "/")
    page.wait_for_selector("body[data-ready='1']")
    said = page.inner_text("#size")
    first_load = page.evaluate("window.txWeb.config.load_bytes.int8")
    assert f"{first_load / 1e6:.1f} MB" in said
    files = page.evaluate("window.txWeb.config.files")
    assert first_load >= sum(f["bytes"] for name, f in files.items() if "fp32" not in name)
    page.close()


def test_bad_input_gets_the_apps_words(web_page, python_int8):
    translate_on_page(web_page, "   \n ")
    assert web_page.inner_text("#message") == "Nothing to work on: type some text (or pick an example) first."
    long_text = " ".join(["Das Wetter ist heute schön."] * 20)
    translate_on_page(web_page, long_text)
    expected = python_int8.translate([long_text], "de", "en", method="greedy")[0]
    assert expected.truncated
    limit = web_page.evaluate("window.txWeb.config.limits.max_src_len")
    assert web_page.inner_text("#message").startswith(f"Input too long: line(s) 1 exceeded the model's {limit}-token")
    chinese = "今天天气很好"
    translate_on_page(web_page, chinese)
    assert web_page.inner_text("#message") == python_int8.translate([chinese], "de", "en", method="greedy")[0].warning


def test_it_works_offline_after_the_first_load(web_page):
    before = translate_on_page(web_page, TEXT)
    assert before
    web_page.context.set_offline(True)
    web_page.reload()
    web_page.wait_for_selector("body[data-ready='1']")
    web_page.evaluate("window.txWeb.load('int8')")
    assert translate_on_page(web_page, TEXT) == before


def test_the_result_shows_probabilities_alternatives_and_the_cross_attention(web_page):
    translate_on_page(web_page, TEXT)
    tokens = web_page.locator("#tokens .token")
    n_out = tokens.count()
    n_src = len(web_page.evaluate("text => window.txWeb.prepare(text, 'en').srcIds", TEXT))
    assert n_out > 1 and "%" in tokens.nth(0).inner_text()
    assert "ms in this browser" in web_page.inner_text("#timing")
    # the heatmap: a row per output token, a column per source token (the tag and </s> included)
    assert web_page.locator("#heatmap tbody tr").count() == n_out
    assert web_page.locator("#heatmap thead th").count() == n_src + 1
    # greedy's likeliest token at a position is the one it chose, completed into the same output
    tokens.nth(1).click()
    web_page.wait_for_selector("#alternatives li")
    items = web_page.locator("#alternatives li")
    assert items.count() == 5
    assert items.nth(0).inner_text().endswith("→ " + web_page.inner_text("#output"))


def test_a_phone_at_390_px_shows_everything_without_overflow(chromium, web_url):
    context = chromium.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=2, is_mobile=True,
                                   has_touch=True)
    page = context.new_page()
    page.goto(web_url + "/")
    page.wait_for_selector("body[data-ready='1']")
    page.evaluate("window.txWeb.load('int8')")
    translate_on_page(page, TEXT + " " + TEXT)
    assert page.is_visible("#heatmap table")
    # nothing sticks out of the screen; only the heatmap scrolls, inside its own box
    wide = page.evaluate("""() => [...document.querySelectorAll('body *')]
        .filter(e => !e.closest('#heatmap table') && e.getBoundingClientRect().right > window.innerWidth + 0.5)
        .map(e => e.tagName + '#' + e.id + '.' + e.className)""")
    assert wide == []
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    context.close()
