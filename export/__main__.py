"""python -m export MODEL_DIR [--precision fp32,int8] [--opset N] [--if-stale] [--agreement-sentences N]
python -m export COMMAND [ARGS...]    (triton, ct2, ops: COMMANDS below)

Writes MODEL_DIR/onnx/<graph>.<precision>.onnx and export_report.json; exits non-zero with the
failed checks (and their max differences) when validation fails.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from runtime.cli import dispatch, usage
from runtime.spec import PRECISIONS
from tx import CheckpointError

from .onnx_export import DEFAULT_OPSET
from .pipeline import ExportOptions, add_shown, export_model_dir, missing_shown, planned_files
from .quantize import check_block_size
from .report import graph_layout, stale_reason

# `python -m export COMMAND`: name -> what it does, in one line; each is export/NAME.py's main(argv)
COMMANDS = {
    "triton": "a Triton Inference Server model repository from exported model directories",
    "ct2": "the translator in CTranslate2 (the optional speed peer), checked against PyTorch",
    "ops": "rewrite the one-node graphs the runtime ships (runtime/ops/)",
    "graph_pool": "a helper that exports graphs beside an export (started by the export itself)",
}


def parse_precisions(text: str) -> tuple[str, ...]:
    chosen = tuple(p.strip() for p in text.split(",") if p.strip())
    unknown = [p for p in chosen if p not in PRECISIONS]
    if unknown or not chosen:
        raise argparse.ArgumentTypeError(f"precisions are a comma-separated subset of {','.join(PRECISIONS)}, "
                                         f"got {text!r}")
    return chosen


def summary(result: dict) -> str:
    """One system's agreement result as `accuracy 0.7782, agreement 0.9984, ...` (nested scores per direction)."""
    parts = []
    for key in ("bleu", "accuracy", "agreement", "bleu_delta", "accuracy_delta"):
        value = result.get(key)
        if isinstance(value, dict):
            parts += [f"{key.replace('_', ' ')} {k} {v:g}" for k, v in value.items()]
        elif value is not None:
            parts.append(f"{key.replace('_', ' ')} {value:g}")
    return ", ".join(parts)


def main(argv: list[str] | None = None) -> int:
    """`python -m export COMMAND ...` runs a command of export/commands.py; anything else exports a model dir."""
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in COMMANDS:
        return dispatch(argv, "export", "COMMAND", COMMANDS, "commands:", "export")
    return export_main(argv)


