"""Top kernels: the GPU kernels that take the most time on each rank.

The example of README's "Adding an analysis": this module is the whole analysis.
It declares one per-rank table; the registry (:mod:`tracekit.analyses.registry`)
computes it in each rank's pass, renders it in every format, accepts it for
``--table top_kernels`` and documents its columns in the README.

Per rank, kernels are grouped by name; the :data:`TOP_N` names with the largest
summed duration are kept, most time first. ``busy_share_pct`` uses the union of
the name's intervals (kernels of one name that overlap on several streams count
once), so it is a true share of the rank's GPU busy time and never exceeds 100 %.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from tracekit.analyses import intervals as iv
from tracekit.analyses.classify import classify_gpu
from tracekit.analyses.registry import Column, RankContext, Table, View, ViewOptions
from tracekit.traces import schema

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


def top_kernels(ctx: RankContext) -> pd.DataFrame:
    """The rank's :data:`TOP_N` kernels by summed duration (columns :data:`COLUMNS`)."""
    rt = ctx.trace
    if not rt.has_gpu_activity:
        return pd.DataFrame(columns=[c.name for c in COLUMNS])
    g = rt.gpu
    ts, end = g["ts_ns"].to_numpy(), g["end_ns"].to_numpy()
    busy_ns = iv.length(ts, end)
    k = (g["kind"] == schema.KERNEL).to_numpy()
    kern = pd.DataFrame({"kernel": g["name"].astype(str).to_numpy()[k],
                         "kernel_class": classify_gpu(rt, ctx.options.comm_pattern).astype(str).to_numpy()[k],
                         "dur_ns": (end - ts)[k]})
    agg = kern.groupby("kernel", sort=False).agg(count=("dur_ns", "size"), dur_ns=("dur_ns", "sum"),
                                                 kernel_class=("kernel_class", "first"))
    top = agg.sort_values(["dur_ns", "count"], ascending=False, kind="stable").head(TOP_N)
    names = kern["kernel"].to_numpy()
    union_ns = np.array([iv.length(ts[k][names == n], end[k][names == n]) for n in top.index], dtype=float)
    return pd.DataFrame({
        "rank": rt.rank,
        "kernel": top.index.to_numpy(),
        "kernel_class": top["kernel_class"].to_numpy(),
        "count": top["count"].to_numpy().astype(np.int64),
        "dur_total_us": top["dur_ns"].to_numpy() / NS_PER_US,
        "dur_mean_us": top["dur_ns"].to_numpy() / top["count"].to_numpy() / NS_PER_US,
        "busy_total_us": union_ns / NS_PER_US,
        "busy_share_pct": 100.0 * union_ns / busy_ns if busy_ns else np.nan,
    })


def _view(t: Mapping[str, pd.DataFrame], opts: ViewOptions) -> View | None:
    top = t["top_kernels"]
    return View(f"Top kernels per rank (by total time; {TOP_N} per rank)", top) if len(top) else None


TABLES = [
    Table(
        name="top_kernels", scope="rank", title="Top kernels per rank (by total time)",
        doc=f"The {TOP_N} kernel names with the largest summed duration on each rank, most time first "
            "(GPU traces only).",
        columns=COLUMNS, compute=top_kernels, view=_view, order=45,
    ),
]
