"""``explain()``: did torch.compile keep the allreduces overlapped with backward, and what do graph breaks cost?

One entry point, :func:`explain`, returning::

    {
      "bucket_timeline": DataFrame,   # tracekit.analyses.timeline.TIMELINE_COLUMNS, per rank/step/bucket
      "graph_breaks":    DataFrame,   # tracekit.analyses.graphbreaks.GB_COLUMNS, per rank/step
      "break_boundaries": DataFrame,  # graphbreaks.BOUNDARY_COLUMNS, per subgraph boundary
      "manifest_check":  DataFrame,   # timeline.CHECK_COLUMNS (empty without run.json)
      "findings":        list[dict],  # tracekit.analyses.findings, most costly first
    }
"""

from __future__ import annotations

from functools import partial
from typing import Any

import pandas as pd

from tracekit.analyses import findings as fnd
from tracekit.analyses import graphbreaks, timeline
from tracekit.analyses.classify import classify_gpu
from tracekit.analyses.per_rank import concat_ranks, map_ranks
from tracekit.traces.traceset import RankTrace, TraceSet


def rank_explain(rt: RankTrace, coll: pd.DataFrame, manifest: dict[str, Any] | None,
                 comm_pattern: str | None) -> dict[str, pd.DataFrame]:
    """The per-rank tables of :func:`explain`: ``bucket_timeline`` (GPU traces only),
    ``graph_breaks`` and ``break_boundaries``; ``coll`` holds (at least) the rank's collectives."""
    out: dict[str, pd.DataFrame] = {}
    if rt.has_gpu_activity:
        out["bucket_timeline"] = timeline.bucket_timeline(rt, classify_gpu(rt, comm_pattern), coll)
    out["graph_breaks"], out["break_boundaries"] = graphbreaks.graph_break_table(rt, manifest)
    return out


def explain(traces: TraceSet, result: Any, workers: int | None = None) -> dict[str, Any]:
    """Bucket timeline, graph-break impact, manifest check and findings (see module doc).

    Reuses the per-rank tables of ``analyze(..., with_explain=True)`` when
    ``result`` has them; otherwise computes them (in parallel on large traces).
    """
    manifest = traces.manifest
    comm_pattern = (result.meta or {}).get("comm_pattern") if isinstance(result.meta, dict) else None
    parts = getattr(result, "rank_explain", None)
    if parts is None or set(parts) != set(traces.ranks):
        parts = map_ranks(traces, partial(rank_explain, coll=result.collectives, manifest=manifest,
                                          comm_pattern=comm_pattern), workers)
    tl = concat_ranks([p["bucket_timeline"] for p in parts.values() if "bucket_timeline" in p],
                      timeline.TIMELINE_COLUMNS)
    gb = concat_ranks([p["graph_breaks"] for p in parts.values()], graphbreaks.GB_COLUMNS)
    bnd = concat_ranks([p["break_boundaries"] for p in parts.values()], graphbreaks.BOUNDARY_COLUMNS)
    # CPU-only (gloo) traces have no bucket timeline to check the reducer's buckets against
    check = timeline.manifest_check(tl, gb, manifest if traces.has_gpu_activity else None, sorted(traces.ranks))
    return {
        "bucket_timeline": tl,
        "graph_breaks": gb,
        "break_boundaries": bnd,
        "manifest_check": check,
        "findings": fnd.findings(result, tl, gb, manifest),
    }
