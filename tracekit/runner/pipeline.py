"""``analyze_paths``: the single library call behind ``tracekit analyze``.

This module is deliberately light (no pandas at import): it starts the parse
workers first, then imports the analysis code while they decode, so the ~0.3 s
of pandas/analysis imports overlap the parsing instead of preceding it. That is
why :mod:`tracekit.runner.run` is imported inside :func:`analyze_paths`; the
import goes one way only (``run`` never imports this module).
"""

from __future__ import annotations

import importlib
import re
import time
from dataclasses import replace
from typing import TYPE_CHECKING

from tracekit.runner.options import RunOptions

if TYPE_CHECKING:
    from pathlib import Path

    from tracekit.analyses.registry import AnalysisResult
    from tracekit.traces.traceset import TraceSet

#: from this many rank files on, the local engine decodes and analyses each rank in the same
#: worker and ships back only its tables (the parse-then-analyse path pays per rank twice)
ENGINE_MIN_FILES = 16


def analyze_paths(paths: list[str], options: RunOptions | None = None,
                  timings: PhaseTimer | None = None) -> AnalysisResult:
    """:func:`load_and_analyze` without the traces (so many rank files may take the engine path).

    The result is cached whole (:func:`tracekit.traces.cache.result`), keyed by the inputs' identities
    (:func:`tracekit.traces.loader.inputs_key`), the options that change it (``analysis``, ``skip_bad``,
    ``only``; where and how the ranks run does not, nor ``table_names``, which only names the tables the
    caller will read, checked here before the cache is looked at) and tracekit's code: a second look at the
    same files reads it (``timings`` then has one phase, ``cached``)."""
    from tracekit.runner import rank_cache
    from tracekit.traces import cache, loader

    options = replace(options if options is not None else RunOptions(), keep_events=False)
    clock = timings if timings is not None else PhaseTimer()
    _check(options)  # a bad option fails whether or not the result is cached
    hta = ("HolisticTraceAnalysis",) if options.analysis.hta else ()  # (its tables)
    return cache.result(ANALYSIS_CACHE, [loader.inputs_key(paths)],
                        (rank_cache.options_key(options.analysis), options.skip_bad, options.only),
                        lambda: _load_and_analyze(paths, options, clock)[1], packages=hta,
                        on_hit=lambda: clock.lap("cached"))


#: the cache kind of :func:`analyze_paths`' results
ANALYSIS_CACHE = "analysis"


def load_and_analyze(paths: list[str], options: RunOptions | None = None,
                     timings: PhaseTimer | None = None) -> tuple[TraceSet, AnalysisResult]:
    """Load ``paths`` and run :func:`~tracekit.runner.run.analyze` (every registered table), as ``options``
    (:class:`~tracekit.runner.options.RunOptions`) say.

    Two ways through, with the same results:

    - the *parse path* (``keep_events``, ``hta``, or fewer than :data:`ENGINE_MIN_FILES`
      rank files on ``engine="local"``): parse workers decode the files while the
      analysis code is imported, the events come back to this process, and the
      per-rank pass runs over them (:func:`~tracekit.runner.per_rank.map_ranks`);
    - the *engine path* (otherwise, and always with ``engine="dask"``): decode and rank
      tables run together on the engine's workers, in batches, and only the rank tables
      come back (:func:`tracekit.runner.engine.map_paths`; ``scheduler``: the dask
      scheduler's address, none starts a local cluster). The returned traces then hold
      headers only (:meth:`~tracekit.traces.traceset.RankTrace.header_only`).

    ``timings``, when given, gets a lap per phase: ``start`` (find files, start
    workers), ``import`` (analysis code, while workers decode), ``load``
    (waiting for the workers and building the tables), ``rank_tables`` (the
    per-rank pass) and ``run_tables`` (cross-rank tables, findings, HTA).
    On the engine path the phases are ``import``, ``map`` (the per-rank map on the
    engine) and ``run_tables``.
    """
    opts = options if options is not None else RunOptions()
    _check(opts)
    return _load_and_analyze(paths, opts, timings if timings is not None else PhaseTimer())


