"""The "Train your own" page while something runs: the live view of a training (polling the worker's events) and
the wait for the server's one training slot. Both call into Streamlit every round: that is where a Stop click, any
other click or a closed tab interrupts the page's script, whose `finally` then ends the child process."""
from __future__ import annotations

import time

import streamlit as st

from . import figures, runs
from .slot import slot


def watch(record: runs.RunRecord, process, cap_s: float) -> None:
    """Poll the worker's events until it exits, redrawing the live view. Every Streamlit call here is where a Stop
    click, any other click or a closed tab interrupts the script: the caller's `finally` (TrainingSession.train)
    then stops the worker."""
    st.button("Stop", key="train_stop")
    st.caption("The controls above are locked while this run trains. Stop ends it, and so does any other click on "
               "this page (the run, export or comparison below, another page) or closing the tab: the page says "
               "which click ended it.")
    bar = st.progress(0.0, text="starting the training process…")
    live = st.empty()
    drawn = 0
    while True:
        alive = process.poll() is None
        new = record.read_events()
        step, evaluation = record.last("step"), record.last("eval")
        # a Streamlit call every round, before the first step too: where a Stop or a closed tab interrupts the script
        if step:
            bar.progress(min(1.0, step["seconds"] / cap_s), text=runs.progress_text(step, evaluation, cap_s))
        else:
            bar.progress(0.0, text="starting the training process (loading PyTorch)…")
        if new and (drawn == 0 or any(e["event"] in ("eval", "attention") for e in new)):
            drawn += 1
            with live.container():
                left, right = st.columns([3, 2])
                left.plotly_chart(figures.curves({record.label: record.events}, height=300),
                                  width="stretch", key=f"train_live_curves_{drawn}")
                snapshot, start = record.last("attention"), record.last("start")
                if snapshot and start:
                    right.plotly_chart(figures.attention_map(snapshot, start["probe"], "cross", "average",
                                                                      "average", height=300),
                                       width="stretch", key=f"train_live_map_{drawn}")
        if not alive:
            record.read_events()
            return
        time.sleep(poll_s(record))


def poll_s(record: runs.RunRecord) -> float:
    """Seconds between two reads of the events: 0.1 until the first step is shown (the click's answer), then 0.4
    (a redraw of the curves costs the server a few ms; 0.4 s is smooth enough for a curve)."""
    return 0.4 if record.last("step") else 0.1


def wait_for_the_slot(session: str, cap_s: float, purpose: str) -> None:
    """Queue for the server's training slot, telling the user where they stand; returns once it is this session's.
    Leaving the queue is any click (the caller's `finally` takes the session out of it)."""
    place = slot().try_enter(session, cap_s)
    if place == 0:
        return
    st.button("Leave the queue", key=f"train_leave_queue_{purpose}")
    note = st.empty()
    while place:
        note.info(f"Another training is running on this server (one at a time keeps the app responsive). You are "
                  f"number {place} in the queue; it ends within {slot().wait_left():.0f} s. Yours starts "
                  "then: keep this tab open.")
        time.sleep(1.0)
        place = slot().try_enter(session, cap_s)
    note.empty()
