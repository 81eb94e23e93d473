"""bench runtimes' statistics and warnings (bench/stats.py; its table: bench/report.py): the rounds,
the medians with their spread, and which ratios it refuses to believe. No timing is asserted: the calls are fakes
or their times are given."""
from __future__ import annotations

import numpy as np
import pytest

from bench.stats import CaseResult, distrusted, machine_busy, summarise
from runtime.timing import interleaved, schedule


def test_a_call_with_fewer_runs_is_spread_over_the_whole_measurement():
    assert schedule(30, 30) == set(range(30))
    assert schedule(30, 10) == set(range(0, 30, 3))
    assert schedule(7, 3) == {0, 2, 4}


def test_rounds_rotate_the_order_and_slow_cases_join_every_part_of_the_run():
    order: list[tuple[str, int]] = []

    def fake(key: str):
        return lambda r: order.append((key, r)) or 5

    calls = {key: fake(key) for key in ("fast-a", "fast-b", "slow-a", "slow-b")}
    runs = {"slow-a": (1, 2), "slow-b": (1, 2)}  # one warm-up, two timed: 3 of the 9 rounds
    measured = interleaved(calls, repeats=7, warmup=2, runs=runs)
    rounds = {key: [r for k, r in order if k == key] for key in calls}
    assert rounds["fast-a"] == list(range(9)) and rounds["slow-a"] == rounds["slow-b"] == [0, 3, 6]
    assert {k: len(t) for k, (t, _) in measured.items()} == {"fast-a": 7, "fast-b": 7, "slow-a": 2, "slow-b": 2}
    assert measured["slow-a"][1] == 10 and measured["fast-b"][1] == 35  # tokens of the timed runs only
    firsts = {next(k for k, r2 in order if r2 == r) for r in range(9)}
    assert firsts == set(calls)  # every key leads some round: no system always runs first (or last)


def test_summarise_reports_median_spread_and_both_ratios():
    torch_times = [0.010, 0.011, 0.012, 0.013, 0.050]  # one outlier: the median ignores it, p90 shows it
    measured = {"torch": (torch_times, 50), "ort-int8": ([0.004] * 5, 50), "ct2-int8": ([0.002] * 5, 50)}
    rows = {r.system: r for r in summarise("greedy-b1", measured)}
    torch = rows["torch"]
    assert torch.p50_ms == 12.0 and torch.p10_ms == pytest.approx(np.percentile(torch_times, 10) * 1e3)
    assert torch.p90_ms == pytest.approx(np.percentile(torch_times, 90) * 1e3) and torch.p90_ms > 30
    assert torch.rounds == 5 and torch.tokens_per_s == 833.3  # 10 tokens a call / 12 ms
    assert rows["ort-int8"].speedup == 3.0 and rows["ort-int8"].vs_ct2 == 0.5  # CTranslate2 twice as fast
    assert rows["ct2-int8"].vs_ct2 is None and rows["torch"].vs_ct2 is None


def test_ctranslate2_is_compared_at_its_faster_thread_setting():
    measured = {"torch": ([0.012] * 5, 50), "ort-int8": ([0.004] * 5, 50), "ort-fp32": ([0.008] * 5, 50),
                "ct2-int8": ([0.006] * 5, 50), "ct2-int8-t1": ([0.003] * 5, 50),  # 1 thread the faster
                "ct2-fp32": ([0.010] * 5, 50), "ct2-fp32-t1": ([0.016] * 5, 50)}
    rows = {r.system: r for r in summarise("greedy-b1", measured)}
    assert (rows["ort-int8"].ct2_peer, rows["ort-int8"].vs_ct2) == ("ct2-int8-t1", 0.75)  # not 1.5 vs ct2-int8
    assert (rows["ort-fp32"].ct2_peer, rows["ort-fp32"].vs_ct2) == ("ct2-fp32", 1.25)
    assert rows["ct2-int8-t1"].ct2_peer is None and rows["ct2-int8-t1"].vs_ct2 is None
    # The distrust check sets the ratio against the peer it was taken from.
    rows["ct2-int8-t1"].p90_ms = rows["ort-int8"].p10_ms
    assert [d.split(":")[0] for d in distrusted(list(rows.values()))] == ["greedy-b1 ort-int8 ÷ CTranslate2"]
    from dataclasses import asdict

    from bench.report import table

    text = table({"model_dir": "m", "task": "translate", "threads": 2, "results": [asdict(r) for r in rows.values()]})
    assert "| greedy-b1 | ort-int8 | 4.00 | 4.0-4.0 | 2500 | 3.00 | 0.75 (ct2-int8-t1) |" in text
    assert "| greedy-b1 | ort-fp32 | 8.00 | 8.0-8.0 | 1250 | 1.50 | 1.25 |" in text  # the same-threads peer: unnamed


@pytest.mark.parametrize("cpus, threads, before, after, busy", [
    (2, 2, 0.1, 2.3, False),   # the benchmark's own 2 threads raise "after": not other work
    (2, 2, 0.6, 2.0, True),    # 2 cores, 2 threads: no core is free, half a core of other work is too much
    (2, 2, 0.2, 3.4, True),    # other work appeared during the run
    (16, 2, 7.9, 9.5, False),  # 16 cores: other work on fewer than half of them
    (16, 2, 8.1, 3.0, True),   # ... on more than half (0.5 × cores)
    (16, 2, 1.0, 10.5, True),  # 8.5 beyond its own 2 threads
])
def test_the_machine_counts_as_busy_past_half_its_cores(cpus, threads, before, after, busy):
    reason = machine_busy({"before": before, "after": after}, cpus, threads)
    assert (reason is not None) is busy
    if busy:
        assert f"on {cpus} cores" in reason


