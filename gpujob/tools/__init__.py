"""The GPU job's commands, one module each with `main(argv) -> int`; the library (gpujob/*.py) never imports them."""
from __future__ import annotations

import argparse

from tx import cli

# name -> what it does, in one line; in the order of use
COMMANDS = {
    "pack": "here: the prepared corpus -> vocabulary, pre-tokenised pairs and valid sets, cut into carried pieces",
    "wheels": "here: the wheels the GPU machine lacks (.whl/) cut into carried pieces",
    "slim": "here: take the shipped weights out of what the device tool sends (on), put them back (off), or status",
    "check": "here: the bytes each planned command carries and brings back; fails over the device's limits",
    "run": "GPU machine (or CPU): start/resume the planned runs detached, wait, hand back the chosen weights' shards",
    "train-one": "one planned run on the packed corpus (what `run` starts detached)",
    "install-wheels": "GPU machine: join and check the carried wheels, install them into /tmp/site",
    "unpack": "here: join and check the shards, evaluate on every set, ship only if better on every one",
}


def command_parser(name: str, epilog: str | None = None) -> argparse.ArgumentParser:
    return cli.command_parser("gpujob", name, COMMANDS[name], epilog)
