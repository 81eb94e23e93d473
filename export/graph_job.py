"""One graph of a model: exported, quantised and validated, wherever it runs (this process or a helper of
export/graph_pool.py)."""
from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from runtime.spec import (
    WALKTHROUGH_PRECISION,
    GraphSpec,
    ModelShape,
    experiment_graphs,
    graphs_for,
    patching_graphs,
    walkthrough_graphs,
)

from .onnx_export import export_graph, graph_metadata
from .quantize import Int8Scheme
from .validate import validate_graph

SHOWN_PRECISION = WALKTHROUGH_PRECISION  # and EXPERIMENT_PRECISION: every shown graph is fp32


def shown_graphs(shape: ModelShape, walkthrough: bool = True, experiments: bool = True) -> list[GraphSpec]:
    """The graphs that are shown, not served (fp32 only, exported beside the served ones): the walkthrough's and
    the experiments' (the patching graphs among them)."""
    return (walkthrough_graphs(shape) if walkthrough else []) + (
        experiment_graphs(shape) + patching_graphs(shape) if experiments else [])


def all_graphs(shape: ModelShape) -> list[GraphSpec]:
    """Every graph a model's export can make: the served ones, then the shown ones."""
    return graphs_for(shape) + shown_graphs(shape)


def export_one(model, config: dict, onnx_dir: Path, spec: GraphSpec, graph_precisions: list[str],
               scheme: Int8Scheme | None, tokenizer_sha: str, opset: int,
               fused_attention: bool = True) -> dict:
    """Export, quantise and validate one graph; returns its result as export/graph_pool.py passes it between
    processes: {"entries": its report entries, "problems": its problems, "line": its console line}."""
    fp32_path = onnx_dir / spec.file_name("fp32")
    seconds = export_graph(model, spec, fp32_path, graph_metadata(spec, "fp32", config, tokenizer_sha), opset,
                           fused_attention)
    made = {"fp32": seconds}
    if "int8" in graph_precisions:
        made["int8"] = scheme.quantize(fp32_path, onnx_dir / spec.file_name("int8"))
    entries, files, problems = [], [], []
    for precision in graph_precisions:
        path = onnx_dir / spec.file_name(precision)
        check = validate_graph(model, spec, path, precision)
        entries.append(asdict(check) | {"ok": check.ok, "bytes": path.stat().st_size,
                                        "seconds_to_make": round(made[precision], 2)})
        worst = max(check.max_diff.values(), default=0.0)
        files.append(f"{precision} {path.stat().st_size / 1e6:.1f} MB (max |onnx - torch| {worst:.2e})")
        problems += [f"{path.name}: {p}" for p in check.problems]
    # one line per graph: the console output of `make run` a newcomer reads
    line = (f"exported {spec.name}: {', '.join(files)} in {sum(made.values()):.1f}s"
            + (f"  FAILED: {'; '.join(problems)}" if problems else ""))
    return {"entries": entries, "problems": problems, "line": line}
