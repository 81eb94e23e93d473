"""The Experiments page in a real browser (`streamlit run app.py` + Debian chromium): run one experiment (edit the
sentence and compare), download it as one HTML file with its figures inline, and open its shared link in a fresh tab,
which shows the same experiment."""
from __future__ import annotations

import urllib.parse

import pytest
from browser_fixtures import (
    TIMEOUT_MS,
    VIEWPORT,
    no_errors,
    settle,
    shot,
    visit,
)

pytestmark = [pytest.mark.exports, pytest.mark.browser]

CHART = ".vega-embed svg, .vega-embed canvas"


def test_an_experiment_runs_downloads_and_its_shared_link_reopens_it(app_server, chromium, tmp_path):
    server = app_server[0]
    context = chromium.new_context(viewport=VIEWPORT, accept_downloads=True)
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    text = urllib.parse.quote_plus("Das Wetter ist heute schön.")
    visit(page, server, f"Experiments?exp=compare&text={text}")
    edit = page.get_by_label("B: your edit of the sentence")
    edit.fill("Das Wetter ist morgen schön.")
    edit.press("Enter")
    settle(page)
    page.get_by_text("Cross-attention: B − A").first.wait_for()  # a chart title: the experiment ran
    page.locator(CHART).first.wait_for()
    no_errors(page)
    shared = page.url
    assert "other=Das+Wetter+ist+morgen" in shared and "exp=compare" in shared
    shown = page.inner_text("body")
    with page.expect_download() as download:
        page.get_by_role("button", name="The whole experiment as one HTML file").click()
    saved = tmp_path / "experiment.html"
    download.value.save_as(saved)
    html = saved.read_text(encoding="utf-8")
    assert html.count("<svg") == 4 and "Das Wetter ist morgen schön." in html and "<script" not in html
    shot(page, "experiments")

    fresh = context.new_page()  # the shared link in a new tab: the same experiment, nothing typed
    visit(fresh, server, shared.split("/", 3)[3])
    fresh.get_by_text("Cross-attention: B − A").first.wait_for()
    assert fresh.get_by_label("B: your edit of the sentence").input_value() == "Das Wetter ist morgen schön."
    outputs = [line for line in shown.splitlines() if line.startswith(("A: the sentence:", "B: your edit:"))]
    assert outputs and all(line in fresh.inner_text("body") for line in outputs)
    no_errors(fresh)
    context.close()
