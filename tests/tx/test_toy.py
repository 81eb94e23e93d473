"""tx.toy: the user's files are checked line by line, the synthetic tasks say what they claim, held-out examples are
never trained on, absurd settings are refused, and a run stops at the step its stop flag is set."""
from __future__ import annotations

import json
import random
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from runtime import toy
from runtime.toy import DataError, parse
from tx.toy import engine
from tx.toy.tasks import ExampleSource, SyntheticTask

ROOT = Path(__file__).resolve().parents[2]
GOOD_LINES = [f"{i} {i + 1}\t{i + 1} {i}\n".encode() for i in range(30)]
GOOD_TSV = b"".join(GOOD_LINES)
FOUR = b"".join(GOOD_LINES[:4])  # four good lines before a bad one


@pytest.mark.parametrize("raw, name, message", [
    (b"", "a.tsv", "the file is empty"),
    (b"  \n\n", "a.tsv", "the file is empty"),
    (FOUR + b"a\tb\tc\n" + GOOD_TSV, "a.tsv", "line 5: 3 field(s), expected source<TAB>target"),
    (FOUR + b"a b\t \n" + GOOD_TSV, "a.tsv", "line 5: the target is empty"),
    (b"x y\tz\n" * 3 + b"x " * 31 + b"\tz\n", "a.tsv", "line 4: the source has 31 tokens; at most 30"),
    (b"x\t<pad>\n" + GOOD_TSV, "a.tsv", "line 1: '<pad>' is reserved"),
    (b"x\tz\n\xff\xfe\tz\n", "a.tsv", "line 2: not UTF-8 text"),
    (b"text,label\n" + b"good film,pos\n" * 5 + b"bad film,very neg\n", "a.csv", "line 7: a label is one word, got 2"),
    (b"a,b,c\n", "a.csv", "line 1: 3 field(s), expected text,label"),
    (b"".join(GOOD_LINES[:19]), "a.tsv", "19 usable row(s); at least 20 are needed"),
    (b"x\ty\n" * (toy.MAX_ROWS + 1), "a.tsv", f"line {toy.MAX_ROWS + 1}: more than {toy.MAX_ROWS} rows"),
    (b"x" * (toy.MAX_BYTES + 1), "a.tsv", "bytes; at most 1,000,000 are accepted"),
])
def test_bad_files_are_refused_naming_the_line(raw, name, message):
    with pytest.raises(DataError, match=None) as caught:
        parse(raw, name)
    assert message in str(caught.value)


def test_good_files_parse_with_a_header_skipped():
    data = parse(b"source\ttarget\n\n" + GOOD_TSV, "pairs.tsv")
    assert data.skipped_header and len(data.pairs) == 30 and data.pairs[0] == (["0", "1"], ["1", "0"])
    labelled = parse(b'"great, really",pos\n' * 10 + b"awful,neg\n" * 10, "reviews.CSV")
    assert labelled.kind == "csv" and labelled.pairs[0] == (["great,", "really"], ["pos"])
    assert labelled.vocabulary == ["great,", "really", "pos", "awful", "neg"]


def test_the_page_checks_an_upload_without_importing_torch(tmp_path):
    path = tmp_path / "upload.tsv"
    path.write_bytes(FOUR + b"a\tb\tc\n")
    # as the page checks it: runtime.toy in the server's own process, which never imports torch
    probe = ("import json, sys; from pathlib import Path; from runtime import toy; "
             "path = Path(sys.argv[1]); print(json.dumps(toy.check(path.read_bytes(), path.name))); "
             "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe, str(path)], capture_output=True, text=True, timeout=60,
                         cwd=ROOT).stdout.splitlines()
    assert json.loads(out[0]) == {"ok": False, "error": "line 5: 3 field(s), expected source<TAB>target (exactly "
                                                        "one tab)"}
    assert out[1] == "False"


def test_synthetic_tasks_compute_what_they_name():
    rng = random.Random(0)
    for _ in range(50):
        source, target = SyntheticTask("add", 3, 10).example(rng)
        a, b = int("".join(source[:3])), int("".join(source[4:]))
        assert source[3] == "+" and len(target) == 4 and int("".join(target)) == a + b
        source, target = SyntheticTask("reverse", 6, 5).example(rng)
        assert target == source[::-1] and len(source) == 6 and set(source) <= set("01234")
        source, target = SyntheticTask("sort", 6, 12).example(rng)
        assert [int(t) for t in target] == sorted(int(s) for s in source)
        source, target = SyntheticTask("copy", 4, 3).example(rng)
        assert target == source


