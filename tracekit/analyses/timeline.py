"""Gradient-bucket timeline (per rank, step and bucket) and the findings read from it.

The check of ``run.json``'s buckets against this timeline is :mod:`tracekit.analyses.manifest_check`.

A *bucket* is one allreduce launched during the step's backward (the DDP
reducer's bucket; :func:`tracekit.analyses.collectives.bucket_table` numbers
them in launch order, 0 = first launched = the last layers' gradients).

Columns of :func:`bucket_timeline`: absolute times in ns (kineto's clock, on which the host's
CPU ranges and the device's kernels are both recorded), offsets in µs on **the device's clock**
from ``bwd_start_device_ns``. The host runs ahead of the device (on a GPU-bound run it enqueues a
step in a third of the time the device takes), so a host instant (a CPU op's start or end) is
put on the device's clock through the launches: ``to_device(t)`` = ``t`` + the *lag* of the
device operation whose launch call began last at or before ``t``, lag = that operation's device
start − its launch call's start (:func:`tracekit.traces.steps.to_device_clock`): the device
reaches that point of the host's program when it begins the work queued just before it. -1
where no launch precedes ``t``. Every offset is then a device time inside the step's window
(:mod:`tracekit.traces.steps`).

- ``ready_cpu_ns``: when the bucket's gradients were ready on the CPU side. In
  compiled runs (the step has ``CompiledFunctionBackward`` ops) the end of the
  last ``CompiledFunctionBackward`` subgraph that ended before the launch; in
  eager runs the end of the last autograd op (``evaluate_function: X`` other than
  AccumulateGrad, or the inner ``torch::autograd::AccumulateGrad``) before the
  launch. ``ready_source`` says which (``compiled_subgraph`` / ``autograd_op``). Only a marker in the
  bucket's own step counts: an allreduce launched from inside the step's one compiled backward graph
  (DDPOptimizer off) has none, -1 (the previous step's backward is not when its gradients were ready).
- ``ready_gpu_ns``: the latest end of any compute kernel launched before the
  allreduce that had ended when the NCCL kernel started: the earliest the NCCL kernel
  could start, as its stream waits on them. A compute kernel still running then (on
  another stream: a comm hook's callback runs on a pool stream) cannot have been
  waited for; without that rule ``queue_us`` came out negative on bf16-hook runs.
- ``ready_device_ns``, ``launch_device_ns``, ``bwd_start_device_ns``: ``ready_cpu_ns``,
  ``launch_ns``, ``bwd_start_ns`` on the device's clock (``to_device``).
- ``launch_ns``: CPU time of the collective op (``record_param_comms``).
- ``start_ns`` / ``end_ns`` / ``dur_us``: the NCCL kernel.
- ``ready_us``, ``launch_us``, ``start_us``, ``end_us``: ``ready_device_ns``, ``launch_device_ns``,
  ``start_ns``, ``end_ns`` − ``bwd_start_device_ns``.
- ``launch_delay_us`` = launch − ready_cpu (host clock); ``queue_us`` = start − max(ready_gpu,
  launch_device) (device clock).
- ``bwd_compute_end_ns``: end of the step's last *backward compute kernel*: a compute
  kernel launched inside ``CompiledFunctionBackward`` or an autograd op other
  than AccumulateGrad (so the reducer's own kernels, which run in AccumulateGrad
  hooks, are not backward compute).
- ``starts_after_backward``: kernel start ≥ ``bwd_compute_end_ns``.
- ``tail_exposed_us`` = |[max(start, bwd_compute_end), end]|: the part that ran after
  the last backward compute kernel, exposed at the tail of the backward.
- ``exposed_us``: the part not overlapped by any compute kernel (collective table).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Mapping
from typing import Any, ClassVar, NamedTuple

import numpy as np

from tracekit.analyses import intervals as iv
from tracekit.analyses.classify import COMPUTE, class_codes, class_mask
from tracekit.analyses.collectives import gradient_allreduce_mask, manifest_tp
from tracekit.analyses.findings import Finding, FindingContext, Quote, rank_step_us, rounded, step_means
from tracekit.analyses.manifest_check import median_by, rank_compile_facts
from tracekit.analyses.registry import Column, RankContext, Table, View, ViewOptions
from tracekit.traces import cols as C
from tracekit.traces.arrays import unique
from tracekit.traces.cols import Cols
from tracekit.traces.frames import NO_ROWS, Columnar, n_rows
from tracekit.traces.manifest import Manifest
from tracekit.traces import schema
from tracekit.traces.traceset import RankTrace, assign_steps

NS_PER_US = 1000.0
COMPILED_BWD = "CompiledFunctionBackward"
EVAL_PREFIX = "autograd::engine::evaluate_function: "
ACCUMULATE = "torch::autograd::AccumulateGrad"

TIMELINE_COLUMNS = (
    "rank", "step", "bucket", "bytes", "ready_source", "ready_cpu_ns", "ready_device_ns", "ready_gpu_ns", "launch_ns",
    "launch_device_ns", "start_ns", "end_ns", "bwd_start_ns", "bwd_start_device_ns", "bwd_compute_end_ns", "ready_us", "launch_us", "start_us", "end_us", "dur_us",
    "launch_delay_us", "queue_us", "exposed_us", "tail_exposed_us", "starts_after_backward",
)


#: compiled-autograd backward graphs run as "Torch-Compiled Region: !<id>/..." ranges
COMPILED_AUTOGRAD_PREFIX = "Torch-Compiled Region: !"


class CpuOps(NamedTuple):
    """The CPU ops and annotations of a rank, as arrays in event order (shared, do not mutate)."""

    #: the event table's distinct names; ``code`` indexes them (-1: no name)
    names: list[str]
    code: np.ndarray
    ts_ns: np.ndarray
    end_ns: np.ndarray
    tid: np.ndarray

    def name_mask(self, test: Callable[[str], bool], key: Hashable | None = None) -> np.ndarray:
        """Ops whose name passes ``test`` (run once per distinct name, broadcast by code). With a ``key``
        naming the test, its per-name result is kept for the process: ranks of one run share their names."""
        return self.per_name(lambda names: np.array([bool(test(n)) for n in names] + [False], dtype=bool),
                             key)[self.code]  # code -1 -> the trailing False

    def per_name(self, fn: Callable[[list[str]], np.ndarray], key: Hashable | None = None) -> np.ndarray:
        """``fn(names)``: an array with one entry per distinct name and one for code -1; with a ``key``
        naming ``fn``, computed once per process and name list (do not mutate)."""
        if key is None:
            return fn(self.names)
        k = (key, tuple(self.names))
        out = _PER_NAME.get(k)
        if out is None:
            if len(_PER_NAME) > _PER_NAME_MAX:
                _PER_NAME.clear()
            out = _PER_NAME[k] = fn(self.names)
        return out


#: :meth:`CpuOps.per_name` results by (key, name list), bounded
_PER_NAME: dict[tuple[Hashable, tuple[str, ...]], np.ndarray] = {}
_PER_NAME_MAX = 256


def cpu_ops(rt: RankTrace) -> CpuOps:
    """The rank's CPU ops and annotations (:class:`CpuOps`, computed once per rank)."""
    def build() -> CpuOps:
        kind = rt.column("kind")
        rows = ((kind == schema.CPU_OP) | (kind == schema.ANNOTATION)).nonzero()[0]
        if rt.categories("name") is not None:
            names, code = rt.name_categories(), rt.column("name")
        else:  # a trace given as a frame whose names are not a Categorical (hand-built traces)
            code, uniques = C.factorize(rt.events["name"].to_numpy(dtype=object))
            names = [str(v) for v in uniques.tolist()]
        return CpuOps(names, code[rows].astype(np.int64), rt.column("ts_ns")[rows],
                      rt.column("end_ns")[rows], rt.column("tid")[rows])

    return rt.memo("cpu_ops", build)


