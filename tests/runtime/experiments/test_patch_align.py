"""The patching parts that need no model: the alignment rule, laying clean values out at corrupted positions, the
normalisation and its refusal, a patch's label."""
from __future__ import annotations

import numpy as np
import pytest

from runtime.experiments.patch_common import MIN_METRIC_GAP, Patch, align, chunks, normalise


def pieces(ids):
    return [f"p{i}" for i in ids]


def test_equal_counts_align_position_by_position_and_say_nothing():
    a = align([5, 7, 8, 9, 2], [5, 7, 6, 9, 2], pieces([5, 7, 8, 9, 2]), pieces([5, 7, 6, 9, 2]), fixed_ends=True)
    assert a.clean == a.corrupted == [0, 1, 2, 3, 4] and a.note is None


def test_different_counts_align_the_common_prefix_and_suffix_and_name_what_is_left_out():
    clean, corrupted = [4, 10, 11, 12, 13, 2], [4, 10, 20, 21, 22, 12, 13, 2]
    a = align(clean, corrupted, pieces(clean), pieces(corrupted), fixed_ends=True)
    assert a.clean == [0, 1, 3, 4, 5] and a.corrupted == [0, 1, 5, 6, 7]
    assert "6 pieces and the corrupted one 8" in a.note and "clean 'p11'" in a.note
    assert "corrupted 'p20 p21 p22'" in a.note and "positions 2–4" in a.note
    laid = a.lay_out(np.arange(6, dtype=np.float32)[:, None] + 1, axis=0)  # clean value i + 1 at clean position i
    assert laid[:, 0].tolist() == [1, 2, 0, 0, 0, 4, 5, 6]


def test_a_suffix_never_overlaps_the_prefix():
    a = align([4, 9, 9, 2], [4, 9, 9, 9, 2], pieces([4, 9, 9, 2]), pieces([4, 9, 9, 9, 2]), fixed_ends=True)
    assert a.clean == [0, 1, 2, 3] and a.corrupted == [0, 1, 2, 4]


def test_nothing_aligned_but_the_tag_and_end_is_refused_with_the_reason():
    with pytest.raises(ValueError, match="no position aligns: nothing to patch"):
        align([4, 10, 2], [4, 11, 12, 2], pieces([4, 10, 2]), pieces([4, 11, 12, 2]), fixed_ends=True)
    # without fixed ends (the classifier) the same ends are text, and they align
    assert align([4, 10, 2], [4, 11, 12, 2], pieces([4]), pieces([4]), fixed_ends=False).clean == [0, 2]
    with pytest.raises(ValueError, match="clean review has 2 pieces"):
        align([1, 2], [3, 4, 5], pieces([1]), pieces([1]), fixed_ends=False, noun="review")


def test_normalising_maps_corrupted_to_0_and_clean_to_1_and_refuses_a_tiny_gap():
    np.testing.assert_allclose(normalise(np.array([2.0, 5.0, 3.5]), clean=5.0, corrupted=2.0), [0.0, 1.0, 0.5])
    with pytest.raises(ValueError, match="almost the same metric"):
        normalise(np.array([1.0]), clean=1.0, corrupted=1.0 + MIN_METRIC_GAP / 2)
    normalise(np.array([1.0]), clean=1.0, corrupted=1.0 + 2 * MIN_METRIC_GAP)


def test_patch_labels_and_chunks():
    assert Patch("enc_resid", 0, -1, 3).label() == "encoder residual stream (embeddings) at position 3"
    assert Patch("dec_cross", 1, 2).label() == "cross-attention layer 2 head 3 at every aligned position"
    assert Patch("memory").label() == "encoder memory at every aligned position"
    assert [(s.start, s.stop) for s in chunks(5, 2_000_000)] == [(0, 2), (2, 4), (4, 6)]
