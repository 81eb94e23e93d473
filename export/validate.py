"""Graph-level checks of an exported file: the ONNX checker, its interface against the spec, and
its values against PyTorch at shapes other than the export example's."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import torch
from torch import nn

from runtime.providers import create_session
from runtime.spec import BATCH, PAST, SEQ, SRC, TGT, GraphSpec

from .feeds import random_inputs
from .graph_modules import wrapper_for
from .wrappers import run_wrapper

FP32_ATOL = 1e-4
# ...or this share of the output's largest magnitude, where that is larger: fp32 keeps ~7 digits, so an output in
# the hundreds (the walkthrough graphs' raw q·k scores, measured 8.4e-5 off on the shipped translator, against
# 1.1e-5 once divided by √d_k) differs by more than 1e-4 without anything being wrong.
FP32_RTOL = 1e-5
# Every axis differs from the export example (batch 2, lengths 9/3, past 5); past 0 is the first step.
PARITY_CASES: list[dict[str, int]] = [
    {BATCH: 3, SEQ: 7, SRC: 7, TGT: 1, PAST: 0},
    {BATCH: 3, SEQ: 29, SRC: 29, TGT: 1, PAST: 11},
    {BATCH: 3, SEQ: 29, SRC: 7, TGT: 29, PAST: 11},
]
ONNX_DTYPES = {"int64": onnx.TensorProto.INT64, "bool": onnx.TensorProto.BOOL, "float32": onnx.TensorProto.FLOAT}


@dataclass
class GraphCheck:
    """What validation found for one file."""

    graph: str
    precision: str
    file: str
    problems: list[str] = field(default_factory=list)  # anything that fails the export
    max_diff: dict[str, float] = field(default_factory=dict)  # worst |onnx - torch| per output over all cases
    cases: list[dict[str, int]] = field(default_factory=list)  # the axis sizes checked
    atol: float | None = None  # None: differences are reported, not enforced (int8)
    magnitude: dict[str, float] = field(default_factory=dict)  # largest finite |torch| per output over all cases

    @property
    def ok(self) -> bool:
        return not self.problems


def check_onnx(path: Path) -> list[str]:
    try:
        onnx.checker.check_model(str(path), full_check=True)
    except Exception as e:  # ValidationError, InferenceError: the message is the finding
        return [f"onnx.checker: {str(e).strip()[:500]}"]
    return []


def check_dims(where: str, want: tuple[int | str, ...], dims: list) -> list[str]:
    """A fixed dim must have its size; a dynamic one must stay symbolic, and a single axis keep its name."""
    if len(dims) != len(want):
        return [f"{where}: rank {len(dims)}, spec says {len(want)}"]
    problems = []
    for axis, (w, got) in enumerate(zip(want, dims, strict=True)):
        actual = got.dim_param or got.dim_value
        if isinstance(w, int) and got.dim_value != w:
            problems.append(f"{where} axis {axis}: {actual}, spec says {w}")
        elif isinstance(w, str) and not got.dim_param:
            problems.append(f"{where} axis {axis}: fixed to {actual}, spec says dynamic {w!r}")
        elif isinstance(w, str) and "+" not in w and got.dim_param != w:
            problems.append(f"{where} axis {axis}: named {actual!r}, spec says {w!r}")
    return problems


def check_interface(model: onnx.ModelProto, spec: GraphSpec) -> list[str]:
    """Names, order, dtypes, ranks, fixed sizes and dynamic axes of the inputs and outputs."""
    problems = []
    for role, declared, actual in (("input", spec.inputs, model.graph.input),
                                   ("output", spec.outputs, model.graph.output)):
        names = [v.name for v in actual]
        if names != [t.name for t in declared]:
            problems.append(f"{role}s are {names}, spec says {[t.name for t in declared]}")
            continue
        for tensor, value in zip(declared, actual, strict=True):
            kind = value.type.tensor_type
            if kind.elem_type != ONNX_DTYPES[tensor.dtype]:
                problems.append(f"{role} {tensor.name}: element type "
                                f"{onnx.TensorProto.DataType.Name(kind.elem_type)}, spec says {tensor.dtype}")
            problems += check_dims(f"{role} {tensor.name}", tensor.dims, list(kind.shape.dim))
    return problems


def fits(case: dict[str, int], max_len: int) -> bool:
    """Positions must stay inside the positional-encoding table."""
    return max(case[SEQ], case[SRC], case[PAST] + case[TGT]) <= max_len


def max_difference(got: np.ndarray, want: np.ndarray) -> float:
    """max |got - want|, where equal infinities (the walkthrough's masked scores) differ by 0 and a NaN on either
    side makes the result NaN (which fails any tolerance)."""
    if not got.size:
        return 0.0
    with np.errstate(invalid="ignore"):
        gap = np.where(got == want, 0.0, np.abs(got - want))
    return float(np.nan if np.isnan(gap).any() else gap.max())


def blank_unspecified(spec: GraphSpec, inputs: list[np.ndarray], outputs: list[np.ndarray]) -> list[np.ndarray]:
    """`outputs` with the values the spec leaves unspecified (`GraphSpec.unspecified_at`) set to 0, so that two
    implementations compare on what they promise."""
    if not spec.unspecified_at:
        return outputs
    at = spec.input_names.index(spec.unspecified_at)
    batch_axis, axis = spec.inputs[at].dims
    mask = inputs[at].astype(bool)  # (B, S)
    blanked = []
    for tensor, array in zip(spec.outputs, outputs, strict=True):
        if axis in tensor.dims and tensor.dims[0] == batch_axis:
            where = [1] * array.ndim
            where[0], where[tensor.dims.index(axis)] = mask.shape
            array = np.where(mask.reshape(where), array, np.float32(0))
        blanked.append(array)
    return blanked


def check_values(model: nn.Module, spec: GraphSpec, session: ort.InferenceSession, check: GraphCheck,
                 atol: float | None) -> None:
    """Run ONNX and PyTorch on the same random inputs at every parity case; record the worst differences."""
    wrapper = wrapper_for(model, spec)
    check.atol = atol
    for number, case in enumerate(c for c in PARITY_CASES if fits(c, model.config.max_len)):
        check.cases.append(case)
        inputs = random_inputs(spec, case, model.config.vocab_size, seed=100 + number)
        got = session.run(spec.output_names, dict(zip(spec.input_names, inputs, strict=True)))
        want = [w.numpy() for w in run_wrapper(wrapper, [torch.from_numpy(a) for a in inputs])]
        if all(g.shape == t.shape_for(case) for g, t in zip(got, spec.outputs, strict=True)):
            got, want = blank_unspecified(spec, inputs, got), blank_unspecified(spec, inputs, want)
        for tensor, g, w in zip(spec.outputs, got, want, strict=True):
            expected_shape = tensor.shape_for(case)
            if g.shape != expected_shape:
                check.problems.append(f"{tensor.name} at {case}: shape {g.shape}, expected {expected_shape}")
                continue
            diff = max_difference(g, w)
            finite = np.abs(w[np.isfinite(w)])
            check.magnitude[tensor.name] = max(check.magnitude.get(tensor.name, 0.0),
                                               float(finite.max()) if finite.size else 0.0)
            before = check.max_diff.get(tensor.name, 0.0)
            check.max_diff[tensor.name] = diff if np.isnan(diff) or np.isnan(before) else max(before, diff)
    if atol is not None:
        enforce(check, atol)


def enforce(check: GraphCheck, atol: float, rtol: float = FP32_RTOL) -> None:
    """A problem for each output whose worst difference exceeds atol, or rtol of its largest value if more."""
    for name, diff in check.max_diff.items():
        limit = max(atol, rtol * check.magnitude.get(name, 0.0))
        if not diff <= limit:  # also catches NaN
            check.problems.append(f"{name}: max |onnx - torch| = {diff:.3g} > {limit:.3g} (atol {atol:g}, or "
                                  f"{rtol:g} of its largest value {check.magnitude.get(name, 0.0):.3g})")


def validate_graph(model: nn.Module, spec: GraphSpec, path: Path, precision: str) -> GraphCheck:
    """Every graph-level check of one exported file; a failure lands in `problems`, never raises."""
    check = GraphCheck(spec.name, precision, path.name)
    check.problems += check_onnx(path)
    check.problems += check_interface(onnx.load(str(path)), spec)
    try:
        session = create_session(path, "cpu").session
    except Exception as e:  # onnxruntime refusing the file is itself the finding
        check.problems.append(f"onnxruntime cannot load it: {str(e)[:300]}")
        return check
    check_values(model, spec, session, check, FP32_ATOL if precision == "fp32" else None)
    return check
