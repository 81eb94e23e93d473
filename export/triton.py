"""A Triton Inference Server model repository from exported model directories.

    python -m export triton MODEL_DIR... --out model_repository/ [--precision fp32|int8]
        [--max-batch-size 32] [--client-batch-size 256] [--queue-delay-us 100]
        [--device auto|cpu|gpu] [--instances N] [--threads N] [--lean] [--prefix NAME]

One Triton model per ONNX graph, named `<prefix>_<graph>` (prefix: the model's task, e.g.
`translate_encoder`, `translate_decoder`, `sentiment_classifier`):

    model_repository/<name>/config.pbtxt
    model_repository/<name>/1/model.onnx      (a copy of MODEL_DIR/onnx/<graph>.<precision>.onnx)

Every config is written from the ONNX graph itself, not from the spec: input and output names,
data types and dims (symbolic dims become -1). When every input and output starts with the
dynamic `batch` axis, that axis becomes Triton's batch dimension (`max_batch_size` > 0, dims
without it); the stateless per-row graphs (classifier, encoder) also get `dynamic_batching`.
The decoder step keeps its batch dimension but no dynamic batching: its KV-cache inputs differ
in length from request to request, and the client drives the search (greedy/beam) itself, so
its rows are sentences x beams (`--client-batch-size`, default 256 = 64 sentences x beam 4).
"""
from __future__ import annotations

import argparse
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import onnx
from onnx import TensorProto

from runtime.files import atomic_write
from runtime.model_files import ModelFiles, ModelLoadError, export_command, sha256_of
from runtime.spec import BATCH, PRECISIONS, GraphSpec, graphs_for

from .validate import check_interface

PLATFORM = "onnxruntime_onnx"
MODEL_FILE = "model.onnx"  # Triton's default file name for the onnxruntime backend
VERSION = "1"
DEVICES = ("auto", "cpu", "gpu")
KINDS = ("seq2seq", "classifier")  # tx model kinds that have ONNX graphs

# ONNX element type -> Triton data type (model_config.proto's DataType).
TRITON_DTYPES = {
    TensorProto.BOOL: "TYPE_BOOL",
    TensorProto.UINT8: "TYPE_UINT8",
    TensorProto.UINT16: "TYPE_UINT16",
    TensorProto.UINT32: "TYPE_UINT32",
    TensorProto.UINT64: "TYPE_UINT64",
    TensorProto.INT8: "TYPE_INT8",
    TensorProto.INT16: "TYPE_INT16",
    TensorProto.INT32: "TYPE_INT32",
    TensorProto.INT64: "TYPE_INT64",
    TensorProto.FLOAT16: "TYPE_FP16",
    TensorProto.BFLOAT16: "TYPE_BF16",
    TensorProto.FLOAT: "TYPE_FP32",
    TensorProto.DOUBLE: "TYPE_FP64",
    TensorProto.STRING: "TYPE_STRING",
}


class TritonError(ValueError):
    """A model directory that cannot be turned into a Triton model repository."""


@dataclass(frozen=True)
class TritonTensor:
    name: str
    data_type: str  # "TYPE_FP32", ...
    dims: tuple[int, ...]  # -1 = variable; without the batch dim when the model is batched
    reshape_to_scalar: bool = False  # a (batch,) tensor: Triton needs dims [1] + reshape { shape: [] }


@dataclass(frozen=True)
class TritonModel:
    name: str
    source: Path  # the ONNX file copied to <name>/1/model.onnx
    inputs: tuple[TritonTensor, ...]
    outputs: tuple[TritonTensor, ...]
    max_batch_size: int  # 0: Triton passes full shapes, batch dim included
    dynamic_batching: bool
    labels: tuple[str, ...] = ()  # class names of a classifier's logits (written to labels.txt)


