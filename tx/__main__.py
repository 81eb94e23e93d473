"""python -m tx TOOL [ARGS...]: the command-line tools (`tx.tools`); `python -m tx --help` lists them.

Several processes: `torchrun --nproc_per_node=2 -m tx train sentiment`.
"""
from __future__ import annotations

import sys

from runtime.cli import dispatch

from .tools import TOOLS


def main(argv: list[str] | None = None) -> int:
    return dispatch(argv, "tx", "TOOL", TOOLS, "tools:", "tx.tools")


if __name__ == "__main__":
    sys.exit(main())