def _masks_of(rt: RankTrace) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(compiled backward subgraph, compiled-autograd region, eager autograd op, AccumulateGrad op) masks
    over :func:`cpu_ops`."""
    def build() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        ops = cpu_ops(rt)
        comp = ops.name_mask(re.compile(f"^{re.escape(COMPILED_BWD)}$").search, "compiled_bwd")
        cag = ops.name_mask(lambda n: n.startswith(COMPILED_AUTOGRAD_PREFIX), "compiled_autograd")
        acc = ops.name_mask(re.compile(f"^{re.escape(ACCUMULATE)}$").search, "accumulate_grad")
        not_acc = re.compile("AccumulateGrad$")
        evalf = ops.name_mask(lambda n: n.startswith(EVAL_PREFIX) and not not_acc.search(n), "eager_autograd")
        return comp, cag, evalf, acc

    return rt.memo("timeline_masks", build)


def _last_before(sorted_ends: np.ndarray, t: np.ndarray) -> np.ndarray:
    i = np.searchsorted(sorted_ends, t, side="right") - 1
    return np.where(i >= 0, sorted_ends[np.maximum(i, 0)] if sorted_ends.size else -1, -1)


def _compute_launched(rt: RankTrace, cls: np.ndarray) -> np.ndarray:
    """Mask of ``rt.gpu``'s compute kernels that have a launch event."""
    return class_mask(cls, COMPUTE) & (rt.gpu_column("launch_ts_ns") >= 0)


