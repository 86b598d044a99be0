"""Finding and loading per-rank traces into DataFrames (see :mod:`.schema`).

Names are resolved lazily so that importing a submodule (the pandas-free
:mod:`.decode` that parse workers run) never pulls in pandas.
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
