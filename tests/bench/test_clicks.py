"""`python -m bench clicks`' own parts: the paired ratio of --against, its refusal of a revision that is none, the
temporary worktree, and (in chromium) the in-page timer, whose give-up must not fire into a later timing."""
from __future__ import annotations

import subprocess
import sys

import pytest

from bench import click_pages, clicks


def drawn(*ms: float) -> list[tuple[float, ...]]:
    return [(0.0, 0.0, m, 0.0) for m in ms]


def test_the_paired_ratio_is_taken_click_by_click_not_from_the_two_medians():
    """Round by round, here / there: a machine that slows down mid-run slows both sides of a round alike."""
    here, there = drawn(100, 200, 300, 400, 500), drawn(200, 400, 300, 400, 250)
    # per round 0.5, 0.5, 1, 1, 2: p50 1.0 (the medians' ratio would be 300 / 300 = 1.0 too, but its spread is not)
    assert clicks.paired(here, there).startswith("1.00 (p10-p90 0.50-")
    assert clicks.paired(drawn(90), drawn(100)) == "0.90"
    with pytest.raises(ValueError):  # rounds are pairs: a side with a click more is a bug, not a ratio
        clicks.paired(drawn(1, 2), drawn(1))


def test_a_revision_that_is_none_is_refused_before_anything_starts(monkeypatch, capsys):
    monkeypatch.setattr(clicks, "CHROMIUM", sys.executable)  # any file that exists: no browser is started
    with pytest.raises(SystemExit) as stop:
        clicks.main(["--against", "no-such-revision-anywhere", "--clicks", "1"])
    assert stop.value.code == 2 and "'no-such-revision-anywhere' is not a git revision" in capsys.readouterr().err


def test_the_worktree_holds_the_revision_and_is_gone_afterwards():
    head = subprocess.run(["git", "-C", str(clicks.ROOT), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    with clicks.worktree("HEAD") as folder:
        assert (folder / "app.py").is_file()
        checked_out = subprocess.run(["git", "-C", str(folder), "rev-parse", "HEAD"], capture_output=True, text=True,
                                     check=True).stdout.strip()
        assert checked_out == head
    listed = subprocess.run(["git", "-C", str(clicks.ROOT), "worktree", "list"], capture_output=True, text=True).stdout
    assert not folder.exists() and str(folder) not in listed


@pytest.mark.browser
def test_a_finished_timing_leaves_no_give_up_armed_for_the_next(chromium):
    """A finished timing's give-up timer is cleared: left armed, it wrote "[null, ...]" into window.__timing
    GIVE_UP_MS later, into whatever was being timed then (a run of moves longer than 20 s failed)."""
    context = chromium.new_context()
    page = context.new_page()
    page.set_content('<div data-testid="stApp" data-test-script-state="notRunning"><p class="t">a</p></div>')
    page.evaluate(click_pages.with_watch(click_pages.ON_NEXT_KEY_SCRIPT, give_up_ms=1500), [".t"])
    page.keyboard.press("a")  # the clock starts at the keydown
    page.evaluate("document.querySelector('.t').textContent = 'b'")
    page.wait_for_function("window.__timing !== null", timeout=5000)
    shown, finished, painted = page.evaluate("window.__timing")
    assert shown is not None and finished is not None and painted >= finished
    page.evaluate("window.__timing = 'the next timing'")
    page.wait_for_timeout(2000)  # past the give-up
    assert page.evaluate("window.__timing") == "the next timing"
    context.close()
