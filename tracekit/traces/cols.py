"""Tables as numpy columns: what ``tracekit analyze`` computes with, so that its path never imports pandas.

A table here is a :data:`Cols`: a ``dict`` from column name to a 1-D numpy array, every array of
one length, in column order. Text is an ``object`` array of ``str`` with ``None`` (or NaN) for a
missing value; numbers and flags are plain numpy dtypes (a missing number is NaN in a float
column). Importing pandas alone takes longer (0.1-0.2 s) than analysing a small trace, so the
analyze path computes its tables with the functions below; :func:`to_frame` turns a table into
the DataFrame ``tracekit.analyze()`` returns (the one place pandas enters, imported then).

The functions reproduce the pandas operations the analyses were first written with, where a
difference would show in a result:

- :class:`Groups` is ``df.groupby(by)`` with its defaults: groups in sorted key order, a row
  whose key is missing (NaN, None) in no group; its reductions skip missing values as pandas'
  do (``sum`` of none is 0, ``mean``/``max``/``min``/``first`` of none NaN, ``nunique``
  and ``count`` of the present ones). Float sums and means are Kahan-compensated sums in row order
  (:func:`kahan_sums`), pandas' algorithm for grouped sums: a plain sum moved a printed bucket mean
  by a last digit. They may still differ from a given pandas build in the last bit (pandas 3.1 adds a
  single-key group's values plainly), never by more.
- :func:`merge` is ``left.merge(right, on=..., how="left" | "inner")``: the left rows in order,
  each with its matches in the right table's order; a left row without a match gets a missing
  value in each right column (an integer column becomes float, a bool one object, as pandas
  makes them).
- :func:`sort` is ``sort_values(by, kind="stable")`` with missing values last.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from tracekit.traces.frames import frame, is_frame
from tracekit.traces.frames import n_rows as nrows  # (re-exported: the analyses' row count of any table)

#: a table: column name -> 1-D numpy array (all of one length), in column order
Cols = dict[str, np.ndarray]


def as_cols(t: Any) -> Cols:
    """A table as :data:`Cols`: a DataFrame's columns as numpy arrays (text and pandas' nullable columns as
    object arrays, missing values None, categoricals as their values); a mapping of arrays as a dict."""
    if t is None:
        return {}
    if not is_frame(t):
        return {str(k): np.asarray(v) for k, v in t.items()}
    out: Cols = {}
    for name in t.columns:
        col = t[name]
        dtype = col.dtype
        if isinstance(dtype, np.dtype) and dtype.kind in "biuf":
            out[str(name)] = col.to_numpy()
        elif isinstance(dtype, np.dtype) and dtype.kind == "M":
            out[str(name)] = col.to_numpy()
        else:
            values = col.astype(object).to_numpy()
            missing = col.isna().to_numpy()
            if missing.any():
                values = values.copy()
                values[missing] = None
            out[str(name)] = values
    return out


def to_frame(t: Any, nullable_ints: Sequence[str] = ()) -> Any:
    """The table as a pandas DataFrame (what ``pd.DataFrame(t)`` makes of it; imports pandas). The columns named
    in ``nullable_ints`` become pandas' nullable ``Int64`` where they are text (object) columns: integers with
    missing values (None), e.g. a rank that may be absent."""
    if is_frame(t):
        return t
    out = frame(dict(t), copy=False) if len(t) else frame({}, copy=False)
    for name in nullable_ints:
        if name in t and np.asarray(t[name]).dtype.kind == "O":
            out[name] = out[name].astype("Int64")
    return out


def empty(columns: Sequence[str]) -> Cols:
    """A table of these columns and no rows (object columns, as ``pd.DataFrame(columns=...)`` has)."""
    return {c: np.empty(0, dtype=object) for c in columns}


def obj(values: Sequence[Any] | np.ndarray) -> np.ndarray:
    """``values`` as a 1-D object array (a text column), element for element (tuples stay elements)."""
    out = np.empty(len(values), dtype=object)
    out[:] = list(values)
    return out


def column(values: Sequence[Any]) -> np.ndarray:
    """A column from Python values as ``pd.DataFrame`` would store it: ints -> int64, floats (and ints
    mixed with None/NaN) -> float64, bools -> bool, anything else (text, None) -> object."""
    vals = list(values)
    kinds = {type(v) for v in vals}
    if not vals:
        return np.empty(0, dtype=object)
    if kinds <= {bool, np.bool_}:
        return np.array(vals, dtype=bool)
    if kinds <= {int, np.int64, np.int32, np.intp}:
        return np.array(vals, dtype=np.int64)
    numeric = {int, float, np.int64, np.int32, np.float64, np.float32, type(None)}
    if kinds <= numeric and kinds & {float, np.float64, np.float32, int, np.int64, np.int32}:
        return np.array([np.nan if v is None else v for v in vals], dtype=np.float64)
    return obj(vals)


def isna(a: np.ndarray) -> np.ndarray:
    """Missing values of a column: NaN in a float column; None or NaN in an object column."""
    a = np.asarray(a)
    if a.dtype.kind == "f":
        return np.isnan(a)
    if a.dtype.kind == "O":  # elementwise in numpy's C loop: None, or a value unequal to itself (NaN)
        return np.asarray(np.equal(a, None) | np.not_equal(a, a), dtype=bool)
    if a.dtype.kind == "M":
        return np.isnat(a)
    return np.zeros(len(a), dtype=bool)


def take(t: Mapping[str, np.ndarray], idx: Any) -> Cols:
    """The rows ``idx`` (a bool mask or integer positions) of every column."""
    return {k: v[idx] for k, v in t.items()}


def select(t: Mapping[str, np.ndarray], columns: Sequence[str]) -> Cols:
    """Just these columns, in this order."""
    return {c: t[c] for c in columns}


def concat(parts: Sequence[Mapping[str, np.ndarray]], columns: Sequence[str] | None = None) -> Cols:
    """The tables stacked in order, as ``pd.concat(ignore_index=True)`` (tables without rows skipped; with none
    left, an empty table of ``columns``). Every non-empty part must have the same columns. A column whose
    dtypes differ between parts becomes float64 when every part's is a number (ints and floats, as pandas
    upcasts), otherwise object."""
    parts = [p for p in parts if nrows(p)]
    if not parts:
        return empty(columns or ())
    names = list(parts[0])
    out: Cols = {}
    for k in names:
        arrays = [np.asarray(p[k]) for p in parts]
        kinds = {a.dtype.kind for a in arrays}
        if len({a.dtype for a in arrays}) > 1 and not kinds <= set("iuf"):
            arrays = [a.astype(object) for a in arrays]
        out[k] = np.concatenate(arrays)
    return out


def _sort_key(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(missing mask, a key lexsort can order)`` of a column: objects by their sorted distinct values."""
    miss = isna(a)
    if a.dtype.kind == "O":
        return miss, _codes(a)[1]
    if a.dtype.kind == "f":
        return miss, np.where(miss, 0.0, a)
    return miss, a


