"""Which nn.Module each exported graph traces: the plain wrappers (export/wrappers.py, the reference), the fused
served graphs (export/fused_graphs.py, which subclass the plain ones), the walkthrough and the experiment graphs.
Apart from wrappers.py so that fused_graphs.py can import the wrappers it builds on without an import cycle."""
from __future__ import annotations

from torch import nn

from runtime.spec import GraphSpec

from .experiments import EXPERIMENT_MODULES
from .fused_graphs import FusedClassifierGraph, FusedDecoderStepGraph, FusedEncoderGraph
from .patching import PATCHING_MODULES
from .walkthrough import WALKTHROUGH_MODULES
from .wrappers import ClassifierGraph, DecoderExplainGraph, DecoderStepGraph, EncoderGraph


def wrapper_for(model: nn.Module, spec: GraphSpec, fused_attention: bool = False) -> nn.Module:
    """The module whose forward is exactly `spec`'s graph. fused_attention: the served graphs with onnxruntime's
    fused attention nodes (what the export writes); without it, the model's own code (the reference)."""
    builders = {
        "classifier": lambda: FusedClassifierGraph(model) if fused_attention else ClassifierGraph(model, explain=False),
        "classifier_explain": lambda: ClassifierGraph(model, explain=True),
        "encoder": lambda: FusedEncoderGraph(model) if fused_attention else EncoderGraph(model),
        "decoder": lambda: (FusedDecoderStepGraph if fused_attention else DecoderStepGraph)(model),
        "encoder_explain": lambda: EncoderGraph(model, explain=True),
        "decoder_explain": lambda: DecoderExplainGraph(model),
    }
    builders |= {name: (lambda module=module: module(model))
                 for name, module in (WALKTHROUGH_MODULES | EXPERIMENT_MODULES | PATCHING_MODULES).items()}
    if spec.name not in builders:
        raise ValueError(f"no wrapper for graph {spec.name!r}")
    return builders[spec.name]().eval()


