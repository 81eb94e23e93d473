"""Opening a model directory (config.json, tokenizer.json, onnx/) and its ONNX files, turning every way that can
go wrong into one `ModelLoadError` that names the file and the command that fixes it (`python -m export MODEL_DIR`).

A model directory: `config.json` ({"kind", "config", "meta"}), `tokenizer.json`, and, once exported, `onnx/`
(`model.pt` holds the PyTorch weights, which only `tx` reads).
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .cpu import cpu_has_vnni
from .providers import ProviderError, SessionHandle, check_provider, shared_session
from .spec import (
    META_GRAPH,
    META_INT8_ACTIVATIONS,
    META_INT8_BLOCK_SIZE,
    META_INT8_WEIGHT_BITS,
    META_INT8_WEIGHT_TYPE,
    META_PRECISION,
    META_SPEC_VERSION,
    META_TOKENIZER_SHA256,
    META_VOCAB_SIZE,
    ONNX_DIR,
    PRECISIONS,
    SPEC_VERSION,
    GraphSpec,
    ModelShape,
)
from .tokenizer import Tokenizer

CONFIG_FILE, WEIGHTS_FILE, TOKENIZER_FILE = "config.json", "model.pt", "tokenizer.json"
TASK_OF_KIND = {"seq2seq": "translate", "classifier": "sentiment"}
WRAPPER_OF_KIND = {"seq2seq": "OnnxTranslator", "classifier": "OnnxSentimentClassifier"}


class CheckpointError(ValueError):
    """A model file that is missing, unreadable, or does not fit the expected model."""


class ModelLoadError(CheckpointError):
    """A model directory or ONNX file that cannot serve: missing, corrupt, stale, or of another task."""


def read_model_config(directory: str | Path, kind: str | None = None) -> dict[str, Any]:
    """The {"kind", "config", "meta"} dict of a model directory, checked."""
    path = Path(directory) / CONFIG_FILE
    if not path.is_file():
        raise CheckpointError(f"{path}: file not found (is {directory} a model directory?)")
    try:
        stored = json.loads(path.read_text())
        stored["kind"], stored["config"]
        stored.setdefault("meta", {})
    except (ValueError, KeyError, TypeError) as e:
        raise CheckpointError(f"{path}: not a tx model config ({e})") from e
    if kind is not None and stored["kind"] != kind:
        raise CheckpointError(f"{directory}: holds a {stored['kind']} model, expected {kind}")
    return stored


def read_tokenizer(model_dir: str | Path) -> Tokenizer:
    """The model directory's tokenizer.json (CheckpointError if it is missing)."""
    path = Path(model_dir) / TOKENIZER_FILE
    if not path.is_file():
        raise CheckpointError(f"{path}: file not found (the model directory needs its tokenizer)")
    return Tokenizer.load(path)


def export_command(model_dir: str | Path) -> str:
    return f"python -m export {model_dir}"


