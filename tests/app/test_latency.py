"""The Latency page on the tiny exported test models (tests/app_fixtures.py): PyTorch eager beside onnxruntime fp32
and int8, the saved `bench runtimes` results; and, from issue 25 (finding 6), Stop keeps the previous results and says
how far it got, output agreement and noise next to each speed-up, a shared server, no decoder text for the
classifier.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from app_fixtures import array, clean, page_text, plotly_figures, values
from streamlit.runtime.scriptrunner_utils.exceptions import StopException

from runtime import OnnxSentimentClassifier, OnnxTranslator, timing

pytestmark = pytest.mark.exports

ROOT = Path(__file__).resolve().parents[2]
LONG_GERMAN = "Das Wetter ist heute schön und wir gehen spazieren. " * 40


NOISE = "noise (p10–p90 vs PyTorch)"
RESULTS = "p50 ms"  # a column only the page's own results table has (the saved bench runtimes table has p50_ms)


def results_table(at):
    return next((d.value for d in at.dataframe if RESULTS in d.value.columns), None)


def run_latency(at, runs: int = 5, warmup: int = 0):
    at.slider(key="latency_runs").set_value(runs).run()
    at.slider(key="latency_warmup").set_value(warmup).run()
    at.button(key="latency_go").click().run()
    clean(at)
    return at


# ---------------------------------------------------------------- finding 6: Latency

def interrupted_after(rounds: int, real):
    """timing.interleaved as it behaves when Stop is clicked during round `rounds`: the page's progress call for that
    round is where Streamlit interrupts the script (it raises a ScriptControlException there)."""

    def interleaved(calls, repeats, warmup, progress=None, runs=None, **more):
        def progress_then_stop(done: int, total: int) -> None:
            progress(done, total)
            if done == rounds:
                raise StopException()

        return real(calls, repeats, warmup, progress_then_stop, runs, **more)

    return interleaved


def test_latency_stop_says_how_far_it_got_and_keeps_the_previous_results(open_page, monkeypatch):
    at = open_page("latency")
    at.radio(key="latency_task").set_value("sentiment").run()
    first = results_table(run_latency(at))
    assert first is not None
    real = timing.interleaved
    monkeypatch.setattr(timing, "interleaved", interrupted_after(2, real))
    at.slider(key="latency_warmup").set_value(3).run()
    at.button(key="latency_go").click().run()  # a second measurement, stopped during its third (warm-up) round
    monkeypatch.setattr(timing, "interleaved", real)
    at.button(key="latency_stop").click().run()  # the rerun Streamlit starts for the Stop click
    clean(at)
    assert any("Stopped after 2 of 8 rounds, all of them warm-up" in m for m in values(at.warning) + values(at.info))
    kept = results_table(at)
    assert kept is not None and kept.equals(first)  # the previous results, not wiped
    at.button(key="latency_go").click().run()  # a complete run replaces them and the note goes
    clean(at)
    assert not any("Stopped after" in m for m in values(at.warning) + values(at.info))


def stopped_run(open_page, monkeypatch, after: int):
    """The Latency page on the classifier, 5 runs after 1 warm-up round, stopped while round `after` + 1 runs."""
    at = open_page("latency")
    at.radio(key="latency_task").set_value("sentiment").run()
    real = timing.interleaved
    monkeypatch.setattr(timing, "interleaved", interrupted_after(after, real))
    at.slider(key="latency_runs").set_value(5).run()
    at.slider(key="latency_warmup").set_value(1).run()
    at.button(key="latency_go").click().run()
    monkeypatch.setattr(timing, "interleaved", real)
    at.button(key="latency_stop").click().run()
    clean(at)
    return at


def test_a_stop_after_timed_rounds_keeps_them_as_a_partial_result(open_page, monkeypatch):
    """Issue 34, 9: stopped in its fourth round after one warm-up round, a run has timed two rounds: they are shown,
    marked partial, instead of being thrown away."""
    at = stopped_run(open_page, monkeypatch, after=3)
    (note,) = [w for w in values(at.warning) if w.startswith("Partial result")]
    assert note.startswith("Partial result: stopped after 3 of 6 rounds. The numbers below come from the 2 timed "
                           "runs per system")
    assert results_table(at) is not None and any("2 timed runs after warm-up" in c for c in values(at.caption))
    assert not any("all of them warm-up" in w for w in values(at.warning))
    at.button(key="latency_go").click().run()  # a complete run replaces it and the note goes
    clean(at)
    assert not any(w.startswith("Partial result") for w in values(at.warning))


def test_latency_stop_before_any_result_says_so(open_page, monkeypatch):
    at = stopped_run(open_page, monkeypatch, after=1)
    assert any("Stopped after 1 of 6 rounds" in m for m in values(at.warning) + values(at.info))
    assert results_table(at) is None


def overlaps(a_ms, b_ms) -> bool:
    """bench.stats.distrusted's rule: the two p10-p90 ranges overlap."""
    a10, a90 = np.percentile(a_ms, [10, 90])
    b10, b90 = np.percentile(b_ms, [10, 90])
    return bool(a10 <= b90 and b10 <= a90)


