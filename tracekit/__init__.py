"""tracekit: profile distributed PyTorch training and explain where the step time goes.

Python API::

    import tracekit
    ts = tracekit.load("traces/run1")          # -> TraceSet
    report = tracekit.analyze(ts)              # -> AnalysisResult (DataFrames)

Heavy dependencies (torch, HTA) are never imported here.
"""

from __future__ import annotations

__version__ = "0.1.0"

from tracekit.errors import TracekitError  # noqa: E402

__all__ = ["__version__", "TracekitError", "load", "analyze"]


def load(path, **kwargs):  # noqa: ANN001, ANN201 - thin re-export, see tracekit.traces.load
    """Load per-rank traces; see :func:`tracekit.traces.loader.load`."""
    from tracekit.traces.loader import load as _load

    return _load(path, **kwargs)


def analyze(traces, **kwargs):  # noqa: ANN001, ANN201
    """Run every analysis; see :func:`tracekit.analyses.run.analyze`."""
    from tracekit.analyses.run import analyze as _analyze

    return _analyze(traces, **kwargs)
