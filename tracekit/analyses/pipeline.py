"""``analyze_paths``: the single library call behind ``tracekit analyze``.

This module is deliberately light (no pandas at import): it starts the parse
workers first, then imports the analysis code while they decode, so the ~0.3 s
of pandas/analysis imports overlap the parsing instead of preceding it. That is
why :mod:`tracekit.analyses.run` is imported inside :func:`analyze_paths`; the
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
) -> AnalysisResult:
    """:func:`load_and_analyze` without the traces (what ``tracekit analyze`` renders)."""
    return load_and_analyze(paths, skip_bad=skip_bad, comm_pattern=comm_pattern, align=align, hta=hta,
                            workers=workers, timings=timings, preload=preload, table_names=table_names)[1]


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
) -> tuple[TraceSet, AnalysisResult]:
    """Load ``paths`` and run :func:`~tracekit.analyses.run.analyze` (every registered table).

    ``timings``, when given, gets a lap per phase: ``start`` (find files, start
    workers), ``import`` (analysis code, while workers decode), ``load``
    (waiting for the workers and building the tables), ``rank_tables`` (the
    per-rank pass) and ``run_tables`` (cross-rank tables, findings, HTA).
    ``preload``: further modules to import while the workers decode (the CLI's
    report renderer), off the critical path. ``table_names``: tables the caller
    will ask the result for (``--table``); checked against the registry before
    the traces are waited for (:class:`~tracekit.errors.ConfigError` if unknown).
    """
    clock = timings if timings is not None else PhaseTimer()
    from tracekit.errors import ConfigError
    from tracekit.traces.loader import start_load

    if comm_pattern:
        try:
            re.compile(comm_pattern)
        except re.error as e:
            raise ConfigError(f"--comm-regex {comm_pattern!r} is not a valid regex: {e}") from None
    if table_names:  # a bad --table fails before any work (this imports the analyses up front)
        from tracekit.analyses import registry

        registry.check_names(table_names, registry.AnalyzeOptions(comm_pattern=comm_pattern, align=align, hta=hta))
    pending = start_load(paths if len(paths) != 1 else paths[0], skip_bad=skip_bad, workers=workers)
    clock.lap("start")
    # imported while the workers decode
    from tracekit.analyses import registry
    from tracekit.analyses.run import analyze

    registry.tables()  # imports every analysis module
    for name in preload:
        importlib.import_module(name)
    clock.lap("import")
    traces = pending.result()
    clock.lap("load")
    res = analyze(traces, comm_pattern=comm_pattern, align=align, hta=hta, workers=workers, on_phase=clock.lap)
    return traces, res


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
