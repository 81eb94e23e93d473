"""python -m gpujob COMMAND [ARGS...]: the GPU job's commands (gpujob/tools/); `python -m gpujob --help` lists them."""
from __future__ import annotations

import sys
from importlib import import_module

from .tools import COMMANDS


def usage() -> str:
    width = max(map(len, COMMANDS))
    return "\n".join(["usage: python -m gpujob COMMAND [ARGS...]    (python -m gpujob COMMAND --help: its options)",
                      "", "commands (configs/README.md: the GPU window's checklist):",
                      *(f"  {name:<{width}}  {line}" for name, line in COMMANDS.items())])


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(usage(), file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    name, *rest = argv
    if name not in COMMANDS:
        print(f"{usage()}\n\nerror: unknown command {name!r}", file=sys.stderr)
        return 2
    return import_module(f"gpujob.tools.{name.replace('-', '_')}").main(rest)


if __name__ == "__main__":
    sys.exit(main())