def _load_and_analyze(paths: list[str], opts: RunOptions, clock: PhaseTimer) -> tuple[TraceSet, AnalysisResult]:
    """:func:`load_and_analyze` after its options were checked."""
    from tracekit.traces.loader import find_trace_files, start_load

    if opts.engine != "local" or opts.scheduler:
        return _analyze_mapped(paths, clock, opts)
    if not (opts.keep_events or opts.analysis.hta):
        listed = find_trace_files(paths)
        if len(listed) >= ENGINE_MIN_FILES:
            return _analyze_mapped(paths, clock, opts, listed)  # listed once: 16384 files take 0.2 s
    pending = start_load(paths if len(paths) != 1 else paths[0], skip_bad=opts.skip_bad, workers=opts.workers,
                         progress=opts.progress)
    clock.lap("start")
    # imported while the workers decode
    from tracekit.analyses import registry
    from tracekit.runner.run import analyze

    registry.tables()  # imports every analysis module
    for name in opts.preload:
        importlib.import_module(name)
    clock.lap("import")
    traces = pending.result()
    clock.lap("load")
    res = analyze(traces, opts.analysis, workers=opts.workers, on_phase=clock.lap, only=opts.only)
    return traces, res


def _check(opts: RunOptions) -> None:
    """Fail on bad options before any work: the regex, ``--table`` names, an engine that cannot keep events."""
    from tracekit.errors import ConfigError

    pattern = opts.analysis.comm_pattern
    if pattern:
        try:
            re.compile(pattern)
        except re.error as e:
            raise ConfigError(f"--comm-pattern/--comm-kernel {pattern!r} is not a valid regex: {e}") from None
    if opts.table_names or opts.only:  # (this imports the analyses up front)
        from tracekit.analyses import registry

        registry.check_names((*opts.table_names, *opts.only), opts.analysis)
    if opts.engine != "local" and (opts.analysis.hta or opts.keep_events):
        raise ConfigError(f"--engine {opts.engine} leaves the events on its workers: "
                          f"{'--hta' if opts.analysis.hta else 'the HTML report'} needs them here (use --engine local)")


def _analyze_mapped(paths: list[str], clock: PhaseTimer, opts: RunOptions,
                    listed: list[Path] | None = None) -> tuple[TraceSet, AnalysisResult]:
    """:func:`load_and_analyze` on the engine path (see there)."""
    from tracekit.analyses import registry
    from tracekit.runner.engine import map_paths
    from tracekit.runner.run import analyze

    registry.tables()  # every analysis module, imported once here rather than in each forked worker
    for name in opts.preload:
        importlib.import_module(name)
    clock.lap("import")
    traces, tables = map_paths(paths, engine=opts.engine, scheduler=opts.scheduler, skip_bad=opts.skip_bad,
                               options=opts.analysis, workers=opts.workers, show_progress=opts.progress,
                               listed=listed)
    clock.lap("map")
    return traces, analyze(traces, opts.analysis, tables=tables, on_phase=clock.lap, only=opts.only)


class PhaseTimer:
    """Wall seconds per named phase, lap by lap (what ``tracekit analyze --timings`` prints)."""

    def __init__(self) -> None:
        self.phases: dict[str, float] = {}
        self.t0 = self._last = time.perf_counter()

    def lap(self, name: str) -> None:
        """Record the time since the previous lap (or the start) as phase ``name``."""
        now = time.perf_counter()
        self.phases[name] = now - self._last
        self._last = now

    def report(self) -> str:
        total = time.perf_counter() - self.t0
        parts = ", ".join(f"{k} {v:.3f}" for k, v in self.phases.items())
        return f"timings (s): {parts}; total {total:.3f}"
