"""One model directory -> its ONNX files, validated, with export_report.json.

Steps: export every graph of the model in fp32, quantise each to int8 when asked, check every
file (ONNX checker, interface, values vs PyTorch), compare decoded outputs on held-out text,
record sizes and hashes. Any failed check makes the report `ok: false` (the CLI exits non-zero).
"""
from __future__ import annotations

import datetime
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch

from runtime.cpu import cpu_has_vnni
from runtime.model_files import sha256_of
from runtime.spec import (
    ONNX_DIR,
    REPORT_FILE,
    SPEC_VERSION,
    GraphSpec,
    ModelShape,
    graphs_for,
    walkthrough_graphs,
)
from tx import load_model_dir, read_model_config
from tx.checkpoint import CONFIG_FILE, TOKENIZER_FILE, WEIGHTS_FILE, atomic_write

from .graph_job import SHOWN_PRECISION, export_one, shown_graphs
from .graph_pool import GraphPool, default_processes
from .onnx_export import DEFAULT_OPSET, EXPORTER
from .quality import sentiment_quality, translation_quality
from .quantize import Int8Scheme, default_scheme
from .report import ExportReport, file_entries, graph_layout, read_report, versions


@dataclass
class ExportOptions:
    precisions: tuple[str, ...] = ("fp32", "int8")  # fp32 is always written: int8 is made from it
    opset: int = DEFAULT_OPSET
    per_channel: bool = True  # int8 scales per output channel (measured better than per tensor: quantize.py)
    weight_bits: int | None = None  # int8 weights: 8 or 7 (reduce_range); None = 8
    weight_type: str | None = None  # "int8" | "uint8"; None = the measured default for this CPU (quantize.py)
    keep_fp32: tuple[str, ...] = ()  # module-path prefixes left in fp32 (e.g. "output": the generator)
    block_size: int | None = None  # 0: per-channel dynamic MatMuls; 16..256: blockwise MatMulNBits; None: default
    row_output: bool = True  # with blockwise MatMulNBits on a VNNI CPU: the generator per-row (quantize.py)
    int8_embeddings: bool = False  # per-row int8: the embedding tables int8 too (smaller, less faithful)
    data_dir: Path = Path("data/processed")  # where <task>/test.tsv is looked for
    agreement_sentences: int = 500  # held-out translation sentences (each in both directions)
    threads: int | None = None  # onnxruntime threads for the agreement runs
    check_quality: bool = True  # False skips the text-level agreement (tests, quick iterations)
    walkthrough: bool = True  # also the fp32 graphs with every intermediate tensor (the Walkthrough page)
    experiments: bool = True  # also the fp32 graphs with head gates and the output layer alone (Experiments page)
    fused_attention: bool = True  # the served graphs as export/fused_graphs.py rebuilds them
    processes: int | None = None  # graphs exported side by side (export/graph_pool.py); None: one per core, <= 4


def int8_scheme(options: ExportOptions, vnni: bool) -> Int8Scheme:
    """The int8 scheme for this export: the measured default for this CPU (`default_scheme`) unless asked
    otherwise. Asking for 7-bit weights or a weight type means the dynamic MatMuls they describe (unless a
    block size is asked too); asking for 7-bit weights means the old signed, reduce_range ones."""
    default = default_scheme(vnni)
    bits = options.weight_bits or default.weight_bits
    weight_type = options.weight_type or ("int8" if options.weight_bits == 7 else default.weight_type)
    block_size = options.block_size
    if block_size is None:
        block_size = 0 if options.weight_bits or options.weight_type or not options.per_channel \
            else default.block_size
    if block_size:  # MatMulNBits' weights are signed 8-bit with a scale per block; the embeddings stay fp32
        return Int8Scheme(True, 8, "int8", tuple(options.keep_fp32), block_size,
                          row_output=options.row_output and default.row_output)
    return Int8Scheme(options.per_channel, bits, weight_type, tuple(options.keep_fp32), block_size,
                      int8_embeddings=options.int8_embeddings)


def describe_scheme(scheme: Int8Scheme, vnni: bool) -> dict[str, object]:
    """What the report records about the int8 scheme, with the reason for its weight type."""
    if scheme.block_size:
        why = (f"blockwise MatMulNBits, 8-bit weights with a scale per {scheme.block_size} input rows, int8 "
               "activations per row and block, embeddings fp32: measured the most faithful int8 "
               + ("and fastest at batch 1 on this CPU with VNNI" if vnni else
                  "(without VNNI its kernels run little faster than fp32)")
               + ("; the generator as one u8 x s8 GEMM with activations per row and weights per column: more "
                  "faithful and faster at batch, its files need VNNI" if scheme.row_output else "")
               + " (docs/export-and-runtime.md)")
    elif scheme.weight_type == "uint8":
        why = ("unsigned 8-bit weights by activations quantised per row: onnxruntime's u8 x u8 MatMulInteger sums "
               "in int32 on any CPU (no VNNI needed) and no activation scale spans the batch, so a sentence's "
               "translation does not depend on its batch mates; "
               + ("embeddings int8 (the smallest files)" if scheme.int8_embeddings else
                  "embeddings fp32, measured more faithful than int8 tables")
               + " (docs/export-and-runtime.md)")
    elif scheme.weight_bits == 7:
        why = "signed 7-bit weights (reduce_range): safe from the int16 saturation of CPUs without VNNI"
    elif vnni:
        why = "signed 8-bit weights by activations quantised per row: this CPU has VNNI (int32 accumulation)"
    else:
        why = "signed 8-bit weights without VNNI, as asked: the int8 files will refuse to load on this CPU"
    # how the activations are scaled: what makes a sentence's translation independent of its batch mates (a file
    # from before had one scale per tensor, spanning the batch: export/report.py's stale_reason re-exports it)
    activations = "per row and block" if scheme.block_size else "per row"
    return scheme.as_dict() | {"cpu_vnni": vnni, "activations": activations, "why": why}


