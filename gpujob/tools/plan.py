"""python -m gpujob plan [--window translate|cuda]

Read-only (needs no slim, changes nothing): every call of the window with its command, timeout_s, carry and the
device minutes it is planned to use (start, transfers and the warm gaps counted), and last the window's planned
total as "N.N device minutes" (before it, for the translate window, how many times the run sees each pair of the
recorded pack at the measured speed). Exit 1 when the total is over 13 (the budget: 15 less room to repeat a short
call). Carried bytes are configs/gpujob/pieces.json's.
"""
from __future__ import annotations

from pathlib import Path

from ..carried import read_pieces_manifest
from ..packed_task import epochs_line
from ..plan import BUDGET_MIN, V2_CONFIG, render, windows
from . import command_parser


def main(argv: list[str] | None = None) -> int:
    parser = command_parser("plan", __doc__)
    parser.add_argument("--window", choices=["translate", "cuda"], default="translate")
    args = parser.parse_args(argv)
    manifest = read_pieces_manifest(Path.cwd())
    window = windows()[args.window]
    carried = {c.name: manifest.carried_bytes(c.name) for c in window.calls}
    corpus = manifest.info.get("corpus")
    if args.window == "translate" and corpus:
        print(epochs_line(corpus, V2_CONFIG))
    print(render(window, carried))  # last: its final line is the window's total
    return 0 if window.total_minutes(carried) <= BUDGET_MIN else 1
