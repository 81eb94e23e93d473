"""playground/latency's pure side (no Streamlit, no models): a measurement in words, tables and a figure
(report.py), and the timing loop with its output agreement (measure.py) over stand-in systems."""
from __future__ import annotations

import contextlib
from pathlib import Path
from types import SimpleNamespace

import pytest

from playground.latency import measure, report
from playground.latency.report import NOISE, PYTORCH, SPEED_UP, LatencyResult

ROOT = Path(__file__).resolve().parents[2]
STEADY = [0.010, 0.010, 0.011, 0.010, 0.010]  # seconds: PyTorch's runs
TWICE_AS_FAST = [0.005, 0.005, 0.0051, 0.005, 0.005]  # p10-p90 far from STEADY's
AS_FAST = [0.0101, 0.0099, 0.0105, 0.0100, 0.0102]  # overlaps STEADY


def result(**changes) -> LatencyResult:
    fields = {"measured": {PYTORCH: (STEADY, 50), "onnxruntime fp32": (TWICE_AS_FAST, 50),
                           "onnxruntime int8": (AS_FAST, 40)},
              "threads": 2, "torch_threads": 2, "texts": 1, "method": "greedy", "truncated": [],
              "reference": PYTORCH, "agreement": {PYTORCH: (1, 1), "onnxruntime fp32": (1, 1),
                                                  "onnxruntime int8": (0, 1)}}
    return LatencyResult(**{**fields, **changes})


def test_within_noise_is_overlapping_p10_p90_ranges():
    assert report.spread([1.0, 2.0, 3.0]) == (1.2, 2.8)
    assert report.within_noise(AS_FAST, STEADY)
    assert not report.within_noise(TWICE_AS_FAST, STEADY)


def test_agreement_counts_the_inputs_with_the_references_output():
    outputs = {"a": {0: "pos", 1: "neg"}, "b": {0: "pos", 1: "pos"}, "c": {}}
    assert report.agreement(outputs, "a") == {"a": (2, 2), "b": (1, 2), "c": (0, 0)}


def test_rows_beside_pytorch_give_the_speed_up_its_noise_and_the_agreement():
    rows = {row["system"]: row for row in report.result_rows(result())}
    assert rows[PYTORCH][SPEED_UP] == 1.0 and rows[PYTORCH][NOISE] == "reference"
    assert rows["onnxruntime fp32"][SPEED_UP] == 2.0 and rows["onnxruntime fp32"][NOISE] == "beyond noise"
    assert rows["onnxruntime int8"][NOISE] == "within noise"
    same = "same output as PyTorch"
    assert [rows[name][same] for name in rows] == ["reference", "same on 1 of 1 input(s)", "differs on 1 of 1 input(s)"]
    assert rows[PYTORCH]["p50 ms"] == 10.0 and rows[PYTORCH]["tokens/s"] == round(50 / sum(STEADY), 1)
    assert rows["onnxruntime fp32"]["p10–p90 ms"] == "5.00–5.06"


def test_without_pytorch_there_is_no_speed_up_and_fp32_is_the_reference():
    done = result(measured={"onnxruntime fp32": (STEADY, 5), "onnxruntime int8": (AS_FAST, 5)}, torch_threads=None,
                  reference="onnxruntime fp32", agreement={"onnxruntime fp32": (1, 1), "onnxruntime int8": (0, 0)})
    rows = report.result_rows(done)
    assert all(SPEED_UP not in row and NOISE not in row for row in rows)
    assert [row["same output as onnxruntime fp32"] for row in rows] == ["reference", "not compared"]
    assert report.speed_ups(rows, done) == []
    assert "no PyTorch column" in report.run_caption(done, "sentiment")
    assert "the same label" in report.run_caption(done, "sentiment")


def test_the_caption_says_how_the_numbers_were_taken():
    caption = report.run_caption(result(texts=3), "translate")
    assert caption.startswith("5 timed runs after warm-up · onnxruntime 2 intra-op thread(s) · torch 2 thread(s)")
    assert "3 distinct input(s) · greedy decoding" in caption and "the same translation token ids" in caption


def test_each_speed_up_figure_carries_its_noise_and_agreement():
    done = result()
    figures = report.speed_ups(report.result_rows(done), done)
    assert figures == [("onnxruntime fp32 speed-up", "2.00×",
                        "beyond noise (p10–p90 ranges apart) · outputs same on 1 of 1 input(s)"),
                       ("onnxruntime int8 speed-up", "0.99×",
                        "within noise (p10–p90 ranges overlap) · outputs differs on 1 of 1 input(s)")]


def test_notes_for_truncated_inputs_and_a_stopped_run():
    assert report.truncated_note(result()) is None
    assert report.truncated_note(result(truncated=[0, 2])).startswith("2 input(s) exceeded the model's token limit")
    stopped = {"done": 2, "total": 5}
    assert report.stopped_note(stopped, True).startswith("Stopped after 2 of 5 rounds, all of them warm-up")
    assert report.stopped_note(stopped, True).endswith("from the previous complete run.")
    assert report.stopped_note(stopped, False).endswith("Click Run to measure again.")


