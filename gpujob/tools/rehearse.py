"""python -m gpujob rehearse [--scratch DIR] [--json FILE]

Both windows' calls, in order, on the CPU (gpujob/rehearsal.py): pieces prepared in a scratch copy, each call's
carry measured against 64 MiB and its device command run in a second scratch copy, the returns checked and
unpacked, the tiny candidate evaluated and the ship decision made (into a copy: models/ is never written), the
CUDA proof run with the CPU provider and its latency section recorded (into a copy of the README). A few minutes
on 2 busy cores. Exit 0 when every call ended as planned, nothing broke a limit, and the decision was not to ship.
"""
from __future__ import annotations

import json
import tempfile
from pathlib import Path

from ..rehearsal import rehearse
from . import command_parser


def main(argv: list[str] | None = None) -> int:
    parser = command_parser("rehearse", __doc__)
    parser.add_argument("--scratch", type=Path, help="scratch folder (default: a temporary one, removed after)")
    parser.add_argument("--json", type=Path, help="write the calls' records and the decision here")
    args = parser.parse_args(argv)
    repo = Path.cwd()
    with tempfile.TemporaryDirectory(prefix="gpujob-rehearsal-") as tmp:
        result = rehearse(repo, args.scratch or Path(tmp), log=lambda line: print(line, flush=True))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    print(f"decision: {'SHIPPED (wrong for a tiny candidate)' if result['shipped'] else 'do not ship'}; "
          f"models/ untouched: {result['models_untouched']}; latency section recorded: {result['latency_recorded']};"
          f" {result['seconds']:.0f} s; rehearsal {'passed' if result['ok'] else 'FAILED'}")
    return 0 if result["ok"] else 1
