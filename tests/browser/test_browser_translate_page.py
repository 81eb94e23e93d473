"""The Translate page in chromium as a phone user and a keyboard user meet it: the n-best table at 390 px (every
column heading whole, the heading above it not covered), one button in the DOM per alternative shown, and the only
404s a page costs: Streamlit's own probe of a page's path when that page's URL is opened directly (docs/pages.md),
none when the page is reached through the app's navigation."""
from __future__ import annotations

import urllib.parse

import pytest
from browser_fixtures import NAV, TIMEOUT_MS, VIEWPORT, no_errors, settle, visit
from export_fixtures import GERMAN

from playground.translate import steering

pytestmark = [pytest.mark.exports, pytest.mark.browser]

PHONE = {"width": 390, "height": 844}  # an iPhone 12-15's viewport in CSS pixels
N_BEST = "Translate?" + urllib.parse.urlencode({"text": GERMAN[2], "method": "beam", "beam": 3, "n": 3})
HEADINGS = ["rank", "translation", "score", "confidence"]
# Where Streamlit's frontend looks for its server when a page's URL is opened directly: the page's path first (it
# could be a base URL path), then the root (streamlit/streamlit#7074).
PROBES = ("_stcore/health", "_stcore/host-config")

# Every point of the n-best heading's text that something else covers (the grid's toolbar did); then the table's
# column headings (each: its text, whether its cell cuts it, whether it lies outside the table's box) and whether
# the table scrolls sideways.
N_BEST_LAYOUT = """() => {
  const heading = [...document.querySelectorAll('h3')].find(h => h.innerText.includes('best (beam search)'));
  if (!heading) return {missing: 'no heading'};
  heading.scrollIntoView({block: 'center'});
  const text = document.createRange();
  text.selectNodeContents(heading);
  const covered = [];
  for (const line of text.getClientRects())
    for (let x = line.left + 2; x < line.right - 1; x += 8) {
      const y = line.top + line.height / 2, top = document.elementFromPoint(x, y);
      if (!heading.contains(top)) covered.push(`${Math.round(x)},${Math.round(y)}: ${top && top.dataset.testid}`);
    }
  const table = [...document.querySelectorAll('[data-testid="stTable"]')]
      .find(t => heading.compareDocumentPosition(t) & Node.DOCUMENT_POSITION_FOLLOWING);
  if (!table) return {covered, missing: 'no table after the heading'};
  const box = table.getBoundingClientRect();
  const columns = [...table.querySelectorAll('thead th')].map(th => {
    const r = th.getBoundingClientRect();
    return [th.innerText.trim(), th.scrollWidth > th.clientWidth, r.left < box.left - 1 || r.right > box.right + 1];
  });
  return {covered, columns, scrolls: table.scrollWidth > table.clientWidth};
}"""

# Every button the alternatives drew, visible or not ("word · 12.3%"), as a JavaScript expression.
ALTERNATIVE_BUTTONS = ("[...document.querySelectorAll('[data-testid=\"stButton\"] button')]"
                       ".filter(b => / · [0-9.e-]+%$/.test(b.textContent.trim()))")


def test_the_n_best_table_shows_every_column_heading_on_a_phone_and_covers_no_heading(app_server, chromium):
    """At 390 px the grid cut "confidence" to "con" and its toolbar lay over "The 3 best (beam sear…"."""
    context = chromium.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    visit(page, app_server[0], N_BEST)
    page.get_by_text("best (beam search)").first.wait_for()
    page.locator("[data-testid='stTable'], [data-testid='stDataFrame']").first.wait_for()
    settle(page)
    no_errors(page)
    layout = page.evaluate(N_BEST_LAYOUT)
    context.close()
    assert layout.get("covered") == [], layout  # every point of the heading's text is the heading's own
    assert "missing" not in layout, layout
    assert [name for name, _, _ in layout["columns"]] == HEADINGS, layout
    assert [name for name, cut, outside in layout["columns"] if cut or outside] == [], layout
    assert not layout["scrolls"], layout


def test_each_alternative_is_one_button_in_the_dom(app_server, chromium):
    """After a word is picked the page held 10 buttons for 5 alternatives: Streamlit draws a button with a tooltip
    twice, one copy hidden, and keyboard and screen reader users reached the hidden ones too."""
    context = chromium.new_context(viewport=VIEWPORT)
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    visit(page, app_server[0], "Translate?" + urllib.parse.urlencode({"text": GERMAN[0], "method": "greedy"}))
    page.get_by_text("What else the model considered").wait_for()
    settle(page)
    page.locator("[data-testid='stButtonGroup'] button:visible").first.click()
    page.get_by_text("(the model's probability of each next token there)").wait_for()
    # the last alternative drawn (the fragment's elements arrive one by one), then the run's end
    page.wait_for_function(f"{ALTERNATIVE_BUTTONS}.filter(b => b.checkVisibility()).length >= {steering.ALTERNATIVES}")
    settle(page)
    no_errors(page)
    in_dom = page.evaluate(f"{ALTERNATIVE_BUTTONS}.map(b => [b.textContent.trim(), b.checkVisibility()])")
    context.close()
    assert len(in_dom) == steering.ALTERNATIVES, in_dom
    assert all(visible for _, visible in in_dom), in_dom
    assert len({text for text, _ in in_dom}) == steering.ALTERNATIVES, in_dom


def test_only_a_pages_direct_link_costs_streamlits_two_probes(app_server, chromium):
    """The 404s the console showed (`/Translate/_stcore/health`, `/Translate/_stcore/host-config`) are Streamlit's
    frontend looking for its server under the page's path before the root, once per page opened by its URL: none
    when the app's own navigation opens the page, and nothing else missing either way."""
    server = app_server[0]
    context = chromium.new_context(viewport=VIEWPORT)
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    missing: list[str] = []
    page.on("response", lambda r: missing.append(urllib.parse.urlsplit(r.url).path) if r.status == 404 else None)
    visit(page, server)
    page.locator(NAV).filter(has_text="Translate").first.click()
    page.get_by_role("button", name="Translate").wait_for()
    settle(page)
    assert page.url.startswith(f"{server}/Translate")
    assert missing == [], missing  # the app's navigation: no probe of the page's path
    visit(page, server, "Translate")
    context.close()
    assert set(missing) <= {f"/Translate/{probe}" for probe in PROBES}, missing
