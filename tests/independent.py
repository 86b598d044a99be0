"""Plain-Python interval arithmetic for the tests' independent computations over real traces: a sorted sweep
written without numpy, nothing shared with tracekit's loader or interval code."""

from __future__ import annotations


def merge(iv: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The union of the intervals ``[start, end]`` as disjoint intervals, sorted."""
    out: list[list[int]] = []
    for s, e in sorted(iv):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]


def intersection(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> int:
    """How long two sorted disjoint interval lists (:func:`merge`'s) overlap."""
    i = j = tot = 0
    while i < len(a) and j < len(b):
        tot += max(0, min(a[i][1], b[j][1]) - max(a[i][0], b[j][0]))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return tot
