"""How an analysis runs: :class:`RunOptions`, the one object :func:`tracekit.runner.pipeline.load_and_analyze`
takes (the command line and ``tracekit.analyze(path, **keywords)`` build it)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Literal

from tracekit.analyses.options import AnalyzeOptions


@dataclass(frozen=True)
class RunOptions:
    """What the tables compute (``analysis``) and how the ranks are loaded and run: only ``analysis`` changes a
    number; the rest changes where the work happens, what comes back and what is shown on the way.

    ``skip_bad``: skip unreadable rank files (listed in ``meta``) instead of failing. ``workers``: processes
    for parsing and the per-rank pass (None: one per rank, at most one per CPU this process may use
    (:func:`tracekit.cpus.usable_cpus`: its affinity mask), 1 for small inputs).
    ``engine`` / ``scheduler``: where the per-rank map runs (:mod:`tracekit.runner.engine`). ``progress``:
    progress bars on stderr (None: when stderr is a terminal; :mod:`tracekit.progress`). ``keep_events``: the
    returned traces must hold every rank's events (a caller that reads them; the HTML report decodes the few
    ranks it draws itself, :func:`tracekit.report.collect.with_events`). ``table_names``: tables the caller
    will ask the result for (``--table``), checked against the registry before any work
    (:class:`~tracekit.errors.ConfigError` if unknown). ``only``: compute just these tables and the ones they
    need (a caller that reads a few, e.g. ``tracekit whatif``; the result holds no others). ``preload``: further modules to import while the
    workers decode (the CLI's renderer), off the critical path.
    """

    analysis: AnalyzeOptions = field(default_factory=AnalyzeOptions)
    skip_bad: bool = False
    workers: int | None = None
    engine: Literal["local", "dask"] = "local"
    scheduler: str | None = None
    progress: bool | None = None
    keep_events: bool = True
    table_names: tuple[str, ...] = ()
    only: tuple[str, ...] = ()
    preload: tuple[str, ...] = ()

    @classmethod
    def of(cls, **keywords: Any) -> RunOptions:
        """From flat keywords, as ``tracekit.analyze`` takes them: :class:`AnalyzeOptions`' fields
        (``comm_pattern``, ``align``, ``hta``) and this class's (``workers``, ``skip_bad``, ...).
        An unknown keyword raises :class:`TypeError`, as a call would."""
        mine = {f.name for f in fields(cls)} - {"analysis"}
        theirs = {f.name for f in fields(AnalyzeOptions)}
        unknown = set(keywords) - mine - theirs
        if unknown:
            raise TypeError(f"unexpected keyword argument(s): {', '.join(sorted(unknown))}")
        analysis = AnalyzeOptions(**{k: v for k, v in keywords.items() if k in theirs})
        return cls(analysis=analysis, **{k: v for k, v in keywords.items() if k in mine})