def test_a_partial_result_says_what_it_holds():
    partial = result()
    partial = report.LatencyResult(**{**partial.__dict__, "stopped": (4, 12)})
    timed = len(partial.measured[PYTORCH][0])
    assert report.partial_note(partial) == (
        f"Partial result: stopped after 4 of 12 rounds. The numbers below come from the {timed} timed runs per "
        "system made before the Stop: fewer than asked for, so they are less sure. Click Run to measure in full.")


def test_the_box_figure_has_every_timed_call_in_ms():
    fig = report.box_figure(result())
    assert [trace.name for trace in fig.data] == [PYTORCH, "onnxruntime fp32", "onnxruntime int8"]
    assert list(fig.data[0].y) == pytest.approx([t * 1e3 for t in STEADY])


def test_a_saved_bench_is_picked_by_task_and_put_in_words():
    mine = {"task": "sentiment", "results": [{"case": "1"}], "model_dir": "m", "threads": 2, "repeats": 9,
            "versions": {"cpu": "Xeon", "onnxruntime": "1.2"}, "table": "| a |",
            "targets": {"int8 vs torch": {"target": 1.5, "reached": 2.0, "met": True},
                        "fp32 vs torch": {"target": 1.2, "reached": 1.1, "met": False}}}
    assert report.saved_bench([{"task": "translate", "results": [1]}, mine], "sentiment") is mine
    assert report.saved_bench(mine, "sentiment") is mine
    assert report.saved_bench({**mine, "results": []}, "sentiment") is None
    assert report.saved_bench(None, "sentiment") is None
    assert report.bench_caption(mine) == "m · 2 threads · 9 repeats · CPU: Xeon · onnxruntime 1.2"
    assert report.target_lines(mine) == ["- target **int8 vs torch**: ≥ 1.5× — reached 2.00× (met)",
                                         "- target **fp32 vs torch**: ≥ 1.2× — reached 1.10× (missed)"]
    assert report.bench_table_text(mine) == "| a |"
    assert report.bench_table_text({**mine, "table": None}) is None


# ---------------------------------------------------------------- measure.py over stand-in systems

class Classifier:
    def __init__(self, label: str, truncate: bool = False):
        self.label, self.truncate = label, truncate

    def classify(self, texts):
        return [SimpleNamespace(tokens=text.split(), label=self.label if "odd" in text else "neg",
                                truncated=self.truncate and len(text) > 9) for text in texts]


class Translator:
    def __init__(self, shift: int):
        self.shift, self.asked = shift, []

    def translate(self, texts, src_lang, tgt_lang, method, beam):
        self.asked.append((src_lang, tgt_lang, method, beam))
        return [SimpleNamespace(token_ids=[len(text) + self.shift], truncated=False) for text in texts]


class Torch:
    """Stands in for playground.latency.pytorch: records the thread pinning."""

    def __init__(self):
        self.pinned = []

    def pinned_threads(self, threads):
        self.pinned.append(threads)
        return contextlib.nullcontext()

    def thread_count(self):
        return 7


def test_measure_times_every_system_and_compares_outputs_with_the_first():
    work = measure.Workload("sentiment", ["an odd one", "plain"])
    systems = {PYTORCH: Classifier("pos", truncate=True), "onnxruntime fp32": Classifier("pos"),
               "onnxruntime int8": Classifier("neu")}
    seen, torch_side = [], Torch()
    done = measure.measure(work, systems, runs=4, warmup=1, threads=3,
                           progress=lambda d, t, so_far: seen.append((d, t, so_far)), torch_side=torch_side)
    assert [(d, t) for d, t, _ in seen] == [(r, 5) for r in range(5)]
    # before each round, the rounds timed so far: none during the warm-up round, then one more per round
    assert [so_far and len(so_far.measured[PYTORCH][0]) for _, _, so_far in seen] == [None, None, 1, 2, 3]
    partial = seen[3][2]
    assert partial.stopped == (3, 5) and set(partial.measured) == set(systems) and partial.torch_threads == 7
    assert done.stopped is None
    assert {name: len(times) for name, (times, _) in done.measured.items()} == dict.fromkeys(systems, 4)
    assert done.agreement == {PYTORCH: (2, 2), "onnxruntime fp32": (2, 2), "onnxruntime int8": (1, 2)}
    assert done.reference == PYTORCH and done.truncated == [0] and done.texts == 2
    assert torch_side.pinned == [3] and done.torch_threads == 7 and done.threads == 3


def test_measure_without_pytorch_compares_token_ids_with_onnxruntime_fp32():
    work = measure.Workload("translate", ["Hallo"], ("de", "en"), "beam")
    fp32, int8 = Translator(0), Translator(1)
    done = measure.measure(work, {"onnxruntime fp32": fp32, "onnxruntime int8": int8}, 2, 0, 1,
                           lambda d, t, so_far: None)
    assert done.reference == "onnxruntime fp32" and done.torch_threads is None and done.method == "beam"
    assert done.agreement == {"onnxruntime fp32": (1, 1), "onnxruntime int8": (0, 1)}
    assert fp32.asked == [("de", "en", "beam", 4)] * 2
    assert done.measured["onnxruntime int8"][1] == 2  # one token id per call, two timed calls


def test_measure_with_nothing_loaded_says_so():
    with pytest.raises(RuntimeError, match="no system could be loaded"):
        measure.measure(measure.Workload("sentiment", ["x"]), {}, 2, 0, 1, lambda d, t, so_far: None)
