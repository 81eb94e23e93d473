"""python -m gpujob COMMAND [ARGS...]: the GPU job's commands (gpujob/tools/); `python -m gpujob --help` lists them."""
from __future__ import annotations

import sys

from runtime.cli import dispatch

from .tools import COMMANDS


def main(argv: list[str] | None = None) -> int:
    return dispatch(argv, "gpujob", "COMMAND", COMMANDS, "commands (configs/README.md: the GPU window's checklist):",
                    "gpujob.tools")


if __name__ == "__main__":
    sys.exit(main())