def backward_bounds(rt: RankTrace, cls: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(steps, bwd_start_ns, bwd_compute_end_ns)``, sorted by step, for the steps that have both: the
    CPU start of the step's first backward op and the end of its last backward compute kernel (a compute
    kernel launched inside a compiled backward subgraph, a compiled-autograd region or a
    non-AccumulateGrad autograd op)."""
    none = np.empty(0, np.int64)
    comp, cag, evalf, _ = _masks_of(rt)
    bwd = comp | cag | evalf
    if not bwd.any() or not rt.has_gpu_activity:
        return none, none, none
    ops = cpu_ops(rt)
    ts = ops.ts_ns[bwd]
    s, e = iv.union(ts, ops.end_ns[bwd])
    k = _compute_launched(rt, cls)
    lt = rt.gpu_column("launch_ts_ns")[k]
    i = np.searchsorted(s, lt, side="right") - 1
    inside = (i >= 0) & (e[np.maximum(i, 0)] > lt) if s.size else np.zeros(lt.size, dtype=bool)
    end_steps, ends = iv.group_reduce(rt.gpu_column("step")[k][inside], rt.gpu_column("end_ns")[k][inside],
                                      np.maximum)
    st = assign_steps(rt.step_arrays(), ts)
    start_steps, starts = iv.group_reduce(st[st >= 0], ts[st >= 0], np.minimum)
    steps, ia, ib = np.intersect1d(start_steps, end_steps, assume_unique=True, return_indices=True)
    return steps.astype(np.int64), starts[ia].astype(np.int64), ends[ib].astype(np.int64)


def _per_step(steps: np.ndarray, values: np.ndarray, at: np.ndarray) -> np.ndarray:
    """``values`` (keyed by sorted ``steps``) at each step of ``at``; -1 where absent."""
    if not steps.size:
        return np.full(at.size, -1, dtype=np.int64)
    i = np.minimum(np.searchsorted(steps, at), steps.size - 1)
    return np.where(steps[i] == at, values[i], -1)


def _us_from(t: np.ndarray, base: np.ndarray) -> np.ndarray:
    """``(t − base) / 1000`` in float (each side NaN where negative: absent)."""
    return (np.where(t >= 0, t.astype(float), np.nan) - base) / NS_PER_US


def _ready_gpu(rt: RankTrace, cls: np.ndarray, launch: np.ndarray, start: np.ndarray) -> np.ndarray:
    """Per collective (CPU ``launch``, kernel ``start``): the latest end of any compute kernel launched at or
    before the launch that had ended by the start (-1: none); see the module doc."""
    k = _compute_launched(rt, cls)
    lt, end = rt.gpu_column("launch_ts_ns")[k], rt.gpu_column("end_ns")[k]
    order = np.argsort(lt, kind="stable")
    cummax = np.maximum.accumulate(end[order]) if lt.size else np.empty(0, np.int64)
    j = np.searchsorted(lt[order], launch, side="right") - 1
    out = np.where(j >= 0, cummax[np.maximum(j, 0)] if cummax.size else -1, -1)
    late = (out > start).nonzero()[0]  # the latest such kernel still ran when the collective started
    if late.size:
        by_end = np.argsort(end, kind="stable")
        for i in late.tolist():
            out[i] = _latest_end_before(lt, end, by_end, int(launch[i]), int(start[i]))
    return out


def _latest_end_before(lt: np.ndarray, end: np.ndarray, by_end: np.ndarray, launch: int, start: int) -> int:
    """The latest ``end`` of a kernel launched at or before ``launch`` that ended at or before ``start``
    (-1: none): walked back from the latest end up to ``start`` (``by_end`` sorts ``end``), the first
    kernel launched early enough; a masked maximum if none is among the 64 nearest."""
    p = int(np.searchsorted(end[by_end], start, side="right")) - 1
    for q in range(p, max(p - 64, -1), -1):
        if lt[by_end[q]] <= launch:
            return int(end[by_end[q]])
    ok = (lt <= launch) & (end <= start)
    return int(end[ok].max()) if ok.any() else -1


def _ready_cpu(rt: RankTrace, step: np.ndarray, launch: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(ready_source, ready_cpu_ns)`` per bucket (see module doc). A marker from another step is none (-1):
    an allreduce launched from inside the step's one compiled backward graph (no DDPOptimizer split) has
    no subgraph of its own step ended before it, and the previous step's backward is not when its
    gradients were ready."""
    ops = cpu_ops(rt)
    comp, _, evalf, acc = _masks_of(rt)
    comp_ends, eager_ends = np.sort(ops.end_ns[comp]), np.sort(ops.end_ns[evalf | acc])
    comp_steps = assign_steps(rt.step_arrays(), comp_ends)
    is_comp = (iv.isin_sorted(step, unique(comp_steps)) if comp_ends.size else np.zeros(step.size, bool))
    ready = np.where(is_comp, _last_before(comp_ends, launch), _last_before(eager_ends, launch))
    same = assign_steps(rt.step_arrays(), np.maximum(ready, 0)) == step
    source = np.where(is_comp, "compiled_subgraph", "autograd_op").astype(object)  # (text: an object column)
    return source, np.where((ready >= 0) & same, ready, -1)


