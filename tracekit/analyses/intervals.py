"""Vectorised interval arithmetic on half-open integer-ns intervals ``[start, end)``.

All analyses do their set maths here. Inputs are numpy arrays; nothing loops in
Python per interval.
"""

from __future__ import annotations

import numpy as np


def union(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Merge intervals into sorted, disjoint ones (touching intervals are merged).

    Zero-length intervals are dropped.
    """
    starts = np.asarray(starts, dtype=np.int64)
    ends = np.asarray(ends, dtype=np.int64)
    if starts.size <= _SMALL:
        return _union_small(starts, ends)
    keep = ends > starts
    if not keep.all():
        starts, ends = starts[keep], ends[keep]
        if starts.size == 0:
            return starts, ends
    order = np.argsort(starts, kind="stable")
    s, e = starts[order], ends[order]
    run_end = np.maximum.accumulate(e)
    # a new merged interval begins where the start is past every earlier end
    new = np.empty(s.size, dtype=bool)
    new[0] = True
    np.greater(s[1:], run_end[:-1], out=new[1:])
    first = new.nonzero()[0]
    last = np.empty_like(first)
    last[:-1] = first[1:] - 1
    last[-1] = s.size - 1
    return s[first], run_end[last]


_INT64_MAX, _INT64_MIN = int(np.iinfo(np.int64).max), int(np.iinfo(np.int64).min)

#: up to this many intervals :func:`union` merges in plain Python: called a few dozen times per rank on
#: a handful of intervals, where a dozen numpy calls (~18 µs) cost more than the loop (~4 µs)
_SMALL = 16


def _union_small(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`union` of a few int64 intervals, merged in a Python loop (same result)."""
    out_s: list[int] = []
    out_e: list[int] = []
    for a, b in sorted(zip(starts.tolist(), ends.tolist())):
        if b <= a:
            continue
        if out_e and a <= out_e[-1]:
            if b > out_e[-1]:
                out_e[-1] = b
        else:
            out_s.append(a)
            out_e.append(b)
    return np.array(out_s, dtype=np.int64), np.array(out_e, dtype=np.int64)


def length(starts: np.ndarray, ends: np.ndarray) -> int:
    """Total length of the union of the intervals, in the input unit."""
    s, e = union(starts, ends)
    return int((e - s).sum())


def intersect(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Intersection of two interval sets (each may overlap itself); result is disjoint."""
    a_s, a_e = union(*a)
    b_s, b_e = union(*b)
    if a_s.size == 0 or b_s.size == 0:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty
    if a_s.size <= _SMALL and b_s.size <= _SMALL:
        return _intersect_small(a_s, a_e, b_s, b_e)
    # Sweep: +1/-1 per set; a point is in both where the running count is 2.
    pts = np.concatenate([a_s, a_e, b_s, b_e])
    delta = np.concatenate([np.ones(a_s.size), -np.ones(a_e.size), np.ones(b_s.size), -np.ones(b_e.size)]).astype(np.int8)
    order = np.lexsort((delta, pts))  # at equal times, ends (-1) before starts: half-open
    pts, delta = pts[order], delta[order]
    depth = np.cumsum(delta)
    inside = depth == 2
    seg_start = pts[:-1][inside[:-1]]
    seg_end = pts[1:][inside[:-1]]
    keep = seg_end > seg_start
    return union(seg_start[keep], seg_end[keep])


def _intersect_small(a_s: np.ndarray, a_e: np.ndarray, b_s: np.ndarray,
                     b_e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`intersect` of two merged sets of a few intervals each, by a two-pointer walk in Python (the
    sweep's dozen numpy calls cost ~20 µs; the walk a few). Pieces of one merged set are separated by gaps,
    so the pieces found are disjoint and never touch: the result is already merged."""
    xs, xe, ys, ye = a_s.tolist(), a_e.tolist(), b_s.tolist(), b_e.tolist()
    out_s: list[int] = []
    out_e: list[int] = []
    i = j = 0
    while i < len(xs) and j < len(ys):
        lo, hi = max(xs[i], ys[j]), min(xe[i], ye[j])
        if hi > lo:
            out_s.append(lo)
            out_e.append(hi)
        if xe[i] < ye[j]:
            i += 1
        else:
            j += 1
    return np.array(out_s, dtype=np.int64), np.array(out_e, dtype=np.int64)


def intersect_length(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> int:
    """Length of ``∪a ∩ ∪b``."""
    s, e = intersect(a, b)
    return int((e - s).sum())


def clip(starts: np.ndarray, ends: np.ndarray, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
    """Clip intervals to ``[lo, hi)``, dropping those left empty."""
    s = np.maximum(np.asarray(starts, dtype=np.int64), lo)
    e = np.minimum(np.asarray(ends, dtype=np.int64), hi)
    keep = e > s
    return s[keep], e[keep]


def covered_per_interval(starts: np.ndarray, ends: np.ndarray, cover: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """For each query interval, how much of it the (merged) ``cover`` set covers.

    Vectorised with prefix sums over the disjoint cover: covered(x) is the
    cover length in ``(-inf, x)``, and the answer is covered(end) - covered(start).
    """
    starts = np.asarray(starts, dtype=np.int64)
    ends = np.asarray(ends, dtype=np.int64)
    cs, ce = union(*cover)
    if cs.size == 0 or starts.size == 0:
        return np.zeros(starts.size, dtype=np.int64)
    prefix = np.concatenate([[0], np.cumsum(ce - cs)])

    def covered_before(x: np.ndarray) -> np.ndarray:
        i = np.searchsorted(cs, x, side="right")  # cover intervals starting at or before x
        full = prefix[np.maximum(i - 1, 0)]
        last_s = cs[np.maximum(i - 1, 0)]
        last_e = ce[np.maximum(i - 1, 0)]
        partial = np.maximum(np.minimum(x, last_e) - last_s, 0)
        return np.where(i > 0, full + partial, 0)

    return covered_before(ends) - covered_before(starts)


def first_started_parts(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per interval, the part no interval that started before it covers: ``[max(start, M), end)`` with ``M`` the
    latest end among the intervals before it in (start, position) order, empty (``end, end``) where ``M >= end``.
    The earlier ones all start at or before it, so their union past its start is the one piece ``[start, M)``:
    the parts are disjoint and their lengths sum to ``|∪ intervals|`` (each instant counted once, for the
    interval that started first among those running then)."""
    starts, ends = np.asarray(starts, dtype=np.int64), np.asarray(ends, dtype=np.int64)
    order = np.lexsort((np.arange(starts.size), starts))
    s, e = starts[order], ends[order]
    before = np.maximum.accumulate(np.concatenate(([np.iinfo(np.int64).min], e[:-1]))) if e.size else e
    lo = np.minimum(np.maximum(s, before), np.maximum(e, s))
    out_s, out_e = np.empty_like(starts), np.empty_like(ends)
    out_s[order], out_e[order] = lo, np.maximum(e, lo)
    return out_s, out_e


def _segment_frame(arrays: list[np.ndarray], ends: list[np.ndarray]) -> tuple[int, int]:
    """``(base, width)`` of a time domain in which every segment gets its own disjoint stretch."""
    lo = min((int(a.min()) for a in arrays if a.size), default=0)
    hi = max((int(e.max()) for e in ends if e.size), default=0)
    return lo, max(hi - lo, 0) + 1


def _shift(starts: np.ndarray, ends: np.ndarray, seg: np.ndarray, base: int,
           width: int) -> tuple[np.ndarray, np.ndarray]:
    off = np.asarray(seg, dtype=np.int64) * width - base
    return np.asarray(starts, dtype=np.int64) + off, np.asarray(ends, dtype=np.int64) + off


def _per_segment(s: np.ndarray, e: np.ndarray, width: int, n_seg: int) -> np.ndarray:
    """Total length per segment of disjoint shifted intervals (the segment is ``start // width``)."""
    return np.bincount(s // width, weights=(e - s), minlength=n_seg).astype(np.int64)


def segment_bounds(starts: np.ndarray, ends: np.ndarray, seg: np.ndarray,
                   n_seg: int) -> tuple[np.ndarray, np.ndarray]:
    """Per segment ``k``: the earliest start and the latest end of its intervals (both -1 when it has none)."""
    big, small = _INT64_MAX, _INT64_MIN
    first = np.full(n_seg, big, dtype=np.int64)
    last = np.full(n_seg, small, dtype=np.int64)
    np.minimum.at(first, seg, np.asarray(starts, dtype=np.int64))
    np.maximum.at(last, seg, np.asarray(ends, dtype=np.int64))
    empty = first == big
    first[empty] = -1
    last[empty] = -1
    return first, last


def segment_lengths(starts: np.ndarray, ends: np.ndarray, seg: np.ndarray, n_seg: int) -> np.ndarray:
    """Per segment ``k`` in ``range(n_seg)``: length of the union of the intervals with ``seg == k``.

    All segments are merged in one vectorised pass: each segment's intervals are
    moved into their own stretch of a shifted time axis (``seg · width``, with
    ``width`` larger than the whole time range), so no merge can cross segments.
    """
    starts = np.asarray(starts, dtype=np.int64)
    ends = np.asarray(ends, dtype=np.int64)
    if starts.size == 0:
        return np.zeros(n_seg, dtype=np.int64)
    base, width = _segment_frame([starts], [ends])
    return _per_segment(*union(*_shift(starts, ends, seg, base, width)), width, n_seg)


def segment_intersect_lengths(a: tuple[np.ndarray, np.ndarray], seg_a: np.ndarray,
                              b: tuple[np.ndarray, np.ndarray], seg_b: np.ndarray, n_seg: int) -> np.ndarray:
    """Per segment ``k``: length of ``∪a ∩ ∪b`` restricted to the intervals of segment ``k``."""
    a_s, a_e = (np.asarray(x, dtype=np.int64) for x in a)
    b_s, b_e = (np.asarray(x, dtype=np.int64) for x in b)
    if a_s.size == 0 or b_s.size == 0:
        return np.zeros(n_seg, dtype=np.int64)
    base, width = _segment_frame([a_s, b_s], [a_e, b_e])
    return _per_segment(*intersect(_shift(a_s, a_e, seg_a, base, width), _shift(b_s, b_e, seg_b, base, width)),
                        width, n_seg)


def group_reduce(keys: np.ndarray, values: np.ndarray, ufunc: np.ufunc) -> tuple[np.ndarray, np.ndarray]:
    """``(distinct keys sorted, ufunc.reduce of each key's values)``, e.g. the latest end per step
    with ``np.maximum``."""
    if keys.size == 0:
        return keys, values
    order = np.argsort(keys, kind="stable")
    k, v = keys[order], values[order]
    first = np.concatenate(([True], k[1:] != k[:-1])).nonzero()[0]
    return k[first], ufunc.reduceat(v, first)


def isin_sorted(values: np.ndarray, table: np.ndarray) -> np.ndarray:
    """``np.isin(values, table)`` for a sorted ``table`` of distinct numbers (``np.unique``'s output):
    one binary search per value, a few µs where ``np.isin`` costs ~30 µs a call on small arrays."""
    values = np.asarray(values)
    if table.size == 0:
        return np.zeros(values.shape, dtype=bool)
    i = np.searchsorted(table, values)
    np.minimum(i, table.size - 1, out=i)
    return table[i] == values
