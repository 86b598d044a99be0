"""Gradient-bucket timeline (per rank, step and bucket) and the check against ``run.json``.

A *bucket* is one allreduce launched during the step's backward (the DDP
reducer's bucket; :func:`tracekit.analyses.collectives.bucket_table` numbers
them in launch order, 0 = first launched = the last layers' gradients).

Columns of :func:`bucket_timeline` (absolute times in ns on the rank's clock,
offsets in µs from ``bwd_start_ns``, the CPU start of the step's first backward op):

- ``ready_cpu_ns``: when the bucket's gradients were ready on the CPU side. In
  compiled runs (the step has ``CompiledFunctionBackward`` ops) the end of the
  last ``CompiledFunctionBackward`` subgraph that ended before the launch; in
  eager runs the end of the last autograd op (``evaluate_function: X`` other than
  AccumulateGrad, or the inner ``torch::autograd::AccumulateGrad``) before the
  launch. ``ready_source`` says which (``compiled_subgraph`` / ``autograd_op``).
- ``ready_gpu_ns``: the latest end of any compute kernel launched before the
  allreduce: the earliest the NCCL kernel could start, as the stream waits on them.
- ``launch_ns``: CPU time of the collective op (``record_param_comms``).
- ``start_ns`` / ``end_ns`` / ``dur_us``: the NCCL kernel.
- ``launch_delay_us`` = launch − ready_cpu; ``queue_us`` = start − max(ready_gpu, launch).
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
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from tracekit.analyses import intervals as iv
from tracekit.analyses.classify import COMPUTE, classify_gpu
from tracekit.analyses.collectives import gradient_allreduces, manifest_tp
from tracekit.analyses.registry import Column, RankContext, RunContext, Table, View, ViewOptions
from tracekit.profile.manifest import CompileFacts, Manifest
from tracekit.traces import schema
from tracekit.traces.traceset import RankTrace, assign_steps

NS_PER_US = 1000.0
COMPILED_BWD = "CompiledFunctionBackward"
EVAL_PREFIX = "autograd::engine::evaluate_function: "
ACCUMULATE = "torch::autograd::AccumulateGrad"
#: relative size tolerance when comparing bucket byte counts (manifest vs trace):
#: the reducer pads nothing, but a 1% slack absorbs dtype-size rounding in the args
BYTES_TOLERANCE = 0.01

TIMELINE_COLUMNS = (
    "rank", "step", "bucket", "bytes", "ready_source", "ready_cpu_ns", "ready_gpu_ns", "launch_ns", "start_ns",
    "end_ns", "bwd_start_ns", "bwd_compute_end_ns", "ready_us", "launch_us", "start_us", "end_us", "dur_us",
    "launch_delay_us", "queue_us", "exposed_us", "tail_exposed_us", "starts_after_backward",
)


#: compiled-autograd backward graphs run as "Torch-Compiled Region: !<id>/..." ranges
COMPILED_AUTOGRAD_PREFIX = "Torch-Compiled Region: !"


def cpu_ops(rt: RankTrace) -> pd.DataFrame:
    """CPU ops and annotations of the rank: ``name``, ``ts_ns``, ``end_ns``, ``tid`` (shared, do not mutate)."""
    def build() -> pd.DataFrame:
        ev = rt.events
        return ev.loc[ev["kind"].isin((schema.CPU_OP, schema.ANNOTATION)), ["name", "ts_ns", "end_ns", "tid"]]

    return rt.memo("cpu_ops", build)


def _masks_of(rt: RankTrace) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    return rt.memo("timeline_masks", lambda: _masks(cpu_ops(rt)))


def _masks(ops: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(compiled backward subgraph, compiled-autograd region, eager autograd op, AccumulateGrad op) masks."""
    n = ops["name"]
    comp = schema.name_mask(n, f"^{re.escape(COMPILED_BWD)}$")
    cag = schema.name_mask(n, COMPILED_AUTOGRAD_PREFIX, prefix=True)
    acc = schema.name_mask(n, f"^{re.escape(ACCUMULATE)}$")
    evalf = schema.name_mask(n, EVAL_PREFIX, prefix=True) & ~schema.name_mask(n, "AccumulateGrad$")
    return comp, cag, evalf, acc


