"""Random but well-formed inputs for a graph spec: the export examples and the parity checks' inputs."""
from __future__ import annotations

import numpy as np

from runtime.spec import BATCH, GraphSpec

FIRST_PLAIN_ID = 6  # ids below are specials (<pad> <s> </s> <unk> <2en> <2de>); real text ids start here
PAD_ID = 0


def padded_lengths(batch: int, length: int, rng: np.random.Generator) -> np.ndarray:
    """Row lengths for a padded batch: row 0 is full, the others random in [1, length], so padding is exercised."""
    lengths = rng.integers(1, length + 1, size=batch)
    lengths[0] = length
    return lengths


def random_inputs(spec: GraphSpec, axes: dict[str, int], vocab_size: int, seed: int = 0) -> list[np.ndarray]:
    """One array per spec input, in spec order, at the given axis sizes.

    Masks over the same axis share one set of row lengths, and ids beyond a row's length are
    padding, as the text wrappers would produce them.
    """
    rng = np.random.default_rng(seed)
    lengths: dict[str, np.ndarray] = {}
    arrays = []
    for tensor in spec.inputs:
        shape = tensor.shape_for(axes)
        if tensor.dtype == "float32":
            arrays.append((rng.standard_normal(shape) * 0.5).astype(np.float32))
            continue
        axis = tensor.dims[1] if len(tensor.dims) == 2 and tensor.dims[0] == BATCH else None
        if tensor.dtype == "bool":
            row_lengths = lengths.setdefault(axis, padded_lengths(shape[0], shape[1], rng))
            arrays.append(np.arange(shape[1])[None, :] < row_lengths[:, None])  # (B, S) True at real tokens
        else:
            low = FIRST_PLAIN_ID if vocab_size > FIRST_PLAIN_ID else 1
            arrays.append(rng.integers(low, vocab_size, size=shape, dtype=np.int64))
    # Padding positions of id inputs get the pad id where a mask over their axis exists.
    for tensor, array in zip(spec.inputs, arrays, strict=True):
        axis = tensor.dims[1] if len(tensor.dims) == 2 else None
        if tensor.dtype == "int64" and axis in lengths:
            array[np.arange(array.shape[1])[None, :] >= lengths[axis][:, None]] = PAD_ID
    return arrays
