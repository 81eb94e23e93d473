"""OnnxBackend.reorder when rows leave the batch: the rows that stay keep their own source's cross K/V, as views of
the first rows when those already hold the right sources (finished alternatives of one sentence), else gathered;
the next step's log-probs are bitwise those of a state gathered row by row."""
import numpy as np
import pytest
from export_fixtures import exported

from runtime import OnnxTranslator
from runtime.onnx_backend import OnnxState

pytestmark = pytest.mark.exports


@pytest.fixture(scope="module")
def backend():
    return OnnxTranslator(exported("translate"), provider="cpu", threads=1).backend


def two_sources():
    ids = np.array([[5, 9, 12, 7, 2], [8, 6, 2, 0, 0]], dtype=np.int64)
    return ids, ids != 0


def gathered(state: OnnxState, rows: np.ndarray) -> OnnxState:
    """The reference: every array gathered row by row."""
    take = lambda arrays: tuple(a.take(rows, axis=0) for a in arrays)  # noqa: E731
    return OnnxState(state.src_mask.take(rows, axis=0), take(state.cross), take(state.past), state.sources[rows])


def stepped(backend, split: list[int], keep: list[int]):
    """Encode, make rows of the sources `split` names, step once; the state and the rows to keep."""
    ids, mask = two_sources()
    n = max(split) + 1
    state = backend.reorder(backend.encode(ids[:n], mask[:n]), np.array(split))
    _, state = backend.step(np.arange(4, 4 + len(split)), state)
    return state, np.array(keep)


def test_rows_of_one_source_leaving_keep_the_first_rows_cross_kv_as_views(backend):
    state, keep = stepped(backend, [0, 0, 0, 0, 0], [0, 2, 4])
    kept = backend.reorder(state, keep)
    assert all(np.shares_memory(a, b) for a, b in zip(kept.cross, state.cross, strict=True))  # no copy
    want = gathered(state, keep)
    assert kept.sources.tolist() == want.sources.tolist() and np.array_equal(kept.src_mask, want.src_mask)
    tokens = np.array([7, 11, 13])
    assert np.array_equal(backend.step(tokens, kept)[0], backend.step(tokens, want)[0])


@pytest.mark.parametrize("keep", [[0, 2, 3], [2, 3], [3, 0]])
def test_rows_whose_sources_differ_from_the_first_rows_get_their_own_cross_kv(backend, keep):
    state, keep = stepped(backend, [0, 0, 1, 1], keep)
    kept, want = backend.reorder(state, keep), gathered(state, keep)
    assert all(np.array_equal(a, b) for a, b in zip(kept.cross, want.cross, strict=True))
    assert np.array_equal(kept.src_mask, want.src_mask)
    tokens = np.arange(20, 20 + len(keep))
    assert np.array_equal(backend.step(tokens, kept)[0], backend.step(tokens, want)[0])
