"""Issue 50 in a real browser (`streamlit run app.py` + Debian chromium, the tiny exported models): "Attribute a
token" on a 390 px phone draws its charts inside the page (no horizontal overflow), and the scores figure's CSV
download holds the numbers drawn: the header and, for each method, one row per source piece."""
from __future__ import annotations

import csv
import io
import urllib.parse

import pytest
from browser_fixtures import TIMEOUT_MS, models_root, no_errors, settle, visit

from runtime import experiments as engine

pytestmark = [pytest.mark.exports, pytest.mark.browser]

PHONE = {"width": 390, "height": 844}  # an iPhone 12-15's viewport in CSS pixels
TEXT = "Das Wetter ist heute schön."
CHARTS = '[data-testid="stVegaLiteChart"]'
# Each chart's drawing against the page's width: [what, its right edge] for every chart past it.
PAST_THE_EDGE = """width => [...document.querySelectorAll('CHARTS')].flatMap(chart => {
  const drawn = chart.querySelector('svg.marks, canvas');
  const right = (drawn || chart).getBoundingClientRect().right;
  return !drawn || right > width + 1 ? [[drawn ? 'drawn' : 'nothing drawn', Math.round(right)]] : [];
})""".replace("CHARTS", CHARTS)


def test_attribution_fits_a_phone_and_its_csv_holds_every_source_piece(app_server, chromium):
    sentence = engine.ExperimentModel(models_root() / "translate").sentence(TEXT, "de", "en")
    pieces = [sentence.src_pieces[i] for i in engine.source_positions(sentence)]
    context = chromium.new_context(viewport=PHONE, accept_downloads=True)
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    visit(page, app_server[0], f"Experiments?exp=attribute&position=1&text={urllib.parse.quote_plus(TEXT)}")
    page.get_by_text("link holds").first.wait_for()  # written after the report: the run is over
    settle(page)
    charts = page.locator(CHARTS)
    # the source's scores, the target prefix's, the deletion curves: Vega's code loads after the page's text
    drawn = page.locator(f"{CHARTS} svg.marks, {CHARTS} canvas")
    for i in range(3):
        charts.nth(i).scroll_into_view_if_needed()
        drawn.nth(i).wait_for()
    no_errors(page)
    assert page.evaluate(PAST_THE_EDGE, PHONE["width"]) == []
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"] + 1

    button = page.locator(".st-key-exp_attribution_scores_csv button")
    with page.expect_download() as download:
        button.click()
    assert download.value.suggested_filename == "attribution_scores.csv"
    with open(download.value.path(), encoding="utf-8") as f:
        text = f.read()
    rows = list(csv.DictReader(io.StringIO(text)))
    assert text.splitlines()[0] == "x,y,v,raw"
    by_method: dict[str, list[str]] = {}
    for row in rows:
        by_method.setdefault(row["x"], []).append(row["y"])
    assert list(by_method) == ["occlusion", "saliency", "input×grad", "IG", "rollout"]
    for method, labels in by_method.items():  # one row per source piece, in the sentence's order
        assert labels == [f"{i} {p}" for i, p in enumerate(pieces)], method
    context.close()