def graph_tensors(model: onnx.ModelProto) -> tuple[list[onnx.ValueInfoProto], list[onnx.ValueInfoProto]]:
    """The graph's real inputs (initializers listed as inputs by old exporters left out) and outputs."""
    initializers = {i.name for i in model.graph.initializer}
    return [v for v in model.graph.input if v.name not in initializers], list(model.graph.output)


def onnx_dims(value: onnx.ValueInfoProto) -> list[int]:
    """The value's dims, -1 for every symbolic or unknown one."""
    return [d.dim_value if d.HasField("dim_value") else -1 for d in value.type.tensor_type.shape.dim]


def has_batch_axis(value: onnx.ValueInfoProto) -> bool:
    dims = value.type.tensor_type.shape.dim
    return len(dims) >= 1 and dims[0].dim_param == BATCH


def triton_dtype(value: onnx.ValueInfoProto) -> str:
    elem = value.type.tensor_type.elem_type
    if elem not in TRITON_DTYPES:
        raise TritonError(f"{value.name}: ONNX element type {TensorProto.DataType.Name(elem)} has no Triton type")
    return TRITON_DTYPES[elem]


def triton_tensor(value: onnx.ValueInfoProto, batched: bool) -> TritonTensor:
    dims = onnx_dims(value)
    if batched:
        dims = dims[1:]
    if batched and not dims:
        return TritonTensor(value.name, triton_dtype(value), (1,), reshape_to_scalar=True)
    return TritonTensor(value.name, triton_dtype(value), tuple(dims))


def describe(name: str, path: Path, batchable: bool, max_batch_size: int,
             labels: tuple[str, ...] = ()) -> TritonModel:
    """A Triton model for the ONNX file at `path`, its interface read from the graph."""
    model = onnx.load(str(path), load_external_data=False)
    inputs, outputs = graph_tensors(model)
    batched = max_batch_size > 0 and all(has_batch_axis(v) for v in inputs + outputs)
    return TritonModel(
        name=name, source=path,
        inputs=tuple(triton_tensor(v, batched) for v in inputs),
        outputs=tuple(triton_tensor(v, batched) for v in outputs),
        max_batch_size=max_batch_size if batched else 0,
        dynamic_batching=batched and batchable,
        labels=labels,
    )


def _tensor_block(tensor: TritonTensor, label_file: str | None) -> list[str]:
    lines = ["  {", f'    name: "{tensor.name}"', f"    data_type: {tensor.data_type}",
             f"    dims: [ {', '.join(str(d) for d in tensor.dims)} ]"]
    if tensor.reshape_to_scalar:
        lines.append("    reshape: { shape: [ ] }")
    if label_file:
        lines.append(f'    label_filename: "{label_file}"')
    lines.append("  }")
    return lines


def config_text(model: TritonModel, device: str = "auto", instances: int = 1, threads: int | None = None,
                queue_delay_us: int = 100, comment: str = "") -> str:
    """config.pbtxt (protobuf text format of Triton's ModelConfig) for one model."""
    lines = [f"# {line}" for line in comment.splitlines()]
    lines += [f'name: "{model.name}"', f'platform: "{PLATFORM}"', f"max_batch_size: {model.max_batch_size}",
              f'default_model_filename: "{MODEL_FILE}"']
    for role, tensors in (("input", model.inputs), ("output", model.outputs)):
        blocks = [_tensor_block(t, "labels.txt" if role == "output" and t.name == "logits" and model.labels
                                else None) for t in tensors]
        lines.append(f"{role} [")
        for i, block in enumerate(blocks):
            if i < len(blocks) - 1:
                block[-1] += ","
            lines += block
        lines.append("]")
    if model.dynamic_batching:
        lines += ["dynamic_batching {", f"  max_queue_delay_microseconds: {queue_delay_us}", "}"]
    if device != "auto" or instances != 1:
        kind = {"cpu": "    kind: KIND_CPU", "gpu": "    kind: KIND_GPU", "auto": None}[device]
        lines += ["instance_group [", "  {", f"    count: {instances}"] + ([kind] if kind else []) + ["  }", "]"]
    if threads is not None:
        for key in ("intra_op_thread_count", "inter_op_thread_count"):
            value = threads if key.startswith("intra") else 1
            lines.append(f'parameters {{ key: "{key}" value: {{ string_value: "{value}" }} }}')
    lines.append("version_policy: { latest: { num_versions: 1 } }")
    return "\n".join(lines) + "\n"


