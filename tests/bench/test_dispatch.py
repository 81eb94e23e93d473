"""`python -m bench NAME`: one entry for every benchmark (bench/), each a module with `main(argv)`."""
from __future__ import annotations

import importlib

import pytest

from bench import BENCHMARKS
from bench.__main__ import main


def test_python_m_bench_lists_the_benchmarks_and_refuses_others(capsys):
    assert main(["--help"]) == 0
    listed = capsys.readouterr().out
    assert all(f"  {name}" in listed for name in BENCHMARKS)
    assert main(["nope"]) == 2 and "unknown name 'nope'" in capsys.readouterr().err


@pytest.mark.parametrize("name", sorted(BENCHMARKS))
def test_every_listed_benchmark_is_a_module_whose_help_names_the_one_entry(name, capsys):
    assert callable(importlib.import_module(f"bench.{name}").main)
    with pytest.raises(SystemExit) as done:
        main([name, "--help"])
    assert done.value.code == 0
    assert capsys.readouterr().out.startswith(f"usage: python -m bench {name}")