def bucket_timeline(rt: RankTrace, cls: np.ndarray, coll: Columnar, tp: int = 1,
                    world_size: int | None = None) -> Columnar:
    """The bucket timeline of one rank (see module doc); ``coll`` is the rank's collective table.

    Buckets are the rows :func:`tracekit.analyses.collectives.gradient_allreduces` selects (data-parallel
    group only: tensor-parallel allreduces are not buckets; ``tp`` from the manifest)."""
    if not n_rows(coll) or not rt.has_gpu_activity:
        return NO_ROWS
    sel = ((np.asarray(coll["rank"]) == rt.rank) & (np.asarray(coll["start_ns"]) >= 0)
           & gradient_allreduce_mask(coll, tp, world_size)).nonzero()[0]
    if not sel.size:
        return NO_ROWS
    col = {c: np.asarray(coll[c])[sel] for c in ("step", "launch_ts_ns", "bytes", "start_ns", "end_ns", "dur_us",
                                                  "exposed_us")}
    order = np.lexsort((col["launch_ts_ns"], col["step"]))  # by step, then launch; stable
    col = {c: v[order] for c, v in col.items()}
    step, launch, start, end = (col["step"].astype(np.int64), col["launch_ts_ns"], col["start_ns"], col["end_ns"])
    first = np.concatenate(([True], step[1:] != step[:-1])).nonzero()[0]
    bucket = np.arange(step.size) - np.repeat(first, np.diff(np.append(first, step.size)))
    source, ready_cpu = _ready_cpu(rt, step, launch)
    ready_gpu = _ready_gpu(rt, cls, launch, start)
    steps, starts, ends = backward_bounds(rt, cls)
    bwd_start, bend = _per_step(steps, starts, step), _per_step(steps, ends, step)
    # one clock, the device's: host instants mapped through the launches (tracekit.traces.steps.to_device_clock)
    ready_dev, launch_dev, bwd_dev = (rt.to_device_clock(x) for x in (ready_cpu, launch, bwd_start))
    base = np.where(bwd_dev >= 0, bwd_dev.astype(float), np.nan)
    has_end = bend >= 0
    tail = np.maximum(end - np.maximum(start, bend), 0)
    return {
        "rank": np.full(step.size, rt.rank, dtype=np.int64), "step": step, "bucket": bucket, "bytes": col["bytes"],
        "ready_source": source, "ready_cpu_ns": ready_cpu, "ready_device_ns": ready_dev, "ready_gpu_ns": ready_gpu,
        "launch_ns": launch, "launch_device_ns": launch_dev, "start_ns": start, "end_ns": end,
        "bwd_start_ns": bwd_start, "bwd_start_device_ns": bwd_dev, "bwd_compute_end_ns": bend,
        "ready_us": _us_from(ready_dev, base), "launch_us": _us_from(launch_dev, base),
        "start_us": _us_from(start, base), "end_us": _us_from(end, base), "dur_us": col["dur_us"],
        "launch_delay_us": (launch - np.where(ready_cpu >= 0, ready_cpu.astype(float), np.nan)) / NS_PER_US,
        "queue_us": (start - np.maximum(ready_gpu, np.where(launch_dev >= 0, launch_dev, launch))) / NS_PER_US, "exposed_us": col["exposed_us"],
        "tail_exposed_us": np.where(has_end, tail / NS_PER_US, np.nan),
        "starts_after_backward": has_end & (start >= bend),
    }


# -- registered tables (see tracekit.analyses.registry) ------------------------------------------

_TIMELINE_SHOWN = ("rank", "step", "bucket", "bytes", "ready_us", "launch_us", "start_us", "end_us", "dur_us",
                   "exposed_us", "tail_exposed_us")


def _timeline_table(ctx: RankContext) -> Columnar:
    rt = ctx.trace
    if not rt.has_gpu_activity:
        return NO_ROWS
    return bucket_timeline(rt, class_codes(rt, ctx.options.comm_pattern), ctx.tables["collectives"],
                           manifest_tp(ctx.manifest), ctx.world_size)


