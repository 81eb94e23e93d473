"""The playground end to end in a real browser: `streamlit run app.py` + Debian chromium driven by playwright.

Each page: type, click, wait for the result text and the plotly chart, assert on the text (the
wrappers' own output for the same input), save a screenshot in test-artifacts/. Then 8 browser
contexts translate 8 sentences at the same time, and a round-trip benchmark prints p50 over 8
translations (a report, not an assertion; TX_ROUND_TRIP_TRIES sets how many). Models: the tiny exported ones
of app_fixtures, or the folder named by TX_BROWSER_MODELS (e.g. `models`, exported) for the round-trip
benchmark on real models:
`TX_BROWSER_MODELS=models TX_ROUND_TRIP_TRIES=20 pytest tests/browser/test_browser.py -m browser -k round_trip -s`.

Chromium comes from apt (`make browser`); playwright never downloads a browser here.
"""
from __future__ import annotations

import asyncio
import csv
import json
import os
import statistics
import threading
import time
import urllib.parse
import urllib.request

import pytest
from browser_fixtures import (
    ARTIFACTS,
    CHART,
    CHROMIUM,
    CHROMIUM_ARGS,
    CROSS_MAP,
    ERRORS,
    IDLE,
    INFO,
    NAV,
    OUTPUT,
    SENTENCES,
    SUCCESS,
    TEN_WORDS,
    TIMEOUT_MS,
    VIEWPORT,
    WALK_BARS,
    WALK_MAP,
    busy_share,
    models_root,
    new_tab,
    no_errors,
    push_sliders,
    reference_translator,
    settle,
    shot,
    shot_from,
    translate,
    translations,
    visit,
)
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from runtime import OnnxSentimentClassifier

pytestmark = [pytest.mark.exports, pytest.mark.browser]


SERVER_PIDS: dict[str, int] = {}  # server url -> its process, whose CPU time the Stop test reads


@pytest.fixture(scope="module")
def server(app_server):
    url, pid = app_server
    SERVER_PIDS[url] = pid
    return url


@pytest.fixture(scope="module")
def browser(server, chromium):
    return chromium


@pytest.fixture(scope="module")
def page(browser):
    """One tab for the module's tests, each opening its page by its URL (a new Streamlit session each time). A new
    browser context per test compiled the app's scripts again with nothing cached: 3.0 core-s a page load on the
    2-core host against 1.7 in a tab that has loaded the app before (2026-11-29)."""
    context, page = new_tab(browser)
    yield page
    context.close()


@pytest.fixture
def fresh_page(browser):
    """A tab of its own, nothing cached: for the test that counts every request a page makes."""
    context, page = new_tab(browser)
    yield page
    context.close()


def test_home(page, server):
    visit(page, server)
    page.get_by_text("runs the models on").wait_for()
    body = page.inner_text("body")
    assert "Transformer playground" in body
    assert "Translation" in body and "Sentiment" in body and "ONNX opset 20" in body
    assert reference_translator().provider in body
    nav = page.locator('[data-testid="stSidebar"]')
    for name in ("Home", "Translate", "Sentiment", "Attention explorer", "Walkthrough", "Decoding explorer", "Latency",
                 "Model card", "Train your own"):
        assert nav.get_by_text(name, exact=True).count() == 1
    no_errors(page)
    shot(page, "home")


def test_translate(page, server):
    visit(page, server, "Translate")
    text = "Guten Morgen! Wie geht es dir?\nDas Wetter ist heute schön."
    page.locator('[data-testid="stTextArea"] textarea').fill(text)
    page.get_by_role("button", name="Translate").click()
    page.locator('[data-testid="stDataFrame"]').wait_for()
    page.locator(CROSS_MAP).first.wait_for()
    settle(page)
    no_errors(page)
    # One line: the translation itself in the output box, never a green success.
    page.locator('[data-testid="stTextArea"] textarea').fill(TEN_WORDS[0])
    page.get_by_role("button", name="Translate").click()
    page.wait_for_function(f"(t) => document.querySelector('{OUTPUT}')?.innerText.trim() === t",
                           arg=translate([TEN_WORDS[0]])[0])
    page.locator(CROSS_MAP).first.wait_for()
    settle(page)
    assert "Cross-attention" in page.inner_text("body")
    assert page.get_by_role("button", name="Download CSV").count() == 1
    no_errors(page)
    shot(page, "translate")


