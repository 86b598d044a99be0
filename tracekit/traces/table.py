"""Turn decoded :class:`~tracekit.traces.decode.Columns` into the event DataFrame of :mod:`.schema`.

This is the only place the loader touches pandas, and it runs in the parent
process after the (pandas-free) parse workers have returned their columns.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tracekit.traces import schema
from tracekit.traces.decode import (CHUNK_BYTES, DENSE_COLUMNS, SPARSE_COLUMNS, SPARSE_INT_COLUMNS, Columns,
                                    decode_columns)
from tracekit.traces.frames import frame


def events_frame(cols: Columns) -> pd.DataFrame:
    """The event table (:data:`schema.EVENT_COLUMNS`) of one trace.

    ``name`` and the collective args become Categoricals: a trace has hundreds of
    thousands of events but only thousands of distinct names, and the args are
    set on a few hundred rows only.
    """
    data: dict[str, Any] = {c: cols.dense[c] for c in DENSE_COLUMNS}
    data["end_ns"] = data["ts_ns"] + data["dur_ns"]
    for col in SPARSE_INT_COLUMNS:
        dense = np.full(cols.n, -1, dtype=np.int64)
        dense[cols.sparse_idx] = cols.sparse[col]
        data[col] = dense
    data["name"] = pd.Categorical.from_codes(cols.name_codes, categories=pd.Index(cols.names, dtype=object))
    for col in SPARSE_COLUMNS:
        sparse = categorical(cols.sparse[col])
        codes = np.full(cols.n, -1, dtype=sparse.codes.dtype)
        codes[cols.sparse_idx] = sparse.codes
        data[col] = pd.Categorical.from_codes(codes, dtype=sparse.dtype)
    # the arrays are fresh and owned here: no copy, no consolidation into one 2-D block
    return frame({c: data[c] for c in schema.EVENT_COLUMNS}, copy=False)


def str_codes(values: list[Any]) -> tuple[np.ndarray, list[str]] | None:
    """``(codes, sorted distinct values)`` of a list of str/None (None: code -1), as int64; None when
    a value is neither (mixed types do not sort: the caller takes ``pd.Categorical``'s path)."""
    distinct = {v for v in values if v is not None}
    if not all(type(v) is str for v in distinct):  # checked before sorting: mixed types do not sort
        return None
    uniq = sorted(distinct)
    index = {v: i for i, v in enumerate(uniq)}
    codes = np.fromiter((-1 if v is None else index[v] for v in values), dtype=np.int64, count=len(values))
    return codes, uniq


def categorical(values: list[Any]) -> pd.Categorical:
    """``pd.Categorical(values)`` (categories sorted, None missing) for a list of str/None, without
    pandas' general factorize: five such columns per rank were most of this module's cost on small ranks."""
    sc = str_codes(values)
    if sc is None:
        return pd.Categorical(values)
    codes, uniq = sc
    return pd.Categorical.from_codes(codes, categories=pd.Index(uniq))


def decode_table(path: Path, chunk_bytes: int = CHUNK_BYTES) -> tuple[dict[str, Any], pd.DataFrame]:
    """``(meta, event table)`` of one trace file, decoded in this process."""
    meta, cols = decode_columns(Path(path), chunk_bytes)
    return meta, events_frame(cols)