def backward_compute_ops(rt: RankTrace) -> pd.DataFrame:
    """CPU ranges whose kernels are backward compute: compiled backward subgraphs, compiled-autograd
    regions and non-AccumulateGrad autograd ops."""
    ops = cpu_ops(rt)
    comp, cag, evalf, _ = _masks_of(rt)
    return ops[comp | cag | evalf].assign(name=lambda d: d["name"].astype(str))


def _ready_candidates(rt: RankTrace) -> tuple[np.ndarray, np.ndarray]:
    """Sorted end times of (compiled backward subgraphs, eager autograd ops)."""
    ops = cpu_ops(rt)
    comp, _, evalf, acc = _masks_of(rt)
    return np.sort(ops.loc[comp, "end_ns"].to_numpy()), np.sort(ops.loc[evalf | acc, "end_ns"].to_numpy())


def _last_before(sorted_ends: np.ndarray, t: np.ndarray) -> np.ndarray:
    i = np.searchsorted(sorted_ends, t, side="right") - 1
    return np.where(i >= 0, sorted_ends[np.clip(i, 0, None)] if sorted_ends.size else -1, -1)


def backward_compute_end(rt: RankTrace, cls: pd.Series) -> pd.DataFrame:
    """Per step: ``bwd_start_ns`` (first backward op, CPU) and ``bwd_compute_end_ns`` (last backward compute kernel)."""
    ops = backward_compute_ops(rt)
    cols = ["step", "bwd_start_ns", "bwd_compute_end_ns"]
    if ops.empty or not rt.has_gpu_activity:
        return pd.DataFrame(columns=cols)
    g = rt.gpu
    comp = g[(cls == COMPUTE).to_numpy() & (g["launch_ts_ns"] >= 0).to_numpy()]
    s, e = iv.union(ops["ts_ns"].to_numpy(), ops["end_ns"].to_numpy())
    lt = comp["launch_ts_ns"].to_numpy()
    i = np.searchsorted(s, lt, side="right") - 1
    inside = (i >= 0) & (e[np.clip(i, 0, None)] > lt)
    k = comp[inside]
    ends = k.groupby("step")["end_ns"].max().rename("bwd_compute_end_ns")
    starts = pd.Series(ops["ts_ns"].to_numpy(), index=assign_steps(rt.steps, ops["ts_ns"].to_numpy()))
    starts = starts[starts.index >= 0].groupby(level=0).min().rename("bwd_start_ns")
    out = pd.concat([starts, ends], axis=1).dropna().astype(np.int64)
    out.index.name = "step"
    return out.reset_index()[cols]


