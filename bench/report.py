"""What a `python -m bench runtimes` run reads as: the speed targets it reached, the export's own int8 quality
against its limits (export_report.json), and the table it prints (saved in bench.json, shown by the app)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from export.quality import INT8_MAX_ACCURACY_DROP, INT8_MAX_BLEU_DROP
from export.report import read_report

from .stats import CaseResult, machine_busy

TARGETS = {"translate greedy fp32": 2.5, "translate greedy int8": 5.0,
           "classifier b1 <=64 fp32": 2.5, "classifier b1 <=64 int8": 5.0}
# The export's own gate (quality.py), so that the bench never calls "met" what the export would fail, or back.
INT8_QUALITY_LIMITS = {"translate": ("BLEU drop", INT8_MAX_BLEU_DROP),
                       "sentiment": ("accuracy drop (pt)", round(100 * INT8_MAX_ACCURACY_DROP, 2))}


def check_targets(task: str, results: list[CaseResult]) -> dict[str, dict[str, Any]]:
    """Each target's reached ratio (the worst case it covers)."""
    reached = {}
    for system, precision in (("ort-fp32", "fp32"), ("ort-int8", "int8")):
        if task == "translate":
            ratios = [r.speedup for r in results if r.system == system and r.case.startswith("greedy")]
            name = f"translate greedy {precision}"
        else:
            ratios = [r.speedup for r in results if r.system == system and r.case.startswith("b1x")
                      and int(r.case.split("x")[1]) <= 64]
            name = f"classifier b1 <=64 {precision}"
        if ratios:
            reached[name] = {"target": TARGETS[name], "reached": min(ratios), "met": min(ratios) >= TARGETS[name]}
    return reached


def int8_quality(task: str, model_dir: Path) -> dict[str, Any] | None:
    """The int8 quality deltas the export measured (export_report.json), against the issue's limits."""
    report = read_report(model_dir) or {}
    section = (report.get("quality") or {}).get("translation" if task == "translate" else "sentiment") or {}
    int8 = (section.get("systems") or {}).get("int8")
    if not int8:
        return None
    name, limit = INT8_QUALITY_LIMITS[task]
    if task == "translate":
        drop = -min(int8.get("bleu_delta", {}).values(), default=0.0)
    else:
        drop = -100 * int8.get("accuracy_delta", 0.0)
    drop = round(drop, 2) + 0.0  # no "-0.00"
    return {"measure": name, "drop": drop, "limit": limit, "met": drop <= limit,
            "agreement": int8.get("agreement"), "texts": section.get("sentences", section.get("texts")),
            "origin": section.get("origin")}


def table(bench: dict[str, Any]) -> str:
    """The results as a markdown table with a header naming what was measured where."""
    v = bench.get("versions", {})
    provider = bench.get("provider", "?")
    lines = [f"{bench['model_dir']} ({bench['task']}): {bench['threads']} threads, {bench.get('repeats', '?')} "
             f"repeats after {bench.get('warmup', '?')} warm-up, onnxruntime on {provider}",
             f"CPU {v.get('cpu', '?')}; torch {v.get('torch', '?')}, onnxruntime {v.get('onnxruntime', '?')}, "
             f"onnx {v.get('onnx', '?')}, python {v.get('python', '?')}"]
    load = bench.get("load_average") or {}
    if load.get("before") is not None:
        lines.append(f"machine load (1-min average) {load['before']} before, {load.get('after')} after, "
                     f"{bench.get('cpu_count', '?')} CPUs: timings are only comparable within one run")
        busy = machine_busy(load, bench.get("cpu_count") or 1, bench["threads"])
        if busy:
            lines.append(f"WARNING: the machine was busy ({busy}); PyTorch's OpenMP threads suffer most (each op "
                         "can wait for a preempted thread), which inflates the ratios: re-run on an idle machine"
                         + (", or with --threads 1" if bench["threads"] > 1 else ""))
    if bench.get("provider_note"):
        lines.append(f"({bench['provider_note']})")
    if bench.get("direction"):
        lines.append(f"translating {bench['direction']}, sentences from {bench.get('sentences', '?')}"
                     + (f", at most {bench['max_len']} tokens" if bench.get("max_len") else ""))
    lines += ["", "| case | system | p50 ms | p10-p90 ms | tokens/s | × torch | ÷ CTranslate2 |",
              "|---|---|--:|--:|--:|--:|--:|"]
    for r in bench["results"]:
        vs, peer = r.get("vs_ct2"), r.get("ct2_peer")
        spread = f"{r.get('p10_ms', 0):.1f}-{r['p90_ms']:.1f}"
        # Name the peer when it is not the same-threads row (e.g. CTranslate2 was faster at 1 thread).
        named = f" ({peer})" if peer and peer != r["system"].replace("ort-", "ct2-") else ""
        lines.append(f"| {r['case']} | {r['system']} | {r['p50_ms']:.2f} | {spread} | {r['tokens_per_s']:.0f} | "
                     f"{r['speedup']:.2f} | {'' if vs is None else f'{vs:.2f}{named}'} |")
    lines.append("")
    doubts = bench.get("distrusted", [])
    if bench.get("busy") and doubts:  # every ratio: one line naming them all, not one line each
        lines.append(f"WARNING: no ratio trusted, the machine was busy ({bench['busy']}): "
                     + ", ".join(d.split(": ", 1)[0] for d in doubts))
    else:
        lines += [f"WARNING: ratio not trusted, {doubt}" for doubt in doubts]
    for name, t in bench.get("targets", {}).items():
        lines.append(f"target {name}: >= {t['target']}x, reached {t['reached']:.2f}x "
                     f"({'met' if t['met'] else 'MISSED'})")
    quality = bench.get("int8_quality")
    if quality:
        lines.append(f"int8 {quality['measure']} {quality['drop']:.2f} (limit {quality['limit']}: "
                     f"{'met' if quality['met'] else 'MISSED'}), agreement with PyTorch {quality['agreement']} "
                     f"on {quality['texts']} {'sentences each way' if bench['task'] == 'translate' else 'texts'} "
                     f"(export_report.json)")
    elif "int8_quality" in bench:
        lines.append("int8 quality: not in export_report.json (export with --precision fp32,int8 and test data)")
    for note in bench.get("notes", []):
        lines.append(f"note: {note}")
    for name, ops in (bench.get("fusions") or {}).items():
        lines.append(f"onnxruntime ops in {name}: {', '.join(f'{k} {n}' for k, n in ops.items()) or 'no fusions'}")
    return "\n".join(lines)
