"""Choosing an alternative in a real browser (issue 43, part 4). AppTest reruns the whole script on every click, so it
hid that the choice did nothing in a browser: the alternatives' fragment cleared the picked word and returned before
it asked for the page's rerun. Now the chosen alternative's completion is the output, the start box holds its
prefix and the URL carries it."""
from __future__ import annotations

import urllib.parse

import pytest
from browser_fixtures import TIMEOUT_MS, VIEWPORT, no_errors, settle
from export_fixtures import GERMAN

pytestmark = [pytest.mark.exports, pytest.mark.browser]


def test_choosing_an_alternative_makes_it_the_output_the_start_and_the_link(app_server, chromium):
    query = urllib.parse.urlencode({"text": GERMAN[0], "method": "greedy"})
    server = app_server[0]
    context = chromium.new_context(viewport=VIEWPORT)
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    page.goto(f"{server}/Translate?{query}")
    page.get_by_text("What else the model considered").wait_for()
    settle(page)
    words = page.locator("[data-testid='stButtonGroup'] button:visible")
    before = words.all_inner_texts()
    words.nth(min(1, len(before) - 1)).click()
    page.get_by_text("(the model's probability of each next token there)").wait_for()
    settle(page)
    choices = page.locator("[data-testid='stButton'] button:visible").filter(has_text="%")
    assert choices.count() >= 2, choices.all_inner_texts()
    choices.nth(1).click()  # the second likeliest: not what the model chose
    settle(page)
    box = page.get_by_label("Start the translation with", exact=False)
    for _ in range(100):  # the fragment's rerun asks for the page's: wait for that one too
        if box.input_value():
            break
        page.wait_for_timeout(200)
    settle(page)
    prefix = box.input_value()
    assert prefix, "the start box did not get the chosen alternative's prefix"
    assert urllib.parse.parse_qs(urllib.parse.urlparse(page.url).query).get("prefix") == [prefix]
    assert page.locator("[data-testid='stButtonGroup'] button:visible").all_inner_texts() != before
    no_errors(page)
    context.close()