def bucket_timeline(rt: RankTrace, cls: pd.Series, coll: pd.DataFrame, tp: int = 1,
                    world_size: int | None = None) -> pd.DataFrame:
    """The bucket timeline of one rank (see module doc); ``coll`` is the rank's collective table.

    Buckets are the rows :func:`tracekit.analyses.collectives.gradient_allreduces` selects (data-parallel
    group only: tensor-parallel allreduces are not buckets; ``tp`` from the manifest)."""
    b = coll[(coll["rank"] == rt.rank) & gradient_allreduces(coll, tp, world_size) & (coll["start_ns"] >= 0)]
    if b.empty or not rt.has_gpu_activity:
        return pd.DataFrame(columns=list(TIMELINE_COLUMNS))
    b = b.sort_values(["step", "launch_ts_ns"], kind="stable").reset_index(drop=True)
    out = pd.DataFrame({"rank": rt.rank, "step": b["step"].astype(np.int64), "bytes": b["bytes"]})
    out["bucket"] = out.groupby("step").cumcount()
    launch = b["launch_ts_ns"].to_numpy()
    comp_ends, eager_ends = _ready_candidates(rt)
    compiled_steps = set(assign_steps(rt.steps, comp_ends)) if comp_ends.size else set()
    is_comp = out["step"].isin(compiled_steps).to_numpy()
    out["ready_source"] = np.where(is_comp, "compiled_subgraph", "autograd_op")
    out["ready_cpu_ns"] = np.where(is_comp, _last_before(comp_ends, launch), _last_before(eager_ends, launch))
    # GPU readiness: latest end of compute kernels launched before the allreduce launch
    g = rt.gpu
    comp = g[(cls == COMPUTE).to_numpy() & (g["launch_ts_ns"] >= 0).to_numpy()].sort_values("launch_ts_ns")
    cummax = np.maximum.accumulate(comp["end_ns"].to_numpy()) if len(comp) else np.empty(0, np.int64)
    j = np.searchsorted(comp["launch_ts_ns"].to_numpy(), launch, side="right") - 1
    out["ready_gpu_ns"] = np.where(j >= 0, cummax[np.clip(j, 0, None)] if cummax.size else -1, -1)
    out["launch_ns"] = launch
    out["start_ns"] = b["start_ns"].to_numpy()
    out["end_ns"] = b["end_ns"].to_numpy()
    bw = backward_compute_end(rt, cls)
    out = out.merge(bw, on="step", how="left")
    out["bwd_start_ns"] = out["bwd_start_ns"].fillna(-1).astype(np.int64)
    out["bwd_compute_end_ns"] = out["bwd_compute_end_ns"].fillna(-1).astype(np.int64)
    base = out["bwd_start_ns"].where(out["bwd_start_ns"] >= 0)
    for col, src in (("ready_us", "ready_cpu_ns"), ("launch_us", "launch_ns"), ("start_us", "start_ns"),
                     ("end_us", "end_ns")):
        out[col] = (out[src].where(out[src] >= 0) - base) / NS_PER_US
    out["dur_us"] = b["dur_us"].to_numpy()
    out["launch_delay_us"] = (out["launch_ns"] - out["ready_cpu_ns"].where(out["ready_cpu_ns"] >= 0)) / NS_PER_US
    ready = np.maximum(out["ready_gpu_ns"].to_numpy(), out["launch_ns"].to_numpy())
    out["queue_us"] = (out["start_ns"] - ready) / NS_PER_US
    out["exposed_us"] = b["exposed_us"].to_numpy()
    bend = out["bwd_compute_end_ns"].to_numpy()
    has_end = bend >= 0
    tail = np.clip(out["end_ns"].to_numpy() - np.maximum(out["start_ns"].to_numpy(), bend), 0, None)
    out["tail_exposed_us"] = np.where(has_end, tail / NS_PER_US, np.nan)
    out["starts_after_backward"] = has_end & (out["start_ns"].to_numpy() >= bend)
    return out[list(TIMELINE_COLUMNS)]


# -- manifest ----------------------------------------------------------------------------------


def rank_compile_facts(manifest: Manifest | None, rank: int) -> CompileFacts:
    """The compile facts of ``rank`` (:meth:`Manifest.compile_facts`); empty ones (nothing
    enabled, every fact null) without a manifest or an entry for the rank."""
    facts = manifest.compile_facts(rank) if manifest is not None else None
    return facts if facts is not None else CompileFacts()


def _sizes_match(a: list[float], b: list[float]) -> bool:
    if len(a) != len(b):
        return False
    x, y = np.sort(np.asarray(a, float)), np.sort(np.asarray(b, float))
    return bool(np.all(np.abs(x - y) <= BYTES_TOLERANCE * np.maximum(np.abs(y), 1.0)))


def _fmt_sizes(sizes: list[float] | None) -> str | None:
    if sizes is None:
        return None
    mb = [f"{s / 1e6:.2f}" for s in sizes]
    return f"{len(mb)} buckets [" + ", ".join(mb) + "] MB"


CHECK_COLUMNS = ("rank", "check", "expected", "observed", "status", "note")


