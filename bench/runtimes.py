"""PyTorch eager vs onnxruntime fp32/int8 (vs CTranslate2 fp32/int8), same threads, interleaved in one run.

    python -m bench runtimes MODEL_DIR... [--threads 2] [--repeats 30] [--warmup 5] [--json out.json]
        [--cases b1x16,greedy-b1,...] [--max-len N] [--provider cpu|auto|cuda] [--int8-scheme vnni|no-vnni]

Classifier: one model call at batch 1 × 16/64/256 tokens and batch 32 × 64 (the text wrappers'
`logits` functions, so tokenising is left out). Translation: `translate()` end to end, greedy
and beam 4, batch 1 and 16, on held-out sentences (test.tsv, else samples.tsv, else a fixed
list) in the model's first direction; PyTorch decodes with its KV cache (tx.decoding.TorchBackend).
Each round runs every case and system once (systems on the same input), in rotating order, so drifts
in machine load hit all alike (batch-16 cases run in fewer rounds, spread over the whole measurement);
p10/p50/p90 are over the rounds after warm-up; "× torch" is PyTorch's p50 over the system's, "÷ CTranslate2"
CTranslate2's over onnxruntime's at the same precision (when ctranslate2 is installed), CTranslate2 at its
faster thread setting: with --threads above 1 it also runs at 1 thread (its OpenMP threads can make that
the faster: docs/export-and-runtime.md#ctranslate2). The 1-minute load average is recorded before and after;
`distrusted` names each ratio whose two p10-p90 ranges overlap, or every ratio when other work held more than
half the cores (bench/stats.py). Also recorded: provider, threads, CPU, versions, the fused/contrib
operators onnxruntime's graph optimiser left in each graph, and the int8 quality deltas from export_report.json;
the targets and the printed table are bench/report.py's.
--int8-scheme times the int8 files of the scheme the export picks on a CPU with or without VNNI (quantised afresh
into a temporary copy of the model directory) instead of the exported ones: the non-VNNI scheme's cost measured on a
VNNI machine (docs/export-and-runtime.md#int8-schemes).
Writes MODEL_DIR/onnx/bench.json (read by the app) unless --json names one file for all (or --int8-scheme is given).
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Hashable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort

from export.feeds import FIRST_PLAIN_ID
from export.quality import held_out_texts
from export.quantize import default_scheme
from export.report import versions
from runtime import OnnxSentimentClassifier, OnnxTranslator
from runtime.files import atomic_write
from runtime.model_files import ModelLoadError
from runtime.providers import PROVIDER_CHOICES, session_options
from runtime.spec import ONNX_DIR, PRECISIONS, ModelShape, graphs_for
from runtime.timing import interleaved
from tx import read_model_config
from tx.evaluation import BENCH_SENTENCES
from tx.inference import SentimentAnalyzer, Translator, torch_threads

from . import bench_parser
from .report import check_targets, int8_quality, table
from .stats import CaseResult, distrusted, machine_busy, summarise

SYSTEMS = ("torch", "ort-fp32", "ort-int8")
CLASSIFIER_CASES = [(1, 16), (1, 64), (1, 256), (32, 64)]  # (batch, tokens)
TRANSLATION_CASES = [("greedy", 1), ("greedy", 16), ("beam", 1), ("beam", 16)]  # (method, batch)
BEAM = 4
# Beam cases stop a sentence once BEAM x PATIENCE hypotheses have finished, in every system: CTranslate2's rule (its
# default patience). tx's own default stops only when no live beam can still win (exact), which on held-out
# sentences decodes 15-31% more rows; comparing engines means comparing the same search (--patience exact: tx's).
PATIENCE = 1.0


def translation_case_name(method: str, batch: int) -> str:
    return f"{'beam' + str(BEAM) if method == 'beam' else method}-b{batch}"


def classifier_case_name(batch: int, length: int) -> str:
    return f"b{batch}x{length}"


def onnx_systems(make: Callable[[str], Any], precisions: tuple[str, ...], notes: list[str]) -> dict[str, Any]:
    """ort-<precision> -> wrapper, leaving out (with a note) a precision whose files were not exported."""
    systems = {}
    for precision in precisions:
        try:
            systems[f"ort-{precision}"] = make(precision)
        except ModelLoadError as e:
            if precision == "fp32":
                raise
            notes.append(f"ort-{precision} not measured: {e}")
    return systems


def bench_classifier(model_dir: Path, threads: int, repeats: int, warmup: int, provider: str = "cpu",
                     cases: set[str] | None = None) -> tuple[list[CaseResult], dict]:
    torch_side = SentimentAnalyzer.from_dir(model_dir)
    notes: list[str] = []
    wrappers = onnx_systems(lambda p: OnnxSentimentClassifier(model_dir, provider, p, threads), PRECISIONS, notes)
    systems: dict[str, Callable] = {"torch": torch_side.model_logits} | {n: w.logits for n, w in wrappers.items()}
    config = torch_side.model.config
    rng = np.random.default_rng(0)
    calls: dict[Hashable, Callable[[int], int]] = {}
    names = []
    for batch, wanted in CLASSIFIER_CASES:
        if cases is not None and classifier_case_name(batch, wanted) not in cases:
            continue
        length = min(wanted, config.max_len)  # a model with a shorter positional table: its longest input
        name = classifier_case_name(batch, length)  # what was measured, e.g. b1x128 for b1x256
        if name in names:
            continue
        names.append(name)
        ids = rng.integers(FIRST_PLAIN_ID, config.vocab_size, size=(batch, length), dtype=np.int64)
        mask = np.ones((batch, length), dtype=bool)

        def call(r: int, fn: Callable, ids=ids, mask=mask) -> int:
            fn(ids, mask, False)
            return ids.size

        calls |= {(name, n): (lambda r, fn=fn, c=call: c(r, fn)) for n, fn in systems.items()}
    measured = interleaved(calls, repeats, warmup)  # each round: every case and system once
    results = [row for name in names for row in summarise(name, {n: measured[(name, n)] for n in systems})]
    first = wrappers["ort-fp32"]
    return results, {"provider": first.provider, "provider_note": first.provider_note,
                     "systems": list(systems), "notes": notes}


def bench_translation(model_dir: Path, threads: int, repeats: int, warmup: int, data_dir: Path,
                      provider: str = "cpu", cases: set[str] | None = None,
                      max_len: int | None = None, patience: float | None = PATIENCE) -> tuple[list[CaseResult], dict]:
    torch_side = Translator.from_dir(model_dir)
    src_lang, tgt_lang = torch_side.directions[0]
    texts = held_out_texts(data_dir / "translate", model_dir, {src_lang}, 64)
    if texts.rows:
        sentences, origin = [r[src_lang] for r in texts.rows], texts.origin
    else:
        sentences, origin = BENCH_SENTENCES, "tx.evaluation.BENCH_SENTENCES"
    notes: list[str] = []
    wrappers = onnx_systems(lambda p: OnnxTranslator(model_dir, provider, p, threads), PRECISIONS, notes)
    systems: dict[str, Any] = {"torch": torch_side} | wrappers | ct2_systems(model_dir, threads, notes)
    calls: dict[Hashable, Callable[[int], int]] = {}
    runs: dict[Hashable, tuple[int, int]] = {}
    names = []
    for method, batch in TRANSLATION_CASES:
        name = translation_case_name(method, batch)
        if cases is not None and name not in cases:
            continue
        names.append(name)

        def call(r: int, system: Any, method=method, batch=batch) -> int:
            chosen = [sentences[(r * batch + i) % len(sentences)] for i in range(batch)]
            out = system.translate(chosen, src_lang=src_lang, tgt_lang=tgt_lang, method=method, beam=BEAM,
                                   max_len=max_len, patience=patience)
            return sum(len(t.token_ids) for t in out)

        for n, s in systems.items():
            calls[(name, n)] = lambda r, s=s, c=call: c(r, s)
            if batch > 1:  # fewer runs at batch 16: each call is ~16x longer and its p50 settles faster
                runs[(name, n)] = (max(min(1, warmup), warmup // 2), max(min(5, repeats), repeats // 3))
    measured = interleaved(calls, repeats, warmup, runs=runs)  # each round: every case and system once
    results = [row for name in names for row in summarise(name, {n: measured[(name, n)] for n in systems})]
    first = wrappers["ort-fp32"]
    notes.append(f"beam cases stop a sentence once {BEAM} x {patience} hypotheses have finished in every system "
                 "(CTranslate2's rule)" if patience is not None else
                 "beam cases: tx stops a sentence only when no live beam can beat its best (exact, the app's "
                 "default); CTranslate2 has no such rule and stops once 4 hypotheses have finished")
    return results, {"direction": f"{src_lang}-{tgt_lang}", "sentences": origin, "max_len": max_len,
                     "patience": patience, "provider": first.provider, "provider_note": first.provider_note,
                     "systems": list(systems), "notes": notes}


def ct2_systems(model_dir: Path, threads: int, notes: list[str]) -> dict[str, Any]:
    """ct2-fp32 / ct2-int8 over the same weights when ctranslate2 is installed (the strongest CPU peer)."""
    try:
        import ctranslate2  # noqa: F401
    except ImportError:
        notes.append("CTranslate2 not measured: `pip install ctranslate2` adds it (export.ct2)")
        return {}
    from export.ct2 import Ct2TextTranslator, convert

    folder = Path(tempfile.mkdtemp(prefix="tx-bench-ct2-"))
    systems = {}
    for precision, quantization in (("fp32", "float32"), ("int8", "int8")):
        out = convert(model_dir, folder / precision, quantization)
        systems[f"ct2-{precision}"] = Ct2TextTranslator(model_dir, out, threads)
        if threads > 1:
            # Its best setting, not only ours: its OpenMP threads can make 1 intra-op thread the faster
            # (docs/export-and-runtime.md#ctranslate2).
            systems[f"ct2-{precision}-t1"] = Ct2TextTranslator(model_dir, out, 1)
    notes.append("CTranslate2 beam search normalises scores by length^α, tx by GNMT's ((5 + length) / 6)^α: beam "
                 "outputs may differ (92% identical at patience 1, fp32, 500 held-out sentences; greedy ones are "
                 "identical in fp32)")
    if threads > 1:
        notes.append("CTranslate2 also ran at 1 thread (ct2-<p>-t1); ÷ CTranslate2 compares with its faster setting")
    return systems


def optimized_ops(path: Path, threads: int) -> dict[str, int]:
    """Operators outside the default ONNX domain (fusions and contrib ops: FusedMatMul, SkipLayerNormalization,
    MatMulIntegerToFloat, ...) in the graph onnxruntime actually runs after its CPU optimisations."""
    with tempfile.TemporaryDirectory() as tmp:
        options = session_options(threads)
        options.optimized_model_filepath = str(Path(tmp) / "optimized.onnx")
        ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        model = onnx.load(options.optimized_model_filepath)
    counts = Counter(n.op_type for n in model.graph.node if n.domain not in ("", "ai.onnx"))
    return dict(sorted(counts.items()))


def graph_fusions(model_dir: Path, threads: int) -> dict[str, dict[str, int]]:
    """{file name: contrib/fused operator counts} for the lean graphs (those the benchmark times)."""
    stored = read_model_config(model_dir)
    lean = [spec for spec in graphs_for(ModelShape.from_config(stored["kind"], stored["config"])) if not spec.explain]
    paths = [model_dir / ONNX_DIR / spec.file_name(p) for spec in lean for p in PRECISIONS]
    return {path.name: optimized_ops(path, threads) for path in paths if path.is_file()}


def load_average() -> float | None:
    """The 1-minute load average: other work on the machine skews every timing (torch's OpenMP threads most)."""
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return None


def bench_model_dir(model_dir: Path, threads: int, repeats: int, warmup: int, data_dir: Path,
                    provider: str = "cpu", cases: set[str] | None = None, max_len: int | None = None,
                    fusions: bool = True, patience: float | None = PATIENCE) -> dict[str, Any]:
    task = read_model_config(model_dir)["meta"].get("task", "?")
    load_before = load_average()
    with torch_threads(threads):  # the same thread count on both sides
        if task == "translate":
            results, extra = bench_translation(model_dir, threads, repeats, warmup, data_dir, provider, cases,
                                               max_len, patience)
        elif task == "sentiment":
            results, extra = bench_classifier(model_dir, threads, repeats, warmup, provider, cases)
        else:
            raise ValueError(f"{model_dir}: no benchmark for task {task!r}")
    bench = {"model_dir": str(model_dir), "task": task, "threads": threads, "repeats": repeats, "warmup": warmup,
             "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "cpu_count": os.cpu_count(),
             "load_average": {"before": load_before, "after": load_average()}, **extra, "versions": versions(),
             "results": [asdict(r) for r in results], "targets": check_targets(task, results),
             "int8_quality": int8_quality(task, model_dir)}
    bench["busy"] = machine_busy(bench["load_average"], bench["cpu_count"] or 1, threads)
    bench["distrusted"] = distrusted(results, bench["busy"])
    if fusions:
        bench["fusions"] = graph_fusions(model_dir, threads)
    return bench


INT8_SCHEMES = ("vnni", "no-vnni")


def with_int8_scheme(model_dir: Path, scheme: str, into: Path) -> Path:
    """A copy of model_dir under `into` (links to its files) whose int8 graphs are made afresh by the scheme the
    export picks on a CPU with ("vnni") or without ("no-vnni") VNNI (export/quantize.py `default_scheme`)."""
    chosen = default_scheme(vnni=scheme == "vnni")
    copy = into / model_dir.name
    (copy / ONNX_DIR).mkdir(parents=True)
    for path in model_dir.iterdir():
        if path.is_file():
            (copy / path.name).symlink_to(path.resolve())
    for path in (model_dir / ONNX_DIR).iterdir():
        if path.is_file() and ".int8." not in path.name:
            (copy / ONNX_DIR / path.name).symlink_to(path.resolve())
        elif ".int8." in path.name:
            chosen.quantize(model_dir / ONNX_DIR / path.name.replace(".int8.", ".fp32."), copy / ONNX_DIR / path.name)
    return copy


def all_case_names() -> list[str]:
    return ([classifier_case_name(b, n) for b, n in CLASSIFIER_CASES]
            + [translation_case_name(m, b) for m, b in TRANSLATION_CASES])


def main(argv: list[str] | None = None) -> int:
    parser = bench_parser("runtimes", __doc__)
    parser.add_argument("model_dirs", nargs="+", type=Path)
    parser.add_argument("--threads", type=int, default=2, help="torch and onnxruntime intra-op threads (default 2)")
    parser.add_argument("--repeats", type=int, default=30, help="timed runs per case (a third at batch > 1)")
    parser.add_argument("--warmup", type=int, default=5, help="untimed runs first (half at batch > 1)")
    parser.add_argument("--data-dir", type=Path, default=Path("data/processed"))
    parser.add_argument("--provider", choices=PROVIDER_CHOICES, default="cpu",
                        help="onnxruntime provider (default cpu: the same hardware as PyTorch here)")
    parser.add_argument("--cases", default=None,
                        help=f"comma-separated subset of {','.join(all_case_names())} (default all)")
    parser.add_argument("--max-len", type=int, default=None,
                        help="most target tokens per translation (default: source length + 50)")
    parser.add_argument("--patience", default=str(PATIENCE),
                        help="beam cases: stop a sentence once 4 x PATIENCE hypotheses have finished, in every system "
                             f"(default {PATIENCE}: CTranslate2's own rule), or 'exact' (tx's default search)")
    parser.add_argument("--no-fusions", action="store_true", help="skip listing onnxruntime's fused operators")
    parser.add_argument("--int8-scheme", choices=INT8_SCHEMES, default=None,
                        help="time int8 files made afresh by the scheme of a CPU with or without VNNI (default: the "
                             "exported files)")
    parser.add_argument("--json", type=Path, default=None,
                        help="write all results here (default: each MODEL_DIR/onnx/bench.json)")
    args = parser.parse_args(argv)
    if args.threads < 1 or args.repeats < 1 or args.warmup < 0:
        parser.error("--threads and --repeats must be >= 1, --warmup >= 0")
    if args.max_len is not None and args.max_len < 1:
        parser.error("--max-len must be >= 1")
    try:
        patience = None if args.patience == "exact" else float(args.patience)
    except ValueError:
        parser.error(f"--patience must be a number or 'exact', got {args.patience!r}")
    if patience is not None and not patience > 0:
        parser.error("--patience must be > 0")
    cases = None
    if args.cases:
        cases = {c.strip() for c in args.cases.split(",") if c.strip()}
        unknown = sorted(cases - set(all_case_names()))
        if unknown:
            parser.error(f"unknown case(s) {', '.join(unknown)}; choose from {', '.join(all_case_names())}")
    benches = []
    scratch = tempfile.TemporaryDirectory()
    for model_dir in args.model_dirs:
        try:
            if args.int8_scheme:
                model_dir = with_int8_scheme(model_dir, args.int8_scheme, Path(scratch.name) / str(len(benches)))
            bench = bench_model_dir(model_dir, args.threads, args.repeats, args.warmup, args.data_dir, args.provider,
                                    cases, args.max_len, fusions=not args.no_fusions, patience=patience)
        except ValueError as e:  # ModelLoadError / CheckpointError: say what to run
            print(f"error: {e}", file=sys.stderr)
            return 2
        except RuntimeError as e:  # ProviderError: --provider cuda where CUDA cannot run
            print(f"error: {e}", file=sys.stderr)
            return 2
        bench["table"] = table(bench)  # the Latency page shows it as written (the app does not import export/)
        print(bench["table"] + "\n", flush=True)
        benches.append(bench)
        if args.int8_scheme:
            bench["int8_scheme"] = args.int8_scheme
        if args.json is None and not args.int8_scheme:  # the app's bench.json describes the exported files
            out = model_dir / ONNX_DIR / "bench.json"
            atomic_write(out, lambda tmp, b=bench: Path(tmp).write_text(json.dumps(b, indent=2) + "\n"))
            print(f"wrote {out}")
    if args.json is not None:
        atomic_write(args.json, lambda tmp: Path(tmp).write_text(json.dumps(benches, indent=2) + "\n"))
        print(f"wrote {args.json}")
    return 0