def export_main(argv: list[str]) -> int:
    """python -m export MODEL_DIR ...: export, quantise and validate one model directory."""
    parser = argparse.ArgumentParser(prog="python -m export", description=__doc__.split("\n\n")[0],
                                     epilog=usage("export", "COMMAND", COMMANDS, "commands:"),
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model_dir", type=Path, help="a model directory (config.json, model.pt, tokenizer.json)")
    parser.add_argument("--precision", type=parse_precisions, default=PRECISIONS,
                        help="comma-separated, from fp32,int8 (default both; fp32 is always written)")
    parser.add_argument("--opset", type=int, default=DEFAULT_OPSET, help=f"ONNX opset (default {DEFAULT_OPSET})")
    parser.add_argument("--if-stale", action="store_true",
                        help="do nothing when the export is complete, passed, and newer than the model files")
    parser.add_argument("--per-tensor", action="store_true",
                        help="one int8 weight scale per tensor (default: per output channel, measured better)")
    parser.add_argument("--weight-bits", type=int, choices=(7, 8),
                        help="int8 weight range (default 8; 7 = the old signed reduce_range weights)")
    parser.add_argument("--weight-type", choices=("int8", "uint8"),
                        help="int8 weight type (default: int8 where this CPU has VNNI, else uint8; see quantize.py)")
    parser.add_argument("--block-size", type=int, default=None,
                        help="0: per-row int8 MatMulIntegers; 16..256: blockwise 8-bit MatMulNBits with this "
                             "block (default: 64 where this CPU has VNNI, else 0; see export/quantize.py)")
    parser.add_argument("--keep-fp32", default="",
                        help="comma-separated torch module prefixes left fp32 in int8 files (e.g. output)")
    parser.add_argument("--no-row-output", action="store_true",
                        help="with blockwise int8: the generator blockwise too, instead of one u8 x s8 GEMM with "
                             "activations per row (slower at batch; the files then load on CPUs without VNNI)")
    parser.add_argument("--int8-embeddings", action="store_true",
                        help="with per-row int8 (no VNNI, or --block-size 0): the embedding tables int8 too (smaller "
                             "files, less faithful; default fp32)")
    parser.add_argument("--agreement-sentences", type=int, default=500,
                        help="held-out sentences translated by PyTorch and ONNX, each direction (default 500)")
    parser.add_argument("--data-dir", type=Path, default=Path("data/processed"),
                        help="where translate/test.tsv and sentiment/test.tsv are looked for")
    parser.add_argument("--threads", type=int, default=None, help="onnxruntime threads for the agreement check")
    parser.add_argument("--processes", type=int, default=None,
                        help="graphs exported side by side, this process and helpers (default: one per core, at "
                             "most 4; tracing a graph uses one core)")
    parser.add_argument("--no-quality", action="store_true", help="skip the text-level agreement check")
    parser.add_argument("--no-walkthrough", action="store_true",
                        help="skip the fp32 graphs that expose every intermediate tensor (the Walkthrough page)")
    parser.add_argument("--no-experiments", action="store_true",
                        help="skip the fp32 graphs with a gate on every attention head and the output layer alone "
                             "(the Experiments page)")
    parser.add_argument("--traced-attention", action="store_true",
                        help="the served graphs' attention as traced ops instead of onnxruntime's fused "
                             "MultiHeadAttention (a fallback for a provider whose fused kernel refuses them)")
    args = parser.parse_args(argv)
    if args.agreement_sentences < 1:
        parser.error("--agreement-sentences must be >= 1")
    if args.processes is not None and args.processes < 1:
        parser.error("--processes must be >= 1")
    if args.block_size is not None:
        try:
            check_block_size(args.block_size)
        except ValueError as e:
            parser.error(f"--block-size: {e}")

    options = ExportOptions(precisions=args.precision, opset=args.opset, per_channel=not args.per_tensor,
                            weight_bits=args.weight_bits, weight_type=args.weight_type,
                            keep_fp32=tuple(m.strip() for m in args.keep_fp32.split(",") if m.strip()),
                            block_size=args.block_size, row_output=not args.no_row_output,
                            int8_embeddings=args.int8_embeddings,
                            data_dir=args.data_dir, agreement_sentences=args.agreement_sentences,
                            threads=args.threads, check_quality=not args.no_quality,
                            walkthrough=not args.no_walkthrough, experiments=not args.no_experiments,
                            fused_attention=not args.traced_attention, processes=args.processes)
    try:
        if args.if_stale:
            precisions = ("fp32", *options.precisions)
            layout = graph_layout(options.fused_attention)
            planned = planned_files(args.model_dir, precisions, options.walkthrough, options.experiments)
            reason = stale_reason(args.model_dir, list(precisions), planned, layout)
            if reason is None:
                print(f"{args.model_dir}/onnx is up to date")
                return 0
            missing = missing_shown(args.model_dir, options.walkthrough, options.experiments)
            if missing and stale_reason(args.model_dir, list(precisions),
                                        planned_files(args.model_dir, precisions, False, False), layout) is None:
                # an export from before the walkthrough or experiment graphs: add them, keep the served graphs
                print(f"adding {', '.join(missing)} to {args.model_dir}/onnx ({reason})")
                return 0 if add_shown(args.model_dir, missing, args.opset, processes=args.processes) else 1
            print(f"exporting {args.model_dir}: {reason}")
        report = export_model_dir(args.model_dir, options)
    except CheckpointError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for warning in report.warnings:
        print(f"warning: {warning}")
    quality = report.quality.get("translation") or report.quality.get("sentiment")
    if quality and quality.get("systems"):
        print(f"agreement on held-out text ({quality.get('origin', '?')}):")
        for name, result in quality["systems"].items():
            print(f"  {name}: {summary(result)}")
    if not report.ok:
        print(f"export of {args.model_dir} FAILED validation:", file=sys.stderr)
        for failure in report.failures:
            print(f"  {failure}", file=sys.stderr)
        return 1
    print(f"export of {args.model_dir} passed; report in {args.model_dir}/onnx/export_report.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
