"""python -m bench NAME [ARGS...]: the benchmarks (bench/); `python -m bench --help` lists them."""
from __future__ import annotations

import sys

from runtime.cli import dispatch

from . import BENCHMARKS


def main(argv: list[str] | None = None) -> int:
    return dispatch(argv, "bench", "NAME", BENCHMARKS, "benchmarks:", "bench")


if __name__ == "__main__":
    sys.exit(main())
