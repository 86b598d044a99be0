"""Run every analysis over a :class:`TraceSet` and collect the DataFrames.

:func:`analyze` is what ``tracekit analyze`` calls; each piece is also callable
on its own (see :mod:`.breakdown`, :mod:`.collectives`, :mod:`.crossrank`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal

import numpy as np
import pandas as pd

from tracekit.analyses import breakdown, collectives, crossrank
from tracekit.analyses.classify import classify_gpu
from tracekit.analyses.explain import rank_explain
from tracekit.analyses.per_rank import concat_ranks, map_ranks
from tracekit.traces.traceset import RankTrace, TraceSet

RANK_COLUMNS = ("rank", "steps", "step_us", "kernels", *breakdown.BREAKDOWN_COLUMNS, "wait_us", "last_count",
                "pre_window_kernels", "collectives")


class AnalysisWarning(UserWarning):
    """A check on the traces failed but results are still produced."""


@dataclass
class AnalysisResult:
    """Everything ``tracekit analyze`` reports.

    - ``meta``: run facts (ranks, world size, backend, GPUs, steps, notes, clock offsets, manifest summary).
    - ``ranks``: one row per rank (:data:`RANK_COLUMNS`).
    - ``steps``: one row per rank and ProfilerStep.
    - ``collectives``: one row per collective instance per rank.
    - ``buckets``: DDP gradient-bucket allreduces per rank and step.
    - ``instances``: matched collectives across ranks (skew, straggler, transfer).
    - ``waits``: per rank and instance wait times.
    """

    meta: dict[str, Any]
    ranks: pd.DataFrame
    steps: pd.DataFrame
    collectives: pd.DataFrame
    buckets: pd.DataFrame
    instances: pd.DataFrame
    waits: pd.DataFrame
    extra: dict[str, Any] = field(default_factory=dict)
    #: per-rank explain tables from ``analyze(..., with_explain=True)``, consumed by ``explain()``
    rank_explain: dict[int, Any] | None = field(default=None, repr=False)


@dataclass
class RankPart:
    """What the per-rank pass computes for one rank (see :func:`rank_part`)."""

    row: dict[str, Any]
    steps: pd.DataFrame
    collectives: pd.DataFrame
    buckets: pd.DataFrame
    #: every ProfilerStep number of the rank (with or without kernels)
    step_ids: list[int] = field(default_factory=list)
    explain: dict[str, pd.DataFrame] | None = None


def rank_part(rt: RankTrace, *, comm_pattern: str | None, world_size: int, manifest: dict[str, Any] | None,
              with_explain: bool) -> RankPart:
    """Every per-rank table of one rank: breakdown row, steps, collectives, buckets
    (and, ``with_explain``, the per-rank tables of :func:`tracekit.analyses.explain.explain`)."""
    if rt.has_gpu_activity:
        cls = classify_gpu(rt, comm_pattern)
        row = breakdown.rank_breakdown(rt.gpu, cls, rt.steps)
        st = breakdown.step_breakdown(rt.gpu, cls, rt.steps)
    else:
        cls = pd.Series([], dtype=object)
        row = {k: np.nan for k in breakdown.BREAKDOWN_COLUMNS} | {
            "steps": len(rt.steps), "pre_window_kernels": 0, "kernels": 0,
            "step_us": float(rt.steps["dur_ns"].mean() / 1000.0) if len(rt.steps) else np.nan}
        st = pd.DataFrame({"step": rt.steps["step"], "step_us": rt.steps["dur_ns"] / 1000.0, "kernels": 0})
    coll = collectives.collective_table(rt, cls, world_size)
    row["rank"] = rt.rank
    row["collectives"] = int((~coll["pre_window"].astype(bool)).sum()) if len(coll) else 0
    st.insert(0, "rank", rt.rank)
    part = RankPart(row=row, steps=st, collectives=coll, buckets=collectives.bucket_table(rt, coll),
                    step_ids=[int(s) for s in rt.steps["step"]])
    if with_explain:
        part.explain = rank_explain(rt, coll, manifest, comm_pattern)
    return part


def analyze(
    traces: TraceSet,
    *,
    comm_pattern: str | None = None,
    align: Literal["auto", "on", "off"] = "auto",
    workers: int | None = None,
    with_explain: bool = False,
) -> AnalysisResult:
    """Compute the breakdown, collective, bucket and cross-rank tables.

    ``align``: clock alignment across ranks — ``auto`` aligns only when the
    manifest says the ranks ran on more than one host; ``on`` always, ``off`` never.
    The per-rank tables are computed in parallel on large traces (``workers``:
    see :func:`tracekit.analyses.per_rank.map_ranks`). ``with_explain`` also
    computes the per-rank half of :func:`~tracekit.analyses.explain.explain` in
    that pass; ``explain(traces, result)`` then reuses it.
    """
    parts = map_ranks(traces, partial(rank_part, comm_pattern=comm_pattern, world_size=traces.world_size,
                                      manifest=traces.manifest, with_explain=with_explain), workers)
    notes: list[str] = []
    if not traces.has_gpu_activity:
        notes.append("no GPU activity in the traces (CPU-only run, e.g. gloo): device-side metrics "
                     "(compute, comm, overlap, idle, kernel timings) are unavailable; CPU step times and "
                     "collective annotations are still reported")
    coll_all = concat_ranks([p.collectives for p in parts.values()], collectives.COLLECTIVE_COLUMNS)
    hosts = _hosts(traces.manifest)
    do_align = align == "on" or (align == "auto" and len(set(hosts.values())) > 1)
    offsets = crossrank.clock_offsets(coll_all) if do_align and traces.has_gpu_activity else {}
    instances, waits = crossrank.match(coll_all, offsets)
    if len(instances) and not instances["consistent"].all():
        bad = instances[~instances["consistent"]]
        warnings.warn(f"{len(bad)} matched collective(s) differ in name or size across ranks "
                      f"(first: pg {bad.iloc[0]['pg_name']}, step {bad.iloc[0]['step']}, #{bad.iloc[0]['step_seq']}); "
                      "the ranks may not run the same program", AnalysisWarning, stacklevel=2)
    ranks = pd.DataFrame([p.row for p in parts.values()])
    summary = crossrank.wait_summary(waits, instances)
    ranks = ranks.merge(summary[["rank", "wait_us", "last_count"]], on="rank", how="left") if len(summary) else \
        ranks.assign(wait_us=np.nan, last_count=np.nan)
    ranks = ranks[list(RANK_COLUMNS)]
    meta = _meta(traces, parts, notes, offsets, do_align, hosts)
    meta["comm_pattern"] = comm_pattern
    res = AnalysisResult(
        meta=meta, ranks=ranks, steps=concat_ranks([p.steps for p in parts.values()]), collectives=coll_all,
        buckets=concat_ranks([p.buckets for p in parts.values()], collectives.BUCKET_COLUMNS), instances=instances,
        waits=waits,
    )
    if with_explain:
        res.rank_explain = {r: p.explain for r, p in parts.items()}
    return res


def _hosts(manifest: dict[str, Any] | None) -> dict[int, str]:
    """rank -> hostname from a ``tracekit profile`` manifest (``hardware.ranks``)."""
    ranks = ((manifest or {}).get("hardware") or {}).get("ranks") or []
    return {int(r["rank"]): str(r.get("hostname")) for r in ranks
            if isinstance(r, dict) and isinstance(r.get("rank"), int)}


def _meta(traces: TraceSet, parts: dict[int, RankPart], notes: list[str], offsets: dict[int, float],
          aligned: bool, hosts: dict[int, str]) -> dict[str, Any]:
    # built from the per-rank parts: ranks analysed in a child process have no
    # derived tables (steps, GPU join) in this one, and recomputing them costs ~30 ms a rank
    first = next(iter(traces))
    info = first.distributed_info
    steps = sorted({s for p in parts.values() for s in p.step_ids})
    return {
        "ranks": sorted(traces.ranks),
        "world_size": traces.world_size,
        "missing_ranks": traces.missing_ranks,
        "skipped_files": [{"path": p, "problem": why} for p, why in traces.skipped],
        "backend": traces.backend,
        "nccl_version": info.get("nccl_version"),
        "gpus": sorted({n for rt in traces for n in rt.gpu_names}),
        "steps": steps,
        "device_metrics": traces.has_gpu_activity,
        "pre_window_kernels": int(sum(p.row["pre_window_kernels"] for p in parts.values())),
        "files": {rt.rank: str(rt.path) for rt in traces},
        "hosts": hosts,
        "clock_aligned": aligned,
        "clock_offsets_us": {r: v / 1000.0 for r, v in offsets.items()},
        "notes": notes,
        "manifest": traces.manifest,
    }


# the path-level entry lives in a pandas-free module so parse workers fork from a lean process
from tracekit.analyses.pipeline import analyze_paths  # noqa: E402 - re-export

__all__ = ["AnalysisResult", "AnalysisWarning", "RankPart", "analyze", "analyze_paths", "rank_part"]
