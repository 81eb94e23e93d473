"""export_report.json: what was exported, with which tools, and how well it matches PyTorch;
and the staleness test behind `python -m export --if-stale`."""
from __future__ import annotations

import json
import platform
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from runtime.files import atomic_write
from runtime.model_files import sha256_of
from runtime.spec import ONNX_DIR, REPORT_FILE, SPEC_VERSION
from tx.checkpoint import CONFIG_FILE, TOKENIZER_FILE, WEIGHTS_FILE


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def versions() -> dict[str, str]:
    import numpy
    import onnx
    import onnxruntime
    import torch

    try:
        import onnxscript

        onnxscript_version = onnxscript.__version__
    except ImportError:
        onnxscript_version = "not installed"
    return {"python": platform.python_version(), "torch": torch.__version__, "onnx": onnx.__version__,
            "onnxruntime": onnxruntime.__version__, "onnxscript": onnxscript_version, "numpy": numpy.__version__,
            "platform": platform.platform(), "cpu": cpu_model()}


# How the served graphs are built, beyond their interface (SPEC_VERSION): an export made with another layout
# still loads, but `--if-stale` makes it again unless that layout was asked for (`--traced-attention`).
# export/fused_graphs.py: the default. "padding-invariant": since issue 42 (2026-11-27) the cross-attention node sees
# its query twice (export/fused_attention.py), so a sentence's scores no longer move with its batch's padded length;
# older fused exports still load and run, and `--if-stale` makes them again.
FUSED_LAYOUT = "fused attention (padding-invariant), real tokens only"
TRACED_LAYOUT = "traced attention"  # every attention op as traced (before 2026-11-25; a fallback for a provider
#                                     whose fused kernel refuses our masks)


def graph_layout(fused_attention: bool) -> str:
    return FUSED_LAYOUT if fused_attention else TRACED_LAYOUT


@dataclass
class ExportReport:
    model_dir: str
    kind: str
    ok: bool
    created: str  # ISO time
    exporter: str
    opset: int
    spec_version: str
    precisions: list[str]
    per_channel: bool  # int8 weight scales per output channel (True) or per tensor
    versions: dict[str, str]
    failures: list[str] = field(default_factory=list)  # why `ok` is False
    warnings: list[str] = field(default_factory=list)  # targets missed, checks skipped
    graphs: list[dict[str, Any]] = field(default_factory=list)  # validate.GraphCheck per file, + size and timing
    quality: dict[str, Any] = field(default_factory=dict)  # quality.* sections
    files: dict[str, dict[str, Any]] = field(default_factory=dict)  # file name -> {"bytes", "sha256"}
    int8: dict[str, Any] = field(default_factory=dict)  # the int8 scheme: per_channel, weight_bits, cpu_vnni, why
    graph_layout: str = FUSED_LAYOUT

    def write(self, model_dir: Path) -> Path:
        path = model_dir / ONNX_DIR / REPORT_FILE
        text = json.dumps(asdict(self), indent=2, ensure_ascii=False) + "\n"
        atomic_write(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))
        return path


def file_entries(onnx_dir: Path) -> dict[str, dict[str, Any]]:
    """Size and sha256 of every file in the export folder except the report itself."""
    return {p.name: {"bytes": p.stat().st_size, "sha256": sha256_of(p)}
            for p in sorted(onnx_dir.iterdir()) if p.is_file() and p.name != REPORT_FILE and not p.name.startswith(".")}


def read_report(model_dir: Path) -> dict[str, Any] | None:
    try:
        return json.loads((model_dir / ONNX_DIR / REPORT_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def stale_reason(model_dir: Path, precisions: list[str], file_names: list[str],
                 layout: str = FUSED_LAYOUT) -> str | None:
    """None when the export in model_dir/onnx is complete, passed, of this graph layout, and newer than the
    model's files."""
    report = read_report(model_dir)
    if report is None:
        return "no readable export report"
    if not report.get("ok"):
        return "the last export failed validation"
    if report.get("spec_version") != SPEC_VERSION:
        return f"exported with interface version {report.get('spec_version')}, now {SPEC_VERSION}"
    if report.get("graph_layout", TRACED_LAYOUT) != layout:
        return f"exported with graph layout {report.get('graph_layout', TRACED_LAYOUT)!r}, now {layout!r}"
    if "int8" in precisions and "activations" not in (report.get("int8") or {}):
        return "its int8 activations share one scale per batch (quantize.py now scales them per row)"
    if "int8" in precisions and not (report.get("int8") or {}).get("block_size") \
            and "int8_embeddings" not in report["int8"]:
        return "its per-row int8 files have int8 embedding tables (quantize.py now keeps them fp32: more faithful)"
    if not set(precisions) <= set(report.get("precisions", [])):
        return f"the last export lacks precision(s) {sorted(set(precisions) - set(report.get('precisions', [])))}"
    onnx_dir = model_dir / ONNX_DIR
    outputs = [onnx_dir / name for name in file_names] + [onnx_dir / REPORT_FILE]
    missing = [p.name for p in outputs if not p.is_file()]
    if missing:
        return f"missing {', '.join(missing)}"
    sources = [model_dir / name for name in (CONFIG_FILE, WEIGHTS_FILE, TOKENIZER_FILE) if (model_dir / name).is_file()]
    newest_source = max(p.stat().st_mtime for p in sources)
    oldest_output = min(p.stat().st_mtime for p in outputs)
    if oldest_output < newest_source:
        return "the model files are newer than the export"
    return None
