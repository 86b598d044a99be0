"""JSON-safe Python from tracekit's results: DataFrames, numpy scalars, msgspec Structs (NaN -> null).

Shared by the renderers (:mod:`tracekit.report.render`) and the results that convert themselves
(:meth:`tracekit.replay.api.WhatifResult.to_dict`); it depends on nothing of tracekit.
"""

from __future__ import annotations

import math
from typing import Any

import msgspec
import numpy as np
import pandas as pd


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
    if isinstance(v, pd.DataFrame):
        return records(v)
    if isinstance(v, msgspec.Struct):  # the typed run.json
        return jsonable(msgspec.to_builtins(v))
    if isinstance(v, dict):
        return {str(k): jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    if v is pd.NA or v is pd.NaT:
        return None
    if isinstance(v, str) and not v.isascii():
        return _utf8(v)
    return v


def _utf8(s: str) -> str:
    """``s`` encodable as UTF-8: the undecodable bytes of a file name (surrogate escapes) become ``\\xNN``."""
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return s.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return s


def records(df: pd.DataFrame) -> list[dict[str, Any]]:
    """DataFrame -> list of JSON-safe dicts (NaN -> null, numpy scalars -> Python)."""
    if df is None or df.empty:
        return []
    obj = df.astype(object).where(df.notna(), None)
    return [{k: jsonable(v) for k, v in row.items()} for row in obj.to_dict(orient="records")]