def _timeline_view(t: Mapping[str, Any], opts: ViewOptions) -> View | None:
    tl = C.as_cols(t["bucket_timeline"])
    if not C.nrows(tl):
        return None
    last_step = int(tl["step"].max())
    last = C.take(tl, tl["step"] == last_step)
    body = {"MB" if c == "bytes" else c: last[c] / 1e6 if c == "bytes" else last[c] for c in _TIMELINE_SHOWN}
    return View(f"Bucket timeline, step {last_step} (device clock, µs from backward start)", body)


TABLES = [
    Table(
        name="bucket_timeline", scope="rank", title="Bucket timeline (per rank, step and gradient bucket)",
        doc="A bucket is one allreduce launched during the step's backward (GPU traces only). Every offset (`_us`) "
            "is on the device's clock, from the step's backward start on that clock (bwd_start_device_ns): kernel "
            "times as recorded, host instants (ready, launch, backward start) mapped through the launches (a host "
            "instant t becomes t + the lag of the device operation launched last at or before t, lag = its device "
            "start − its launch call's start: tracekit.traces.steps.to_device_clock). So every time of a bucket "
            "lies inside its step (steps.step_us). The _ns columns keep both clocks. The text report shows the "
            "last profiled step.",
        columns=(
            Column("rank", "rank", "the rank"),
            Column("step", "step", "the ProfilerStep"),
            Column("bucket", "index", "launch order within the step (0 = first launched)"),
            Column("bytes", "bytes", "the allreduce's buffer"),
            Column("ready_source", "name", "what marks the gradients ready: compiled_subgraph (end of the last "
                                           "CompiledFunctionBackward before the launch) or autograd_op (end of the "
                                           "last autograd op / AccumulateGrad before the launch), in the bucket's "
                                           "step"),
            Column("ready_cpu_ns", "ns", "gradients ready on the CPU side (see ready_source), host clock; -1 when "
                                         "the step has no such marker before the launch"),
            Column("ready_device_ns", "ns", "ready_cpu_ns on the device's clock: + the lag of the device operation "
                                            "launched last at or before it (its device start − its launch call's "
                                            "start); -1 when ready_cpu_ns is or no launch precedes it"),
            Column("ready_gpu_ns", "ns", "latest end of a compute kernel launched before the allreduce that had "
                                         "ended when its kernel started"),
            Column("launch_ns", "ns", "CPU time of the collective op (record_param_comms), host clock"),
            Column("launch_device_ns", "ns", "launch_ns on the device's clock (as ready_device_ns: where the device "
                                             "was in the host's program when the host launched the collective)"),
            Column("start_ns", "ns", "NCCL kernel start"),
            Column("end_ns", "ns", "NCCL kernel end"),
            Column("bwd_start_ns", "ns", "CPU start of the step's first backward op, host clock"),
            Column("bwd_start_device_ns", "ns", "bwd_start_ns on the device's clock (as ready_device_ns): the origin "
                                                "of the _us offsets"),
            Column("bwd_compute_end_ns", "ns", "end of the step's last backward compute kernel (launched inside "
                                               "CompiledFunctionBackward or a non-AccumulateGrad autograd op)"),
            Column("ready_us", "us", "ready_device_ns − bwd_start_device_ns"),
            Column("launch_us", "us", "launch_device_ns − bwd_start_device_ns"),
            Column("start_us", "us", "start_ns − bwd_start_device_ns"),
            Column("end_us", "us", "end_ns − bwd_start_device_ns"),
            Column("dur_us", "us", "kernel duration"),
            Column("launch_delay_us", "us", "launch_ns − ready_cpu_ns (host clock: how long the host took to launch "
                                            "the ready bucket)"),
            Column("queue_us", "us", "start_ns − max(ready_gpu_ns, launch_device_ns) (device clock; launch_ns where "
                                     "launch_device_ns is -1): comm-stream backlog"),
            Column("exposed_us", "us", "part of the kernel overlapped by no compute kernel at all"),
            Column("tail_exposed_us", "us", "part of the kernel after the step's last backward compute kernel"),
            Column("starts_after_backward", "bool", "kernel start ≥ bwd_compute_end_ns"),
        ),
        compute=_timeline_table, needs=("collectives",), view=_timeline_view, order=80,
    ),
]


# -- findings read from the bucket timeline (see tracekit.analyses.findings) -----------------------

#: share of a rank's backward allreduces that must start after its last backward
#: compute kernel: "nearly all", so one late bucket in an overlapped run never fires
AFTER_BACKWARD_SHARE = 0.9
#: a bucket is "mostly exposed" when this share of its allreduce overlaps no compute
EXPOSED_BUCKET_SHARE = 0.5
#: ...and its exposed time is at least this % of the step (a 16 KB bucket costs nothing)
EXPOSED_BUCKET_MIN_STEP_PCT = 2.0
MIB = 1024 * 1024


