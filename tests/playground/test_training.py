"""playground.training without a page: the session object keeps KEPT_RUNS runs and deletes the older ones' files,
checks an upload once (in this process) and saves only a good one, reads what an interrupted run wrote, and whatever
ends a training (its end, a Stop, a closed tab) stops the worker and leaves the slot; the run records say how a run
ended and which model size is refused."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from playground.training import figures, live, processes, runs, session
from playground.training.slot import slot
from runtime import toy
from tx.toy import worker

GOOD_TSV = b"".join(f"{i} {i + 1}\t{i + 1} {i}\n".encode() for i in range(toy.MIN_ROWS))
CONFIG = {"task": "reverse", "positional": True, "scale_scores": True, "pre_norm": True}


@pytest.fixture
def training():
    made = session.TrainingSession()
    yield made
    made.files.remove()


def test_a_session_keeps_its_last_runs_and_deletes_the_older_ones_files(training):
    first = training.new_run(CONFIG)
    dirs = [first.run_dir] + [training.new_run(CONFIG).run_dir for _ in range(session.KEPT_RUNS)]
    assert [r.number for r in training.records] == list(range(2, session.KEPT_RUNS + 2))
    assert [r.label for r in training.records][-1] == f"Run {session.KEPT_RUNS + 1}: reverse"
    assert not any(d == first.run_dir for d in (r.run_dir for r in training.records))
    assert not Path(dirs[0]).exists() and all(Path(d).is_dir() for d in dirs[1:])


def test_the_session_lives_in_the_state_until_its_folder_goes():
    state = {}
    made = session.TrainingSession.of(state)
    assert session.TrainingSession.of(state) is made and state[session.STATE_KEY] is made
    made.files.remove()
    assert session.TrainingSession.of(state) is not made


def test_an_upload_is_checked_once_and_saved_only_when_good(training, monkeypatch):
    calls = []
    check = toy.check
    monkeypatch.setattr(toy, "check", lambda raw, name: calls.append(name) or check(raw, name))
    bad = training.check_upload("../bad.tsv", GOOD_TSV + b"a\tb\tc\n")
    assert not bad.verdict["ok"] and bad.path is None and not list(training.files.root.glob("upload.*"))
    good = training.check_upload("../pairs.csv", b"good film,pos\n" * toy.MIN_ROWS)
    assert good.verdict["ok"] and good.path == str(training.files.root / "upload.csv")
    assert training.check_upload("../pairs.csv", b"good film,pos\n" * toy.MIN_ROWS) is good
    assert calls == ["../bad.tsv", "../pairs.csv"]


def test_an_interrupted_run_reads_what_its_worker_wrote(training):
    record = training.new_run(CONFIG)
    (record.model_dir.parent / toy.EVENTS_FILE).write_text(json.dumps({"event": "step", "step": 3}) + "\n")
    training.finalize()
    assert record.finished and record.summary() == "stopped after 3 steps, before it saved a model"
    record.events[-1]["step"] = 1
    assert record.summary() == "stopped after 1 step, before it saved a model"


class Interrupted(Exception):
    """What Streamlit raises at its next call after a Stop click or a closed tab."""


def test_whatever_ends_a_training_stops_the_worker_and_leaves_the_slot(training, monkeypatch):
    started = []

    def start(run_dir, config, data):
        started.append(subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]))
        return started[-1]

    def stop_clicked(record, process, cap_s):
        assert slot().holder == training.id and slot().process is process
        raise Interrupted()

    monkeypatch.setattr(processes, "start_training", start)
    monkeypatch.setattr(live, "watch", stop_clicked)
    record = training.new_run(CONFIG)
    with pytest.raises(Interrupted):
        training.train(record, None, 10)
    assert started[0].poll() is not None  # the worker is gone
    assert slot().holder is None and record.finished


# A worker as tx.toy.worker behaves on SIGTERM: it ends its step, then takes a moment (here 0.5 s) to write its
# model and its `done` and `saved` events, and exits.
SAVING_WORKER = textwrap.dedent("""
    import json, os, signal, sys, time
    run = sys.argv[1]
    def emit(event):
        with open(os.path.join(run, "events.jsonl"), "a") as f:
            f.write(json.dumps(event) + "\\n")
    def saved(*_):
        time.sleep(0.5)
        emit({"event": "done", "step": 147, "seconds": 5.1, "reason": "stopped", "accuracy": 0.69})
        os.makedirs(os.path.join(run, "model"))
        open(os.path.join(run, "model", "config.json"), "w").write("{}")
        emit({"event": "saved", "model_dir": "model"})
        sys.exit(0)
    signal.signal(signal.SIGTERM, saved)
    emit({"event": "step", "step": 140, "seconds": 4.9, "loss": 0.2, "lr": 0.001})
    while True:
        time.sleep(0.05)
