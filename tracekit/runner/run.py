"""Run every registered table over a :class:`TraceSet`: :func:`analyze`.

The tables themselves are declared in the analysis modules (see
:mod:`tracekit.analyses.registry`); this module only orchestrates them: one
pass per rank for the per-rank tables (forked workers on large inputs), the
rank tables stacked over ranks, then the run tables in dependency order, and
the run facts (``meta``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tracekit.analyses import registry
from tracekit.runner.rank_cache import map_rank_tables
from tracekit.traces import cols as C
from tracekit.traces.stacking import stack_cols
from tracekit.analyses.registry import AnalysisResult, AnalysisWarning, AnalyzeOptions
from tracekit.traces.decode import LAUNCHES_KEY, unread_of, unread_text
from tracekit.traces.traceset import TraceSet


def analyze(
    traces: TraceSet,
    options: AnalyzeOptions | None = None,
    *,
    workers: int | None = None,
    on_phase: Callable[[str], None] | None = None,
    tables: dict[str, C.Cols] | None = None,
    only: tuple[str, ...] = (),
) -> AnalysisResult:
    """Every registered table of ``traces`` and the run facts: what ``tracekit analyze`` reports.

    ``options``: what the tables compute (:class:`~tracekit.analyses.options.AnalyzeOptions`: the extra
    communication regex, clock alignment, HTA). ``workers``: processes
    for the per-rank pass (see :func:`tracekit.runner.per_rank.map_ranks`).
    ``on_phase(name)`` is called after the per-rank pass (``"rank_tables"``) and
    after the run tables (``"run_tables"``). ``tables``: the rank tables already
    computed elsewhere and stacked over ranks in rank order (an engine's workers,
    :func:`tracekit.runner.engine.map_paths`); then only the run tables are computed here.
    ``only``: compute just these tables and what they need (:func:`tracekit.analyses.registry.selected`);
    the result then holds only those of them that are public.
    """
    options = options if options is not None else AnalyzeOptions()
    specs = registry.selected(options, only)
    rank_specs = [t for t in specs if t.scope == "rank"]
    if tables is None:
        parts = map_rank_tables(traces, specs=rank_specs, options=options, workers=workers)
        tables = {t.name: stack_cols([p[t.name] for p in parts.values()], tuple(t.column_names))
                  for t in rank_specs}
    if on_phase:
        on_phase("rank_tables")
    ctx = registry.RunContext(traces=traces, options=options, manifest=traces.manifest,
                              meta=_meta(traces, tables, options), tables=tables)
    registry.compute_run_tables(ctx, [t for t in specs if t.scope == "run"])
    if on_phase:
        on_phase("run_tables")
    public = registry.public_names(options)
    return AnalysisResult(meta=ctx.meta, tables={n: ctx.tables[n] for n in public if n in ctx.tables})


def _meta(traces: TraceSet, tables: dict[str, C.Cols], options: AnalyzeOptions) -> dict[str, Any]:
    # built from the per-rank tables: ranks analysed in a child process have no
    # derived tables (steps, GPU join) in this one, and recomputing them costs ~30 ms a rank
    first = next(iter(traces))
    info = first.distributed_info
    notes: list[str] = list(traces.notes)
    unread = unread_of(rt.meta for rt in traces)  # the ranks without GPU activity tracekit reads
    # device launches in a run with no device record read: the records were lost
    launches = 0 if traces.has_gpu_activity else sum(int(rt.meta.get(LAUNCHES_KEY) or 0) for rt in traces)
    if not traces.has_gpu_activity and unread:
        notes.append(f"no GPU kernel, copy or memset that tracekit reads, but events of categories it does not read "
                     f"({unread_text(unread)}: another accelerator's activity, or kernels recorded by CUPTI's range "
                     "profiler): device-side metrics (compute, comm, overlap, idle, kernel timings) are unavailable; "
                     "CPU step times and collective annotations are still reported")
    elif launches:
        notes.append(f"kernel records missing: {launches} device launches (cudaLaunchKernel, memcpy...) but no "
                     "kernel, copy or memset recorded: the profiler lost the device's records (CUPTI's buffer "
                     "full, or the trace written before they were flushed); not a CPU-only run. Device-side "
                     "metrics (compute, comm, overlap, idle, kernel timings) are unavailable; CPU step times "
                     "and collective ops are still reported")
    elif not traces.has_gpu_activity:
        notes.append("no GPU activity in the traces (CPU-only run, e.g. gloo): device-side metrics "
                     "(compute, comm, overlap, idle, kernel timings) are unavailable; CPU step times and "
                     "collective annotations are still reported")
    # from the tables where computed (the engine path has no events here), else from the traces (``only``)
    if "steps" in tables:
        steps = sorted({int(s) for s in tables["steps"]["step"]})
    else:
        steps = sorted({int(s) for rt in traces for s in rt.step_arrays()["step"].tolist()})  # no frame per rank
    if "rank_totals" in tables:
        totals = tables["rank_totals"]
        pre_window = int(totals["pre_window_kernels"].sum()) if C.nrows(totals) else 0
    else:
        pre_window = sum(int(rt.gpu_column("pre_window").sum()) for rt in traces if rt.has_gpu_activity)
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
        "pre_window_kernels": pre_window,
        "files": {rt.rank: str(rt.path) for rt in traces},
        "hosts": traces.manifest.hosts() if traces.manifest else {},
        "clock_aligned": False,  # set by the cross-rank match (tracekit.analyses.crossrank)
        "clock_offsets_us": {},
        # matched / accepted / rejected cross-rank matches (set by tracekit.analyses.crossrank)
        "matching": {"matched": 0, "accepted": 0, "rejected": 0, "rejected_by": {}, "flagged": {}},
        "notes": notes,
        # event categories tracekit does not read, on ranks with no GPU activity it reads (summed over ranks)
        "unread_categories": unread,
        "lost_device_launches": launches,
        "manifest": traces.manifest,  # a tracekit.traces.manifest.Manifest (JSON: its fields)
        # a failed run (run.json status "failed"): who stopped first (tracekit.profile.diagnose)
        "failure": traces.manifest.failure if traces.manifest and traces.manifest.status == "failed" else None,
        "comm_pattern": options.comm_pattern,
    }


__all__ = ["AnalysisResult", "AnalysisWarning", "analyze"]