def test_held_out_examples_are_never_drawn_for_training():
    source = ExampleSource(SyntheticTask("reverse", 3, 3), seed=1)  # 27 distinct sources, 5 held out
    held = {tuple(s) for s, _ in source.held_out}
    assert len(held) == 5
    drawn = {tuple(s) for s, _ in source.batch(2000)}
    assert not drawn & held and len(drawn) == 22  # every other source does get drawn


@pytest.mark.parametrize("changes, message", [
    ({"d_model": 10**6}, "d_model must be a whole number from 4 to 512"),
    ({"n_layers": 0}, "n_layers must be a whole number from 1 to 6"),
    ({"d_model": 30, "n_heads": 4}, "does not divide"),
    ({"max_seconds": 1e9}, "max_seconds must be in (0, 300]"),
    ({"batch_size": -5}, "batch_size must be"),
    ({"length": 2.5}, "length must be a whole number"),
    ({"task": "rm -rf"}, "unknown task"),
    ({"lr": 0}, "lr must be"),
])
def test_absurd_settings_are_refused_before_anything_is_built(changes, message):
    with pytest.raises(ValueError, match=None) as caught:
        engine.RunConfig(**changes).check()
    assert message in str(caught.value)


def test_a_model_over_the_size_cap_is_refused():
    config = engine.RunConfig(d_model=256, d_ff=1024, n_layers=4, n_decoder_layers=4)  # 7.4M
    config.check()
    with pytest.raises(ValueError, match="7,378,944 parameters; at most 5,000,000"):
        engine.build_model(config, 20, 12)


def test_a_run_stops_at_the_step_its_flag_is_set_and_reports_in_order():
    stop, events = threading.Event(), []

    def on_event(event):
        events.append(event)
        if event["event"] == "step" and event["step"] == 6:
            stop.set()

    tiny = engine.RunConfig(task="copy", length=4, vocab=5, d_model=16, n_heads=2, n_layers=1, n_decoder_layers=1,
                            d_ff=32, batch_size=8, threads=1, log_every=2, eval_every=4, snapshot_every=4, samples=2)
    result = engine.train(tiny, on_event=on_event, stop=stop)
    kinds = [e["event"] for e in events]
    assert kinds[:2] == ["start", "attention"] and kinds[-1] == "done"
    assert result.reason == "stopped" and result.step == 6 and events[-1]["step"] == 6
    assert [e["step"] for e in events if e["event"] == "eval"] == [4, 6]  # the final model is scored too
    snapshot = next(e for e in events if e["event"] == "attention")
    probe = events[0]["probe"]
    cross = snapshot["cross"]  # L × H × T × S
    assert (len(cross), len(cross[0]), len(cross[0][0]), len(cross[0][0][0])) == \
           (1, 2, len(probe["target"]), len(probe["source"]))
    assert all(abs(sum(row) - 1) < 0.01 for row in cross[0][0])
    assert len(events[-2 if kinds[-2] == "eval" else -3]["samples"]) == 2


def test_near_its_target_a_run_is_scored_five_times_as_often():
    """Issue 34.3: copy first reached 99% at step 260, which scoring every 50 steps saw only at step 350."""
    config = engine.RunConfig(task="copy", length=4, vocab=5, d_model=16, n_heads=2, n_layers=1, n_decoder_layers=1,
                              d_ff=32, eval_every=50, target_accuracy=0.99)
    run = engine.Run(config, engine.build_source(config), lambda e: None, None)

    def due(accuracy: float) -> list[int]:
        run.accuracy, steps = accuracy, []
        for run.step in range(1, 101):
            if run.due_for_evaluation():
                steps.append(run.step)
        return steps

    assert due(0.5) == due(0.88) == [50, 100]
    assert due(0.95) == list(range(10, 101, 10))
    run.config.target_accuracy = 1.01  # trained to its caps: no target to reach, scored at the usual pace
    assert due(0.95) == [50, 100]
