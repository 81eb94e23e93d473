"""`python -m bench steering` on the tiny translator export: the time inside the graphs (the floor it prints beside
each ratio) is counted within each call's own wall time, and the summary prints both."""
from __future__ import annotations

import re

import pytest
from export_fixtures import exported

from bench.steering import GraphClock, main, timed_call
from runtime import OnnxTranslator

pytestmark = pytest.mark.exports


def test_the_graph_clock_counts_every_graph_run_of_a_call_and_changes_no_output():
    translator = OnnxTranslator(exported("translate"), provider="cpu", threads=1)
    before = translator.translate(["Guten Morgen."], method="greedy", max_len=6)
    clock = GraphClock(translator.backend)
    runs = []
    run = translator.backend.run
    translator.backend.run = lambda *a, **kw: runs.append(1) or run(*a, **kw)
    wall, inside = timed_call(lambda: translator.translate(["Guten Morgen."], method="greedy", max_len=6), clock)
    assert 0 < inside <= wall
    assert len(runs) >= 2  # the encoder and at least one decoder step, each counted
    assert translator.translate(["Guten Morgen."], method="greedy", max_len=6) == before


def test_the_benchmark_prints_each_ratio_with_its_graph_only_floor_and_the_load(capsys):
    assert main(["--model-dir", str(exported("translate")), "--sentences", "2", "--repeats", "1",
                 "--alternatives", "3", "--threads", "1"]) == 0
    out = capsys.readouterr().out
    summaries = re.findall(r"alternatives at the (first|middle) position: median ([\d.]+)x .* inside the graphs "
                           r"alone: median ([\d.]+)x", out)
    assert [name for name, _, _ in summaries] == ["first", "middle"]
    assert all(float(ratio) > 0 and float(floor) > 0 for _, ratio, floor in summaries)
    assert out.count("load average") == 2
