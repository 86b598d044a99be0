"""JSON-safe Python from tracekit's results: tables (numpy columns or DataFrames), numpy scalars, msgspec
Structs (NaN -> null).

Values only (:mod:`tracekit.json_writer` writes them as text). Shared by the renderers
(:mod:`tracekit.report.render`) and the results that convert themselves
(:meth:`tracekit.replay.api.WhatifResult.to_dict`); it depends on nothing of tracekit.
"""

from __future__ import annotations

import math
from typing import Any

import msgspec
import numpy as np


def jsonable(v: Any) -> Any:
    """Any mix of dicts, lists, DataFrames and numpy scalars -> JSON-safe Python (NaN -> null)."""
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.floating):
        f = float(v)
        return f if math.isfinite(f) else None
    if isinstance(v, np.bool_):
        return bool(v)
    if _is_frame(v):
        return records(v)
    if isinstance(v, msgspec.Struct):  # the typed run.json
        return jsonable(msgspec.to_builtins(v))
    if isinstance(v, dict):
        return {str(k): jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    if type(v).__name__ in ("NAType", "NaTType") and type(v).__module__.startswith("pandas"):
        return None  # pd.NA, pd.NaT (told apart without importing pandas: the analyze path never does)
    if isinstance(v, str) and not v.isascii():
        return _utf8(v)
    return v


def _is_frame(v: Any) -> bool:
    return type(v).__name__ == "DataFrame" and type(v).__module__.startswith("pandas")


def _utf8(s: str) -> str:
    """``s`` encodable as UTF-8: the undecodable bytes of a file name (surrogate escapes) become ``\\xNN``."""
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return s.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return s


def records(t: Any) -> list[dict[str, Any]]:
    """A table -> list of JSON-safe dicts (NaN -> null, numpy scalars -> Python), in column order.

    ``t``: a :data:`~tracekit.traces.cols.Cols` (column name -> numpy array) or a DataFrame (None: no rows).
    Converted column by column: a numeric or bool numpy column becomes Python numbers in one
    ``tolist`` (non-finite floats null), any other column goes value by value through :func:`jsonable`
    (missing values null first). The rows are then zipped; on tables of thousands of ranks this is most
    of ``--format json``'s work.
    """
    if t is None:
        return []
    if _is_frame(t):
        if t.empty:
            return []
        names = list(t.columns)
        cols = [_column(t.iloc[:, i]) for i in range(t.shape[1])]
    else:
        names = list(t)
        cols = [column_values(np.asarray(t[k])) for k in names]
    return [dict(zip(names, row)) for row in zip(*cols)]


def _column(col: Any) -> list[Any]:
    """One column of :func:`records` (a pandas Series): JSON-safe Python values, in row order."""
    dtype = col.dtype
    if isinstance(dtype, np.dtype) and dtype.kind in "iubf":
        return column_values(col.to_numpy())
    values = col.astype(object).where(col.notna(), None)
    return [jsonable(v) for v in values.tolist()]


def column_values(a: np.ndarray) -> list[Any]:
    """A numpy column as JSON-safe Python values, in row order: what :func:`records` makes of the same
    column in a DataFrame (numbers and flags in one ``tolist``, non-finite floats and missing values None)."""
    if a.dtype.kind in "iub":
        return a.tolist()
    if a.dtype.kind == "f":
        bad = ~np.isfinite(a)
        if not bad.any():
            return a.tolist()
        out = a.astype(object)
        out[bad] = None
        return [None if v is None else float(v) for v in out.tolist()]
    return [None if v is None or (isinstance(v, float) and v != v) else jsonable(v) for v in a.tolist()]
