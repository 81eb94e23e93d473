"""Decoding: search algorithms written once against the `DecoderBackend` step interface.

- `greedy`, `beam_search`, `sample`: batched searches returning one `Hypothesis` per sentence.
- `TorchBackend` (KV-cached steps) and `FullPrefixBackend` (recomputes the whole prefix, the
  no-cache reference) run a `Seq2SeqTransformer`; the ONNX runtime provides its own backend.
"""
from .backend import DecoderBackend, FullPrefixBackend, PrefixState, State, TorchBackend, TorchState
from .beam import beam_search
from .hypothesis import DEFAULT_EXTRA_LEN, Hypothesis, length_penalty, max_lengths, normalized_score
from .paths import greedy, keep_top_k, keep_top_p, sample

__all__ = [
    "DecoderBackend", "State", "TorchBackend", "TorchState", "FullPrefixBackend", "PrefixState",
    "Hypothesis", "length_penalty", "normalized_score", "max_lengths", "DEFAULT_EXTRA_LEN",
    "greedy", "beam_search", "sample", "keep_top_k", "keep_top_p",
]
