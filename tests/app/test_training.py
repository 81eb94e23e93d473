"""The Train-your-own page in AppTest: its controls, the inputs it refuses (empty, oversized or malformed uploads;
a model too big for the server) with the reason and no Train button, and (slow) a real run: training, the live
view's final state, the attention slider, the export through `python -m export`, the onnxruntime output of a
held-out sequence, the downloads, and two runs compared."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from app_fixtures import clean, open_app, plotly_figures, values
from streamlit.runtime.scriptrunner_utils.exceptions import StopException

from playground.training import live, processes, session, slot
from runtime import toy

PAGE = "pages/7_Train_your_own.py"
GOOD_LINES = [f"{i} {i + 1} {i + 2}\t{i + 2} {i + 1} {i}\n".encode() for i in range(40)]
GOOD_TSV = b"".join(GOOD_LINES)


@pytest.fixture
def page(monkeypatch, tmp_path):
    """The page on an app with no models (it needs none). Its spare worker only where a real training follows
    (`warm`): elsewhere it would import torch for nothing."""
    def open_(warm=False, **settings):
        monkeypatch.setattr(processes, "WARM", warm)
        at = open_app(monkeypatch, tmp_path, PAGE)
        for key, value in settings.items():
            at.session_state[key] = value
        return at.run() if settings else at
    return open_


def train_disabled(at) -> bool:
    return at.button(key="train_go").disabled


def test_the_page_opens_with_its_knobs_and_refuses_a_model_too_big_for_the_server(page):
    at = page()
    clean(at)
    assert at.title[0].value == "Train your own"
    for key in ("train_n_layers", "train_n_decoder_layers", "train_d_model", "train_n_heads", "train_d_ff",
                "train_positional", "train_scale_scores", "train_pre_norm", "train_label_smoothing", "train_warmup",
                "train_max_seconds", "train_target"):
        at.session_state[key]  # noqa: B018 - every knob is a widget with the page's key
    assert not train_disabled(at)
    assert any("234,816 parameters" in c for c in values(at.caption))  # the defaults, counted as torch does
    assert any("press Train" in m for m in values(at.info))
    for key, value in (("train_d_model", 256), ("train_d_ff", 1024), ("train_n_layers", 4),
                       ("train_n_decoder_layers", 4)):
        at.session_state[key] = value
    at.run()
    assert any("7,378,176 parameters; at most 5,000,000" in e for e in values(at.error)), values(at.error)
    assert train_disabled(at)



# Measured in chromium at the browser tests' 1280 px viewport: the wide layout's main area is 820 px, a label
# character about 7 px; a checkbox's box takes 28 px and a help icon 24.
PAGE_PX, CHAR_PX, BOX_PX, HELP_PX = 820, 7, 28, 24


def widths(node, share: float = 1.0):
    """(widget, share of the page's width it gets) for every widget under `node`, through nested columns."""
    for child in getattr(node, "children", {}).values():
        inner = share * child.weight if getattr(child, "type", None) == "column" else share
        if getattr(child, "label", None) is not None:
            yield child, inner
        yield from widths(child, inner)


def test_every_knobs_label_fits_its_column(page):
    """Issue 34.9: the switches in a third of the right half were cut to "Positional enc…" and "Scale scor…"."""
    at = page()
    for widget, share in widths(at.main):
        if widget.type == "checkbox":
            needed = BOX_PX + CHAR_PX * len(widget.label) + (HELP_PX if widget.help else 0)
            assert needed <= share * PAGE_PX, (widget.label, needed, round(share * PAGE_PX))


BAD_UPLOADS = [
    ("empty.tsv", b"", "empty.tsv: the file is empty"),
    ("big.tsv", b"1\t2\n" * 300_000, "big.tsv: the file has 1,200,000 bytes; at most 1,000,000 are accepted"),
    ("bad.tsv", b"".join(GOOD_LINES[:3]) + b"7 8\t\n" + GOOD_TSV, "bad.tsv: line 4: the target is empty"),
    ("bad.csv", b"text,label\ngood,pos\nbad,neg,extra\n", "bad.csv: line 3: 3 field(s), expected text,label"),
]


def test_bad_uploads_say_what_is_wrong_and_where_and_a_good_one_can_be_trained(page):
    at = page(train_task="file")
    assert train_disabled(at) and any("Upload a file" in m for m in values(at.info))
    for name, raw, message in BAD_UPLOADS:
        at.file_uploader(key="train_upload").set_value((name, raw, "text/plain")).run()
        assert not at.exception
        errors = values(at.error)
        assert len(errors) == 1 and errors[0].startswith(message), (name, errors)
        assert train_disabled(at), name
    at.file_uploader(key="train_upload").set_value(("pairs.tsv", GOOD_TSV, "text/plain")).run()
    clean(at)
    assert any("40 pairs, 42 distinct tokens" in c for c in values(at.caption))
    assert not train_disabled(at)


def test_a_training_waits_for_the_one_slot_says_so_and_leaving_takes_it_out_of_the_queue(page, monkeypatch):
    at = page()
    left = []
    monkeypatch.setattr(slot.TrainingSlot, "try_enter", lambda self, session, cap: 1)  # another one runs
    monkeypatch.setattr(slot.TrainingSlot, "wait_left", lambda self: 42.0)
    monkeypatch.setattr(slot.TrainingSlot, "leave", lambda self, session: left.append(session))
    monkeypatch.setattr(processes, "start_training", lambda *a: pytest.fail("trained without the slot"))

    def user_leaves(seconds):  # what Streamlit does at the next call after a click or a closed tab
        raise StopException()

    monkeypatch.setattr(live, "time", SimpleNamespace(sleep=user_leaves))
    at.button(key="train_go").click().run()
    assert not at.exception
    assert any("number 1 in the queue" in m and "ends within 42 s" in m for m in values(at.info)), values(at.info)
    assert left == [at.session_state[session.STATE_KEY].id]  # out of the queue


def finished_events(config: dict, steps: int, accuracy: float | None) -> list[dict]:
    """What a worker writes for a run of `steps` steps: ended by its target (`accuracy`), or stopped before its
    `done` (accuracy None)."""
    probe = {"source": [toy.TAG, "1", "2", "</s>"], "target": ["<s>", "1", "2"]}
    events = [{"event": "start", "parameters": 1000, "held_out": 200, "vocabulary": 17, "probe": probe},
              *({"event": "step", "step": s, "seconds": s / 20, "loss": 1 / s, "lr": 1e-3}
                for s in range(10, steps + 1, 10))]
    if accuracy is not None:
        events += [{"event": "eval", "step": steps, "seconds": steps / 20, "accuracy": accuracy, "token_accuracy": 1,
                    "samples": [{"source": "1 2", "target": "1 2", "output": "1 2", "right": True}]},
                   {"event": "done", "step": steps, "seconds": steps / 20, "reason": "target", "accuracy": accuracy},
                   {"event": "saved", "model_dir": "model"}]
    return events


@pytest.fixture
def instant_worker(monkeypatch):
    """Trainings that end at once, without torch: the worker has written its events (and its model's config.json
    when it saved one) before the page looks; `runs` says how many steps and which accuracy the next ones reach."""
    runs = []

    def start(run_dir: Path, config: dict, data):
        steps, accuracy = runs.pop(0)
        events = finished_events(config, steps, accuracy)
        (run_dir / toy.EVENTS_FILE).write_text("".join(json.dumps(e) + "\n" for e in events))
        if accuracy is not None:
            (run_dir / toy.MODEL_DIR).mkdir()
            (run_dir / toy.MODEL_DIR / "config.json").write_text("{}")
        return subprocess.Popen([sys.executable, "-c", "pass"])

    monkeypatch.setattr(processes, "start_training", start)
    return runs


def test_a_second_training_shows_its_own_results(page, instant_worker):
    """Issue 34.1: after Run 2, "Your run" showed Run 1's summary, curves and Export until Run 2 was picked."""
    instant_worker += [(400, 0.995), (140, None)]
    at = page(train_task="copy")
    at.button(key="train_go").click().run()
    clean(at)
    assert "**Run 1: copy** reached the accuracy asked for after 400 steps in 20.0 s: 99.5% of held-out sequences " \
           "exactly right." in values(at.markdown)
    assert not at.button(key="train_export").disabled
    at.radio(key="train_task").set_value("reverse").run()
    at.button(key="train_go").click().run()
    clean(at)
    shown = next(box for box in at.selectbox if box.label == "Run")
    assert shown.value == "Run 2: reverse"
    # its summary, and the Export section's words tell one story: stopped after its 140th step with nothing saved
    assert "**Run 2: reverse** stopped after 140 steps, before it saved a model." in values(at.warning)
    assert not any("Run 1: copy" in m for m in values(at.markdown) + values(at.warning))
    assert "No model to export: this run stopped after 140 steps, before it saved a model. Train again." \
        in values(at.info)
    assert not [b for b in at.button if b.key == "train_export"]
    assert plotly_figures(at)[0]["data"][0]["name"] == "Run 2: reverse"  # its curves, not Run 1's
    assert at.selectbox(key="train_compare_b_2").value == "Run 2: reverse"


def top_level(at) -> list[str]:
    """The page's top-level elements, in order, by type: what the browser matches up between two runs."""
    return [getattr(node, "type", type(node).__name__) for _, node in sorted(at.main.children.items())]


@pytest.mark.slow
def test_a_failed_export_says_why_and_leaves_the_run_to_export_again(page, monkeypatch):
    at = page(warm=True, train_max_seconds=5, train_task="copy", train_length_seq=6, train_vocab=6)
    at.button(key="train_go").click().run()
    clean(at)
    layout = top_level(at)
    monkeypatch.setattr(processes, "run_child", lambda *a, **k: (1, "ValueError: the fp32 graph disagrees"))
    at.button(key="train_export").click().run()
    assert not at.exception
    assert any("The export failed validation" in e and "the fp32 graph disagrees" in e for e in values(at.error))
    now = top_level(at)  # the error took the progress slot's place: nothing below it moved
    assert len(now) == len(layout)
    assert [(a, b) for a, b in zip(layout, now, strict=True) if a != b] == [("empty", "error")]
    assert not at.button(key="train_export").disabled and "Try it" not in values(at.subheader)
    server_slot, session_id = slot.slot(), at.session_state[session.STATE_KEY].id
    assert server_slot.holder != session_id and session_id not in server_slot.queue  # the slot was left
    at.run()
    assert not at.error  # the next run no longer shows the old error


@pytest.mark.slow
def test_train_watch_export_translate_download_and_compare(page):
    at = page(warm=True, train_max_seconds=40, train_task="copy", train_length_seq=6, train_vocab=6)
    at.button(key="train_go").click().run()
    clean(at)
    assert any("Run 1: copy" in m and "reached the accuracy asked for" in m for m in values(at.markdown))
    figures = plotly_figures(at)
    accuracy = figures[0]["data"][1]["y"]
    assert accuracy[-1] >= 0.99 and accuracy[0] < 0.5  # learned while watched, from (nearly) nothing
    table = at.dataframe[0].value
    assert (table["right"] == "✓").all() and (table["model"] == table["expected"]).all()
    steps = at.select_slider(key="train_map_step_1").options
    assert len(steps) >= 3 and steps[0] == "0"
    at.select_slider(key="train_map_step_1").set_value(int(steps[0])).run()
    assert "step 0 " in plotly_figures(at)[1]["layout"]["title"]["text"]

    at.button(key="train_export").click().run()
    clean(at)
    served = next(d.value for d in at.dataframe if "p50 ms" in d.value.columns)
    assert list(served["system"]) == ["PyTorch", "onnxruntime fp32", "onnxruntime int8"]
    assert served["same output as PyTorch"][1] == "100.0%"
    held_out = at.text_input(key="train_input").value
    assert at.code[-1].value == held_out  # copy: a held-out sequence comes back through onnxruntime as it went in
    layout = top_level(at)
    at.text_input(key="train_input").set_value("5 4 3 2 1 0").run()
    assert at.code[-1].value == "5 4 3 2 1 0"
    # issue 34.5: symbols it was trained on get no "outside what the model was trained on" (digits have no letters)
    assert not any("outside" in c or "never in this model's training" in c for c in values(at.caption))
    # the export's run drew what the next run draws, in the same places: a browser keeps no stale copies of them
    assert top_level(at) == layout
    at.text_input(key="train_input").set_value("5 x 3").run()
    assert any(c.startswith("1 of the input's symbols was never in this model's training (`x`)")
               for c in values(at.caption))
    downloads = [b.proto.label for b in at.get("download_button")]
    assert downloads[0] == "Model directory (.zip)" and "encoder.int8.onnx" in downloads

    at.checkbox(key="train_positional").uncheck().run()
    at.session_state["train_max_seconds"] = 5
    at.button(key="train_go").click().run()
    clean(at)
    assert at.selectbox(key="train_compare_b_2").value == "Run 2: copy, no positions"
    assert next(box for box in at.selectbox if box.label == "Run").value == "Run 2: copy, no positions"
    legends = [{trace.get("name") for trace in figure["data"]} for figure in plotly_figures(at)]
    assert {"Run 1: copy", "Run 2: copy, no positions"} in legends  # both runs' curves in one chart
    titles = [figure["layout"]["title"]["text"] for figure in plotly_figures(at)[-2:]]
    assert titles[0].startswith("Run 1: copy<br>") and titles[1].startswith("Run 2: copy, no positions<br>")
