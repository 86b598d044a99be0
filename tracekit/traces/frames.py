"""Small DataFrames built without pandas' general constructor: the per-rank tables' fixed cost.

A worker of ``tracekit analyze`` builds a dozen small frames per rank (the event table, the
rank's GPU activity and steps, each rank table). ``pd.DataFrame(dict)`` re-checks and
re-infers every column (``sanitize_array``, an index built from the keys): 150-250 µs per
frame whatever its size, a sixth of the per-rank cost on many small ranks.
:func:`frame` returns the same frame (values, dtypes, column index, ``RangeIndex``) in about a
quarter of the time when every column is a 1-D numpy array of a plain numeric or bool
dtype, or a ``pd.Categorical``: those pandas stores as they are. An object or a numpy
unicode array goes through
the same inference as in ``pd.DataFrame`` (pandas' ``sanitize_array``: strings become pandas 3's
``str`` dtype) and is kept when that gives a plain, object, string or categorical column. A
column of any other kind (lists, scalars, datetimes) sends the whole frame through
``pd.DataFrame``, unchanged.

Importing this module does not import pandas (``tracekit analyze`` never builds a frame on its
per-rank path, and the analyses import :data:`NO_ROWS` and :data:`Columnar` from here): the
functions that return a frame import it when first called. :func:`tracekit.traces.stacking.stack_cols`
stacks the same parts as :func:`stack` into :data:`~tracekit.traces.cols.Cols`, without pandas for parts
given as columns.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Iterator, Mapping
from operator import attrgetter, itemgetter
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, Union

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

#: a table as a frame, or as its columns: numpy arrays of one length (a per-rank table before the
#: engine stacks the ranks of a batch into one frame, :func:`stack`)
Columnar = Union["pd.DataFrame", Mapping[str, np.ndarray]]

class _NoRows(Mapping[str, np.ndarray]):
    """An empty, read-only table given as columns that pickles to itself (results cross process pools)."""

    def __getitem__(self, key: str) -> np.ndarray:
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0

    def __reduce__(self) -> str:
        return "NO_ROWS"  # the module global: unpickled as this same object

    def __repr__(self) -> str:
        return "NO_ROWS"


#: a table without rows, as columns (a rank table with nothing to report: no frame is built for it;
#: :func:`stack` skips it, :func:`tracekit.analyses.registry.conform` keeps it)
NO_ROWS: Mapping[str, np.ndarray] = _NoRows()

#: numpy dtype kinds stored as they are: bool, signed and unsigned int, float
_PLAIN_KINDS = frozenset("biuf")
#: column index per tuple of names (a worker builds the same tables for every rank)
_COLUMNS: dict[tuple[str, ...], pd.Index] = {}


@functools.cache
def _pandas() -> SimpleNamespace:
    """pandas and the private pieces :func:`frame` uses, imported on the first call that builds a frame."""
    import pandas as pd  # here, not at module level: the analyze path imports this module but builds no frame

    try:
        from pandas.core.construction import sanitize_array as sanitize
    except ImportError:  # pragma: no cover - a pandas without it: object columns take the public path
        sanitize = None
    return SimpleNamespace(
        pd=pd, from_arrays=getattr(pd.DataFrame, "_from_arrays", None), sanitize=sanitize,
        # the array wrapping a numpy column (``series.array``; ``PandasArray`` before pandas 2.1)
        numpy_ea=getattr(pd.arrays, "NumpyExtensionArray", None) or getattr(pd.arrays, "PandasArray", None))


def is_frame(t: Any) -> bool:
    """``t`` is a pandas DataFrame (or a subclass's), told without importing pandas: without pandas
    imported there is no frame."""
    pd = sys.modules.get("pandas")
    return pd is not None and isinstance(t, pd.DataFrame)


def _plain(v: Any, pd: Any) -> bool:
    if isinstance(v, np.ndarray):
        return v.ndim == 1 and v.dtype.kind in _PLAIN_KINDS
    return isinstance(v, pd.Categorical)


def _stored(v: Any, copy: bool, p: SimpleNamespace) -> Any:
    """``v`` as pandas would store it in a new frame's column, or None when that is not a plain,
    object, string or categorical 1-D array (the caller then takes the public path)."""
    if p.numpy_ea is not None and type(v) is p.numpy_ea:  # (not its subclasses, e.g. a string array)
        v = v.to_numpy()  # what pd.DataFrame stores of it
    if _plain(v, p.pd):
        return v.copy() if copy else v
    if isinstance(v, np.ndarray) and v.dtype.kind == "O" and v.shape == (0,):
        return v.copy() if copy else v  # nothing to infer: pandas keeps an empty object column as it is
    if p.sanitize is None or not isinstance(v, np.ndarray) or v.ndim != 1 or v.dtype.kind not in "OU":
        return None  # (a pandas string array, too: the private constructor may change its missing value)
    out = p.sanitize(v, None, copy=copy)
    if isinstance(out, np.ndarray):
        return out if out.ndim == 1 and (out.dtype.kind in _PLAIN_KINDS or out.dtype.kind == "O") else None
    return out if isinstance(out.dtype, (p.pd.StringDtype, p.pd.CategoricalDtype)) else None


def frame(data: Mapping[str, Any], *, copy: bool = True) -> pd.DataFrame:
    """``pd.DataFrame(dict(data), copy=copy)``: the same frame, faster for plain columns (module doc).

    ``copy=False`` lets the frame share the arrays' memory (only for arrays nobody else
    writes to). Names must be strings and the columns of equal length (as the frames of
    the per-rank tables are); anything else takes pandas' own path.
    """
    p = _pandas()
    pd = p.pd
    values = list(data.values())
    if (p.from_arrays is None or not values or not all(type(k) is str for k in data)
            or not all(hasattr(v, "__len__") for v in values)):
        return pd.DataFrame(dict(data), copy=copy)
    n = len(values[0])
    arrays = [_stored(v, copy, p) if len(v) == n else None for v in values]
    if any(a is None for a in arrays):
        return pd.DataFrame(dict(data), copy=copy)
    names = tuple(data)
    cols = _COLUMNS.get(names)
    if cols is None:
        cols = _COLUMNS[names] = pd.Index(list(names))
    try:
        return p.from_arrays(arrays, columns=cols, index=pd.RangeIndex(n), verify_integrity=False)
    except (TypeError, ValueError):  # a pandas whose private constructor differs: the public one
        return pd.DataFrame(dict(data), copy=copy)


def empty_frame(columns: tuple[str, ...] | list[str]) -> pd.DataFrame:
    """``pd.DataFrame(columns=list(columns))`` (no rows, object columns), in a third of its time:
    an empty table is the common per-rank result of several analyses on small ranks."""
    return frame({c: np.empty(0, dtype=object) for c in columns}, copy=False)


def n_rows(t: Columnar) -> int:
    """Rows of a frame or of a table given as its columns (0 for one without columns)."""
    if is_frame(t):
        return len(t)
    return len(next(iter(t.values()))) if len(t) else 0


def _inferred(v: np.ndarray) -> str:
    """What a frame makes of an object column: ``"str"`` when every value is a str or missing (None, NaN)
    and one is a str (pandas' string inference), else ``"object"``."""
    some = False
    for x in v:
        if type(x) is str:
            some = True
        elif not (x is None or (isinstance(x, float) and x != x)):
            return "object"
    return "str" if some else "object"


def stack(parts: list[Columnar], columns: tuple[str, ...] | None = None) -> pd.DataFrame:
    """The tables ``parts`` (frames or columns, e.g. one per rank) stacked in order into one frame,
    as ``pd.concat`` of their frames would (empty parts skipped; with none left, an empty frame
    with ``columns``).

    Parts given as columns are stacked as numpy arrays and become one frame: the cost of a frame is
    paid once, not per part. Where that could differ from stacking their frames (a column whose dtype,
    or whose string inference, differs between parts), the parts become frames first.
    """
    pd = _pandas().pd
    parts = [p for p in parts if n_rows(p)]
    if not parts:
        return empty_frame(columns) if columns else pd.DataFrame()
    if all(not is_frame(p) for p in parts) and _stackable(parts):
        return frame({k: np.concatenate([p[k] for p in parts]) for k in parts[0]}, copy=False)
    frames = [p if is_frame(p) else frame(p) for p in parts]
    return pd.concat(frames, ignore_index=True)


def _stackable(parts: list[Mapping[str, np.ndarray]]) -> bool:
    """Same columns, all numpy, one dtype per column across ``parts``, and for object columns one
    string inference (:func:`_inferred`): stacking the arrays then gives ``pd.concat``'s frame."""
    keys = list(parts[0])
    if any(list(p) != keys for p in parts):
        return False
    for k in keys:
        cols = list(map(itemgetter(k), parts))
        # map/set run in C: a batch stacks thousands of ranks' parts, a Python loop per part costs ~5% of it
        if set(map(type, cols)) != {np.ndarray} or set(map(attrgetter("ndim"), cols)) != {1}:
            return False
        if len(set(map(attrgetter("dtype"), cols))) != 1:
            return False
        if cols[0].dtype.kind == "O" and len(set(map(_inferred, cols))) != 1:
            return False
    return True