def restore_hint(path: Path) -> str:
    """A damaged or swapped model file is fixed by putting the original back, not by re-exporting around it
    (an export would bake a wrong tokenizer into the graphs)."""
    return (f"restore the model's own {path.name} (for a shipped model: `git checkout -- {path}`; else copy it back "
            "from where the model was trained)")


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True)
class ModelFiles:
    """A checked model directory: its config, meta and where its ONNX files are."""

    model_dir: Path
    kind: str  # "seq2seq" | "classifier"
    config: dict[str, Any]
    meta: dict[str, Any]
    shape: ModelShape

    @classmethod
    def open(cls, model_dir: str | Path, kind: str) -> ModelFiles:
        """Read config.json, rejecting a directory of the other task with a message saying which wrapper fits."""
        model_dir = Path(model_dir)
        try:
            stored = read_model_config(model_dir)
        except CheckpointError as e:
            raise ModelLoadError(str(e)) from e
        if stored["kind"] != kind:
            other = WRAPPER_OF_KIND.get(stored["kind"], "another wrapper")
            raise ModelLoadError(f"{model_dir}: holds a {stored['kind']} model ({stored['meta'].get('task', '?')}), "
                                 f"not a {kind} model ({TASK_OF_KIND[kind]}); open it with {other}")
        task = stored["meta"].get("task", TASK_OF_KIND[kind])
        if task != TASK_OF_KIND[kind]:
            raise ModelLoadError(f"{model_dir}: a {task} model, expected {TASK_OF_KIND[kind]}")
        try:
            shape = ModelShape.from_config(kind, stored["config"])
        except (KeyError, TypeError, ZeroDivisionError) as e:
            raise ModelLoadError(f"{model_dir / 'config.json'}: incomplete model config ({e!r})") from e
        return cls(model_dir, kind, stored["config"], stored["meta"], shape)

    @property
    def max_len(self) -> int:
        return int(self.config.get("max_len", 256))

    def path(self, spec: GraphSpec, precision: str) -> Path:
        return self.model_dir / ONNX_DIR / spec.file_name(precision)

    def session(self, spec: GraphSpec, precision: str, provider: str, threads: int | None) -> SessionHandle:
        """The shared session of one graph, after checking the file is the export of this model directory."""
        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
        path = self.path(spec, precision)
        fix = export_command(self.model_dir)
        if not path.is_file():
            raise ModelLoadError(f"{path}: ONNX file not found; export the model first: {fix}")
        check_provider(provider)
        try:
            handle = shared_session(path, provider, threads)
        except ProviderError:
            raise
        except Exception as e:  # onnxruntime's InvalidProtobuf / Fail / InvalidGraph: all mean a bad file
            first_line = str(e).strip().splitlines()[0][:300] if str(e).strip() else type(e).__name__
            raise ModelLoadError(f"{path}: onnxruntime cannot load it ({first_line}); re-export: {fix}") from e
        self._check_graph(handle, spec, precision, path)
        return handle

    def _check_graph(self, handle: SessionHandle, spec: GraphSpec, precision: str, path: Path) -> None:
        fix = export_command(self.model_dir)
        session = handle.session
        metadata = session.get_modelmeta().custom_metadata_map
        inputs = [i.name for i in session.get_inputs()]
        outputs = [o.name for o in session.get_outputs()]
        problems = []
        if metadata.get(META_GRAPH) != spec.name or metadata.get(META_PRECISION) != precision:
            problems.append(f"it holds graph {metadata.get(META_GRAPH)!r} ({metadata.get(META_PRECISION)}), "
                            f"expected {spec.name!r} ({precision})")
        if metadata.get(META_SPEC_VERSION) != SPEC_VERSION:
            problems.append(f"it was exported with interface version {metadata.get(META_SPEC_VERSION)!r}, "
                            f"this code reads {SPEC_VERSION!r}")
        if inputs != spec.input_names or outputs != spec.output_names:
            problems.append(f"its inputs/outputs {inputs} -> {outputs} differ from {spec.input_names} -> "
                            f"{spec.output_names}")
        if metadata.get(META_VOCAB_SIZE) != str(self.config.get("vocab_size")):
            problems.append(f"its vocabulary has {metadata.get(META_VOCAB_SIZE)} tokens but config.json says "
                            f"{self.config.get('vocab_size')}")
        if problems:
            raise ModelLoadError(f"{path}: not the export of {self.model_dir} ({'; '.join(problems)}); "
                                 f"re-export: {fix}")
        # signed full-range weights saturate the int16 sums of the kernel CPUs without VNNI run (files from
        # before the type was recorded are signed); unsigned weights take a kernel that sums in int32
        signed = metadata.get(META_INT8_WEIGHT_TYPE, "int8") == "int8"
        if precision == "int8" and signed and metadata.get(META_INT8_WEIGHT_BITS) == "8" and not cpu_has_vnni():
            raise ModelLoadError(f"{path}: its int8 weights use all 8 bits, made for a CPU with VNNI; this CPU has "
                                 f"none, so its int8 sums would saturate. Re-export on this machine: {fix}")
        # dynamic int8 MatMuls from before the activations were scaled per row: one scale per tensor spans the
        # batch, so a sentence's translation changed with its batch mates (MatMulNBits files were per row already)
        if precision == "int8" and META_INT8_ACTIVATIONS not in metadata \
                and metadata.get(META_INT8_BLOCK_SIZE, "0") == "0":
            raise ModelLoadError(f"{path}: its int8 activations share one scale per batch, so a sentence's "
                                 f"translation would depend on the others in its batch; re-export: {fix}")

    def check_tokenizer(self, tokenizer: Any, handle: SessionHandle) -> None:
        """The tokenizer must be the one the graphs were exported with, and fit their vocabulary."""
        metadata = handle.session.get_modelmeta().custom_metadata_map
        graph_vocab = int(metadata.get(META_VOCAB_SIZE, "0"))
        tokenizer_path = self.model_dir / TOKENIZER_FILE
        if tokenizer.vocab_size > graph_vocab:
            raise ModelLoadError(f"{tokenizer_path}: {tokenizer.vocab_size} tokens, but the ONNX graphs embed only "
                                 f"{graph_vocab}: this tokenizer does not belong to this model; "
                                 f"{restore_hint(tokenizer_path)}")
        exported_with = metadata.get(META_TOKENIZER_SHA256, "")
        if exported_with and exported_with != sha256_of(tokenizer_path):
            raise ModelLoadError(f"{tokenizer_path}: changed since the ONNX export: {restore_hint(tokenizer_path)}; "
                                 "only if this tokenizer really belongs to the weights in model.pt, re-export: "
                                 f"{export_command(self.model_dir)}")


def load_tokenizer(files: ModelFiles) -> Tokenizer:
    """The model directory's tokenizer, failures as ModelLoadError."""
    try:
        return read_tokenizer(files.model_dir)
    except ModelLoadError:
        raise
    except Exception as e:  # a missing file (CheckpointError) or unparsable JSON (tokenizers' own exception)
        path = files.model_dir / TOKENIZER_FILE
        raise ModelLoadError(f"{path}: cannot load the tokenizer ({str(e)[:300]}); {restore_hint(path)}") from e
