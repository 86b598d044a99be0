"""tracekit.jsonable.records: column-wise conversion, the same JSON-safe rows as converting cell by cell."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from tracekit.jsonable import jsonable, records


def _cell_by_cell(df: pd.DataFrame) -> list[dict]:
    """The definition: every cell through jsonable, missing values null."""
    if df.empty:
        return []
    obj = df.astype(object).where(df.notna(), None)
    return [{k: jsonable(v) for k, v in row.items()} for row in obj.to_dict(orient="records")]


FRAMES = {
    "numbers": pd.DataFrame({"i": [1, 2, 3], "u": np.array([1, 2, 3], np.uint8), "b": [True, False, True],
                             "f": [0.5, np.nan, np.inf], "g": np.array([0.1, -np.inf, 2], np.float32)}),
    "finite floats": pd.DataFrame({"f": [0.5, 1.0, 2.0]}),
    "text": pd.DataFrame({"s": ["a", None, "é"], "o": pd.Series([{"x": np.int64(1)}, None, [np.float64(2.5)]],
                                                                    dtype=object)}),
    "categorical": pd.DataFrame({"c": pd.Categorical(["x", None, "x"])}),
    "nullable": pd.DataFrame({"n": pd.array([1, None, 3], dtype="Int64"), "s": pd.array(["a", None, "b"],
                                                                                          dtype="string")}),
    "surrogate": pd.DataFrame({"p": ["/tmp/\udcff.json", "ok", None]}),
    "empty": pd.DataFrame(columns=["a", "b"]),
}


@pytest.mark.parametrize("name", sorted(FRAMES))
def test_records_is_cell_by_cell(name: str) -> None:
    df = FRAMES[name]
    got, want = records(df), _cell_by_cell(df)
    assert repr(got) == repr(want)  # types too: 1 is not 1.0, True is not 1
    for row in got:
        for v in row.values():
            assert not isinstance(v, (np.generic, float)) or (isinstance(v, float) and math.isfinite(v))


@pytest.mark.parametrize("name", sorted(FRAMES))
def test_records_of_numpy_columns_are_the_frames(name: str) -> None:
    # the analyze path hands records its tables as Cols (tracekit.traces.cols): the same rows as the frame's
    from tracekit.traces import cols as C

    df = FRAMES[name]
    assert repr(records(C.as_cols(df))) == repr(records(df))