""")


def test_a_click_during_a_training_shows_what_the_stopped_worker_saved(training, monkeypatch):
    """Issue 34.2: a Stop starts the next script run at once, in another thread, while the interrupted one is still
    stopping the worker; read then, the run said it "saved no model" though its worker saved one a moment later."""
    clicked = threading.Event()

    def start(run_dir, config, data):
        return subprocess.Popen([sys.executable, "-c", SAVING_WORKER, str(run_dir)])

    def watch_until_stop(record, process, cap_s):
        while not record.read_events():
            threading.Event().wait(0.05)
        clicked.set()
        raise Interrupted()  # Stop: Streamlit's exception at the interrupted run's next call

    def interrupted_run(record):
        with pytest.raises(Interrupted):
            training.train(record, None, 60)

    monkeypatch.setattr(processes, "start_training", start)
    monkeypatch.setattr(live, "watch", watch_until_stop)
    record = training.new_run(CONFIG)
    first = threading.Thread(target=interrupted_run, args=(record,))
    first.start()
    assert clicked.wait(30)
    training.finalize()  # the next script run, at once: the first is still in its `finally`
    assert record.summary() == "stopped after 147 steps in 5.1 s: 69.0% of held-out sequences exactly right"
    assert record.saved
    first.join(10)


@pytest.mark.slow
def test_the_spare_worker_is_ready_before_the_click_trains_the_job_and_stops_as_any_worker(training):
    """Issue 34.3: the worker the page keeps warm (torch imported) takes the click's job at nice 10, goes to
    SCHED_IDLE once its first step is out, saves its model on a Stop; a spare given no job ends when let go."""
    processes.SPARE.close()
    processes.SPARE.keep()
    spare = processes.SPARE.process
    assert processes.SPARE.ready(120)
    assert os.sched_getscheduler(spare.pid) == os.SCHED_OTHER
    assert os.getpriority(os.PRIO_PROCESS, spare.pid) == min(19, os.nice(0) + worker.STARTUP_NICE)
    record = training.new_run(CONFIG)
    tiny = {"task": "copy", "length": 4, "vocab": 3, "d_model": 16, "n_heads": 2, "n_layers": 1,
            "n_decoder_layers": 1, "d_ff": 32, "max_seconds": 60, "target_accuracy": 1.01}
    running = processes.start_training(Path(record.run_dir), tiny, None)
    assert running is spare and processes.SPARE.process is None  # the ready one trains; the next is made later
    deadline = time.monotonic() + 60
    while not record.of("step") and time.monotonic() < deadline:
        record.read_events()
        time.sleep(0.05)
    assert record.of("step")[0]["step"] == 1  # the page can show the first step at once
    while os.sched_getscheduler(running.pid) != os.SCHED_IDLE and time.monotonic() < deadline:
        time.sleep(0.05)
    assert os.sched_getscheduler(running.pid) == os.SCHED_IDLE
    processes.stop(running)  # Stop: it ends its step, scores and saves
    record.read_events()
    assert [e["event"] for e in record.events][-2:] == ["done", "saved"] and record.saved
    assert record.last("done")["reason"] == "stopped"
    assert (Path(record.run_dir) / processes.LOG_FILE).is_file()
    processes.SPARE.keep()
    unused = processes.SPARE.process
    processes.SPARE.close()
    assert unused.poll() is not None and processes.SPARE.process is None


def test_percentages_round_down_so_one_wrong_never_reads_100():
    """Issue 34.9: the progress bar said "held-out exact 100%" for 199 of 200 right."""
    assert [runs.percent(x) for x in (0.995, 0.9995, 0.99, 0.07, 1.0, 0.0)] == \
        ["99.5%", "99.9%", "99.0%", "7.0%", "100.0%", "0.0%"]
    step = {"step": 400, "seconds": 12.4, "loss": 0.0123}
    assert runs.progress_text(step, {"accuracy": 0.995}, 60) == "step 400 · 12 of 60 s · loss 0.012 · held-out exact " \
                                                               "99.5%"
    assert runs.progress_text(step, None, 60) == "step 400 · 12 of 60 s · loss 0.012"
    record = runs.RunRecord(1, CONFIG, "/nowhere", "Run 1", events=[
        {"event": "done", "reason": "target", "step": 400, "seconds": 12.34, "accuracy": 0.9995}])
    assert record.summary().endswith(": 99.9% of held-out sequences exactly right")


def test_run_records_say_how_a_run_ended_and_which_size_is_refused():
    assert runs.size_problem(toy.MAX_PARAMETERS) is None
    assert runs.size_problem(toy.MAX_PARAMETERS + 1).startswith(f"This model has {toy.MAX_PARAMETERS + 1:,} "
                                                                f"parameters; at most {toy.MAX_PARAMETERS:,}")
    assert runs.vocabulary_size({"task": "file"}, 5) == len(toy.RESERVED) + 5
    assert runs.run_label(2, {**CONFIG, "positional": False, "pre_norm": False}) == "Run 2: reverse, no positions, " \
                                                                                     "post-LN"
    record = runs.RunRecord(1, CONFIG, "/nowhere", "Run 1", events=[
        {"event": "done", "reason": "target", "step": 400, "seconds": 12.34, "accuracy": 0.995}])
    assert record.summary() == "reached the accuracy asked for after 400 steps in 12.3 s: 99.5% of held-out " \
                               "sequences exactly right"


def probe_snapshot(keys: list[str]) -> tuple[dict, dict]:
    """An attention snapshot of a probe whose source is `keys` (2 layers, 2 heads), and the probe."""
    probe = {"source": keys, "target": ["<s>", *keys[1:-1]]}
    weights = [[[[1 / len(keys)] * len(keys)] * len(probe["target"])] * 2] * 2
    return {"step": 400, "seconds": 20.0, "cross": weights}, probe


TOY_KEYS = [toy.TAG, *"0123456789", "</s>"]
# Measured in chromium (issue 34): the keys' axis drawn above the map, its title and one line of tick labels, takes
# 60 px; plotly spaces a title's lines 1.3 font sizes apart.
KEYS_AXIS_PX = 60


@pytest.mark.parametrize("title", ["Run 1: copy<br>cross-attention, step 400",
                                   "Run 12: reverse, no positions, unscaled, post-LN<br>cross-attention, step 400",
                                   ""])
def test_an_attention_maps_title_sits_above_its_key_labels_whatever_its_length(title):
    """Issue 34.9: two maps side by side had their two-line titles written over the keys' labels (plotly centres a
    title in the top margin: 70 px held neither two lines nor the axis above the map)."""
    snapshot, probe = probe_snapshot(TOY_KEYS)
    layout = figures.attention_map(snapshot, probe, "cross", "average", "average", title=title,
                                   height=360).to_plotly_json()["layout"]
    shown = layout["title"]["text"].split("<br>")
    assert all(len(line) <= 40 for line in shown), shown  # wrapped: plotly never wraps, a long line runs off a half
    line_px = 1.3 * layout["title"]["font"]["size"]
    assert layout["margin"]["t"] >= len(shown) * line_px + KEYS_AXIS_PX  # room for the lines and the axis under them
    # pinned to the figure's top edge (not centred in the margin), its lines ending above the axis
    assert layout["title"]["yref"] == "container" and layout["title"]["yanchor"] == "bottom"
    assert (1 - layout["title"]["y"]) * layout["height"] <= layout["margin"]["t"] - KEYS_AXIS_PX
    assert layout["height"] - layout["margin"]["t"] - layout["margin"]["b"] == 360 - 90 - 10  # the map keeps its size


def test_long_key_labels_get_the_room_plotly_turns_them_upright_in():
    snapshot, probe = probe_snapshot(["<2out>", "Bahnhof", "Apotheke", "Krankenhaus", "</s>"])
    layout = figures.attention_map(snapshot, probe, "cross", "average", "average").to_plotly_json()["layout"]
    assert layout["margin"]["t"] - 1.3 * layout["title"]["font"]["size"] >= KEYS_AXIS_PX + 7 * (len("Krankenhaus") - 2)