def chosen_graphs(files: ModelFiles, lean: bool) -> list[GraphSpec]:
    return [spec for spec in graphs_for(files.shape) if not (lean and spec.explain)]


def open_model_dir(model_dir: Path) -> ModelFiles:
    from tx import read_model_config

    try:
        kind = read_model_config(model_dir)["kind"]
    except ValueError as e:  # CheckpointError: no/invalid config.json
        raise TritonError(str(e)) from e
    if kind not in KINDS:
        raise TritonError(f"{model_dir}: model kind {kind!r} has no ONNX graphs")
    try:
        return ModelFiles.open(model_dir, kind)
    except ModelLoadError as e:
        raise TritonError(str(e)) from e


def plan(model_dir: Path, precision: str = "fp32", max_batch_size: int = 32, lean: bool = False,
         prefix: str | None = None, client_batch_size: int = 256) -> list[TritonModel]:
    """The Triton models for one model directory, each checked against the spec before anything is written.

    max_batch_size: for the dynamically batched graphs (0: no Triton batch dim on any graph);
    client_batch_size: for the others, whose requests the client batches itself (decoder rows = sentences x beams).
    """
    if precision not in PRECISIONS:
        raise TritonError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
    if max_batch_size < 0 or client_batch_size < 1:
        raise TritonError(f"max_batch_size must be >= 0 and client_batch_size >= 1, got {max_batch_size} and "
                          f"{client_batch_size}")
    files = open_model_dir(model_dir)
    prefix = prefix or files.meta.get("task") or model_dir.name
    models = []
    for spec in chosen_graphs(files, lean):
        path = files.path(spec, precision)
        if not path.is_file():
            raise TritonError(f"{path}: ONNX file not found; export the model first: {export_command(model_dir)}"
                              + ("" if precision == "fp32" else f" --precision fp32,{precision}"))
        try:
            graph = onnx.load(str(path), load_external_data=False)
        except Exception as e:  # DecodeError and friends: a truncated or foreign file
            raise TritonError(f"{path}: not a readable ONNX file ({e}); re-export: {export_command(model_dir)}") from e
        problems = check_interface(graph, spec)
        if problems:
            raise TritonError(f"{path}: does not match the {spec.name} interface ({'; '.join(problems)}); "
                              f"re-export: {export_command(model_dir)}")
        labels = tuple(files.meta.get("labels", ())) if spec.name.startswith("classifier") else ()
        if labels and len(labels) != files.shape.n_classes:
            labels = ()  # a meta that does not fit the head: leave the label file out rather than mislabel
        batch = 0 if max_batch_size == 0 else max_batch_size if spec.batchable else client_batch_size
        models.append(describe(f"{prefix}_{spec.name}", path, spec.batchable, batch, labels))
    return models


def write_model(model: TritonModel, out: Path, config: str) -> Path:
    """<out>/<name>/{config.pbtxt, 1/model.onnx[, labels.txt]}, replacing an earlier version of it."""
    folder = out / model.name
    if folder.exists():
        shutil.rmtree(folder)
    (folder / VERSION).mkdir(parents=True)
    atomic_write(folder / VERSION / MODEL_FILE, lambda tmp: shutil.copyfile(model.source, tmp))
    if model.labels:
        atomic_write(folder / "labels.txt",
                     lambda tmp: tmp.write_text("\n".join(model.labels) + "\n", encoding="utf-8"))
    atomic_write(folder / "config.pbtxt", lambda tmp: tmp.write_text(config, encoding="utf-8"))
    return folder


