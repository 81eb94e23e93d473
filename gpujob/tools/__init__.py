"""The GPU job's commands, one module each with `main(argv) -> int`; the library (gpujob/*.py) never imports them."""
from __future__ import annotations

import argparse

from runtime import cli

# name -> what it does, in one line; in the order of use
COMMANDS = {
    "pack": "here: the prepared corpus -> vocabulary, pre-tokenised pairs and valid sets, cut into carried pieces",
    "wheels": "here: the wheels the GPU machine lacks (.whl/) cut into carried pieces",
    "slim": "here: take the shipped weights out of what the device tool sends (on), put them back (off), or status",
    "weights": "here: the shipped weights cut into pieces for the cuda window (after v2 ships)",
    "plan": "here, read-only: a window's calls, commands, timeouts, carries and planned device minutes (<= 13)",
    "check": "here: the bytes each planned command carries and brings back; fails over the device's limits",
    "run": "GPU machine (or CPU): start/resume the planned runs detached, wait, hand back the chosen weights' shards",
    "train-one": "one planned run on the packed corpus (what `run` starts detached)",
    "install-wheels": "GPU machine: join and check the carried wheels, install them into /tmp/site",
    "place-weights": "GPU machine: join the carried weights into models/<model>/model.pt",
    "cuda-proof": "GPU machine: CUDA parity with PyTorch on the shipped models, then the latency table",
    "unpack": "here: find (FOLDERs or --from-shared) and check the shards, evaluate on every set, ship by the rule",
    "record-latency": "here: the proof's latency table into the README's latency section",
    "rehearse": "here: both windows' calls run on the CPU in a scratch copy, tiny budget, ship decision included",
}


def command_parser(name: str, epilog: str | None = None) -> argparse.ArgumentParser:
    return cli.command_parser("gpujob", name, COMMANDS[name], epilog)
