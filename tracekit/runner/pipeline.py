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
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from tracekit.analyses.registry import AnalysisResult
    from tracekit.traces.traceset import TraceSet

#: from this many rank files on, the local engine decodes and analyses each rank in the same
#: worker and ships back only its tables (the parse-then-analyse path pays per rank twice)
ENGINE_MIN_FILES = 16


def analyze_paths(
    paths: list[str],
    *,
    skip_bad: bool = False,
    comm_pattern: str | None = None,
    align: Literal["auto", "on", "off"] = "auto",
    hta: bool = False,
    workers: int | None = None,
    timings: PhaseTimer | None = None,
    preload: tuple[str, ...] = (),
    table_names: tuple[str, ...] = (),
    engine: Literal["local", "dask"] = "local",
    scheduler: str | None = None,
    progress: bool | None = None,
) -> AnalysisResult:
    """:func:`load_and_analyze` without the traces (so many rank files may take the engine path)."""
    return load_and_analyze(paths, skip_bad=skip_bad, comm_pattern=comm_pattern, align=align, hta=hta,
                            workers=workers, timings=timings, preload=preload, table_names=table_names,
                            engine=engine, scheduler=scheduler, progress=progress, keep_events=False)[1]


def load_and_analyze(
    paths: list[str],
    *,
    skip_bad: bool = False,
    comm_pattern: str | None = None,
    align: Literal["auto", "on", "off"] = "auto",
    hta: bool = False,
    workers: int | None = None,
    timings: PhaseTimer | None = None,
    preload: tuple[str, ...] = (),
    table_names: tuple[str, ...] = (),
    engine: Literal["local", "dask"] = "local",
    scheduler: str | None = None,
    progress: bool | None = None,
    keep_events: bool = True,
) -> tuple[TraceSet, AnalysisResult]:
    """Load ``paths`` and run :func:`~tracekit.runner.run.analyze` (every registered table).

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

    ``keep_events``: the returned traces must hold every rank's events (a caller that
    reads them; the HTML report decodes the few ranks it draws itself, see
    :func:`tracekit.report.collect.with_events`). ``progress``: progress bars on stderr (None: when stderr is a
    terminal; see :mod:`tracekit.progress`).

    ``timings``, when given, gets a lap per phase: ``start`` (find files, start
    workers), ``import`` (analysis code, while workers decode), ``load``
    (waiting for the workers and building the tables), ``rank_tables`` (the
    per-rank pass) and ``run_tables`` (cross-rank tables, findings, HTA).
    ``preload``: further modules to import while the workers decode (the CLI's
    report renderer), off the critical path. ``table_names``: tables the caller
    will ask the result for (``--table``); checked against the registry before
    the traces are waited for (:class:`~tracekit.errors.ConfigError` if unknown).
    On the engine path the phases are ``import``, ``map`` (the per-rank map on the
    engine) and ``run_tables``.
    """
    clock = timings if timings is not None else PhaseTimer()
    from tracekit.errors import ConfigError
    from tracekit.traces.loader import find_trace_files, start_load

    if comm_pattern:
        try:
            re.compile(comm_pattern)
        except re.error as e:
            raise ConfigError(f"--comm-pattern/--comm-kernel {comm_pattern!r} is not a valid regex: {e}") from None
    if table_names:  # a bad --table fails before any work (this imports the analyses up front)
        from tracekit.analyses import registry

        registry.check_names(table_names, registry.AnalyzeOptions(comm_pattern=comm_pattern, align=align, hta=hta))
    if engine != "local" and (hta or keep_events):
        raise ConfigError(f"--engine {engine} leaves the events on its workers: "
                          f"{'--hta' if hta else 'the HTML report'} needs them here (use --engine local)")
    if engine != "local" or scheduler or not (keep_events or hta) and len(find_trace_files(paths)) >= ENGINE_MIN_FILES:
        return _analyze_mapped(paths, clock, preload, engine=engine, scheduler=scheduler, skip_bad=skip_bad,
                               comm_pattern=comm_pattern, align=align, workers=workers, progress=progress)
    pending = start_load(paths if len(paths) != 1 else paths[0], skip_bad=skip_bad, workers=workers,
                         progress=progress)
    clock.lap("start")
    # imported while the workers decode
    from tracekit.analyses import registry
    from tracekit.runner.run import analyze

    registry.tables()  # imports every analysis module
    for name in preload:
        importlib.import_module(name)
    clock.lap("import")
    traces = pending.result()
    clock.lap("load")
    res = analyze(traces, comm_pattern=comm_pattern, align=align, hta=hta, workers=workers, on_phase=clock.lap)
    return traces, res


def _analyze_mapped(paths: list[str], clock: PhaseTimer, preload: tuple[str, ...], *,
                    engine: Literal["local", "dask"], scheduler: str | None, skip_bad: bool,
                    comm_pattern: str | None, align: Literal["auto", "on", "off"], workers: int | None,
                    progress: bool | None) -> tuple[TraceSet, AnalysisResult]:
    """:func:`load_and_analyze` on the engine path (see there)."""
    from tracekit.runner.engine import map_paths
    from tracekit.analyses.registry import AnalyzeOptions
    from tracekit.runner.run import analyze

    for name in preload:
        importlib.import_module(name)
    clock.lap("import")
    options = AnalyzeOptions(comm_pattern=comm_pattern, align=align)
    traces, tables = map_paths(paths, engine=engine, scheduler=scheduler, skip_bad=skip_bad, options=options,
                               workers=workers, show_progress=progress)
    clock.lap("map")
    return traces, analyze(traces, comm_pattern=comm_pattern, align=align, tables=tables, on_phase=clock.lap)


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