def write_repository(model_dirs: list[Path], out: Path, precision: str = "fp32", max_batch_size: int = 32,
                     queue_delay_us: int = 100, device: str = "auto", instances: int = 1,
                     threads: int | None = None, lean: bool = False, prefix: str | None = None,
                     client_batch_size: int = 256, log=print) -> list[Path]:
    """Write every model of every directory into the repository `out`; returns the model folders."""
    if device not in DEVICES:
        raise TritonError(f"device must be one of {', '.join(DEVICES)}, got {device!r}")
    if instances < 1 or (threads is not None and threads < 1) or queue_delay_us < 0:
        raise TritonError("instances and threads must be >= 1, queue_delay_us >= 0")
    if prefix is not None and len(model_dirs) > 1:
        raise TritonError("--prefix names the models of one directory; give one MODEL_DIR with it")
    planned = [m for d in model_dirs for m in plan(Path(d), precision, max_batch_size, lean, prefix,
                                                   client_batch_size)]
    names = [m.name for m in planned]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise TritonError(f"two model directories give the same Triton model names {duplicates}: "
                          f"write them one at a time with different --prefix")
    if precision == "int8" and device == "gpu":
        log("warning: the int8 graphs use onnxruntime's dynamic-quantisation ops, which mostly run on CPU; "
            "serve them with --device cpu, or serve fp32 on the GPU")
    folders = []
    for model in planned:
        comment = (f"Written by python -m export triton from {model.source}\n"
                   f"sha256 {sha256_of(model.source)}; interface read from the ONNX graph.")
        config = config_text(model, device, instances, threads, queue_delay_us, comment)
        folders.append(write_model(model, out, config))
        batching = ("dynamic batching" if model.dynamic_batching
                    else "batched by the client" if model.max_batch_size else "no batch dim")
        log(f"wrote {out / model.name} ({model.source.name}, max_batch_size {model.max_batch_size}, {batching})")
    return folders


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m export triton", description=__doc__.split("\n\n")[0])
    parser.add_argument("model_dirs", nargs="+", type=Path, metavar="MODEL_DIR",
                        help="exported model directories (python -m export MODEL_DIR first)")
    parser.add_argument("--out", type=Path, required=True, help="the model repository folder to write into")
    parser.add_argument("--precision", choices=PRECISIONS, default="fp32", help="which exported files to serve")
    parser.add_argument("--max-batch-size", type=int, default=32,
                        help="max_batch_size of the dynamically batched graphs (classifier, encoder; default 32); "
                             "0 gives no graph a Triton batch dim")
    parser.add_argument("--client-batch-size", type=int, default=256,
                        help="max_batch_size of the graphs the client batches (decoder rows = sentences x beams; "
                             "default 256)")
    parser.add_argument("--queue-delay-us", type=int, default=100,
                        help="dynamic batching: how long a request may wait for others (default 100 µs)")
    parser.add_argument("--device", choices=DEVICES, default="auto",
                        help="instance kind: cpu, gpu, or auto (Triton's choice: GPU where there is one)")
    parser.add_argument("--instances", type=int, default=1, help="model instances per device (default 1)")
    parser.add_argument("--threads", type=int, default=None, help="onnxruntime intra-op threads per instance")
    parser.add_argument("--lean", action="store_true", help="leave out the *_explain graphs (attention outputs)")
    parser.add_argument("--prefix", default=None, help="model name prefix (default: the model's task)")
    args = parser.parse_args(argv)
    try:
        write_repository(args.model_dirs, args.out, args.precision, args.max_batch_size, args.queue_delay_us,
                         args.device, args.instances, args.threads, args.lean, args.prefix,
                         args.client_batch_size)
    except TritonError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"Triton model repository in {args.out}: tritonserver --model-repository={args.out.resolve()}")
    return 0
