"""Rank tables stacked into one :data:`~tracekit.traces.cols.Cols` table: :func:`stack_cols`.

The sibling of :func:`tracekit.traces.frames.stack` (which builds a frame) for the analyze path,
which computes with numpy columns. It lives apart from :mod:`.frames` because it reads frames with
:func:`~tracekit.traces.cols.as_cols`, and :mod:`.cols` imports :mod:`.frames` (``to_frame``):
here no import cycle forms. Importing this module does not import pandas.
"""

from __future__ import annotations

from operator import attrgetter, itemgetter

import numpy as np

from tracekit.traces.cols import Cols, as_cols, empty, isna
from tracekit.traces.frames import Columnar, is_frame, n_rows, stack


def stack_cols(parts: list[Columnar], columns: tuple[str, ...] | None = None) -> Cols:
    """:func:`stack` as :data:`~tracekit.traces.cols.Cols`: ``as_cols(stack(parts, columns))`` (the same
    rows and dtypes; text columns as object arrays with None for a missing value), without pandas when
    every part is given as numpy columns of the same names (frames, or other parts, take :func:`stack`'s
    path and import pandas). Columns whose dtype differs between parts stack as ``pd.concat`` does: ints
    and floats to their common type, text with anything to object; bools or datetimes with another dtype
    take :func:`stack`'s path (pandas' rules for those are uneven: int64 with bool gives int64, float32
    with bool object)."""
    parts = [p for p in parts if n_rows(p)]
    if not parts:
        return empty(columns or ())
    keys = list(parts[0])
    if any(is_frame(p) for p in parts) or any(list(p) != keys for p in parts):
        return as_cols(stack(parts, columns))
    out: Cols = {}
    for k in keys:
        arrays = list(map(itemgetter(k), parts))
        if set(map(type, arrays)) != {np.ndarray} or set(map(attrgetter("ndim"), arrays)) != {1}:
            return as_cols(stack(parts, columns))
        dtypes = set(map(attrgetter("dtype"), arrays))
        kinds = {d.kind for d in dtypes}
        if len(dtypes) > 1 and not kinds <= set("iuf") and kinds != {"U"}:
            if not kinds <= set("OUiuf"):  # bools or datetimes with other dtypes: pandas' own (uneven) rules
                return as_cols(stack(parts, columns))
            arrays = [a.astype(object) for a in arrays]  # text with anything: object, as pd.concat makes it
            kinds = {"O"}
        col = np.concatenate(arrays)
        if "O" in kinds or "U" in kinds:
            col = _missing_as_none(col.astype(object, copy=False))
        out[k] = col
    return out


def _missing_as_none(col: np.ndarray) -> np.ndarray:
    """An object column with each missing value (None, NaN) as None, as :func:`~tracekit.traces.cols.as_cols`
    reads a frame's text column (a copy only when a NaN is replaced)."""
    miss = isna(col)
    if miss.any():
        col = col.copy()
        col[miss] = None
    return col
