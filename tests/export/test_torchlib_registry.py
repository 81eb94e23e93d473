"""export/torchlib_registry.py: torch.onnx's ATen -> ONNX table built once per process, each export given a copy
that is what torch would have built, with lists of its own; torch's own classmethod back after the `with`."""
from __future__ import annotations

import pytest

from export import torchlib_registry
from export.onnx_export import DEFAULT_OPSET

ONNXRegistry = torchlib_registry.ONNXRegistry
pytestmark = pytest.mark.skipif(ONNXRegistry is None, reason="this torch lays out its exporter otherwise")


def table(registry) -> dict:
    return {target: [d.onnx_function for d in decompositions] for target, decompositions in registry.functions.items()}


def test_each_export_gets_a_copy_of_what_torch_builds_and_keeps_its_additions_to_itself():
    torch_built = ONNXRegistry.from_torchlib(opset_version=DEFAULT_OPSET)  # outside the `with`: torch's own
    torchlib_registry._built.cache_clear()
    with torchlib_registry.built_once():
        first = ONNXRegistry().from_torchlib(opset_version=DEFAULT_OPSET)  # as torch.onnx's export calls it
        first.register_op(len, lambda x: x)  # what a custom translation table does to the call's registry
        second = ONNXRegistry().from_torchlib(opset_version=DEFAULT_OPSET)
    assert torchlib_registry._built.cache_info().misses == 1, "torchlib's table was built more than once"
    assert type(second) is ONNXRegistry and second.opset_version == DEFAULT_OPSET
    assert table(second) == table(torch_built)
    assert len in first.functions and len not in second.functions
    assert all(second.functions[t] is not first.functions[t] for t in second.functions)


def test_torchs_classmethod_is_back_after_the_with_even_after_an_error():
    before = ONNXRegistry.__dict__["from_torchlib"]
    with pytest.raises(RuntimeError), torchlib_registry.built_once():
        assert ONNXRegistry.__dict__["from_torchlib"] is not before
        raise RuntimeError("an export that failed")
    assert ONNXRegistry.__dict__["from_torchlib"] is before