def check_agreement_and_noise(at, expected_same: dict[str, bool]) -> None:
    table = results_table(at)
    systems = list(table["system"])
    assert systems[0] == "PyTorch eager"
    times = {name: array(trace["y"]) for name, trace in zip(systems, plotly_figures(at)[0]["data"], strict=True)}
    for _, row in table.iterrows():
        name = row["system"]
        if name == "PyTorch eager":
            assert row["same output as PyTorch"] == "reference" and row[NOISE] == "reference"
            continue
        assert row["same output as PyTorch"].startswith("same") == expected_same[name], row.to_dict()
        within = overlaps(times[name], times["PyTorch eager"])
        assert row[NOISE].startswith("within noise") == within, row.to_dict()
    # next to each speed-up figure: the same two verdicts
    notes = values(at.caption)
    for name in systems[1:]:
        row = table[table["system"] == name].iloc[0]
        assert any(row["same output as PyTorch"] in n and row[NOISE] in n for n in notes), notes
    assert table.notna().all().all()


def test_latency_sentiment_says_whether_outputs_agree_and_flags_noise(open_page, model_root):
    from tx.inference import SentimentAnalyzer

    at = open_page("latency")
    at.radio(key="latency_task").set_value("sentiment").run()
    text = at.text_input(key="latency_text_sentiment").value
    run_latency(at)
    torch_label = SentimentAnalyzer.from_dir(model_root / "sentiment").classify([text])[0].label
    expected = {f"onnxruntime {p}": OnnxSentimentClassifier(model_root / "sentiment", precision=p).classify([text])[0]
                .label == torch_label for p in ("fp32", "int8")}
    check_agreement_and_noise(at, expected)


def test_latency_translation_compares_token_ids(open_page, model_root):
    from tx.inference import Translator

    at = open_page("latency")
    at.radio(key="latency_method").set_value("greedy").run()
    text = at.text_input(key="latency_text_translate").value
    run_latency(at, runs=5)
    reference = Translator.from_dir(model_root / "translate").translate([text], "de", "en", method="greedy")[0]
    expected = {f"onnxruntime {p}": OnnxTranslator(model_root / "translate", precision=p)
                .translate([text], "de", "en", method="greedy")[0].token_ids == reference.token_ids
                for p in ("fp32", "int8")}
    check_agreement_and_noise(at, expected)


def test_latency_says_the_server_is_shared(open_page):
    at = open_page("latency")
    at.radio(key="latency_task").set_value("sentiment").run()
    run_latency(at)
    assert any("share" in c and "other users" in c for c in values(at.caption))


def test_latency_mentions_the_kv_cache_for_the_translator_only(open_page):
    at = open_page("latency")
    assert "KV cache" in page_text(at)
    at.radio(key="latency_task").set_value("sentiment").run()
    clean(at)
    assert "KV cache" not in page_text(at)


