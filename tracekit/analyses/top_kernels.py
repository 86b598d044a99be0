"""Top kernels: the GPU kernels that take the most time on each rank.

The example of "Adding an analysis" in docs/development.md: this module is the whole analysis.
It declares one per-rank table; the registry (:mod:`tracekit.analyses.registry`)
computes it in each rank's pass, renders it in every format, accepts it for
``--table top_kernels`` and documents its columns in docs/reference/tables.md.

Per rank, kernels are grouped by name; the :data:`TOP_N` names with the largest
summed duration are kept, most time first. ``busy_share_pct`` uses the union of
the name's intervals (kernels of one name that overlap on several streams count
once), so it is a true share of the rank's GPU busy time and never exceeds 100 %.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from tracekit.analyses import intervals as iv
from tracekit.analyses.classify import CLASSES, class_codes
from tracekit.analyses.registry import Column, RankContext, Table, View, ViewOptions
from tracekit.traces import cols as C
from tracekit.traces import schema
from tracekit.traces.arrays import unique
from tracekit.traces.frames import NO_ROWS, Columnar

#: kernel names kept per rank
TOP_N = 10
NS_PER_US = 1000.0

COLUMNS = (
    Column("rank", "rank", "the rank"),
    Column("kernel", "name", "kernel name"),
    Column("kernel_class", "name", "compute or comm (see How the numbers are computed)"),
    Column("count", "count", "launches of this kernel in the trace window"),
    Column("dur_total_us", "us", "sum of this kernel's durations over the trace window"),
    Column("dur_mean_us", "us", "dur_total_us / count"),
    Column("busy_total_us", "us", "|∪ this kernel's intervals| over the trace window (overlapping launches once)"),
    Column("busy_share_pct", "pct", "100 · busy_total_us / the rank's busy time (|∪ all GPU activity|, ranks)"),
)


def _codes(codes: np.ndarray, categories: list[object]) -> tuple[np.ndarray, np.ndarray]:
    """``(ids, labels)`` of a Categorical column given as its codes and categories: per row an id into
    ``labels``, its value as text (equal texts share an id, numbered in order of first appearance among
    the categories; a missing value reads "nan", as ``astype(str)`` writes it)."""
    index: dict[str, int] = {}
    same = np.array([index.setdefault(t, len(index)) for t in [*(str(c) for c in categories), "nan"]],
                    dtype=np.int64)
    labels = np.empty(len(index), dtype=object)
    labels[:] = list(index)
    return same[codes], labels


def top_kernels(ctx: RankContext) -> Columnar:
    """The rank's :data:`TOP_N` kernels by summed duration (columns :data:`COLUMNS`)."""
    rt = ctx.trace
    if not rt.has_gpu_activity:
        return NO_ROWS
    ts, end = rt.gpu_column("ts_ns"), rt.gpu_column("end_ns")
    busy_ns = iv.length(ts, end)
    k = rt.gpu_column("kind") == schema.KERNEL
    ts, end = ts[k], end[k]
    name, names = _codes(rt.gpu_column("name"), rt.categories("name") or [])
    cls, classes = _codes(class_codes(rt, ctx.options.comm_pattern), list(CLASSES))
    # groups in order of first appearance, as a groupby(sort=False)
    _, first, group = unique(name[k], return_index=True, return_inverse=True)
    rank_of = np.argsort(np.argsort(first, kind="stable"), kind="stable")
    group, first = rank_of[group], np.sort(first)
    count = np.bincount(group, minlength=first.size).astype(np.int64)
    dur = np.zeros(first.size, dtype=np.int64)
    np.add.at(dur, group, end - ts)
    top = np.lexsort((-count, -dur))[:TOP_N]  # most time first, then most launches; ties keep first appearance
    pos = np.full(first.size, -1, dtype=np.int64)
    pos[top] = np.arange(top.size)
    sel = pos[group] >= 0
    union_ns = iv.segment_lengths(ts[sel], end[sel], pos[group][sel], top.size).astype(float)
    return {
        "rank": np.full(top.size, rt.rank, dtype=np.int64),
        "kernel": names[name[k][first[top]]] if top.size else np.empty(0, dtype=object),
        "kernel_class": classes[cls[k][first[top]]] if top.size else np.empty(0, dtype=object),
        "count": count[top],
        "dur_total_us": dur[top] / NS_PER_US,
        "dur_mean_us": dur[top] / count[top] / NS_PER_US,
        "busy_total_us": union_ns / NS_PER_US,
        "busy_share_pct": 100.0 * union_ns / busy_ns if busy_ns else np.full(top.size, np.nan),
    }


def _view(t: Mapping[str, Columnar], opts: ViewOptions) -> View | None:
    top = C.as_cols(t["top_kernels"])
    return View(f"Top kernels per rank (by total time; {TOP_N} per rank)", top) if C.nrows(top) else None


TABLES = [
    Table(
        name="top_kernels", scope="rank", title="Top kernels per rank (by total time)",
        doc=f"The {TOP_N} kernel names with the largest summed duration on each rank, most time first "
            "(GPU traces only).",
        columns=COLUMNS, compute=top_kernels, view=_view, order=45,
    ),
]
