"""Finding and loading per-rank traces: numpy columns per rank, DataFrames on request (see :mod:`.schema`).

No module of this package imports pandas when imported (``tracekit analyze`` reads the ranks'
columns, never a frame); the functions that return a frame import it when called. Names are
resolved lazily, so that importing a submodule (e.g. :mod:`.decode`, which parse workers run)
loads only what it needs.
"""

from __future__ import annotations

from typing import Any

__all__ = ["load", "start_load", "find_trace_files", "TraceLoadWarning", "RankTrace", "TraceSet"]

_WHERE = {"load": "loader", "start_load": "loader", "find_trace_files": "loader", "TraceLoadWarning": "loader",
          "RankTrace": "traceset", "TraceSet": "traceset"}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        import importlib

        return getattr(importlib.import_module(f"tracekit.traces.{_WHERE[name]}"), name)
    raise AttributeError(f"module 'tracekit.traces' has no attribute {name!r}")
