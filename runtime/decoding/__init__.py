"""Decoding: search algorithms written once, in numpy, against the `DecoderBackend` step interface.

- `greedy`, `beam_search`, `sample`: batched searches returning one `Hypothesis` per sentence (beam search: or its
  n best); each takes a forced `target_prefix` per sentence.
- `prefix_log_probs`: the next-token distribution after a forced prefix (where alternatives are taken).
- `BeamObserver`: what beam search reports when watched; `BeamTree` records it as the search tree.
- Backends: `runtime.onnx_backend.OnnxBackend` (onnxruntime sessions); `tx.decoding` has the PyTorch ones.
"""
from .backend import DecoderBackend, State, top_k_numpy
from .beam import beam_search
from .beam_tree import BeamObserver, BeamTree
from .hypothesis import DEFAULT_EXTRA_LEN, Hypothesis, length_penalty, max_lengths, normalized_score
from .paths import greedy, keep_top_k, keep_top_p, sample, softmax
from .prefix import prefix_log_probs

__all__ = [
    "DecoderBackend", "State", "top_k_numpy",
    "Hypothesis", "length_penalty", "normalized_score", "max_lengths", "DEFAULT_EXTRA_LEN",
    "greedy", "beam_search", "BeamObserver", "BeamTree", "sample", "keep_top_k", "keep_top_p", "softmax",
    "prefix_log_probs",
]
