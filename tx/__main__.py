"""python -m tx TOOL [ARGS...]: the command-line tools (`tx.tools`); `python -m tx --help` lists them.

Several processes: `torchrun --nproc_per_node=2 -m tx train sentiment`.
"""
from __future__ import annotations

import sys
from importlib import import_module

from .tools import TOOLS


def usage() -> str:
    width = max(map(len, TOOLS))
    return "\n".join(["usage: python -m tx TOOL [ARGS...]    (python -m tx TOOL --help: its options)", "", "tools:",
                      *(f"  {name:<{width}}  {line}" for name, line in TOOLS.items())])


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(usage(), file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    name, *rest = argv
    if name not in TOOLS:
        print(f"{usage()}\n\nerror: unknown tool {name!r}", file=sys.stderr)
        return 2
    return import_module(f"tx.tools.{name}").main(rest)


if __name__ == "__main__":
    sys.exit(main())
