"""A click during a training ends the run: the Train click's script run disables every knob and Train itself, says
beside Stop which clicks end the run, and the run's summary names the click that ended it (a Train click that
arrives anyway, too, on the page as it happens). In AppTest, on a worker that never ends by itself:
the interruption a click causes is Streamlit's StopException at the live view's next poll."""
from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace

import pytest
from app_fixtures import clean, open_app, values
from streamlit.runtime.scriptrunner_utils.exceptions import StopException
from streamlit.testing.v1.errors import AppTestError

from playground.training import live, processes, session

PAGE = "pages/7_Train_your_own.py"
KNOBS = ("train_task", "train_length_seq", "train_vocab", "train_max_seconds", "train_target", "train_n_layers",
         "train_n_decoder_layers", "train_d_model", "train_n_heads", "train_d_ff", "train_batch", "train_positional",
         "train_scale_scores", "train_pre_norm", "train_label_smoothing", "train_warmup", "train_lr")


@pytest.fixture
def interrupted_run(monkeypatch, tmp_path):
    """The page after a Train click whose run a click interrupted at the live view's first poll (the worker, a
    sleeping process, is ended by the run's `finally`)."""
    monkeypatch.setattr(processes, "WARM", False)
    monkeypatch.setattr(processes, "start_training", lambda *a: subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)"]))

    def a_click(seconds):  # what Streamlit raises at the script's next call after a click
        raise StopException()

    monkeypatch.setattr(live, "time", SimpleNamespace(sleep=a_click))
    at = open_app(monkeypatch, tmp_path, PAGE)
    at.button(key="train_go").click().run()
    assert not at.exception
    return at


def disabled(at, key: str) -> bool:
    for kind in ("radio", "slider", "number_input", "selectbox", "checkbox", "select_slider"):
        found = [w for w in getattr(at, kind) if w.key == key]
        if found:
            return found[0].disabled
    raise AssertionError(f"no widget {key}")


def test_the_knobs_are_locked_while_a_run_trains_and_stop_says_what_ends_it(interrupted_run):
    at = interrupted_run
    assert [key for key in KNOBS if not disabled(at, key)] == []
    assert at.button(key="train_go").disabled  # Train too: a second click would end this run and start another
    assert not at.button(key="train_stop").disabled
    assert any("locked while this run trains" in c and "any other click" in c for c in values(at.caption))
    with pytest.raises(AppTestError, match="disabled"):  # the click on "sort" that ended a run is not possible
        at.radio(key="train_task").set_value("sort")
    at.run()  # the next script run (the Train click's is over): the knobs are free again
    assert [key for key in KNOBS if disabled(at, key)] == []
    assert not at.button(key="train_go").disabled


def test_a_train_click_that_arrives_during_a_run_is_named_and_starts_nothing(interrupted_run):
    """A double click on Train: its second half leaves the browser before the disabled button is drawn, so the
    server gets a Train click during Run 1. It ends Run 1 (any rerun does), starts no Run 2 (Streamlit drops a
    disabled button's click), and the page says which click ended Run 1, not "a click elsewhere"."""
    at = interrupted_run
    train = at.button(key="train_go")
    train._value = True  # that click: AppTest refuses a click on a disabled button, a browser's race does not
    at.run()
    clean(at)
    runs = at.session_state[session.STATE_KEY].records
    assert [r.number for r in runs] == [1]
    (summary,) = [w for w in values(at.warning) if w.startswith("**Run 1:")]
    assert "stopped" in summary and f"because {session.TRAIN_AGAIN}" in summary, summary
    assert not at.button(key="train_go").disabled  # the run ended: Train is free again


@pytest.mark.parametrize(("click", "words"), [
    (lambda at: at.button(key="train_stop").click(), "because you pressed Stop"),
    (lambda at: at, "because a click elsewhere"),
])
def test_the_run_says_which_click_ended_it(interrupted_run, click, words):
    at = interrupted_run
    click(at).run()
    clean(at)
    (summary,) = [w for w in values(at.warning) if w.startswith("**Run 1:")]
    assert "stopped" in summary and words in summary, summary
    record = at.session_state[session.STATE_KEY].records[0]
    assert words in record.no_model()  # the Export section tells the same story
    at.run()  # said once per run, and the same on every later run
    assert any(words in w for w in values(at.warning))


def test_a_click_on_what_the_page_drew_before_the_run_is_named():
    """What stays clickable during a run: the previous run's view, Export, Try it and the comparison below it (the
    page drew them before this run and shows them until its script ends)."""
    before = {"train_task": "copy", "train_run_1": "Run 1: copy", "train_export": False, "train_input": "1 2"}
    assert session.ended_by(before, {**before, "train_export": True}) == "you clicked Export"
    assert session.ended_by(before, {**before, "train_run_1": "Run 2: copy"}) == "you picked another run"
    assert session.ended_by(before, {**before, "train_input": "3 4", "train_stop": True}) == "you pressed Stop"
    assert session.ended_by(before, {**before, "train_task": "sort"}) == "you changed the task"
    assert session.ended_by(before, {**before, "train_go": True}) == session.TRAIN_AGAIN
    assert session.ended_by(before, dict(before)) == session.ELSEWHERE
