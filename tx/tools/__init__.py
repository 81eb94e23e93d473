"""The command-line tools, one module each with `main(argv) -> int`: `python -m tx TOOL ...` runs one.

A tool reads its arguments, calls the library and prints; what it does lives in the library (`tx.run_setup`,
`tx.tasks`, `tx.trainer`, `tx.evaluation`, `tx.shipping`, `tx.baselines`, `tx.calibration`, `tx.confidence`,
`runtime.metrics_file`), which never imports a tool (tests/test_layering.py). The benchmarks: `python -m bench`.
"""
from __future__ import annotations

import argparse

from runtime.cli import command_parser

# name -> what it does, in one line (`python -m tx --help` lists them; each tool's --help starts with its line)
TOOLS = {
    "train": "train a task's model on the prepared data: translate, sentiment or pretrain (masked LM)",
    "evaluate": "score a model directory on a split (BLEU/chrF, accuracy/F1); sentiment CV and n-gram baselines",
    "ship": "turn an evaluation into the metrics.json and samples.tsv a shipped model directory carries",
    "calibration": "fit a sentiment model's temperature on valid, report ECE before and after",
    "confidence": "measure what a translation's confidence says about it being right (hand-judged outputs)",
    "toy_worker": "the Train-your-own page's child process: train a toy model into a run folder, or serve-check it",
}


def tool_parser(name: str, epilog: str | None = None) -> argparse.ArgumentParser:
    """The argument parser of tool `name`: its usage line names `python -m tx NAME`, its description is its line."""
    return command_parser("tx", name, TOOLS[name], epilog)
