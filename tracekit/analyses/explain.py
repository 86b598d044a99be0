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

from typing import Any

import pandas as pd

from tracekit.analyses import findings as fnd
from tracekit.analyses import graphbreaks, timeline
from tracekit.analyses.classify import classify_gpu
from tracekit.traces.traceset import TraceSet


def _concat(frames: list[pd.DataFrame], columns: tuple[str, ...]) -> pd.DataFrame:
    frames = [f for f in frames if len(f)]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(columns))


def explain(traces: TraceSet, result: Any) -> dict[str, Any]:
    """Bucket timeline, graph-break impact, manifest check and findings (see module doc)."""
    manifest = traces.manifest
    comm_pattern = (result.meta or {}).get("comm_pattern") if isinstance(result.meta, dict) else None
    tls, gbs, bnds = [], [], []
    for rt in traces:
        if rt.has_gpu_activity:
            cls = classify_gpu(rt, comm_pattern)
            tls.append(timeline.bucket_timeline(rt, cls, result.collectives))
        gb, bnd = graphbreaks.graph_break_table(rt, manifest)
        gbs.append(gb)
        bnds.append(bnd)
    tl = _concat(tls, timeline.TIMELINE_COLUMNS)
    gb = _concat(gbs, graphbreaks.GB_COLUMNS)
    bnd = _concat(bnds, graphbreaks.BOUNDARY_COLUMNS)
    # CPU-only (gloo) traces have no bucket timeline to check the reducer's buckets against
    check = timeline.manifest_check(tl, gb, manifest if traces.has_gpu_activity else None, sorted(traces.ranks))
    return {
        "bucket_timeline": tl,
        "graph_breaks": gb,
        "break_boundaries": bnd,
        "manifest_check": check,
        "findings": fnd.findings(result, tl, gb, manifest),
    }