def order(t: Mapping[str, np.ndarray], by: Sequence[str], ascending: bool | Sequence[bool] = True) -> np.ndarray:
    """Row positions that sort the table by ``by`` (first key first), stable, missing values last in each
    key: ``df.sort_values(by, ascending=..., kind="stable", na_position="last")``'s order."""
    asc = [ascending] * len(by) if isinstance(ascending, bool) else list(ascending)
    keys: list[np.ndarray] = []
    for name, up in zip(reversed(list(by)), reversed(asc)):  # lexsort: the last key is the primary one
        miss, key = _sort_key(np.asarray(t[name]))
        if not up:
            key = -key.astype(np.float64) if key.dtype.kind in "iub" else -key
        keys += [key, miss]
    if not keys:
        return np.arange(nrows(t))
    return np.lexsort(keys)


def sort(t: Mapping[str, np.ndarray], by: Sequence[str], ascending: bool | Sequence[bool] = True) -> Cols:
    """The table sorted by ``by`` (:func:`order`)."""
    return take(t, order(t, by, ascending))


def _codes(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(sorted distinct present values, code of each row)``; a missing value's code is -1."""
    miss = isna(a)
    if a.dtype.kind == "O":  # hashed (a dict in C), then the few distinct values sorted
        present = a[~miss].tolist()
        distinct = list(dict.fromkeys(present))
        try:
            distinct.sort()
        except TypeError:  # mixed types do not sort: first-seen order
            pass
        pos = {v: i for i, v in enumerate(distinct)}
        uniq = obj(distinct)
        inv = np.fromiter(map(pos.__getitem__, present), dtype=np.int64, count=len(present))
        codes = np.full(len(a), -1, dtype=np.int64)
        codes[~miss] = inv
        return uniq, codes
    if miss.any():
        uniq, inv = np.unique(a[~miss], return_inverse=True)
        codes = np.full(len(a), -1, dtype=np.int64)
        codes[~miss] = inv
        return uniq, codes
    uniq, inv = np.unique(a, return_inverse=True)
    return uniq, inv.astype(np.int64, copy=False)


#: below this many values :func:`factorize` runs a dict in Python (numpy's fixed costs dominate small arrays)
_SMALL_FACTORIZE = 2000


def factorize(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, uniques)`` of an object array, ``pd.factorize``'s: uniques in order of first appearance, a
    missing value (None, NaN) code -1."""
    values = np.asarray(values)
    if len(values) <= _SMALL_FACTORIZE:  # (a rank's few values: one pass in Python beats numpy's set-up)
        index: dict[Any, int] = {}
        codes = np.fromiter((-1 if v is None or (isinstance(v, float) and v != v) else index.setdefault(v, len(index))
                             for v in values.tolist()), dtype=np.intp, count=len(values))
        return codes, obj(list(index))
    miss = isna(values)  # long arrays: the present values hashed by a dict in C (no Python loop per value)
    present = values[~miss].tolist() if miss.any() else values.tolist()
    index = {v: i for i, v in enumerate(dict.fromkeys(present))}
    inv = np.fromiter(map(index.__getitem__, present), dtype=np.intp, count=len(present))
    if not miss.any():
        return inv, obj(list(index))
    codes = np.full(len(values), -1, dtype=np.intp)
    codes[~miss] = inv
    return codes, obj(list(index))


def group_median(values: np.ndarray, groups: np.ndarray, n: int) -> np.ndarray:
    """Per group ``0..n-1`` of ``groups`` (-1: no group): the median of its present (not NaN) ``values``
    (``np.median``'s: the mean of the two middle values when their count is even), NaN for none."""
    v = np.asarray(values, dtype=np.float64)
    keep = ~np.isnan(v) & (groups >= 0)
    g, v = groups[keep], v[keep]
    o = np.lexsort((v, g))  # by group, then value: each group's values sorted and contiguous
    g, v = g[o], v[o]
    count = np.bincount(g, minlength=n)
    start = np.cumsum(count) - count
    out = np.full(n, np.nan)
    have = count > 0
    out[have] = (v[start[have] + (count[have] - 1) // 2] + v[start[have] + count[have] // 2]) / 2.0
    return out


def group_mean(values: np.ndarray, groups: np.ndarray, n: int) -> np.ndarray:
    """Per group ``0..n-1`` of ``groups``: the mean of its present (not NaN) ``values``, NaN for none: the
    compensated sum (:func:`kahan_sums`) over the count, as ``groupby().mean()`` computes it."""
    total, count = kahan_sums(values, groups, n)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)


#: groups up to this many values are summed together, one numpy step per position; longer ones in Python
_KAHAN_VECTOR_MAX = 512


def kahan_sums(values: np.ndarray, groups: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``(sum, count)`` per group ``0..n-1`` of ``groups`` (-1: no group) of the present (not NaN) ``values``:
    a Kahan-compensated sum in row order (pandas' algorithm for grouped sums), with every group's k-th value
    added in one vectorised step."""
    v = np.asarray(values, dtype=np.float64)
    ok = ~np.isnan(v) & (groups >= 0)
    g, v = groups[ok], v[ok]
    if g.size > 1 and not (g[1:] >= g[:-1]).all():  # (rows usually come grouped already: ranks in order)
        by_group = np.argsort(g, kind="stable")
        g, v = g[by_group], v[by_group]
    count = np.bincount(g, minlength=n).astype(np.int64)
    total, comp = np.zeros(n), np.zeros(n)
    if not g.size:
        return total, count
    k = int(count.max())
    if k <= _KAHAN_VECTOR_MAX and (count == k).all():  # every group of k values: a (groups x k) matrix
        m = v.reshape(n, k)
        for j in range(k):
            y = m[:, j] - comp
            t = total + y
            c = (t - total) - y
            comp = np.where(np.isnan(c), 0.0, c)
            total = t
        return total, count
    starts = np.concatenate([[0], np.cumsum(count)[:-1]])
    pos = np.arange(g.size) - starts[g]
    long = count > _KAHAN_VECTOR_MAX
    for code in np.flatnonzero(long).tolist():  # a few huge groups: a Python loop beats thousands of steps
        total[code] = _kahan(v[starts[code]:starts[code] + count[code]].tolist())
    short = ~long[g]
    by_pos = np.argsort(pos[short], kind="stable")
    rows = np.flatnonzero(short)[by_pos]
    bounds = np.flatnonzero(np.r_[True, np.diff(pos[rows]) != 0, True])
    for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist()):  # the k-th value of every group at once
        r = rows[lo:hi]
        grp = g[r]
        y = v[r] - comp[grp]
        t = total[grp] + y
        c = (t - total[grp]) - y
        comp[grp] = np.where(np.isnan(c), 0.0, c)
        total[grp] = t
    return total, count


def _kahan(values: list[float]) -> float:
    """pandas' compensated sum of one group's values, in order."""
    total = comp = 0.0
    for x in values:
        y = x - comp
        t = total + y
        comp = t - total - y
        if comp != comp:
            comp = 0.0
        total = t
    return total


class Groups:
    """The rows of a table grouped by the values of ``by`` (``df.groupby(by)``: sorted keys, rows with a
    missing key left out). ``keys`` holds each group's key columns; the reductions return one value per
    group, in that order."""

    def __init__(self, t: Mapping[str, np.ndarray], by: Sequence[str]) -> None:
        self.by = list(by)
        if len(self.by) == 1:  # one key: its sorted distinct values are the groups (one sort, not two)
            uniq, self.codes = _codes(np.asarray(t[self.by[0]]))
            self.n, self.keys, self._valid = len(uniq), {self.by[0]: uniq}, self.codes >= 0
            return
        n = nrows(t)
        combined = np.zeros(n, dtype=np.int64)
        valid = np.ones(n, dtype=bool)
        uniqs: list[np.ndarray] = []
        for name in self.by:
            uniq, codes = _codes(np.asarray(t[name]))
            valid &= codes >= 0
            combined = combined * max(len(uniq), 1) + np.maximum(codes, 0)
            uniqs.append(uniq)
        groups, inverse = np.unique(combined[valid], return_inverse=True)
        self.codes = np.full(n, -1, dtype=np.int64)
        self.codes[valid] = inverse
        self.n = len(groups)
        keys: Cols = {}
        rest = groups
        for name, uniq in zip(reversed(self.by), reversed(uniqs)):
            size = max(len(uniq), 1)
            keys[name] = uniq[rest % size] if len(uniq) else uniq[:0]
            rest = rest // size
        self.keys = {name: keys[name] for name in self.by}
        self._valid = valid

    def size(self) -> np.ndarray:
        """Rows per group (int64)."""
        return np.bincount(self.codes[self._valid], minlength=self.n).astype(np.int64)

    def _present(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        values = np.asarray(values)
        keep = self._valid & ~isna(values)
        return self.codes[keep], values[keep]

    def count(self, values: np.ndarray) -> np.ndarray:
        """Present (not missing) values per group (int64)."""
        codes, _ = self._present(values)
        return np.bincount(codes, minlength=self.n).astype(np.int64)

    def sum(self, values: np.ndarray) -> np.ndarray:
        """Sum per group of the present values (0 for none); ints and bools sum to int64, floats to float64."""
        values = np.asarray(values)
        codes, v = self._present(values)
        if values.dtype.kind in "iub":
            out = np.zeros(self.n, dtype=np.int64)
            np.add.at(out, codes, v.astype(np.int64))
            return out
        return kahan_sums(values, np.where(self._valid, self.codes, -1), self.n)[0]

    def mean(self, values: np.ndarray) -> np.ndarray:
        """Mean per group of the present values (NaN for none), float64 (:func:`group_mean`)."""
        values = np.asarray(values)
        if values.dtype.kind == "O":
            values = np.where(isna(values), np.nan, values).astype(np.float64)
        return group_mean(values, np.where(self._valid, self.codes, -1), self.n)

    def _extreme(self, values: np.ndarray, ufunc: np.ufunc) -> np.ndarray:
        values = np.asarray(values)
        codes, v = self._present(values)
        o = np.argsort(codes, kind="stable")
        codes, v = codes[o], v[o]
        starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]]) if len(codes) else np.empty(0, np.int64)
        if values.dtype.kind in "iub" and len(starts) == self.n:  # every group has a value: the dtype stays
            return ufunc.reduceat(v, starts) if len(v) else v[:0]
        out = np.full(self.n, np.nan)
        if len(v):
            out[codes[starts]] = ufunc.reduceat(v.astype(np.float64), starts)
        return out

    def max(self, values: np.ndarray) -> np.ndarray:
        """Largest present value per group (NaN for none; ints stay ints when every group has one)."""
        return self._extreme(values, np.maximum)

    def min(self, values: np.ndarray) -> np.ndarray:
        """Smallest present value per group (NaN for none; ints stay ints when every group has one)."""
        return self._extreme(values, np.minimum)

    def _pick(self, values: np.ndarray, last: bool) -> np.ndarray:
        values = np.asarray(values)
        keep = self._valid & ~isna(values)
        rows = np.flatnonzero(keep)
        codes = self.codes[rows]
        if last:
            rows, codes = rows[::-1], codes[::-1]
        _, first = np.unique(codes, return_index=True)
        have = np.zeros(self.n, dtype=bool)
        have[codes[first]] = True
        if have.all():
            out = np.empty(self.n, dtype=values.dtype)
        elif values.dtype.kind in "iubf":
            out = np.full(self.n, np.nan)
        else:
            out = np.full(self.n, None, dtype=object)
        out[codes[first]] = values[rows[first]]
        return out

    def first(self, values: np.ndarray) -> np.ndarray:
        """First present value per group in row order (missing for none): ``GroupBy.first()``."""
        return self._pick(values, last=False)

    def last(self, values: np.ndarray) -> np.ndarray:
        """Last present value per group in row order (missing for none): ``GroupBy.last()``."""
        return self._pick(values, last=True)

    def nunique(self, values: np.ndarray) -> np.ndarray:
        """Distinct present values per group (int64): ``GroupBy.nunique()``."""
        codes, v = self._present(values)
        if not len(v):
            return np.zeros(self.n, dtype=np.int64)
        _, vcodes = _codes(v)
        pairs = np.unique(codes * (int(vcodes.max()) + 1) + vcodes)
        return np.bincount(pairs // (int(vcodes.max()) + 1), minlength=self.n).astype(np.int64)

    def rows(self) -> list[np.ndarray]:
        """Each group's row positions (in row order), groups in key order."""
        o = np.argsort(self.codes, kind="stable")
        o = o[self.codes[o] >= 0]
        bounds = np.flatnonzero(np.r_[True, self.codes[o][1:] != self.codes[o][:-1], True]) if len(o) else [0]
        return [o[a:b] for a, b in zip(bounds[:-1], bounds[1:])]


def _missing_like(a: np.ndarray, n: int) -> np.ndarray:
    """``n`` missing values in the dtype a left merge gives column ``a`` when some rows have no match."""
    if a.dtype.kind == "f":
        return np.full(n, np.nan, dtype=a.dtype)
    if a.dtype.kind in "iu":
        return np.full(n, np.nan)
    if a.dtype.kind == "M":
        return np.full(n, np.datetime64("NaT"), dtype=a.dtype)
    return np.full(n, None, dtype=object)


def merge(left: Mapping[str, np.ndarray], right: Mapping[str, np.ndarray], on: Sequence[str],
          how: str = "left") -> Cols:
    """``left.merge(right, on=on, how=how)`` for ``how`` "left" or "inner" (module doc); the two tables share no
    column but ``on``."""
    on = list(on)
    nl = nrows(left)
    lkey = [np.asarray(left[c]) for c in on]
    rkey = [np.asarray(right[c]) for c in on]
    both = {c: np.concatenate([a, b]) if a.dtype == b.dtype or {a.dtype.kind, b.dtype.kind} <= set("iuf")
            else np.concatenate([a.astype(object), b.astype(object)]) for c, a, b in zip(on, lkey, rkey)}
    g = Groups(both, on)
    lcodes, rcodes = g.codes[:nl], g.codes[nl:]
    ro = np.argsort(rcodes, kind="stable")
    ro = ro[rcodes[ro] >= 0]
    counts = np.bincount(rcodes[ro], minlength=g.n) if g.n else np.zeros(0, dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]) if g.n else np.zeros(0, dtype=np.int64)
    match_n = np.where(lcodes >= 0, counts[np.maximum(lcodes, 0)] if g.n else 0, 0)
    per_left = np.maximum(match_n, 1) if how == "left" else match_n
    lrows = np.repeat(np.arange(nl), per_left)
    offset = np.arange(len(lrows)) - np.repeat(np.cumsum(per_left) - per_left, per_left)
    has = np.repeat(match_n > 0, per_left)
    rpos = np.full(len(lrows), -1, dtype=np.int64)
    if g.n:
        rpos[has] = ro[starts[lcodes[lrows[has]]] + offset[has]]
    out: Cols = {k: np.asarray(v)[lrows] for k, v in left.items()}
    for k, v in right.items():
        if k in on:
            continue
        v = np.asarray(v)
        if has.all():
            out[k] = v[rpos]
        else:
            col = _missing_like(v, len(lrows))
            if v.dtype.kind == "b":
                col = col.astype(object)
            col[has] = v[rpos[has]]
            out[k] = col
    return out


def records(t: Mapping[str, np.ndarray]) -> list[dict[str, Any]]:
    """The rows as JSON-safe dicts (NaN and None -> None, numpy scalars -> Python), in column order."""
    from tracekit.jsonable import column_values

    names = list(t)
    cols = [column_values(np.asarray(t[k])) for k in names]
    return [dict(zip(names, row)) for row in zip(*cols)]