def results_with_spreads() -> list[CaseResult]:
    return [CaseResult("greedy-b1", "torch", 10.0, 12.0, 100, 1.0, 8.0),
            CaseResult("greedy-b1", "ort-fp32", 5.0, 5.5, 200, 2.0, 4.5, vs_ct2=0.8),
            CaseResult("greedy-b1", "ort-int8", 9.0, 11.0, 110, 1.11, 8.5, vs_ct2=1.0),
            CaseResult("greedy-b1", "ct2-fp32", 4.0, 4.6, 250, 2.5, 3.9),
            CaseResult("greedy-b1", "ct2-int8", 4.0, 4.5, 250, 2.5, 3.5)]


def test_only_ratios_whose_spreads_overlap_are_distrusted_on_a_quiet_machine():
    doubts = distrusted(results_with_spreads())
    assert doubts == ["greedy-b1 ort-fp32 ÷ CTranslate2: p10-p90 4.5-5.5 ms overlaps ct2-fp32's 3.9-4.6 ms",
                      "greedy-b1 ort-int8 × torch: p10-p90 8.5-11.0 ms overlaps torch's 8.0-12.0 ms"]


def test_every_ratio_is_distrusted_when_the_machine_was_busy():
    doubts = distrusted(results_with_spreads(), busy="load 3.1 before the run > 1 on 2 cores")
    named = [d.split(":")[0] for d in doubts]
    assert named == ["greedy-b1 ort-fp32 × torch", "greedy-b1 ort-fp32 ÷ CTranslate2", "greedy-b1 ort-int8 × torch",
                     "greedy-b1 ort-int8 ÷ CTranslate2", "greedy-b1 ct2-fp32 × torch", "greedy-b1 ct2-int8 × torch"]
    assert all("the machine was busy (load 3.1 before the run" in d for d in doubts)


def test_the_table_warns_about_the_load_and_names_each_distrusted_ratio():
    from dataclasses import asdict

    from bench.report import table

    results = results_with_spreads()
    busy = machine_busy({"before": 1.4, "after": 3.0}, 2, 2)
    bench = {"model_dir": "m", "task": "translate", "threads": 2, "cpu_count": 2, "busy": busy,
             "load_average": {"before": 1.4, "after": 3.0}, "results": [asdict(r) for r in results],
             "distrusted": distrusted(results, busy)}
    text = table(bench)
    assert "machine load (1-min average) 1.4 before, 3.0 after, 2 CPUs" in text
    assert f"WARNING: the machine was busy ({busy})" in text
    assert ("WARNING: no ratio trusted, the machine was busy (load 1.4 before the run > 0.5 on 2 cores): "
            "greedy-b1 ort-fp32 × torch, greedy-b1 ort-fp32 ÷ CTranslate2, greedy-b1 ort-int8 × torch, ") in text
    quiet = bench | {"busy": None, "load_average": {"before": 0.1, "after": 2.0}, "distrusted": distrusted(results)}
    text = table(quiet)
    assert "busy" not in text and len(quiet["distrusted"]) == 2
    for doubt in quiet["distrusted"]:  # each named on its own line, with the spreads that overlap
        assert f"WARNING: ratio not trusted, {doubt}" in text
    assert "| greedy-b1 | ort-int8 | 9.00 | 8.5-11.0 | 110 | 1.11 | 1.00 |" in text


def test_interleaved_reports_each_round_and_stops_when_progress_raises():
    from runtime.timing import interleaved

    calls, seen = [], []
    systems = {"a": lambda r: calls.append(("a", r)) or 1, "b": lambda r: calls.append(("b", r)) or 2}
    measured = interleaved(systems, repeats=3, warmup=1, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(0, 4), (1, 4), (2, 4), (3, 4)] and len(measured["a"][0]) == 3 and measured["b"][1] == 6
    assert calls[:4] == [("a", 0), ("b", 0), ("b", 1), ("a", 1)]  # rotating order

    class Stop(Exception):
        pass

    def stop_at_two(done: int, total: int) -> None:
        if done == 2:
            raise Stop
    calls.clear()
    with pytest.raises(Stop):
        interleaved(systems, repeats=50, warmup=0, progress=stop_at_two)
    assert len(calls) == 4  # two rounds, then nothing more ran


@pytest.mark.parametrize("before, after, busy", [(0.1, 2.3, False),  # its own 2 threads raise "after": not busy
                                                 (1.2, 1.5, True),   # other work before it started
                                                 (0.2, 3.4, True)])  # other work appeared during the run
def test_bench_busy_warning_discounts_its_own_threads(before, after, busy):
    from bench.report import table

    bench = {"model_dir": "m", "task": "sentiment", "threads": 2, "cpu_count": 2, "results": [],
             "load_average": {"before": before, "after": after}}
    assert ("WARNING: the machine was busy" in table(bench)) is busy


def test_a_ratio_whose_spreads_overlap_is_named_as_distrusted():
    from bench.stats import CaseResult, distrusted

    results = [CaseResult("greedy-b1", "torch", 10.0, 12.0, 100, 1.0, 8.0),
               CaseResult("greedy-b1", "ort-int8", 9.0, 11.0, 110, 1.11, 8.5, vs_ct2=1.0),
               CaseResult("greedy-b1", "ct2-int8", 4.0, 4.5, 250, 2.5, 3.5)]
    doubts = distrusted(results)
    assert doubts == ["greedy-b1 ort-int8 × torch: p10-p90 8.5-11.0 ms overlaps torch's 8.0-12.0 ms"]
