"""Issue 44.1 in a real browser, where the defect lived (the radio's state is the browser's): the translator's
occlusion, then the sentiment classifier: the Experiment radio showed no choice, and the next edit of the text
switched the page to "Knock out heads" (exp=knockout). Now the classifier's own name for the experiment is checked
and an edit keeps it."""
from __future__ import annotations

import pytest
from browser_fixtures import (
    TIMEOUT_MS,
    VIEWPORT,
    no_errors,
    settle,
    visit,
)

pytestmark = [pytest.mark.exports, pytest.mark.browser]


def ran_with(page, part: str) -> None:
    """Wait until the rerun the last action asked for has run: its link (written as the script ends) holds `part`.
    On a loaded host the click reaches the server late, and the radio read before that is the old page's."""
    page.wait_for_function("part => decodeURIComponent(location.search.replaceAll('+', ' ')).includes(part)", arg=part)
    settle(page)


def test_the_experiment_survives_a_model_switch_and_an_edit(app_server, chromium):
    server = app_server[0]
    context = chromium.new_context(viewport=VIEWPORT)
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    visit(page, server, "Experiments?exp=occlusion")
    page.get_by_text("link holds").first.wait_for()
    page.locator('[data-testid="stRadio"]').filter(has_text="Model").get_by_text("Sentiment classifier").click()
    ran_with(page, "model=sentiment")
    experiment = page.locator('[data-testid="stRadio"]').filter(has_text="Experiment")
    assert experiment.locator("label:has(input:checked)").all_inner_texts() == ["Which words the label needed"]
    box = page.get_by_label("A: the text (press Enter to run it)")
    box.fill("a dull and slow film")
    box.press("Enter")
    ran_with(page, "dull")
    assert experiment.locator("label:has(input:checked)").all_inner_texts() == ["Which words the label needed"]
    assert "exp=occlusion" in page.url and "model=sentiment" in page.url
    no_errors(page)
    context.close()
