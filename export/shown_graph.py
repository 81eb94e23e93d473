"""The base of the graphs that are shown, not served (the Walkthrough's and the Experiments'): the model in eval
mode, whose `forward` takes the spec-ordered inputs as they are (no packing into nested tuples, as the served
wrappers need for their KV caches)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from torch import nn

from tx import SentimentClassifier, Seq2SeqTransformer


class ShownGraph(nn.Module):
    """The model in eval mode; the spec-ordered inputs are `forward`'s arguments as they are."""

    def __init__(self, model: Seq2SeqTransformer | SentimentClassifier):
        super().__init__()
        self.model = model.eval()

    @staticmethod
    def pack(flat: Sequence[Any]) -> tuple:
        return tuple(flat)
