"""python -m gpujob cuda-proof --out DIR [--models models] [--repeats 10] [--allow-cpu]    (GPU machine)

CUDAExecutionProvider against PyTorch on the shipped models (greedy tokens on 100 held-out sentences, fp32; the
classifier's labels), then the latency table (PyTorch, onnxruntime fp32 (+ fp16 if it holds) on CUDA, onnxruntime
CPU; batch 1 and 16; greedy and beam 4). Writes DIR/cuda_proof.json and DIR/latency.md (`record-latency` puts it in
the README here). Needs the exported ONNX files (`python -m export MODEL_DIR` first). Exit 1 when the translator's
tokens differ or CUDA did not run (unless --allow-cpu: the rehearsal).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from runtime.model_files import ModelLoadError

from ..cuda_proof import render_markdown, run_proof
from . import command_parser

LATENCY, REPORT = "latency.md", "cuda_proof.json"


def main(argv: list[str] | None = None) -> int:
    parser = command_parser("cuda-proof", __doc__)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--models", type=Path, default=Path("models"))
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--sentences", type=int, default=100)
    parser.add_argument("--allow-cpu", action="store_true", help="no CUDA is not a failure (the CPU rehearsal)")
    args = parser.parse_args(argv)
    try:
        report = run_proof(args.models, args.repeats, args.sentences, log=lambda line: print(line, flush=True))
    except (ModelLoadError, FileNotFoundError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / REPORT).write_text(json.dumps(report, indent=1) + "\n")
    (args.out / LATENCY).write_text(render_markdown(report))
    print(render_markdown(report))
    parity = report["translate_parity"]
    if parity["equal"] != parity["total"]:
        print(f"PARITY FAILED: {parity['total'] - parity['equal']} outputs differ", file=sys.stderr)
        return 1
    if not report["cuda"] and not args.allow_cpu:
        print(f"CUDA did not run (provider {report['accelerated']})", file=sys.stderr)
        return 1
    return 0
