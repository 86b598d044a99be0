"""Finding and loading per-rank traces into DataFrames (see :mod:`.schema`)."""

from tracekit.traces.loader import TraceLoadWarning, find_trace_files, load
from tracekit.traces.traceset import RankTrace, TraceSet

__all__ = ["load", "find_trace_files", "TraceLoadWarning", "RankTrace", "TraceSet"]