class AllreduceAfterBackward(Finding, tag="allreduce_after_backward"):
    """``allreduce_after_backward``: at least :data:`AFTER_BACKWARD_SHARE` of a rank's backward allreduces
    start after its last backward compute kernel; cost: the communication not hidden behind compute, per step
    (``steps.exposed_comm_us``, the figure ``diff`` compares); ``tail_exposed_us``: the allreduces' time after
    backward compute ended per step (``bucket_timeline.tail_exposed_us``; it may overlap the optimizer's
    compute, so it can exceed the cost)."""

    allreduces_per_step: float
    after_backward_per_step: float
    after_backward: int
    allreduces: int
    steps: int
    bwd_subgraphs_per_step: float
    tail_exposed_us: float | None
    #: the allreduces' bytes per step, in MB
    grad_mb_per_step: float | None = None
    #: DDP's bucket cap (run.json), when the message names it
    bucket_cap_mib: float | None = None

    QUOTES: ClassVar[dict[str, Quote]] = {
        "step_us": Quote("steps", "step_us", "mean"), "cost_us": Quote("steps", "exposed_comm_us", "mean"),
        # the bucket_timeline rows of the steps whose backward compute end is known
        **{f: Quote("bucket_timeline", c, how, where="bwd_compute_end_ns>=0") for f, c, how in (
            ("tail_exposed_us", "tail_exposed_us", "per_step"), ("allreduces_per_step", "bucket", "rows_per_step"),
            ("after_backward_per_step", "starts_after_backward", "per_step"), ("allreduces", "bucket", "rows"),
            ("after_backward", "starts_after_backward", "sum"), ("steps", "step", "nunique"))},
        "grad_mb_per_step": Quote("bucket_timeline", "bytes", "per_step", where="bwd_compute_end_ns>=0", scale=1e-6),
        "bwd_subgraphs_per_step": Quote("graph_breaks", "bwd_subgraphs", "median")}
    #: bucket_cap_mib: run.json's reducer bucket cap
    FACTS: ClassVar[tuple[str, ...]] = ("bucket_cap_mib",)
    ORDER: ClassVar[int] = 10
    TIMING: ClassVar[bool] = True

    @classmethod
    def detect(cls, ctx: FindingContext) -> list[AllreduceAfterBackward]:
        t = ctx.result.tables
        return allreduce_after_backward(ctx.result, t["bucket_timeline"], t["graph_breaks"], ctx.manifest)


def allreduce_after_backward(result: Any, timeline: Any, gb: Any,
                             manifest: Manifest | None) -> list[AllreduceAfterBackward]:
    """The :class:`AllreduceAfterBackward` findings of ``timeline`` (``bucket_timeline``) and ``gb``
    (``graph_breaks``), Cols or DataFrames; ``result`` gives the mean step per rank."""
    timeline = C.as_cols(timeline)
    tl = C.take(timeline, timeline["bwd_compute_end_ns"] >= 0) if C.nrows(timeline) else timeline
    if not C.nrows(tl):
        return []
    g = C.Groups(tl, ["rank"])
    agg = {"steps": g.nunique(tl["step"]), "n_after": g.sum(tl["starts_after_backward"].astype(bool)),
           "n": g.size(), "tail": g.sum(tl["tail_exposed_us"]), "bytes": g.sum(tl["bytes"])}
    fire = agg["n_after"] >= AFTER_BACKWARD_SHARE * agg["n"]
    if not fire.any():
        return []
    gb = C.as_cols(gb)
    bwd_sub = median_by(gb, "rank", "bwd_subgraphs") if C.nrows(gb) else {}
    means = step_means(result)
    exposed = step_means(result, "exposed_comm_us")
    out = []
    for rank, a in rows_by_rank(g.keys["rank"], agg, fire):
        steps, n_after, n = int(a["steps"]), int(a["n_after"]), int(a["n"])
        per_step, after_per_step = n / steps, n_after / steps  # both per step: never "39 of 14"
        tail = float(a["tail"] / steps)
        cost = exposed.get(int(rank), float("nan"))
        sub = float(bwd_sub.get(rank, 0.0))
        facts = rank_compile_facts(manifest, int(rank))
        grad_mb = float(a["bytes"]) / steps / 1e6
        why = _after_backward_why(per_step, sub, facts.optimize_ddp, grad_mb, bucket_cap_bytes(manifest))
        who = "all" if n_after == n else f"{_num(after_per_step)} of"
        msg = (f"{who} {_num(per_step)} allreduce{'s' if per_step != 1 else ''} per step start after backward "
               f"compute ends{why}; {cost:.0f} µs of communication per step is exposed (hidden behind no compute: "
               f"steps.exposed_comm_us; {tail:.0f} µs per step run after backward compute ended)")
        out.append(AllreduceAfterBackward(
            rank=int(rank), message=msg, cost_us=cost if np.isfinite(cost) else None,
            step_us=rank_step_us(result, rank, means),
            allreduces_per_step=round(per_step, 1), after_backward_per_step=round(after_per_step, 1),
            after_backward=n_after, allreduces=n, steps=steps, bwd_subgraphs_per_step=sub,
            tail_exposed_us=rounded(tail), grad_mb_per_step=rounded(grad_mb),
            bucket_cap_mib=rounded(cap / MIB, 2) if (cap := bucket_cap_bytes(manifest)) else None))
    return out