def test_sentiment(page, server):
    visit(page, server, "Sentiment")
    review = "a gem of a film, warm and funny"
    page.locator('[data-testid="stTextArea"] textarea').first.fill(review)
    page.get_by_role("button", name="Classify", exact=True).click()
    expected = OnnxSentimentClassifier(models_root() / "sentiment").classify([review])[0]
    page.get_by_text("The model says").wait_for()
    page.wait_for_function(f"() => document.querySelectorAll('{CHART}').length >= 2")
    settle(page)
    # a model output is no success: the label and its calibrated probability, plainly
    assert page.locator(SUCCESS).count() == 0
    body = page.inner_text("body")
    assert f"The model says {expected.label}, probability {expected.probs[expected.label]:.1%}." in body
    assert "The probability is calibrated" in body
    no_errors(page)
    shot(page, "sentiment")
    # An example picked inside the tab's fragment fills the text box there (its callback, then the fragment's own
    # rerun), and the result of the old text goes, with why.
    page.locator('[data-testid="stSelectbox"]').filter(has_text="Example reviews").click()
    option = page.get_by_role("option").filter(has_not_text=review).first  # another text than the one classified
    picked = option.inner_text().strip()
    option.click()
    page.get_by_text("The review changed since the last result").wait_for()
    assert page.locator('[data-testid="stTextArea"] textarea').first.input_value().strip() == picked
    # Batch tab: lines -> table.
    page.get_by_role("tab", name="Batch").click()
    page.locator('[data-testid="stTextArea"] textarea').nth(1).fill("great fun\nawful\nfine")
    page.get_by_role("button", name="Classify all").click()
    page.get_by_text("3 reviews").wait_for()
    settle(page)
    no_errors(page)
    shot(page, "sentiment-batch")