def planned_files(model_dir: Path, precisions: tuple[str, ...], walkthrough: bool = True,
                  experiments: bool = True) -> list[str]:
    stored = read_model_config(model_dir)
    shape = ModelShape.from_config(stored["kind"], stored["config"])
    files = [spec.file_name(p) for spec in graphs_for(shape) for p in precisions]
    return files + [spec.file_name(SHOWN_PRECISION) for spec in shown_graphs(shape, walkthrough, experiments)]


def export_graphs(model, config: dict, onnx_dir: Path, jobs: list[tuple[GraphSpec, list[str]]],
                  scheme: Int8Scheme | None, tokenizer_sha: str, opset: int,
                  log: Callable[[str], None], fused_attention: bool = True, model_dir: Path | None = None,
                  processes: int = 1) -> tuple[list[dict], list[str]]:
    """Export, quantise and validate each (spec, precisions); returns the report's graph entries and failures.
    processes > 1 (with `model_dir`, the directory `model` was loaded from): graphs are exported side by side
    in helper processes too (export/graph_pool.py); the entries, failures and lines keep the jobs' order."""
    entries, failures = [], []

    def emit(result: dict) -> None:
        entries.extend(result["entries"])
        failures.extend(result["problems"])
        log(result["line"])

    def export_here(index: int) -> dict:
        spec, graph_precisions = jobs[index]
        return export_one(model, config, onnx_dir, spec, graph_precisions, scheme, tokenizer_sha, opset,
                          fused_attention)

    helpers = min(processes, len(jobs)) - 1 if model_dir is not None else 0
    pool = GraphPool(len(jobs), export_here, lambda i: {"graph": jobs[i][0].name, "precisions": jobs[i][1]}, emit)
    if helpers <= 0:
        pool.run_here()
        return entries, failures
    setup = {"model_dir": str(model_dir), "onnx_dir": str(onnx_dir), "scheme": scheme and scheme.as_dict(),
             "tokenizer_sha": tokenizer_sha, "opset": opset, "fused_attention": fused_attention,
             "threads": max(1, torch.get_num_threads() // (helpers + 1))}
    pool.run(setup, helpers)
    return entries, failures


def export_shown(model_dir: str | Path, names: list[str] | None = None, opset: int = DEFAULT_OPSET,
                 log: Callable[[str], None] = print, processes: int | None = None) -> tuple[list[dict], list[str]]:
    """Only the shown graphs (`shown_graphs`; those named in `names`, None = all), exported and validated into
    model_dir/onnx; their report entries and failures."""
    model_dir = Path(model_dir)
    stored = read_model_config(model_dir)
    shape = ModelShape.from_config(stored["kind"], stored["config"])
    tokenizer_path = model_dir / TOKENIZER_FILE
    tokenizer_sha = sha256_of(tokenizer_path) if tokenizer_path.is_file() else ""
    (model_dir / ONNX_DIR).mkdir(parents=True, exist_ok=True)
    jobs = [(spec, [SHOWN_PRECISION]) for spec in shown_graphs(shape) if names is None or spec.name in names]
    return export_graphs(load_model_dir(model_dir), stored["config"], model_dir / ONNX_DIR, jobs, None, tokenizer_sha,
                         opset, log, model_dir=model_dir, processes=processes or default_processes(len(jobs)))


def export_walkthrough(model_dir: str | Path, opset: int = DEFAULT_OPSET,
                       log: Callable[[str], None] = print) -> tuple[list[dict], list[str]]:
    """Only the walkthrough graphs, exported and validated into model_dir/onnx; their report entries and failures."""
    stored = read_model_config(Path(model_dir))
    shape = ModelShape.from_config(stored["kind"], stored["config"])
    return export_shown(model_dir, [spec.name for spec in walkthrough_graphs(shape)], opset, log)


def record_graphs(model_dir: str | Path, entries: list[dict], failures: list[str]) -> bool:
    """Add graphs exported on their own (their files already in model_dir/onnx) to its passed export report,
    replacing older entries of the same graphs. Returns whether the report still passes."""
    model_dir = Path(model_dir)
    report = read_report(model_dir)
    if not report or not report.get("ok"):
        raise ValueError(f"{model_dir}: no passed export to add graphs to; run the whole export")
    names = {entry["graph"] for entry in entries}
    report["graphs"] = [g for g in report.get("graphs", []) if g.get("graph") not in names] + entries
    report["failures"] = report.get("failures", []) + failures
    report["ok"] = not report["failures"]
    report["files"] = file_entries(model_dir / ONNX_DIR)
    text = json.dumps(report, indent=2, ensure_ascii=False) + "\n"
    atomic_write(model_dir / ONNX_DIR / REPORT_FILE, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))
    return report["ok"]


def add_walkthrough(model_dir: str | Path, opset: int = DEFAULT_OPSET, log: Callable[[str], None] = print) -> bool:
    """Add the walkthrough graphs to a passed export made before they existed (the served graphs stay as they
    are, so nothing is re-exported or re-checked). Returns whether they passed validation."""
    stored = read_model_config(Path(model_dir))
    shape = ModelShape.from_config(stored["kind"], stored["config"])
    return add_shown(model_dir, [spec.name for spec in walkthrough_graphs(shape)], opset, log)


def missing_shown(model_dir: str | Path, walkthrough: bool = True, experiments: bool = True) -> list[str]:
    """The shown graphs (`shown_graphs`) whose file is missing or older than the model's files: what
    `python -m export --if-stale` adds to an export whose served graphs are up to date."""
    model_dir = Path(model_dir)
    stored = read_model_config(model_dir)
    shape = ModelShape.from_config(stored["kind"], stored["config"])
    sources = [model_dir / name for name in (CONFIG_FILE, WEIGHTS_FILE, TOKENIZER_FILE) if (model_dir / name).is_file()]
    newest = max((p.stat().st_mtime for p in sources), default=0.0)
    missing = []
    for spec in shown_graphs(shape, walkthrough, experiments):
        path = model_dir / ONNX_DIR / spec.file_name(SHOWN_PRECISION)
        if not path.is_file() or path.stat().st_mtime < newest:
            missing.append(spec.name)
    return missing


def add_shown(model_dir: str | Path, names: list[str], opset: int = DEFAULT_OPSET,
              log: Callable[[str], None] = print, processes: int | None = None) -> bool:
    """Add shown graphs (walkthrough, experiments) to a passed export made before they existed (the served graphs
    stay as they are, so nothing is re-exported or re-checked). Returns whether they passed validation."""
    report = read_report(Path(model_dir))
    if not report or not report.get("ok"):
        raise ValueError(f"{model_dir}: no passed export to add the graphs {', '.join(names)} to; "
                         "run the whole export")
    return record_graphs(model_dir, *export_shown(model_dir, names, opset, log, processes))


def export_model_dir(model_dir: str | Path, options: ExportOptions,
                     log: Callable[[str], None] = print) -> ExportReport:
    model_dir = Path(model_dir)
    stored = read_model_config(model_dir)
    model = load_model_dir(model_dir)
    shape = ModelShape.from_config(stored["kind"], stored["config"])
    onnx_dir = model_dir / ONNX_DIR
    onnx_dir.mkdir(parents=True, exist_ok=True)
    tokenizer_path = model_dir / TOKENIZER_FILE
    tokenizer_sha = sha256_of(tokenizer_path) if tokenizer_path.is_file() else ""
    precisions = ["fp32"] + [p for p in options.precisions if p != "fp32"]
    report = ExportReport(
        model_dir=str(model_dir), kind=stored["kind"], ok=False,
        created=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"), exporter=EXPORTER,
        opset=options.opset, spec_version=SPEC_VERSION, precisions=precisions, per_channel=options.per_channel,
        versions=versions(), graph_layout=graph_layout(options.fused_attention))
    vnni = cpu_has_vnni()  # read at export time: the scheme depends on the CPU that makes (and serves) the files
    scheme = int8_scheme(options, vnni)
    report.int8 = describe_scheme(scheme, vnni)
    # The walkthrough and experiment graphs are shown, not served: fp32 only (an int8 copy would show other numbers
    # than the model's, and nothing runs it).
    jobs = [(spec, precisions) for spec in graphs_for(shape)]
    jobs += [(spec, [SHOWN_PRECISION]) for spec in shown_graphs(shape, options.walkthrough, options.experiments)]
    entries, failures = export_graphs(model, stored["config"], onnx_dir, jobs, scheme, tokenizer_sha, options.opset,
                                      log, options.fused_attention, model_dir,
                                      options.processes or default_processes(len(jobs)))
    report.graphs += entries
    report.failures += failures
    if options.check_quality and not report.failures:
        if stored["kind"] == "seq2seq":
            section, failures, warnings = translation_quality(model_dir, options.data_dir, precisions,
                                                              options.agreement_sentences, options.threads)
            report.quality["translation"] = section
        else:
            section, failures, warnings = sentiment_quality(model_dir, options.data_dir, precisions, 10**9,
                                                            options.threads)
            report.quality["sentiment"] = section
        report.failures += failures
        report.warnings += warnings
    elif not options.check_quality:
        report.warnings.append("text-level agreement not checked (check_quality=False)")
    report.files = file_entries(onnx_dir)
    report.ok = not report.failures
    report.write(model_dir)
    return report
