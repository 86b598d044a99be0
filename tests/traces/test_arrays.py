"""tracekit.traces.arrays.unique is np.unique (values, dtypes, shapes) for every return combination, on the
dtypes and sizes it sorts itself, and hands the others (floats with NaN, objects, 2-D, long arrays) to
np.unique."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tracekit.traces.arrays import unique

_rng = np.random.default_rng(7)
CASES = {
    "empty int": np.array([], dtype=np.int64),
    "one": np.array([5]),
    "small ints with repeats": _rng.integers(-5, 5, 50),
    "large ns values": _rng.integers(0, 10**15, 300, dtype=np.int64),
    "int8 codes": _rng.integers(-1, 3, 40).astype(np.int8),
    "uint32": _rng.integers(0, 5, 20).astype(np.uint32),
    "bools": _rng.random(30) > 0.5,
    "str": np.array(["b", "a", "b", "c", "a"]),
    "bytes": np.array([b"x", b"a", b"x"]),
    "empty str": np.array([], dtype="<U3"),
    "floats with NaN": np.array([2.0, np.nan, 1.0, np.nan, 2.0]),
    "objects": np.array(["b", None, "a", None], dtype=object)[[0, 2, 0]],
    "2-D": _rng.integers(0, 3, (4, 3)),
    "at the size limit": _rng.integers(0, 40, 512),
    "past it (np.unique's path)": _rng.integers(0, 40, 513),
}


@pytest.mark.parametrize("name", list(CASES))
def test_unique_is_np_unique(name: str) -> None:
    a = CASES[name]
    for ri, rv, rc in itertools.product([False, True], repeat=3):
        want = np.unique(a, return_index=ri, return_inverse=rv, return_counts=rc)
        got = unique(a, return_index=ri, return_inverse=rv, return_counts=rc)
        want, got = (want if isinstance(want, tuple) else (want,)), (got if isinstance(got, tuple) else (got,))
        assert len(got) == len(want) == 1 + ri + rv + rc
        for w, g in zip(want, got):
            assert g.dtype == w.dtype and g.shape == w.shape
            assert np.array_equal(g, w, equal_nan=w.dtype.kind == "f")


def test_first_index_is_the_first_occurrence() -> None:
    values, first = unique(np.array([3, 1, 3, 1, 2]), return_index=True)
    assert values.tolist() == [1, 2, 3] and first.tolist() == [1, 4, 0]