# ---------------------------------------------------------------- the page on its own

@pytest.mark.slow
def test_latency_translation_side_by_side(open_page):
    at = open_page("latency")
    at.slider(key="latency_runs").set_value(5).run()
    at.slider(key="latency_warmup").set_value(1).run()
    at.button(key="latency_go").click().run()
    clean(at)
    table = at.dataframe[0].value
    assert list(table["system"]) == ["PyTorch eager", "onnxruntime fp32", "onnxruntime int8"]
    assert (table["p50 ms"] > 0).all() and (table["p90 ms"] >= table["p50 ms"]).all()
    assert table["speed-up vs PyTorch"].iloc[0] == 1.0
    assert len(at.metric) == 2
    (box,) = plotly_figures(at)
    assert [t["type"] for t in box["data"]] == ["box"] * 3
    assert all(len(array(t["y"])) == 5 for t in box["data"])
    assert any("5 timed runs" in c and "thread" in c for c in values(at.caption))
    assert any("python -m bench runtimes" in m for m in values(at.info))  # translate/ has no bench.json


def test_latency_sentiment_standard_set_and_saved_bench(open_page, model_root):
    at = open_page("latency")
    at.radio(key="latency_task").set_value("sentiment").run()
    clean(at)
    saved = at.dataframe[0].value  # the bench runtimes results in onnx/bench.json
    assert {"case", "system", "p50_ms", "p90_ms", "speedup"} <= set(saved.columns)
    assert any("target" in m for m in values(at.markdown))
    bench = json.loads((model_root / "sentiment" / "onnx" / "bench.json").read_text(encoding="utf-8"))
    assert values(at.code) == [bench["table"]]  # the table bench runtimes printed, shown as it was saved
    at.radio(key="latency_input").set_value("standard set").run()
    at.slider(key="latency_runs").set_value(5).run()
    at.slider(key="latency_warmup").set_value(0).run()
    at.button(key="latency_go").click().run()
    clean(at)
    assert len(at.dataframe) == 2 and len(at.dataframe[0].value) == 3
    assert plotly_figures(at)


def test_latency_asks_to_rerun_a_bench_saved_without_its_table(open_page, model_root, tmp_path):
    root = tmp_path / "models"
    shutil.copytree(model_root / "sentiment", root / "sentiment")
    path = root / "sentiment" / "onnx" / "bench.json"
    bench = json.loads(path.read_text(encoding="utf-8"))
    del bench["table"]  # as bench runtimes wrote it before it saved the table
    path.write_text(json.dumps(bench), encoding="utf-8")
    at = open_page("latency", root=root)
    at.radio(key="latency_task").set_value("sentiment").run()
    clean(at)
    assert not at.code and at.dataframe
    assert any(f"re-run `python -m bench runtimes {root / 'sentiment'}`" in m for m in values(at.info))


def test_latency_says_when_the_input_was_truncated(open_page):
    at = open_page("latency")
    at.radio(key="latency_task").set_value("sentiment").run()
    at.text_input(key="latency_text_sentiment").input(LONG_GERMAN).run()
    at.slider(key="latency_runs").set_value(5).run()
    at.slider(key="latency_warmup").set_value(0).run()
    at.button(key="latency_go").click().run()
    clean(at)
    assert any("exceeded the model's token limit" in w for w in values(at.warning))
    # issue 44.7: a finished run leaves no Stop behind (it stayed, clickable, doing nothing)
    assert at.get("button") and not any(b.key == "latency_stop" for b in at.button)


def test_latency_defaults_are_short():
    page = (ROOT / "pages" / "4_Latency.py").read_text(encoding="utf-8")
    assert '"Timed runs (N)", 5, 200, 10,' in page and '"Warm-up runs", 0, 20, 2,' in page


def test_latency_empty_text(open_page):
    at = open_page("latency")
    at.text_input(key="latency_text_translate").input("   ").run()
    at.button(key="latency_go").click().run()
    clean(at)
    assert any("Type a text" in m for m in values(at.info))
