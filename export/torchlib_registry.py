"""torch.onnx's table of ATen -> ONNX translations, built once per process instead of once per graph.

`torch.onnx.export(dynamo=True)` builds its registry from torchlib on every call (`ONNXRegistry.from_torchlib`:
about 2,000 functions, each one's ONNX signature inferred), then adds the call's custom translations to it. On the
2-core test hosts that took 0.45-0.8 s a call, about a tenth of a tiny model's graph, on every graph of every
export (docs/export-and-runtime.md). `built_once()` keeps the first registry per opset and
hands each export call a copy with lists of its own, so the custom translations one call adds (fused attention)
never reach the next; the translations themselves are the same objects, as the exporter would rebuild them.

It replaces a private classmethod for the span of the `with`, and restores it after. Where this torch lays out its
exporter otherwise, the `with` changes nothing and every graph builds its own registry, as before.
"""
from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator

try:
    from torch.onnx._internal.exporter._registration import ONNXRegistry
except ImportError:  # another torch's layout: export as torch does it
    ONNXRegistry = None
# the classmethod as torch defines it, kept at import: a nested `with` must not take the copying one for torch's
_FROM_TORCHLIB = None if ONNXRegistry is None else ONNXRegistry.__dict__.get("from_torchlib")
# the layout this module copies: a classmethod that builds a registry holding its translations in `functions`
_LAYOUT_KNOWN = isinstance(_FROM_TORCHLIB, classmethod) and hasattr(ONNXRegistry(), "functions")


def _copy(registry):
    """A registry that shares `registry`'s translations but not its lists (what the exporter appends to)."""
    fresh = type(registry)()
    fresh._opset_version = registry._opset_version
    fresh.functions = {target: list(decompositions) for target, decompositions in registry.functions.items()}
    return fresh


@functools.cache
def _built(opset_version: int):
    return _FROM_TORCHLIB.__get__(None, ONNXRegistry)(opset_version=opset_version)


def _from_torchlib(cls, opset_version=None):
    if opset_version is None:  # the exporter always passes it; without one, torch's own default
        return _FROM_TORCHLIB.__get__(None, cls)()
    return _copy(_built(opset_version))


@contextlib.contextmanager
def built_once() -> Iterator[None]:
    """Inside the `with`, every torch.onnx export in this process gets a copy of one registry per opset."""
    if not _LAYOUT_KNOWN:
        yield
        return
    ONNXRegistry.from_torchlib = classmethod(_from_torchlib)
    try:
        yield
    finally:
        ONNXRegistry.from_torchlib = _FROM_TORCHLIB