def rows_by_rank(ranks: np.ndarray, agg: Cols, keep: np.ndarray) -> list[tuple[int, dict[str, Any]]]:
    """``(rank, {column: value})`` of the kept rows of a per-rank aggregate, as plain Python values (NaN stays
    NaN; a dict per row built from ``tolist`` columns: a Series per rank costs seconds at 16384 ranks)."""
    names = list(agg)
    cols = [np.asarray(agg[k])[keep].tolist() for k in names]
    return [(int(r), dict(zip(names, row))) for r, *row in zip(np.asarray(ranks)[keep].tolist(), *cols)]


def _num(x: float) -> str:
    """A per-step count: an integer when it is one, else one decimal."""
    return f"{x:.0f}" if abs(x - round(x)) < 0.05 else f"{x:.1f}"


def bucket_cap_bytes(manifest: Manifest | None) -> int | None:
    """DDP's bucket cap in bytes from run.json's ``buckets.reducer`` (``bucket_cap_mb`` is MiB: 25 ->
    26214400), or None."""
    reducer = manifest.reducer() if manifest is not None else None
    cap = reducer.bucket_cap_bytes if reducer is not None else None
    return int(cap) if cap is not None and cap > 0 else None


def _mib(nbytes: float) -> str:
    return f"{nbytes / MIB:.3g} MiB"


def _after_backward_why(per_step: float, bwd_sub: float, optimize_ddp: Any, grad_mb: float,
                        cap_bytes: int | None) -> str:
    """Why every allreduce waits for the end of backward: one bucket, or one compiled backward graph."""
    if round(per_step) == 1:
        cap = f", bucket cap {_mib(cap_bytes)}" if cap_bytes else ""
        split = " and DDPOptimizer has nothing to split" if optimize_ddp == "ddp_optimizer" else ""
        return (f": the whole model's gradients ({grad_mb:.1f} MB{cap}) fit one DDP bucket, so its allreduce can "
                f"only start when the last gradient is ready{split} (a smaller bucket_cap_mb makes several buckets)")
    if bwd_sub == 1:
        return (f": the backward ran as one compiled graph (optimize_ddp={optimize_ddp})" if optimize_ddp is not None
                else ": the backward ran as one compiled graph (DDPOptimizer off?)")
    return ""


class _ExposedBucket(Finding):
    """A bucket's allreduce is at least :data:`EXPOSED_BUCKET_SHARE` exposed and the exposed time is at least
    :data:`EXPOSED_BUCKET_MIN_STEP_PCT` % of the step (mean over steps); not on ranks where
    ``allreduce_after_backward`` fired (that finding explains it). Cost: the exposed µs per step."""

    bucket_mb: float | None
    exposed_us: float | None
    dur_us: float | None
    bucket_cap_mb: float | None
    bucket_cap_mib: float | None
    #: 100 · exposed_us / dur_us
    exposed_pct: float | None = None
    #: when the bucket's gradients were ready, µs into the backward (bucket_timeline.ready_us, device clock)
    ready_us: float | None = None

    #: bucket_cap_mb / bucket_cap_mib: run.json's reducer bucket cap
    FACTS: ClassVar[tuple[str, ...]] = ("bucket_cap_mb", "bucket_cap_mib")
    TIMING: ClassVar[bool] = True
    WHICH: ClassVar[str] = ""

    @classmethod
    def detect(cls, ctx: FindingContext) -> list[_ExposedBucket]:
        after = {f.rank for f in ctx.earlier("allreduce_after_backward")}
        return _exposed_bucket(cls, ctx.result, ctx.result.tables["bucket_timeline"], ctx.manifest, after)


def _bucket_quotes(pick: str) -> dict[str, Quote]:
    """The quotes of an exposed-bucket finding: means over the rank's bucket_timeline rows of its first
    (``pick`` = ``min``) or last (``max``) bucket of each step."""
    where = f"bucket={pick}@step"
    return {"step_us": Quote("steps", "step_us", "mean"),
            **{f: Quote("bucket_timeline", c, "mean", where=where) for f, c in (
                ("cost_us", "exposed_us"), ("exposed_us", "exposed_us"), ("dur_us", "dur_us"), ("ready_us", "ready_us"))},
            "bucket_mb": Quote("bucket_timeline", "bytes", "mean", where=where, scale=1e-6),
            "exposed_pct": Quote("bucket_timeline", "exposed_us/dur_us", "pct", where=where)}


