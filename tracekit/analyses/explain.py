"""``explain()``: the tables that say whether torch.compile kept the allreduces overlapped with
backward, and what graph breaks cost, from an :class:`~tracekit.analyses.registry.AnalysisResult`.

They are ordinary registered tables (:mod:`.timeline`, :mod:`.graphbreaks`,
:mod:`.findings`) that :func:`tracekit.runner.run.analyze` computes with the
others; this function only collects them, with the findings as dicts::

    {
      "bucket_timeline": DataFrame,   # per rank/step/bucket
      "graph_breaks":    DataFrame,   # per rank/step
      "break_boundaries": DataFrame,  # per subgraph boundary
      "manifest_check":  DataFrame,   # empty without run.json
      "findings":        list[dict],  # tracekit.analyses.findings, most costly first
    }
"""

from __future__ import annotations

from typing import Any

from tracekit.analyses.findings import as_dicts
from tracekit.analyses.registry import AnalysisResult

EXPLAIN_TABLES = ("bucket_timeline", "graph_breaks", "break_boundaries", "manifest_check")


def explain(result: AnalysisResult) -> dict[str, Any]:
    """Bucket timeline, graph-break impact, manifest check and findings of ``result`` (see module doc)."""
    out: dict[str, Any] = {k: result.tables[k] for k in EXPLAIN_TABLES}
    out["findings"] = as_dicts(result.tables["findings"])
    return out