def manifest_check(timeline: pd.DataFrame, graph_breaks: pd.DataFrame, manifest: Manifest | None,
                   ranks: list[int]) -> pd.DataFrame:
    """Check DDPOptimizer's bucket assignment and the reducer's buckets (``run.json``) against what ran.

    Rows per rank: ``backward_subgraphs_per_step`` (DDPOptimizer buckets vs
    ``CompiledFunctionBackward`` per step), ``allreduces_per_step`` and
    ``allreduce_bytes`` (reducer buckets vs backward allreduces of the last
    profiled step), ``ddp_optimizer_vs_reducer``. ``status``: match / mismatch /
    unknown (a fact is missing). Empty without a manifest.
    """
    if manifest is None:
        return pd.DataFrame(columns=list(CHECK_COLUMNS))
    reducer = manifest.reducer()
    initial = reducer.bucket_sizes_bytes if reducer else None
    rebuilt = reducer.rebuilt_bucket_sizes_bytes if reducer else None
    rows: list[dict[str, Any]] = []
    for r in ranks:
        facts = rank_compile_facts(manifest, r)
        graphs = facts.ddp_optimizer.graphs if facts.ddp_optimizer else None
        if graphs is None and facts.optimize_ddp == "ddp_optimizer" and manifest.buckets:
            graphs = manifest.buckets.ddp_optimizer
        tl = timeline[timeline["rank"] == r] if len(timeline) else timeline
        gb = graph_breaks[graph_breaks["rank"] == r] if len(graph_breaks) else graph_breaks
        # backward subgraphs
        obs_sub = int(gb["bwd_subgraphs"].median()) if len(gb) else None
        if graphs:
            exp_sub = int(sum(g.bucket_count or 0 for g in graphs))
            st = "match" if obs_sub == exp_sub else "mismatch"
            note = ("one compiled backward subgraph per DDPOptimizer bucket" if st == "match" else
                    "DDPOptimizer's buckets do not map one-to-one to compiled backward subgraphs "
                    "(graph breaks add subgraphs; a skipped frame removes them)")
            rows.append(dict(rank=r, check="backward_subgraphs_per_step", expected=exp_sub, observed=obs_sub,
                             status=st, note=note))
        elif facts.enabled:
            rows.append(dict(rank=r, check="backward_subgraphs_per_step", expected=None, observed=obs_sub,
                             status="unknown", note=f"DDPOptimizer not in use (optimize_ddp={facts.optimize_ddp})"))
        # reducer buckets vs allreduces
        if len(tl):
            last = tl[tl["step"] == tl["step"].max()]
            obs_sizes = last.sort_values("bucket")["bytes"].astype(float).tolist()
        else:
            obs_sizes = []
        cur = rebuilt if rebuilt else initial
        if cur:
            st = "match" if len(cur) == len(obs_sizes) else "mismatch"
            rows.append(dict(rank=r, check="allreduces_per_step", expected=len(cur), observed=len(obs_sizes),
                             status=st, note="reducer buckets vs backward allreduces in the last profiled step"))
            if _sizes_match(cur, obs_sizes):
                st, note = "match", ("the reducer rebuilt its buckets in gradient-ready order after the first "
                                     "iteration; the rebuilt buckets ran" if rebuilt and not _sizes_match(initial or [], rebuilt)
                                     else "the reducer's buckets ran as built")
            elif initial and _sizes_match(initial, obs_sizes):
                st, note = "match", "the initial (not rebuilt) buckets ran"
            else:
                st, note = "mismatch", "allreduce sizes differ from the reducer's buckets"
            rows.append(dict(rank=r, check="allreduce_bytes", expected=_fmt_sizes(cur), observed=_fmt_sizes(obs_sizes),
                             status=st, note=note))
        else:
            rows.append(dict(rank=r, check="allreduce_bytes", expected=None, observed=_fmt_sizes(obs_sizes),
                             status="unknown", note="run.json has no reducer bucket sizes"))
        if graphs and any(g.buckets for g in graphs):
            ddpo_sizes = [float(b.bytes or 0) for g in graphs for b in g.buckets]
            same = _sizes_match(ddpo_sizes, obs_sizes)
            note = ("DDPOptimizer's buckets equal the reducer's allreduces" if same else
                    "DDPOptimizer buckets differ from the reducer's allreduces"
                    + (": the reducer rebuilt its buckets in gradient-ready order after the first iteration"
                       if rebuilt and _sizes_match(rebuilt, obs_sizes) else ""))
            rows.append(dict(rank=r, check="ddp_optimizer_vs_reducer", expected=_fmt_sizes(ddpo_sizes),
                             observed=_fmt_sizes(obs_sizes), status="match" if same else "mismatch", note=note))
    return pd.DataFrame(rows, columns=list(CHECK_COLUMNS))


# -- registered tables (see tracekit.analyses.registry) ------------------------------------------

_TIMELINE_SHOWN = ("rank", "step", "bucket", "bytes", "ready_us", "launch_us", "start_us", "end_us", "dur_us",
                   "exposed_us", "tail_exposed_us")


def _timeline_table(ctx: RankContext) -> pd.DataFrame:
    rt = ctx.trace
    if not rt.has_gpu_activity:
        return pd.DataFrame(columns=list(TIMELINE_COLUMNS))
    return bucket_timeline(rt, classify_gpu(rt, ctx.options.comm_pattern), ctx.tables["collectives"],
                           manifest_tp(ctx.manifest), ctx.world_size)


