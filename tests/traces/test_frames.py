"""tracekit.traces.frames.frame builds the same DataFrame as pd.DataFrame(dict), faster."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tracekit.traces import frames, stacking
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

    frames._pandas()  # (pandas' private constructor, looked up once: the real one)
    monkeypatch.setattr(pd, "DataFrame", Spy)
    frame(CASES["plain"])
    frame(CASES["objects"])
    assert calls == []
    frame(CASES["list column"])
    assert len(calls) == 1


# -- tables as columns: stack, empty_frame, n_rows ------------------------------------

def _concat(parts: list) -> pd.DataFrame:
    """What the engine did before tables could be columns: one frame per part, then pd.concat."""
    frames_ = [p if isinstance(p, pd.DataFrame) else pd.DataFrame(dict(p)) for p in parts]
    return pd.concat([f for f in frames_ if len(f)], ignore_index=True)


STACKS = {
    "numbers": [{"a": np.arange(2), "b": np.array([0.5, np.nan])}, {"a": np.arange(3), "b": np.ones(3)}],
    "strings": [{"s": _obj("x", None)}, {"s": _obj("y", np.nan)}],
    "no strings": [{"s": _obj(None)}, {"s": _obj(None, np.nan)}],
    # one part infers str, the other object: pd.concat gives object; the stacked array alone would give str
    "str then none": [{"s": _obj("x")}, {"s": _obj(None)}],
    "int then float": [{"a": np.arange(2)}, {"a": np.array([0.5])}],
    "int then bool": [{"a": np.arange(2)}, {"a": np.array([True])}],
    "unicode": [{"u": np.array(["ab", "c"])}, {"u": np.array(["def"])}],
    "frame and columns": [pd.DataFrame({"a": [1, 2]}), {"a": np.array([3])}],
    "with empties": [frames.NO_ROWS, {"a": np.arange(2)}, {"a": np.empty(0, dtype=np.int64)}],
}


@pytest.mark.parametrize("case", sorted(STACKS))
def test_stack_is_concat_of_frames(case: str) -> None:
    parts = STACKS[case]
    got, want = frames.stack(parts), _concat(parts)
    pd.testing.assert_frame_equal(got, want, check_exact=True, check_index_type=True, check_column_type=True)
    assert list(got.dtypes) == list(want.dtypes)


def test_stack_of_nothing_is_an_empty_frame_with_the_columns() -> None:
    got = frames.stack([frames.NO_ROWS, {"a": np.empty(0)}], ("a", "b"))
    pd.testing.assert_frame_equal(got, pd.DataFrame(columns=["a", "b"]), check_index_type=True)


def test_stack_builds_one_frame_for_column_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    """The point of columns: many parts, one frame (pd.concat is never called)."""
    monkeypatch.setattr(pd, "concat", lambda *a, **k: pytest.fail("pd.concat called"))
    got = frames.stack([{"a": np.arange(2), "s": _obj("x", "y")} for _ in range(50)])
    assert len(got) == 100 and str(got["s"].dtype) == str(pd.DataFrame({"s": _obj("x")})["s"].dtype)


def test_empty_frame_and_n_rows() -> None:
    pd.testing.assert_frame_equal(frames.empty_frame(("x", "y")), pd.DataFrame(columns=["x", "y"]),
                                  check_index_type=True, check_column_type=True)
    assert frames.n_rows(frames.NO_ROWS) == 0
    assert frames.n_rows({"a": np.arange(4), "b": np.ones(4)}) == 4
    assert frames.n_rows(pd.DataFrame({"a": [1, 2]})) == 2


def test_no_rows_is_empty_read_only_and_pickles_to_itself() -> None:
    import pickle

    assert pickle.loads(pickle.dumps(frames.NO_ROWS)) is frames.NO_ROWS  # results cross process pools
    assert len(frames.NO_ROWS) == 0 and "a" not in frames.NO_ROWS and frames.n_rows(frames.NO_ROWS) == 0
    with pytest.raises(TypeError):
        frames.NO_ROWS["a"] = np.arange(1)  # type: ignore[index]


# -- stack_cols: stack as numpy columns ----------------------------------------------------------------

def _same_cols(got: dict, want: dict) -> None:
    assert list(got) == list(want)
    for k in want:
        g, w = got[k], want[k]
        assert isinstance(g, np.ndarray) and g.dtype == w.dtype, (k, g.dtype, w.dtype)
        if w.dtype.kind == "O":
            assert [type(x) for x in g] == [type(x) for x in w] and g.tolist() == w.tolist(), k
        else:
            np.testing.assert_array_equal(g, w)


STACK_COLS = {
    **STACKS,
    "unicode widths": [{"u": np.array(["a"])}, {"u": np.array(["bcd", "ef"])}],
    "text and numbers": [{"s": _obj("x", None)}, {"s": np.array([1.5, np.nan])}],
    "bool and float": [{"a": np.array([True])}, {"a": np.array([0.5])}],
    "bool and float32": [{"a": np.array([True])}, {"a": np.array([0.5], dtype=np.float32)}],
    "float32 and int64": [{"a": np.array([0.5], dtype=np.float32)}, {"a": np.arange(2)}],
    "uint64 and int64": [{"a": np.arange(2, dtype=np.uint64)}, {"a": np.arange(2)}],
    "unicode and ints": [{"a": np.array(["x"])}, {"a": np.arange(2)}],
    "int32 and int64": [{"a": np.arange(2, dtype=np.int32)}, {"a": np.arange(2)}],
    "objects with nan": [{"s": _obj("x", np.nan), "i": np.arange(2)}, {"s": _obj(None, "y"), "i": np.arange(2)}],
    "differing columns": [{"a": np.arange(2)}, {"b": np.arange(1)}],
    "datetimes and ints": [{"t": np.array(["2020-01-01"], dtype="datetime64[ns]")}, {"t": np.arange(1)}],
    "list part": [{"a": [1, 2]}, {"a": np.arange(1)}],
}


@pytest.mark.parametrize("case", sorted(STACK_COLS))
def test_stack_cols_is_cols_of_stack(case: str) -> None:
    from tracekit.traces.cols import as_cols

    parts = STACK_COLS[case]
    _same_cols(stacking.stack_cols(parts), as_cols(frames.stack(parts)))


def test_stack_cols_of_nothing_has_the_columns() -> None:
    from tracekit.traces.cols import as_cols

    for columns in (("a", "b"), None):
        got = stacking.stack_cols([frames.NO_ROWS, {"a": np.empty(0)}], columns)
        _same_cols(got, as_cols(frames.stack([frames.NO_ROWS, {"a": np.empty(0)}], columns)))


def test_stack_cols_of_column_parts_builds_no_frame(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stacking, "stack", lambda *a, **k: pytest.fail("stack called"))
    monkeypatch.setattr(frames, "frame", lambda *a, **k: pytest.fail("frame called"))
    parts = [STACK_COLS[c] for c in ("numbers", "strings", "str then none", "unicode widths", "unicode and ints",
                                     "text and numbers", "float32 and int64", "with empties")]
    for p in parts:
        stacking.stack_cols(p)


def test_traces_modules_import_without_pandas() -> None:
    """The analyze path imports the traces layer (and builds its per-rank columns) without pandas."""
    import subprocess
    import sys

    code = ("import sys, tracekit.traces.traceset, tracekit.traces.loader, tracekit.traces.frames, "
            "tracekit.traces.table, tracekit.traces.schema, tracekit.traces.shared, tracekit.traces.decode, "
            "tracekit.traces.manifest, tracekit.traces.arrays, tracekit.traces.cols, tracekit.traces.stacking\n"
            "from pathlib import Path\n"
            "rt = tracekit.traces.loader.read_rank(Path('sample_traces/fixtures/eager_ddp/rank1.trace.json.gz'))\n"
            "rt.gpu_arrays(); rt.step_arrays(); rt.categories('coll_name'); rt.name_hits('nccl')\n"
            "h = tracekit.traces.traceset.RankTrace.header_only(Path('x'), {}, has_gpu_activity=False)\n"
            "h.column('name'); h.name_hits('x'); h.n_events\n"
            "assert 'pandas' not in sys.modules, 'pandas imported'\n")
    root = Path(__file__).resolve().parents[2]
    subprocess.run([sys.executable, "-c", code], check=True, cwd=root, env={**os.environ, "PYTHONPATH": str(root)})
