"""tracekit: profile distributed PyTorch training and explain where the step time goes.

Python API::

    import tracekit
    res = tracekit.analyze("runs/demo")        # -> AnalysisResult: res.meta + res.tables (DataFrames)
    res.ranks, res.findings                    # the tables `tracekit analyze --format json` prints
    ts = tracekit.load("runs/demo")            # -> TraceSet (per-rank event tables)
    w = tracekit.whatif("runs/demo")           # -> replay: predicted unprofiled step (w.to_dict() = --format json)
    res = tracekit.analyze(ts)                 # the same, on traces already loaded

Heavy dependencies (torch, HTA) are never imported here.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from tracekit.errors import TracekitError

if TYPE_CHECKING:
    from tracekit.analyses.registry import AnalysisResult
    from tracekit.traces.traceset import TraceSet

__all__ = ["__version__", "TracekitError", "load", "analyze", "whatif"]


def __getattr__(name: str) -> Any:
    # looked up on first use (tracekit.version reads the distribution's metadata)
    if name == "__version__":
        from tracekit.version import version

        return version()
    raise AttributeError(f"module 'tracekit' has no attribute {name!r}")


def load(path, **kwargs):  # noqa: ANN001, ANN201 - thin re-export, see tracekit.traces.load
    """Load per-rank traces; see :func:`tracekit.traces.loader.load`."""
    from tracekit.traces.loader import load as _load

    return _load(path, **kwargs)


def analyze(source: str | os.PathLike[str] | list[str] | TraceSet, **kwargs: Any) -> AnalysisResult:
    """Every table ``tracekit analyze`` reports, as DataFrames (``res.tables``) plus ``res.meta``.

    ``source``: a run folder, a trace file, a list of them (loaded as
    :func:`tracekit.runner.pipeline.analyze_paths` does, ``skip_bad=`` included),
    or a :class:`~tracekit.traces.traceset.TraceSet` from :func:`load`. Keyword
    options as ``tracekit analyze``'s: ``comm_pattern``, ``align``, ``hta``, ``workers``; ``whatif=True``
    (paths only) quotes the findings with the replay, as ``tracekit analyze --whatif``.
    ``tracekit analyze --format json`` prints exactly this result
    (:func:`tracekit.report.render.to_json_dict`). Paths are read through the cache
    (:mod:`tracekit.traces.cache`; ``TRACEKIT_CACHE=off`` turns it off): a second call on unchanged files
    reads the result back.
    """
    from tracekit.runner.options import RunOptions
    from tracekit.traces.traceset import TraceSet

    if kwargs.pop("whatif", False):  # findings quoted with the replay, as `tracekit analyze --whatif`
        return _analyze_with_whatif(source, kwargs)
    options = RunOptions.of(**kwargs)
    if isinstance(source, TraceSet):
        from tracekit.runner.run import analyze as _analyze

        return _analyze(source, options.analysis, workers=options.workers)
    from tracekit.runner.pipeline import analyze_paths

    paths = [str(p) for p in source] if isinstance(source, (list, tuple)) else [str(source)]
    return analyze_paths(paths, options)


def _analyze_with_whatif(source: Any, kwargs: dict[str, Any]) -> AnalysisResult:
    from tracekit.replay.api import advise
    from tracekit.runner.options import RunOptions
    from tracekit.runner.pipeline import load_and_analyze

    paths = [str(p) for p in source] if isinstance(source, (list, tuple)) else [str(source)]
    traces, res = load_and_analyze(paths, RunOptions.of(keep_events=True, **kwargs))
    advise(traces, res, comm_pattern=kwargs.get("comm_pattern"))
    return res


def whatif(source: str | os.PathLike[str] | list[str], **kwargs: Any) -> Any:
    """The replay's baseline prediction of the unprofiled step (a
    :class:`~tracekit.replay.api.WhatifResult`); ``.to_dict()`` is what ``tracekit whatif --format json``
    prints. Keyword options as the command's: ``comm_pattern``."""
    from tracekit.replay.api import whatif as _whatif

    return _whatif(source, **kwargs)