def _timeline_view(t: Mapping[str, pd.DataFrame], opts: ViewOptions) -> View | None:
    tl = t["bucket_timeline"]
    if not len(tl):
        return None
    last_step = int(tl["step"].max())
    last = tl[tl["step"] == last_step].assign(bytes=lambda d: d["bytes"] / 1e6).rename(columns={"bytes": "MB"})
    cols = ["MB" if c == "bytes" else c for c in _TIMELINE_SHOWN]
    return View(f"Bucket timeline, step {last_step} (µs from backward start)", last[cols])


def _check_table(ctx: RunContext) -> pd.DataFrame:
    # CPU-only (gloo) traces have no bucket timeline to check the reducer's buckets against
    manifest = ctx.manifest if ctx.traces.has_gpu_activity else None
    return manifest_check(ctx.tables["bucket_timeline"], ctx.tables["graph_breaks"], manifest,
                          sorted(ctx.traces.ranks))


TABLES = [
    Table(
        name="bucket_timeline", scope="rank", title="Bucket timeline (per rank, step and gradient bucket)",
        doc="A bucket is one allreduce launched during the step's backward (GPU traces only). Offsets (`_us`) "
            "are from the step's backward start (the CPU start of its first backward op); the text report shows "
            "the last profiled step.",
        columns=(
            Column("rank", "rank", "the rank"),
            Column("step", "step", "the ProfilerStep"),
            Column("bucket", "index", "launch order within the step (0 = first launched)"),
            Column("bytes", "bytes", "the allreduce's buffer"),
            Column("ready_source", "name", "what marks the gradients ready: compiled_subgraph (end of the last "
                                           "CompiledFunctionBackward before the launch) or autograd_op (end of the "
                                           "last autograd op / AccumulateGrad before the launch)"),
            Column("ready_cpu_ns", "ns", "gradients ready on the CPU side (see ready_source)"),
            Column("ready_gpu_ns", "ns", "latest end of a compute kernel launched before the allreduce"),
            Column("launch_ns", "ns", "CPU time of the collective op (record_param_comms)"),
            Column("start_ns", "ns", "NCCL kernel start"),
            Column("end_ns", "ns", "NCCL kernel end"),
            Column("bwd_start_ns", "ns", "CPU start of the step's first backward op"),
            Column("bwd_compute_end_ns", "ns", "end of the step's last backward compute kernel (launched inside "
                                               "CompiledFunctionBackward or a non-AccumulateGrad autograd op)"),
            Column("ready_us", "us", "ready_cpu_ns − bwd_start_ns"),
            Column("launch_us", "us", "launch_ns − bwd_start_ns"),
            Column("start_us", "us", "start_ns − bwd_start_ns"),
            Column("end_us", "us", "end_ns − bwd_start_ns"),
            Column("dur_us", "us", "kernel duration"),
            Column("launch_delay_us", "us", "launch − ready_cpu"),
            Column("queue_us", "us", "kernel start − max(ready_gpu, launch): comm-stream backlog"),
            Column("exposed_us", "us", "part of the kernel overlapped by no compute kernel at all"),
            Column("tail_exposed_us", "us", "part of the kernel after the step's last backward compute kernel"),
            Column("starts_after_backward", "bool", "kernel start ≥ bwd_compute_end_ns"),
        ),
        compute=_timeline_table, needs=("collectives",), view=_timeline_view, order=80,
    ),
    Table(
        name="manifest_check", scope="run", title="run.json check (what run.json says vs what the trace shows)",
        doc="Checks per rank: backward_subgraphs_per_step (DDPOptimizer buckets vs CompiledFunctionBackward per "
            "step), allreduces_per_step and allreduce_bytes (reducer buckets vs backward allreduces of the last "
            "step), ddp_optimizer_vs_reducer. Empty without run.json or on CPU-only traces.",
        columns=(
            Column("rank", "rank", "the rank"),
            Column("check", "name", "what is checked"),
            Column("expected", "text", "from run.json"),
            Column("observed", "text", "from the trace"),
            Column("status", "name", "match / mismatch / unknown (a fact is missing)"),
            Column("note", "text", "what the result means"),
        ),
        compute=_check_table, needs=("bucket_timeline", "graph_breaks"), order=90,
        view=lambda t, o: View("run.json check", t["manifest_check"]) if len(t["manifest_check"]) else None,
    ),
]
