"""Compute / communication / overlap / idle breakdown, per rank and per step.

Definitions (all times are lengths of unions of GPU intervals, in µs):

- ``compute_us``: |∪ compute kernels| (kernels that are neither communication nor memcpy/memset).
- ``comm_us``: |∪ communication kernels| (see :mod:`tracekit.analyses.classify`).
- ``overlap_us``: |∪comm ∩ ∪compute|: communication hidden behind compute.
- ``exposed_comm_us`` = ``comm_us − overlap_us``.
- ``overlap_pct`` = 100 · ``overlap_us`` / ``comm_us`` (HTA's definition; NaN without comm).
- ``memory_us``: |∪ memcpy/memset|.
- ``busy_us``: |∪ all GPU activity|.
- ``span_us``: last GPU end − first GPU start.
- ``idle_us`` = ``span_us − busy_us``: time inside the span with no GPU activity at all.

Per-rank rows cover every GPU activity in the trace window, pre-window kernels
included. Per-step rows cover the device work that ran inside each step's window
(:mod:`tracekit.traces.steps`, cut at the window's edges), so no time column exceeds the step.
``step_us`` is that window's length (per rank: the mean), ``host_step_us`` the CPU duration of
the ``ProfilerStep#N`` range.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from tracekit.analyses import crossrank
from tracekit.analyses.collectives import collective_overlap_note
from tracekit.analyses.findings import group_means
from tracekit.analyses import intervals as iv
from tracekit.analyses.classify import COMM, COMPUTE, MEMORY, class_codes, class_mask
from tracekit.analyses.registry import Column, RankContext, RunContext, Table, View, ViewOptions
from tracekit.traces import cols as C
from tracekit.traces.frames import Columnar
from tracekit.traces.steps import HOST_STEP_DOC, STEP_DOC, window_pieces

if TYPE_CHECKING:
    import pandas as pd

NS_PER_US = 1000.0

BREAKDOWN_COLUMNS = ("span_us", "busy_us", "compute_us", "comm_us", "overlap_us", "exposed_comm_us",
                     "overlap_pct", "memory_us", "idle_us")


def breakdown_of(ts_ns: np.ndarray, end_ns: np.ndarray, cls: np.ndarray) -> dict[str, float]:
    """The breakdown metrics of one set of GPU intervals with their classes."""
    return _breakdown(ts_ns, end_ns, cls == COMPUTE, cls == COMM, cls == MEMORY)


def _breakdown(ts_ns: np.ndarray, end_ns: np.ndarray, is_comp: np.ndarray, is_comm: np.ndarray,
               is_mem: np.ndarray) -> dict[str, float]:
    """:func:`breakdown_of` with the classes as masks."""
    if ts_ns.size == 0:
        return dict.fromkeys(BREAKDOWN_COLUMNS, np.nan) | {"busy_us": 0.0, "span_us": 0.0}
    comp = (ts_ns[is_comp], end_ns[is_comp])
    comm = (ts_ns[is_comm], end_ns[is_comm])
    mem = (ts_ns[is_mem], end_ns[is_mem])
    comm_ns = iv.length(*comm)
    overlap_ns = iv.intersect_length(comm, comp)
    busy_ns = iv.length(ts_ns, end_ns)
    span_ns = int(end_ns.max() - ts_ns.min())
    return {
        "span_us": span_ns / NS_PER_US,
        "busy_us": busy_ns / NS_PER_US,
        "compute_us": iv.length(*comp) / NS_PER_US,
        "comm_us": comm_ns / NS_PER_US,
        "overlap_us": overlap_ns / NS_PER_US,
        "exposed_comm_us": (comm_ns - overlap_ns) / NS_PER_US,
        "overlap_pct": 100.0 * overlap_ns / comm_ns if comm_ns else np.nan,
        "memory_us": iv.length(*mem) / NS_PER_US,
        "idle_us": (span_ns - busy_ns) / NS_PER_US,
    }


def step_breakdown(gpu: Columnar, cls: np.ndarray | pd.Series, steps: Columnar) -> pd.DataFrame:
    """:func:`step_breakdown_columns` as a DataFrame (imports pandas: for callers outside ``tracekit analyze``)."""
    return C.to_frame(step_breakdown_columns(gpu, cls, steps))


def step_breakdown_columns(gpu: Columnar, cls: np.ndarray | pd.Series, steps: Columnar) -> C.Cols:
    """One row per step: ``step``, ``step_us``, ``host_step_us``, ``kernels`` and the breakdown columns.

    ``steps``: the step windows (:meth:`RankTrace.step_windows`: ``step``, ``ts_ns``, ``end_ns``, ``dur_ns``,
    ``host_dur_ns``). The time columns measure the device work *inside* each step's window (every kernel,
    memcpy and memset of the rank, cut at the window's edges: :func:`tracekit.traces.steps.window_pieces`), so
    none exceeds ``step_us``; ``kernels`` counts the activities *launched* in the step (its host range). The
    same numbers as :func:`breakdown_of` on each step's pieces, computed for all steps at once (segmented
    unions, see :func:`intervals.segment_lengths`). A step in which no device work ran has zero
    ``busy_us``/``span_us`` and NaN elsewhere.
    """
    step_nums = np.asarray(steps["step"])
    n = step_nums.size
    pos = _positions(step_nums, np.asarray(gpu["step"]))
    kernels = np.bincount(pos[pos >= 0], minlength=n)
    lo, hi = np.asarray(steps["ts_ns"], dtype=np.int64), np.asarray(steps["end_ns"], dtype=np.int64)
    ts, end, seg, src = window_pieces(np.asarray(gpu["ts_ns"]), np.asarray(gpu["end_ns"]), lo, hi)
    real = end > ts
    ts, end, seg, src = ts[real], end[real], seg[real], src[real]

    def of(mask: np.ndarray) -> tuple[tuple[np.ndarray, np.ndarray], np.ndarray]:
        m = mask[src]
        return (ts[m], end[m]), seg[m]

    comp, seg_comp = of(class_mask(cls, COMPUTE))
    comm, seg_comm = of(class_mask(cls, COMM))
    mem, seg_mem = of(class_mask(cls, MEMORY))
    comm_ns = iv.segment_lengths(*comm, seg_comm, n)
    overlap_ns = iv.segment_intersect_lengths(comm, seg_comm, comp, seg_comp, n)
    busy_ns = iv.segment_lengths(ts, end, seg, n)
    first, last = iv.segment_bounds(ts, end, seg, n)
    some = np.bincount(seg, minlength=n) > 0
    span_ns = np.where(some, last - first, 0)
    nan = np.where(some, 1.0, np.nan)  # NaN for steps without device work

    return {
        "step": step_nums.astype(np.int64),
        "step_us": np.asarray(steps["dur_ns"]) / NS_PER_US,
        "host_step_us": np.asarray(steps["host_dur_ns"]) / NS_PER_US,
        "kernels": kernels.astype(np.int64),
        "span_us": span_ns / NS_PER_US,
        "busy_us": busy_ns / NS_PER_US,
        "compute_us": iv.segment_lengths(*comp, seg_comp, n) / NS_PER_US * nan,
        "comm_us": comm_ns / NS_PER_US * nan,
        "overlap_us": overlap_ns / NS_PER_US * nan,
        "exposed_comm_us": (comm_ns - overlap_ns) / NS_PER_US * nan,
        "overlap_pct": np.divide(100.0 * overlap_ns, comm_ns, out=np.full(n, np.nan), where=comm_ns > 0),
        "memory_us": iv.segment_lengths(*mem, seg_mem, n) / NS_PER_US * nan,
        "idle_us": (span_ns - busy_ns) / NS_PER_US * nan,
    }


def rank_breakdown(gpu: Columnar, cls: np.ndarray | pd.Series, steps: Columnar, lost: np.ndarray) -> dict[str, float]:
    """Breakdown over all GPU activity of the rank plus ``steps``, ``step_us`` and ``host_step_us`` (the means of
    ``steps``, the step windows: :func:`_step_counts`); ``lost``: per GPU row, whether its launch is missing
    (:meth:`~tracekit.traces.traceset.RankTrace.launches_lost`), counted in ``launches_missing``."""
    ts = np.asarray(gpu["ts_ns"])
    out = _breakdown(ts, np.asarray(gpu["end_ns"]), class_mask(cls, COMPUTE),
                     class_mask(cls, COMM), class_mask(cls, MEMORY))
    out |= _step_counts(steps)
    out["pre_window_kernels"] = int(np.asarray(gpu["pre_window"]).sum())
    out["launches_missing"] = int(np.count_nonzero(lost))
    out["kernels"] = ts.size
    return out


def _step_counts(steps: Columnar) -> dict[str, float]:
    """``steps`` (how many), ``step_us`` (their mean length, :meth:`RankTrace.step_windows`) and
    ``host_step_us`` (their host ranges' mean), NaN without steps."""
    dur, host = np.asarray(steps["dur_ns"]), np.asarray(steps["host_dur_ns"])
    return {"steps": dur.size, "step_us": float(dur.mean() / NS_PER_US) if dur.size else np.nan,
            "host_step_us": float(host.mean() / NS_PER_US) if host.size else np.nan}


def _positions(keys: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per value, its position in ``keys`` (distinct), -1 where absent (``Index.get_indexer``)."""
    if keys.size == 0:
        return np.full(values.size, -1, dtype=np.intp)
    order = np.argsort(keys, kind="stable")
    k = keys[order]
    i = np.minimum(np.searchsorted(k, values), k.size - 1)
    return np.where(k[i] == values, order[i], -1)


# -- registered tables (see tracekit.analyses.registry) ------------------------------------------

#: the breakdown columns' docs, shared by the per-rank (whole window) and per-step tables
_BREAKDOWN_DOCS = (
    Column("span_us", "us", "last GPU end − first GPU start"),
    Column("busy_us", "us", "|∪ all GPU activity|: time with any kernel, memcpy or memset running"),
    Column("compute_us", "us", "|∪ compute kernels|: kernels that are neither communication nor memcpy/memset"),
    Column("comm_us", "us", "|∪ communication kernels| (the rules of table comm_rules: NCCL/RCCL names, collective ops, custom collectives (DeepEP, custom all-reduce...), --comm-kernel)"),
    Column("overlap_us", "us", "|∪comm ∩ ∪compute|: communication hidden behind compute"),
    Column("exposed_comm_us", "us", "comm_us − overlap_us: communication not hidden behind compute"),
    Column("overlap_pct", "pct", "100 · overlap_us / comm_us (HTA's definition; null without communication)"),
    Column("memory_us", "us", "|∪ memcpy and memset|"),
    Column("idle_us", "us", "span_us − busy_us: time in the span with no GPU activity at all"),
)


def steps_table(ctx: RankContext) -> C.Cols:
    """One row per rank and step: the breakdown of the device work inside the step's window."""
    rt = ctx.trace
    steps = rt.step_windows()
    if rt.has_gpu_activity:
        st = step_breakdown_columns(rt.gpu_arrays(), class_codes(rt, ctx.options.comm_pattern), steps)
        return {"rank": np.full(st["step"].size, rt.rank, dtype=np.int64), **st}
    # CPU-only traces: step times only, device metrics unknown
    n = steps["step"].size
    return {"rank": np.full(n, rt.rank, dtype=np.int64), "step": steps["step"].astype(np.int64),
            "step_us": steps["dur_ns"] / NS_PER_US, "host_step_us": steps["host_dur_ns"] / NS_PER_US,
            "kernels": np.zeros(n, dtype=np.int64),
            **{c: np.full(n, np.nan) for c in BREAKDOWN_COLUMNS}}


def rank_totals(ctx: RankContext) -> C.Cols:
    """The rank's row of ``ranks`` before the cross-rank columns (one row, as columns)."""
    rt = ctx.trace
    if rt.has_gpu_activity:
        row = rank_breakdown(rt.gpu_arrays(), class_codes(rt, ctx.options.comm_pattern), rt.step_windows(),
                             rt.launches_lost())
    else:
        row = dict.fromkeys(BREAKDOWN_COLUMNS, np.nan) | _step_counts(rt.step_windows()) | {
            "pre_window_kernels": 0, "launches_missing": 0, "kernels": 0}
    coll = ctx.tables["collectives"]
    row["rank"] = rt.rank
    row["collectives"] = int((~np.asarray(coll["pre_window"]).astype(bool)).sum()) if C.nrows(coll) else 0
    named = {RANK_NAMES.get(c, c): v for c, v in row.items()}
    return {c.name: _cell(named[c.name]) for c in _RANK_COLUMNS if c.name in named}  # declared order


def _cell(v: Any) -> np.ndarray:
    """One value as a one-row column, as ``pd.DataFrame([row])`` stores it (a number's own dtype; text object)."""
    return C.obj([v]) if v is None or isinstance(v, str) else np.array([v])


def ranks_table(ctx: RunContext) -> C.Cols:
    """``rank_totals`` joined with each rank's per-step means of the ``steps`` table (:func:`step_means_of`) and
    its cross-rank wait (:func:`crossrank.wait_summary`); notes name the ranks whose launch records are
    incomplete and those whose collectives overlap each other."""
    ranks = C.merge(C.as_cols(ctx.tables["rank_totals"]), step_means_of(C.as_cols(ctx.tables["steps"])),
                    on=["rank"], how="left")
    for note in (missing_launches_note(ranks), collective_overlap_note(ctx.tables["collectives"])):
        if note:
            ctx.meta.setdefault("notes", []).append(note)
    summary = C.as_cols(crossrank.wait_summary(ctx.tables["waits"], ctx.tables["instances"]))
    if C.nrows(summary):
        right = {"rank": summary["rank"], "wait_total_us": summary["wait_us"], "last_count": summary["last_count"]}
        return C.merge(ranks, right, on=["rank"], how="left")
    n = C.nrows(ranks)
    return ranks | {"wait_total_us": np.full(n, np.nan), "last_count": np.full(n, np.nan)}


#: steps-table column -> the ranks table's mean of it over the rank's steps
PER_STEP = {"compute_us": "compute_per_step_us", "comm_us": "comm_per_step_us", "overlap_us": "overlap_per_step_us",
            "exposed_comm_us": "exposed_comm_per_step_us", "idle_us": "idle_per_step_us"}


def step_means_of(steps: C.Cols) -> C.Cols:
    """Per rank of the ``steps`` table: ``rank`` and the mean over its steps of each :data:`PER_STEP` column
    (present values only, as ``groupby("rank").mean()``: NaN where no step has one), by
    :func:`tracekit.analyses.findings.group_means`, the grouping the findings' per-step means use."""
    if not C.nrows(steps):
        return {"rank": np.empty(0, dtype=np.int64), **{v: np.empty(0) for v in PER_STEP.values()}}
    ranks, means = group_means(steps, "rank", list(PER_STEP))
    return {"rank": ranks, **dict(zip(PER_STEP.values(), means))}


def missing_launches_note(ranks: C.Cols) -> str | None:
    """The run's note when a rank's launch records are incomplete (``launches_missing`` > 0), else None."""
    if not C.nrows(ranks) or "launches_missing" not in ranks:
        return None
    n = np.nan_to_num(np.asarray(ranks["launches_missing"], dtype=float))
    hit = np.flatnonzero(n > 0)
    if not hit.size:
        return None
    which = ", ".join(f"{int(r)} ({int(k)})" for r, k in zip(np.asarray(ranks["rank"])[hit], n[hit]))
    return (f"rank(s) {which}: device operations with no launch recorded ran after ones launched in the window on "
            "their stream, so their launch calls are missing (a sampled or filtered trace): they belong to no step, "
            "work launched before the window cannot be told from them, so the first step starts at its "
            "ProfilerStep range, and each step ends with the last device work whose launch it holds (steps.step_us "
            "is uncertain)")


_RANK_SHOWN = ("rank", "steps", "step_mean_us", "host_step_mean_us", *PER_STEP.values(), "overlap_pct",
               "memory_total_us", "wait_total_us", "pre_window_kernels")


def ranks_view(t: Mapping[str, Any], opts: ViewOptions) -> View:
    all_ranks = C.as_cols(t["ranks"])
    ranks = C.select(all_ranks, [c for c in _RANK_SHOWN if c in all_ranks])
    hta = C.as_cols(t.get("hta"))
    if C.nrows(hta):  # the compact comparison; JSON/CSV carry every HTA column
        keep = [c for c in ("hta_overlap_pct", "hta_compute_pct", "hta_idle_pct", "hta_error") if c in hta]
        ranks = C.merge(ranks, C.select(hta, ["rank", *keep]), on=["rank"], how="left")
    part = (getattr(opts, "meta", None) or {}).get("partial")
    note = (f"wait_total_us is partial: {part['ranks']} of {part['world_size']} ranks are in the trace set "
            f"(see the cross-rank wait table)" if part and "wait_total_us" in ranks else None)
    if C.nrows(all_ranks) and "compute_total_us" in all_ranks and C.isna(all_ranks["compute_total_us"]).all():
        # a device whose events tracekit does not read (another accelerator's) is no CPU-only run
        meta = getattr(opts, "meta", None) or {}
        what = ("no GPU activity read" if meta.get("unread_categories")
                else "kernel records missing" if meta.get("lost_device_launches") else "CPU-only run")
        return View(f"Per-rank breakdown ({what}: steps and cross-rank wait from CPU ranges, us)", ranks, note=note)
    return View("Per-rank breakdown (per step: means of the steps table; totals over the whole trace window, us)",
                ranks, note=note)


def steps_view(t: Mapping[str, Any], opts: ViewOptions) -> View | None:
    if not opts.per_step:
        return None
    return View("Per-step breakdown (device work inside each step, us)", C.as_cols(t["steps"]))


#: names of the per-rank (whole window) breakdown columns: the window's totals carry ``_total``
#: (the per-step table keeps the bare names: its rows are single steps)
RANK_NAMES = {c: c.replace("_us", "_total_us") for c in BREAKDOWN_COLUMNS if c not in ("span_us", "overlap_pct")}
RANK_NAMES["step_us"] = "step_mean_us"
RANK_NAMES["host_step_us"] = "host_step_mean_us"


def _window_docs(cols: tuple[Column, ...]) -> tuple[Column, ...]:
    """The breakdown docs with the per-rank names, in the column and in the formulas."""
    def sub(text: str) -> str:
        return re.sub(r"\b(" + "|".join(RANK_NAMES) + r")\b", lambda m: RANK_NAMES[m.group(1)], text)

    return tuple(Column(RANK_NAMES.get(c.name, c.name), c.unit,
                        sub(c.doc) + (", over the trace window" if c.name in RANK_NAMES else "")) for c in cols)


_RANK_HEAD = (
    Column("rank", "rank", "the rank"),
    Column("steps", "count", "ProfilerSteps in the trace"),
    Column("step_mean_us", "us", f"{STEP_DOC}, mean over the rank's steps"),
    Column("host_step_mean_us", "us", f"{HOST_STEP_DOC}, mean over the rank's steps"),
    Column("kernels", "count", "GPU activities (kernels, memcpys, memsets) in the trace window"),
)
_RANK_TAIL = (
    Column("pre_window_kernels", "count", "GPU activities that ran in the window but were launched before it "
                                          "(no launch event): counted in the totals; the first step starts after "
                                          "them"),
    Column("launches_missing", "count", "of the pre_window_kernels, those that ran after an activity launched in "
                                        "the window on their stream: their launch calls are missing (a sampled or "
                                        "filtered trace); when any, no backlog delays the first step "
                                        "(tracekit.traces.steps) and a note says so"),
    Column("collectives", "count", "collective instances launched in the window"),
)

_RANK_COLUMNS = (*_RANK_HEAD, *_window_docs(_BREAKDOWN_DOCS), *_RANK_TAIL)

TABLES = [
    Table(
        name="rank_totals", scope="rank", title="Per-rank breakdown without the cross-rank columns",
        columns=_RANK_COLUMNS, compute=rank_totals,
        needs=("collectives",),
        internal=True,
    ),
    Table(
        name="ranks", scope="run", title="Per-rank breakdown (GPU time: totals over the trace window, per-step means)",
        doc="Every time is the length of a union of GPU intervals. `_total_` columns cover all GPU activity in the "
            "trace window, pre-window kernels included (work launched before the window: not a per-step figure); "
            "`_per_step_` columns are the means over the rank's steps of the steps table's values (the figures "
            "findings and diff quote).",
        columns=(*_RANK_HEAD, *_window_docs(_BREAKDOWN_DOCS),
                 *(Column(v, "us", f"mean over the rank's steps of steps.{k} (device work inside each step's window)")
                   for k, v in PER_STEP.items()),
                 Column("wait_total_us", "us", "sum over accepted matched collectives of max(0, min(own kernel end, "
                                               "latest peer kernel start) − own kernel start): time spent waiting "
                                               "for peers over the trace window, at most the rank's communication "
                                               "kernel time"),
                 Column("last_count", "count", "matched collectives this rank arrived at last (was the straggler)"),
                 *_RANK_TAIL),
        compute=ranks_table, needs=("rank_totals", "steps", "collectives", "waits", "instances"), view=ranks_view, order=10,
    ),
    Table(
        name="steps", scope="rank", title="Per-step breakdown (device work inside each step)",
        doc="Each time column measures the device work (kernels, memcpys, memsets of any stream) that ran inside "
            "the step's window, cut at its edges, so none exceeds step_us. A kernel belongs to the step whose CPU "
            "range contains its launch call (correlation id): that decides where the step ends. A step in which no "
            "device work ran has busy_us and span_us 0 and the rest null.",
        columns=(Column("rank", "rank", "the rank"), Column("step", "step", "the ProfilerStep number"),
                 Column("step_us", "us", STEP_DOC),
                 Column("host_step_us", "us", HOST_STEP_DOC),
                 Column("kernels", "count", "GPU activities launched in the step (its host range)"),
                 *_BREAKDOWN_DOCS),
        compute=steps_table, view=steps_view, order=20,
    ),
]
