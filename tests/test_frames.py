"""tracekit.traces.frames.frame builds the same DataFrame as pd.DataFrame(dict), faster."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tracekit.traces import frames
from tracekit.traces.frames import frame


def _obj(*values: object) -> np.ndarray:
    a = np.empty(len(values), dtype=object)
    a[:] = list(values)
    return a


_CAT = pd.Categorical.from_codes(np.array([0, -1, 1]), categories=pd.Index(["x", "y"], dtype=object))

CASES = {
    "plain": {"a": np.arange(3), "b": np.array([1.0, np.nan, 3]), "c": np.array([True, False, True]), "d": _CAT,
              "e": np.arange(3, dtype=np.uint8), "f": np.arange(3, dtype=np.int32), "g": np.ones(3, np.float32)},
    "empty": {"a": np.arange(0), "b": np.array([], dtype=float), "c": np.array([], dtype=object)},
    "objects": {"s": _obj("a", "b", "c"), "none": _obj(None, None, None), "holes": _obj("a", None, np.nan),
                "ints": _obj(1, 2, 3), "mixed": _obj(1, "a", None), "dicts": _obj({"a": 1}, {}, None),
                "lists": _obj([1], [2], [3]), "bools": _obj(True, False, None), "f": np.arange(3.0)},
    "unicode": {"u": np.array(["ab", "c", ""]), "i": np.arange(3)},
    "numpy wrapped": {"w": pd.Series(np.arange(3.0)).array, "o": pd.Series(_obj("a", None, "b")).array},
    "string arrays": {"s": pd.array(["a", None, "b"], dtype="string"), "x": np.arange(3)},
    "nullable ints": {"n": pd.array([1, None, 3], dtype="Int64")},
    "list column": {"a": [1, 2, 3], "b": np.arange(3)},
    "scalar": {"a": np.arange(3), "b": 1.5},
    "series": {"a": pd.Series([1, 2, 3])},
    "datetimes": {"t": np.array(["2020-01-01", "2021-01-01", "NaT"], dtype="datetime64[ns]")},
    "two-d": {"a": np.arange(3)},  # (a plain control next to the fallbacks)
}


@pytest.mark.parametrize("copy", [True, False])
@pytest.mark.parametrize("case", sorted(CASES))
def test_frame_is_pandas_frame(case: str, copy: bool) -> None:
    data = CASES[case]
    got, want = frame(data, copy=copy), pd.DataFrame(data, copy=copy)
    pd.testing.assert_frame_equal(got, want, check_exact=True, check_index_type=True, check_column_type=True,
                                  check_categorical=True)
    assert list(got.dtypes) == list(want.dtypes)
    assert got.columns.dtype == want.columns.dtype and type(got.index) is type(want.index)


def test_frame_does_not_write_through_to_its_arrays() -> None:
    a = np.arange(3)
    f = frame({"a": a, "b": np.ones(3)})
    f.loc[0, "a"] = 99
    assert a[0] == 0


def test_plain_frames_take_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Plain and object columns never reach pd.DataFrame (the point of the module); a list column does."""
    calls = []
    real = pd.DataFrame

    class Spy(real):  # type: ignore[misc, valid-type]
        def __init__(self, *a: object, **k: object) -> None:
            calls.append(a)
            super().__init__(*a, **k)

    monkeypatch.setattr(frames.pd, "DataFrame", Spy)
    frame(CASES["plain"])
    frame(CASES["objects"])
    assert calls == []
    frame(CASES["list column"])
    assert len(calls) == 1