def test_sentiment_file_refused_by_the_browser(page, server, tmp_path):
    """A file over server.maxUploadSize is refused by the browser itself, which keeps the file uploaded before it and
    tells the server nothing: "Classify all lines" must not then classify the kept file (issue 25, finding 5)."""
    visit(page, server, "Sentiment")
    page.get_by_role("tab", name="Batch").click()
    files = page.locator('[data-testid="stFileUploader"] input[type="file"]')
    files.set_input_files(files=[{"name": "reviews.csv", "mimeType": "text/csv",
                                  "buffer": b"id,text\n1,a gem of a film\n2,\n3,dull and slow\n"}])
    page.get_by_text("From reviews.csv").wait_for()  # classified on arrival, every row kept
    settle(page)
    assert "1 blank row kept" in page.inner_text("body")
    big = tmp_path / "big.csv"
    row = b"0,a perfectly ordinary review of a perfectly ordinary film\n"
    big.write_bytes(b"id,text\n" + row * (21 * 2**20 // len(row)))  # over the 20 MB of .streamlit/config.toml
    files.set_input_files(str(big))
    page.get_by_text("or smaller").wait_for()  # the browser's own refusal
    settle(page)
    page.get_by_role("button", name="Classify all lines").click()
    page.get_by_text("Paste some reviews").wait_for()  # the button took up neither file
    settle(page)
    assert "From big.csv" not in page.inner_text("body")
    no_errors(page)
    shot(page, "sentiment-file-refused")


def test_attention_explorer(page, server):
    visit(page, server, "Attention_explorer")
    sentence = "Das Wetter ist heute schön."
    box = page.locator('[data-testid="stTextInput"] input')
    box.fill(sentence)
    box.press("Enter")
    greedy = reference_translator().translate([sentence], "de", "en", method="greedy")[0]
    page.wait_for_function(
        f"(t) => [...document.querySelectorAll('{INFO}')].some(e => e.innerText.trim() === t)",
        arg=f"Greedy translation: {greedy.text or '(empty output)'}")
    # the map (markup up to 40 tokens a side, else plotly's: CROSS_MAP takes either) and the two PE charts
    page.wait_for_function(f"() => document.querySelectorAll('{CROSS_MAP}').length === 3")
    settle(page)
    assert "Positional encoding" in page.inner_text("body")
    no_errors(page)
    shot(page, "attention-explorer")
    page.locator('[data-testid="stRadio"]').filter(has_text="Heads").get_by_text("all heads (grid)").click()
    page.get_by_text(f"all {reference_translator().backend.files.shape.n_heads} heads").wait_for()
    settle(page)
    no_errors(page)
    shot(page, "attention-explorer-heads")
    shot_from(page, "Positional encoding", "attention-explorer-positional")


def test_decoding_explorer_opens_a_shared_link_steps_through_and_redraws(page, server):
    visit(page, server, "Decoding_explorer?direction=de-en&text=Das+Wetter+ist+heute+sch%C3%B6n.&step=2&top_k=5")
    page.locator(CHART).first.wait_for()
    settle(page)
    page.get_by_text("Step 2: the next-token distribution").wait_for()
    assert "top-k = 5" in page.inner_text("body") or page.get_by_text("top-k = 5", exact=False).count()
    no_errors(page)
    shot(page, "decoding-explorer")
    step = page.locator('[data-testid="stSlider"]').filter(has_text="Step").get_by_role("slider")
    step.focus()
    step.press("ArrowRight")
    page.get_by_text("Step 3: the next-token distribution").wait_for()
    settle(page)
    assert "step=3" in page.url and "top_k=5" in page.url
    no_errors(page)
    shot_from(page, "Beam search as a tree", "decoding-explorer-tree")
    # the downloads are made when clicked (deferred), with the page's settings: top-k 5 keeps 5 tokens a step
    with page.expect_download() as download:
        page.get_by_role("button", name="Step distributions (CSV: each step's 50 most probable tokens)").click()
    assert download.value.suggested_filename == "decoding_steps.csv"
    with open(download.value.path(), encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == ["step", "token_id", "token", "log_prob", "prob", "prob_filtered"]
    steps = sorted({int(row["step"]) for row in rows})
    assert steps[0] == 1 and len(steps) >= 3 and steps == list(range(1, len(steps) + 1))
    for step in steps:
        kept = [row for row in rows if int(row["step"]) == step and float(row["prob_filtered"]) > 0]
        assert len(kept) == 5, (step, len(kept))
    with page.expect_download() as download:
        page.get_by_role("button", name="Beam search tree (JSON)").click()
    with open(download.value.path(), encoding="utf-8") as f:
        tree = json.load(f)
    assert tree["nodes"] and "length_penalty" in tree


def test_walkthrough_opens_a_shared_link_steps_through_and_redraws(page, server):
    text = urllib.parse.quote_plus(SENTENCES[2])
    visit(page, server, f"Walkthrough?model=translate:de-en&text={text}&step=scores&layer=2&head=3&query=1")
    page.locator(WALK_MAP).first.wait_for()
    settle(page)
    page.get_by_text("Layer 2, head 3").first.wait_for()
    body = page.inner_text("body")
    assert "Scores: QKᵀ, ÷ √d_k, mask, softmax" in body and "Greedy translation" in body
    assert "softmax of the shown scores equals the shown weights" in body
    no_errors(page)
    shot(page, "walkthrough")
    head = page.locator('[data-testid="stSlider"]').filter(has_text="Head").get_by_role("slider")
    head.focus()
    head.press("ArrowRight")
    page.get_by_text("Layer 2, head 4").first.wait_for()
    settle(page)
    assert "head=4" in page.url and "step=scores" in page.url
    page.get_by_role("button", name="Next ▶").click()
    page.get_by_text("Weights × V, heads concatenated, W_O").first.wait_for()
    settle(page)
    assert "step=heads" in page.url
    no_errors(page)
    visit(page, server, f"Walkthrough?model=translate:de-en&text={text}&step=output&position=1")
    page.locator(WALK_BARS).first.wait_for()
    settle(page)
    page.get_by_text("the token the greedy translation chose here").wait_for()
    no_errors(page)
    shot(page, "walkthrough-output")


def test_latency(page, server):
    visit(page, server, "Latency")
    push_sliders(page, ("Timed runs", "Warm-up runs"), "Home")  # fewest runs: 5 timed, no warm-up
    page.get_by_role("button", name="Run", exact=True).click()
    page.get_by_text("Latency per call (ms)").wait_for()
    settle(page)
    body = page.inner_text("body")
    for system in ("PyTorch eager", "onnxruntime fp32", "onnxruntime int8"):
        assert system in body
    assert "5 timed runs" in body and "thread" in body
    no_errors(page)
    shot(page, "latency")
    if not (models_root() / "sentiment" / "onnx" / "bench.json").is_file():
        return  # the shipped models carry a saved benchmark only after `python -m bench runtimes`
    page.locator('[data-testid="stRadio"]').filter(has_text="Model").get_by_text("Sentiment").click()
    page.get_by_text("target classifier").first.wait_for()  # sentiment/onnx/bench.json from bench runtimes
    settle(page)
    no_errors(page)
    shot_from(page, "Latest", "latency-saved-bench")


def start_a_long_latency_run(page, server: str) -> None:
    """Latency page, beam search over the standard set, the most runs: a minute or more of work."""
    visit(page, server, "Latency")
    page.locator('[data-testid="stRadio"]').filter(has_text="Input").get_by_text("standard set").click()
    settle(page)
    page.locator('[data-testid="stRadio"]').filter(has_text="Decoding").get_by_text("beam").click()
    settle(page)
    push_sliders(page, ("Timed runs", "Warm-up runs"), "End")
    page.get_by_role("button", name="Run", exact=True).click()
    page.get_by_text("round ").first.wait_for()  # the progress bar counts the timed rounds
    page.wait_for_timeout(500)


def test_latency_stop_and_a_closed_tab_really_stop_the_work_on_the_server(browser, server):
    pid = SERVER_PIDS[server]
    for how in ("stop", "close"):
        context, page = new_tab(browser)
        start_a_long_latency_run(page, server)
        # `make test` runs this beside other test files' work, which can take the server's core for a while (an
        # export runs several processes): wait up to 10 s for one second in which the run keeps it busy
        shares = [busy_share(pid, 1.0)]
        while shares[-1] <= 0.5 and len(shares) < 10:
            shares.append(busy_share(pid, 1.0))
        assert shares[-1] > 0.5, f"the run did not keep the server busy in any second ({shares}): nothing to stop"
        if how == "stop":
            page.get_by_role("button", name="Stop", exact=True).click()
            settle(page)
            assert "Latency per call (ms)" not in page.inner_text("body")  # stopped, not finished
            no_errors(page)
        context.close()
        # The script stops at its next call into Streamlit (the next round); on a loaded 2-core machine that can
        # take a few seconds, so wait up to 10 s for a quiet second (the run lasts a minute or more: a run that goes
        # on never has one).
        shares = []
        while len(shares) < 10 and (not shares or shares[-1] >= 0.2):
            shares.append(busy_share(pid, 1.0))
        assert shares[-1] < 0.2, f"after {how}, the server kept using a core for 10 s ({shares}): the run goes on"


def test_model_card(page, server):
    visit(page, server, "Model_card")
    page.get_by_text("Parity with PyTorch and sizes").wait_for()
    page.locator(CHART).first.wait_for()
    settle(page)
    body = page.inner_text("body")
    assert "GPL-2+" in body and "Export passed" in body and "Known limitations" in body
    no_errors(page)
    shot(page, "model-card")
    shot_from(page, "Test metrics", "model-card-metrics")
    page.locator('[data-testid="stRadio"]').filter(has_text="Model").get_by_text("Sentiment").click()
    page.get_by_text("Confusion matrix").wait_for()
    settle(page)
    no_errors(page)
    shot_from(page, "Test metrics", "model-card-sentiment-metrics")


def test_eight_browsers_translate_at_once(server):
    """8 tabs (8 Streamlit sessions), 8 different sentences, clicked together: each gets its own translation, no
    error element. The tabs share one browser context, which has loaded the page once before them: 8 fresh contexts
    each compiled the app's scripts anew, ~1.4 core-s a tab on the 2-core host, while the server's side (8
    sessions, one per tab) is the same."""
    from playwright.async_api import async_playwright

    expected = translate(SENTENCES)

    async def one(context, sentence: str, want: str, index: int) -> tuple[str, int, str]:
        page = await context.new_page()
        await page.goto(f"{server}/Translate")
        await page.wait_for_selector(NAV)
        await page.wait_for_function(IDLE)
        box = page.locator('[data-testid="stTextArea"] textarea')
        await box.fill(sentence)
        await box.press("Control+Enter")  # commit the text first, so the clicks below fire together
        await page.wait_for_timeout(100)
        await page.wait_for_function(IDLE)
        await barrier.wait()
        await page.get_by_role("button", name="Translate").click()
        await page.wait_for_function(f"(t) => document.querySelector('{OUTPUT}')?.innerText.trim() === t", arg=want)
        await page.wait_for_function(IDLE)
        errors = await page.locator(ERRORS).count()
        got = (await page.locator(OUTPUT).inner_text()).strip()
        if index == 0:
            await page.locator(CROSS_MAP).first.wait_for()
            await page.wait_for_timeout(300)
            await page.screenshot(path=str(ARTIFACTS / "translate-concurrent-0.png"))
        await page.close()
        return got, errors, want

    async def main():
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                context = await browser.new_context(viewport=VIEWPORT)
                context.set_default_timeout(TIMEOUT_MS)
                first = await context.new_page()  # the app's files cached before the 8 tabs open together
                await first.goto(f"{server}/Translate")
                await first.wait_for_selector(NAV)
                await first.close()
                return await asyncio.gather(*(one(context, s, w, i)
                                              for i, (s, w) in enumerate(zip(SENTENCES, expected, strict=True))))
            finally:
                await browser.close()

    barrier = asyncio.Barrier(len(SENTENCES))
    outcome: dict = {}

    def run() -> None:  # its own thread: the sync playwright of the other tests owns this thread's event loop
        try:
            outcome["results"] = asyncio.run(main())
        except BaseException as e:  # re-raised below, in the test's thread
            outcome["error"] = e

    start = time.perf_counter()
    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    if "error" in outcome:
        raise outcome["error"]
    results = outcome["results"]
    print(f"\n8 concurrent browser translations done in {time.perf_counter() - start:.1f} s (incl. page loads)")
    assert len(set(expected)) > 1  # different sentences, different outputs: a mix-up would show
    for got, errors, want in results:
        assert got == want
        assert errors == 0


# Clicks Translate from inside the page and resolves when the expected translation is on screen and the
# run has finished: the round trip without playwright's own per-action overhead.
CLICK_AND_TIME = """async (want) => {
  const button = [...document.querySelectorAll('button')].find(b => b.innerText.trim() === 'Translate');
  return await new Promise(resolve => {
    const start = performance.now();
    let shown = null;
    const check = () => {
      const box = document.querySelector('OUTPUT');
      if (shown === null && box && box.innerText.trim() === want) shown = performance.now() - start;
      if (shown !== null && !document.querySelector('[data-testid="stStatusWidget"]')) {
        observer.disconnect();
        resolve([shown, performance.now() - start]);
      }
    };
    const observer = new MutationObserver(check);
    observer.observe(document.body, {subtree: true, childList: true, characterData: true, attributes: true});
    // Never hang the suite: after 20 s, give up and report what the box shows.
    setTimeout(() => {
      observer.disconnect();
      const box = document.querySelector('OUTPUT');
      resolve([null, box ? box.innerText.trim() : '(no output box)']);
    }, 20000);
    button.click();
  });
}""".replace("OUTPUT", OUTPUT)


def test_no_request_leaves_the_machine(fresh_page, server):
    """Every page, visited in a real browser, loads everything from the app's own server: no font host, no CDN,
    no telemetry (a browser pass found the page icons fetched from a font host, which fails offline). A fresh
    context: a cached file would not be asked for again."""
    page = fresh_page
    outside: list[str] = []
    page.on("request", lambda r: outside.append(r.url) if urllib.parse.urlsplit(r.url).hostname not in
            ("127.0.0.1", "localhost", None) and not r.url.startswith(("data:", "blob:")) else None)
    for path in ("", "Translate", "Sentiment", "Attention_explorer", "Walkthrough", "Decoding_explorer", "Latency",
                 "Model_card", "Train_your_own"):
        visit(page, server, path)
        page.wait_for_timeout(300)
    no_errors(page)
    assert outside == [], f"requests to other hosts: {sorted(set(outside))[:10]}"


def test_round_trip_benchmark(page, server):
    """Report (not an assertion on time): click -> translation on screen, a 10-word sentence, p50 over the timed
    tries: 8 in `make test` (the path works and its numbers are printed, taken beside the other test files' work,
    so not a measurement), TX_ROUND_TRIP_TRIES=20 alone for the measurements of docs/performance.md.

    The page's own "· N ms" heading gives the model's share (translate() with attention), so the
    report separates model time from the app + browser overhead."""
    visit(page, server, "Translate")
    box = page.locator('[data-testid="stTextArea"] textarea')
    wants = translate(TEN_WORDS)
    assert wants[0] != wants[1]  # alternating sentences: a stale result can never pass for a new one
    shown, finished, model, reloads = [], [], [], 0
    for attempt in range(2 + int(os.environ.get("TX_ROUND_TRIP_TRIES", "8"))):  # 2 warm-up tries
        try:
            box.fill(TEN_WORDS[attempt % 2], timeout=20_000)
        except PlaywrightTimeoutError:
            # A full CI run (2 cores, the server up for every earlier browser test) once left the box disabled, the
            # page no longer connected, for 90 s (2026-11-25; 3 runs of this module here could not repeat it).
            # Reload once and count it: the report says so, and a second time fails.
            reloads += 1
            assert reloads == 1, "the Translate page lost its server connection twice"
            visit(page, server, "Translate")
            box.fill(TEN_WORDS[attempt % 2])
        box.press("Control+Enter")  # commit the text (its own rerun) before the clock starts
        settle(page)
        text_ms, done_ms = page.evaluate(CLICK_AND_TIME, wants[attempt % 2])
        if text_ms is None:  # a CI run under load hung here once (cause not found): click once more, then fail
            settle(page)
            text_ms, done_ms = page.evaluate(CLICK_AND_TIME, wants[attempt % 2])
        assert text_ms is not None, f"no translation {wants[attempt % 2]!r} after two clicks; the box shows {done_ms!r}"
        heading = page.locator("h3").filter(has_text=" ms").inner_text()
        if attempt >= 2:
            shown.append(text_ms)
            finished.append(done_ms)
            model.append(float(heading.rsplit("·", 1)[1].split()[0]))
    no_errors(page)
    load = os.getloadavg()[0]
    tokens = [len(t.tokens) for t in translations(TEN_WORDS)]
    print(f"\nbrowser round trip, 10-word DE->EN translation ({models_root()}: {tokens[0]}/{tokens[1]}-token "
          f"outputs; beam 4 + cross-attention heatmap from the same search), {len(shown)} tries, "
          f"load average {load:.1f} on {os.cpu_count()} CPUs:\n  click -> translation shown: p50 "
          f"{statistics.median(shown):.0f} ms, p90 {statistics.quantiles(shown, n=10)[-1]:.0f} ms, "
          f"min {min(shown):.0f} ms; -> run finished: p50 {statistics.median(finished):.0f} ms\n"
          f"  of which translate() in the server: p50 {statistics.median(model):.0f} ms (goal for the whole "
          f"round trip: < 150 ms on CPU)" + ("\n  the page had to be reloaded once: it lost its server connection"
                                              if reloads else ""))
