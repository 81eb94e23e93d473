"""One entry point over several commands (`python -m tx TOOL`, `python -m gpujob COMMAND`, `python -m export`'s and
`python -m bench`'s): the usage listing, the dispatch to the command's module, and each command's argument parser.
The commands themselves live apart from the libraries they call (tx/tools/, gpujob/tools/).

Here, in the torch-free layer every package may import, not in tx: importing anything of tx imports torch (tx's
package imports its model), which cost each command 1.1-1.3 s before it did anything, more on the GPU machine where
torch loads CUDA's libraries; gpujob's install-wheels, place-weights, wheels and weights need no torch at all."""
from __future__ import annotations

import argparse
import sys
from importlib import import_module


def usage(program: str, noun: str, commands: dict[str, str], heading: str) -> str:
    """`usage: python -m PROGRAM NOUN [ARGS...]` and every command with its line."""
    width = max(map(len, commands))
    first = f"usage: python -m {program} {noun} [ARGS...]    (python -m {program} {noun} --help: its options)"
    return "\n".join([first, "", heading, *(f"  {name:<{width}}  {line}" for name, line in commands.items())])


def dispatch(argv: list[str] | None, program: str, noun: str, commands: dict[str, str], heading: str,
             package: str) -> int:
    """Run `package.<command>.main(rest)` for argv = [command, *rest]; --help or nothing prints the listing."""
    argv = sys.argv[1:] if argv is None else argv
    listing = usage(program, noun, commands, heading)
    if not argv or argv[0] in ("-h", "--help"):
        print(listing, file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    name, *rest = argv
    if name not in commands:
        print(f"{listing}\n\nerror: unknown {noun.lower()} {name!r}", file=sys.stderr)
        return 2
    return import_module(f"{package}.{name.replace('-', '_')}").main(rest)


def command_parser(program: str, name: str, line: str, epilog: str | None = None) -> argparse.ArgumentParser:
    """A command's argument parser: its usage names `python -m PROGRAM NAME`, its description is its line."""
    return argparse.ArgumentParser(prog=f"python -m {program} {name}", description=line, epilog=epilog,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