class ExposedFirstBucket(_ExposedBucket, tag="exposed_first_bucket"):
    """``exposed_first_bucket``: the first bucket of the backward (see :class:`_ExposedBucket`)."""

    QUOTES: ClassVar[dict[str, Quote]] = _bucket_quotes("min")
    ORDER: ClassVar[int] = 70
    WHICH: ClassVar[str] = "first"


class ExposedLastBucket(_ExposedBucket, tag="exposed_last_bucket"):
    """``exposed_last_bucket``: the last bucket of the backward (see :class:`_ExposedBucket`)."""

    QUOTES: ClassVar[dict[str, Quote]] = _bucket_quotes("max")
    ORDER: ClassVar[int] = 80
    WHICH: ClassVar[str] = "last"


def _exposed_bucket(kind: type[_ExposedBucket], result: Any, timeline: Any, manifest: Any,
                    skip_ranks: set[int | None]) -> list[_ExposedBucket]:
    timeline = C.as_cols(timeline)
    # a rank's mean exposure can reach EXPOSED_BUCKET_SHARE of its mean duration only if some row does
    if not C.nrows(timeline) or not (timeline["exposed_us"] >= EXPOSED_BUCKET_SHARE * timeline["dur_us"]).any():
        return []
    which = kind.WHICH
    steps = C.Groups(timeline, ["rank", "step"])
    pick = (steps.max if which == "last" else steps.min)(timeline["bucket"])[steps.codes]
    b = C.take(timeline, (timeline["bucket"] == pick) & (steps.codes >= 0))
    g = C.Groups(b, ["rank"])
    agg = {"exposed": g.mean(b["exposed_us"]), "dur": g.mean(b["dur_us"]), "bytes": g.mean(b["bytes"]),
           "ready": g.mean(b["ready_us"])}
    cap_bytes = bucket_cap_bytes(manifest)
    cap_mb = cap_bytes / 1e6 if cap_bytes else None
    means = step_means(result)
    out = []
    # plain floats per column (to_dict/iterrows cost tens of µs a rank: seconds at 16384 ranks)
    cols = zip(g.keys["rank"].tolist(), agg["exposed"].tolist(), agg["dur"].tolist(), agg["bytes"].tolist(),
               agg["ready"].tolist())
    for rank, exposed, dur, nbytes, ready in cols:
        if int(rank) in skip_ranks:
            continue
        exposed, dur = float(exposed), float(dur)
        step_us = rank_step_us(result, rank, means)
        if not (dur > 0 and exposed >= EXPOSED_BUCKET_SHARE * dur
                and 100.0 * exposed / step_us >= EXPOSED_BUCKET_MIN_STEP_PCT):
            continue
        nbytes = float(nbytes)
        mb = nbytes / 1e6
        if which == "last":
            hint = (f"a smaller bucket_cap_mb (now {cap_bytes / MIB:g}, i.e. {_mib(cap_bytes)}) shrinks the last bucket"
                    if cap_bytes and nbytes <= cap_bytes * 1.05
                    else f"the bucket is larger than the cap ({_mib(cap_bytes)}): it holds one large parameter, which "
                         f"no bucket size can split" if cap_bytes else "a smaller bucket_cap_mb shrinks the last bucket, "
                         "unless it is one parameter larger than the cap")
            msg = (f"the last bucket's allreduce ({mb:.1f} MB) is {100 * exposed / dur:.0f}% exposed: {exposed:.0f} µs "
                   f"per step with no compute to hide behind; {hint}")
        else:
            hint = ("a smaller first bucket lets communication start earlier in the backward "
                    "(DDP caps it at 1 MB by default; bucket_cap_mb sizes the rest)")
            msg = (f"the first bucket's allreduce ({mb:.1f} MB, ready {float(ready):.0f} µs into the "
                   f"backward) is {100 * exposed / dur:.0f}% exposed: {exposed:.0f} µs per step; {hint}")
        out.append(kind(rank=int(rank), message=msg, cost_us=exposed, step_us=step_us, bucket_mb=rounded(mb, 2),
                        exposed_us=rounded(exposed), dur_us=rounded(dur), bucket_cap_mb=rounded(cap_mb) if cap_mb else None,
                        bucket_cap_mib=rounded(cap_bytes / MIB, 2) if cap_bytes else None,
                        exposed_pct=rounded(100 * exposed / dur), ready_us=rounded(float(ready))))
    return out


FINDINGS = [AllreduceAfterBackward, ExposedFirstBucket, ExposedLastBucket]
