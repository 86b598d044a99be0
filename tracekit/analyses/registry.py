"""The registry of analysis tables: what ``tracekit analyze`` computes, documents and renders.

Every table tracekit reports is declared once, as a :class:`Table`, in a module-level
``TABLES`` list of a module in ``tracekit/analyses/``. :func:`tables` imports every
module of that package once and collects them; nothing else lists tables. From the
declarations:

- :func:`tracekit.runner.run.analyze` computes the per-rank tables (``scope="rank"``)
  in one pass per rank (in worker processes on large inputs, see
  :func:`~tracekit.runner.per_rank.map_ranks`), stacks them over ranks, then computes
  the run tables (``scope="run"``) in dependency order;
- every renderer (:mod:`tracekit.report.render`: text, markdown, JSON, CSV) renders
  every table, and ``--table NAME`` is checked against it (:func:`check_names`);
- the documentation's table reference (``docs/reference/tables.md``) is generated from the
  column docs (``python -m tracekit.analyses.registry --readme docs/reference/tables.md``;
  a test fails on drift).

Adding an analysis is one new module (see ``docs/development.md``, "Adding an analysis")::

    # tracekit/analyses/top_kernels.py
    from tracekit.analyses.registry import Column, RankContext, Table

    def top_kernels(ctx: RankContext) -> Cols:          # one rank's rows, as numpy columns
        ...

    TABLES = [Table(
        name="top_kernels", scope="rank", title="Top kernels by GPU time",
        columns=(Column("rank", "rank", "the rank"), Column("kernel", "name", "kernel name"),
                 Column("count", "count", "kernels of that name in the window"), ...),
        compute=top_kernels,
        view=lambda t, opts: View("Top kernels", t["top_kernels"]),  # optional text section
    )]

Contracts:

- ``compute`` of a rank table gets a :class:`RankContext` (the rank's trace, options,
  manifest, and in ``ctx.tables`` the same rank's tables named in ``needs``); its rows
  must carry a ``rank`` column. A run table gets a :class:`RunContext` whose
  ``tables`` holds every table computed before it (rank tables stacked over ranks).
- Tables are numpy columns (:data:`tracekit.traces.cols.Cols`, a dict of 1-D arrays of one length;
  :mod:`tracekit.traces.cols` has the group-bys, sorts and merges), so ``tracekit analyze`` never imports
  pandas; ``tracekit.analyze()`` hands them out as DataFrames (:class:`AnalysisResult`).
- The returned table must have exactly the declared columns (any order; it is
  reordered): :func:`conform` raises :class:`RegistryError` otherwise, so the docs
  cannot drift from the data. An empty result may have no columns.
- ``needs`` names tables computed first; a rank table may need only rank tables.
- ``view(tables, opts)`` returns the table's section of the text report (a
  :class:`View`) or None to leave it out; without a view the table appears in text
  output only when asked for by ``--table``.
- ``internal=True`` tables feed other tables and are not part of the result.
- ``enabled(options)`` False leaves the table out (e.g. ``hta`` without ``--hta``).
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType, ModuleType
from typing import TYPE_CHECKING, Any, Literal

from tracekit.analyses.options import AnalyzeOptions
from tracekit.errors import ConfigError
from tracekit.traces.cols import Cols, as_cols, empty, is_frame, nrows, to_frame
from tracekit.traces.frames import NO_ROWS, Columnar

if TYPE_CHECKING:
    import pandas as pd

    from tracekit.traces.traceset import RankTrace, TraceSet

Scope = Literal["rank", "run"]

#: units a column may declare (docs/reference/tables.md lists them with their meaning)
UNITS = {
    "us": "microseconds", "ns": "nanoseconds (absolute times on the rank's clock)", "s": "seconds",
    "pct": "percent (0-100)", "bytes": "bytes", "MB": "megabytes (1e6 bytes)", "GB/s": "1e9 bytes per second",
    "count": "a count", "rank": "a rank number", "step": "a ProfilerStep number", "index": "an ordinal",
    "bool": "true / false", "name": "text: a name", "text": "text", "json": "a JSON object",
}


class AnalysisWarning(UserWarning):
    """A check on the traces failed but results are still produced."""


class RegistryError(Exception):
    """A table declaration or a computed table breaks the registry's contract (a bug, not bad input)."""


@dataclass(frozen=True)
class Column:
    """One column: ``name`` (with its unit and scope in it, e.g. ``wait_total_us``), ``unit`` (a key
    of :data:`UNITS`) and ``doc``, a one-line definition (the table reference in the docs)."""

    name: str
    unit: str
    doc: str

    def __post_init__(self) -> None:
        if self.unit not in UNITS:
            raise RegistryError(f"column {self.name!r}: unknown unit {self.unit!r} (known: {', '.join(UNITS)})")


@dataclass(frozen=True)
class ViewOptions:
    """What the text renderer asks of a view: ``fmt`` (``table`` | ``markdown``), ``per_step``, and the
    run's ``meta`` (facts a view's note may need: missing ranks, unmatched send/recv)."""

    fmt: str = "table"
    per_step: bool = False
    meta: Any = None


@dataclass(frozen=True)
class View:
    """A section of the text report: a title and a table (columns or a DataFrame) or prose lines."""

    title: str
    body: Cols | pd.DataFrame | list[str]
    #: a line printed under the body (``note: ...``): how far to trust the figures above
    note: str | None = None


@dataclass(frozen=True)
class Table:
    """A registered table (see the module doc for the contracts)."""

    name: str
    scope: Scope
    title: str
    columns: tuple[Column, ...]
    compute: Callable[[Any], Columnar | None]
    needs: tuple[str, ...] = ()
    view: Callable[[Mapping[str, Columnar], ViewOptions], View | None] | None = None
    #: position in reports (lower first); ties by name
    order: int = 100
    internal: bool = False
    enabled: Callable[[AnalyzeOptions], bool] | None = None
    #: a paragraph for the table reference above the column list (optional)
    doc: str = ""
    #: columns of integers that may be missing (None): pandas' nullable ``Int64`` in the Python API's frames
    nullable_int: tuple[str, ...] = ()

    @cached_property
    def column_names(self) -> list[str]:
        """The column names in declared order (read per rank and table: built once; do not mutate)."""
        return [c.name for c in self.columns]

    def is_enabled(self, options: AnalyzeOptions) -> bool:
        return self.enabled is None or bool(self.enabled(options))


class AnalysisResult:
    """Everything ``tracekit analyze`` reports: ``meta`` (run facts) and its tables, in report order.
    ``--format json`` prints exactly this: ``{"meta": meta, name: rows, ...}``.

    ``tables`` gives them as DataFrames (name -> frame; pandas is imported on first use), ``columns`` as
    :data:`~tracekit.traces.cols.Cols` (what the analysis computed; the renderers of ``tracekit analyze``
    read these, so its path never imports pandas). Tables are also attributes: ``res.ranks`` is
    ``res.tables["ranks"]``. Both views are read-only; :meth:`set_table` replaces a table.
    """

    def __init__(self, meta: dict[str, Any], tables: Mapping[str, Any]) -> None:
        self.meta = meta
        self._raw: dict[str, Any] = dict(tables)
        self._frames: Mapping[str, pd.DataFrame] | None = None
        self._cols: Mapping[str, Cols] | None = None

    @property
    def tables(self) -> Mapping[str, pd.DataFrame]:
        """name -> DataFrame (built once from the computed columns)."""
        if self._frames is None:
            specs = tables()
            self._frames = MappingProxyType({n: to_frame(t, specs[n].nullable_int if n in specs else ())
                                             for n, t in self._raw.items()})
        return self._frames

    @property
    def columns(self) -> Mapping[str, Cols]:
        """name -> the table as numpy columns (:mod:`tracekit.traces.cols`)."""
        if self._cols is None:
            self._cols = MappingProxyType({n: as_cols(t) for n, t in self._raw.items()})
        return self._cols

    def set_table(self, name: str, table: Any) -> None:
        """Replace (or add, last) table ``name``: a DataFrame or columns."""
        self._raw[name] = table
        self._frames = self._cols = None

    def __getattr__(self, name: str) -> pd.DataFrame:
        if name.startswith("_") or name in ("meta",):
            raise AttributeError(name)
        try:
            return self.tables[name]
        except KeyError:
            raise AttributeError(f"no table {name!r} in this result; tables: {', '.join(self._raw)}") from None


@dataclass(frozen=True)
class PartialResult:
    """The run so far, as a run table's findings and figures read it (:meth:`RunContext.result`): ``meta`` and
    ``tables``, the tables computed so far as computed (numpy columns; :func:`~tracekit.traces.cols.as_cols`
    reads either kind, so the same code also takes an :class:`AnalysisResult`'s frames)."""

    meta: dict[str, Any]
    tables: Mapping[str, Columnar]

    def __getattr__(self, name: str) -> Columnar:  # ``result.collectives``, as on an AnalysisResult
        if name.startswith("_") or name in ("meta", "tables"):
            raise AttributeError(name)
        try:
            return self.tables[name]
        except KeyError:
            raise AttributeError(f"no table {name!r} computed yet; tables: {', '.join(self.tables)}") from None


@dataclass
class RankContext:
    """What a rank table's ``compute`` gets: one rank's trace and its tables computed so far."""

    trace: RankTrace
    options: AnalyzeOptions
    world_size: int
    manifest: Any
    tables: dict[str, Columnar] = field(default_factory=dict)
    _memo: dict[Any, Any] = field(default_factory=dict)

    @property
    def rank(self) -> int:
        return self.trace.rank

    def memo(self, key: Any, compute: Callable[[], Any]) -> Any:
        """``compute()`` once per key in this rank's pass (two tables from one computation)."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]


@dataclass
class RunContext:
    """What a run table's ``compute`` gets: the traces, the tables so far and the run facts.

    ``meta`` is the result's ``meta`` dict: a run table may add facts to it (the
    cross-rank match adds ``clock_offsets_us``) and notes to ``meta["notes"]``.
    """

    traces: TraceSet
    options: AnalyzeOptions
    manifest: Any
    meta: dict[str, Any]
    tables: dict[str, Columnar] = field(default_factory=dict)
    _memo: dict[Any, Any] = field(default_factory=dict)

    def result(self) -> PartialResult:
        """The tables computed so far (as computed: columns) and ``meta`` (shared, do not mutate)."""
        return PartialResult(meta=self.meta, tables=self.tables)

    def memo(self, key: Any, compute: Callable[[], Any]) -> Any:
        """``compute()`` once per key for the run (two tables from one computation, e.g. instances and waits)."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]


_TABLES: dict[str, Table] | None = None
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


def analysis_modules() -> list[ModuleType]:
    """Every module of ``tracekit.analyses``, imported (where tables and findings are declared)."""
    import tracekit.analyses as pkg

    return [importlib.import_module(f"{pkg.__name__}.{mod.name}") for mod in pkgutil.iter_modules(pkg.__path__)]


def tables() -> dict[str, Table]:
    """Every registered table, by name, in report order (importing ``tracekit.analyses.*`` once)."""
    global _TABLES
    if _TABLES is None:
        found: dict[str, Table] = {}
        for m in analysis_modules():
            for t in getattr(m, "TABLES", ()):
                if t.name in found:
                    raise RegistryError(f"table {t.name!r} registered twice ({m.__name__})")
                found[t.name] = t
        _validate(found)
        _TABLES = {t.name: t for t in sorted(found.values(), key=lambda t: (t.order, t.name))}
    return _TABLES


def _validate(found: dict[str, Table]) -> None:
    for t in found.values():
        if not _NAME.match(t.name):
            raise RegistryError(f"table name {t.name!r}: use lower_snake_case")
        names = t.column_names
        if len(set(names)) != len(names):
            raise RegistryError(f"table {t.name!r}: duplicate column names")
        if t.scope == "rank" and "rank" not in names:
            raise RegistryError(f"rank table {t.name!r} needs a 'rank' column")
        for n in t.needs:
            if n not in found:
                raise RegistryError(f"table {t.name!r} needs unknown table {n!r}")
            if t.scope == "rank" and found[n].scope != "rank":
                raise RegistryError(f"rank table {t.name!r} cannot need run table {n!r}")
    compute_order(list(found.values()))  # raises on cycles


def compute_order(specs: list[Table]) -> list[Table]:
    """``specs`` ordered so that every table comes after the tables it needs (stable otherwise)."""
    by = {t.name: t for t in specs}
    out: list[Table] = []
    state: dict[str, int] = {}

    def visit(t: Table, path: tuple[str, ...]) -> None:
        if state.get(t.name) == 2:
            return
        if state.get(t.name) == 1:
            raise RegistryError(f"tables depend on each other in a cycle: {' -> '.join((*path, t.name))}")
        state[t.name] = 1
        for n in t.needs:
            if n in by:
                visit(by[n], (*path, t.name))
        state[t.name] = 2
        out.append(t)

    for t in specs:
        visit(t, ())
    return out


def public_names(options: AnalyzeOptions | None = None) -> list[str]:
    """Names of the tables a result holds (under ``options``; all of them with None), in report order."""
    return [n for n, t in tables().items() if not t.internal and (options is None or t.is_enabled(options))]


def check_names(names: list[str] | tuple[str, ...], options: AnalyzeOptions | None = None) -> None:
    """Raise :class:`~tracekit.errors.ConfigError` (one line, exit 2) for a name that is not a table
    of the result (unknown, internal, or disabled by ``options``)."""
    known = public_names()
    for n in names:
        if n not in known:
            raise ConfigError(f"--table {n!r}: no such table; tables: {', '.join(known)}")
        if options is not None and not tables()[n].is_enabled(options):
            raise ConfigError(f"--table {n!r}: not computed with these options (the {n} table needs --{n})")


def selected(options: AnalyzeOptions, only: tuple[str, ...] | list[str] = ()) -> list[Table]:
    """The enabled tables plus the internal ones they need, in compute order. ``only``: just these tables
    and what they need (a caller that reads a few tables, e.g. ``tracekit whatif``)."""
    specs = [t for t in tables().values() if t.is_enabled(options)]
    if only:
        by = {t.name: t for t in specs}
        keep: set[str] = set()
        todo = [n for n in only if n in by]
        while todo:
            n = todo.pop()
            if n not in keep:
                keep.add(n)
                todo.extend(m for m in by[n].needs if m in by)
        specs = [t for t in specs if t.name in keep]
    return compute_order(specs)


def conform(t: Table, df: Columnar | None) -> Columnar:
    """``df`` with exactly ``t``'s columns in declared order; an empty (or None) result gets them.

    ``df`` may be columns (a dict of numpy arrays, :mod:`tracekit.traces.cols`; a rank table's are
    stacked over ranks later by the engine) or a DataFrame; columns stay columns. Raises
    :class:`RegistryError` when a computed column is not declared, or a declared one is missing from a
    non-empty result.
    """
    names = t.column_names
    if df is None:
        return empty(names)
    frame = is_frame(df)
    have = df.columns.tolist() if frame else list(df)
    if have == names:
        return df
    extra, missing = sorted(set(have) - set(names)), sorted(set(names) - set(have))
    if extra or (missing and nrows(df)):
        raise RegistryError(f"table {t.name!r}: computed columns differ from the declared ones "
                            f"(undeclared {extra}, missing {missing})")
    if not frame:
        return {c: df[c] for c in names} if not missing else NO_ROWS
    return df.reindex(columns=names) if missing else df[names]


def compute_rank_tables(rt: RankTrace, *, specs: list[Table], options: AnalyzeOptions, world_size: int,
                        manifest: Any) -> dict[str, Columnar]:
    """Every rank table of ``specs`` for one rank, in order (what each worker process runs): a frame or
    its columns each (:func:`conform`; :func:`tracekit.traces.stacking.stack_cols` stacks them over ranks)."""
    ctx = RankContext(trace=rt, options=options, world_size=world_size, manifest=manifest)
    for t in specs:
        ctx.tables[t.name] = conform(t, t.compute(ctx))
    return ctx.tables


def compute_run_tables(ctx: RunContext, specs: list[Table]) -> None:
    """Every run table of ``specs`` in order, into ``ctx.tables``."""
    for t in specs:
        ctx.tables[t.name] = conform(t, t.compute(ctx))


# -- docs generation -----------------------------------------------------------------------------

README_BEGIN = "<!-- tables:begin -->"
README_END = "<!-- tables:end -->"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def readme_section() -> str:
    """The table reference (``docs/reference/tables.md``): per table its scope, paragraph and columns
    (unit, definition)."""
    lines = [README_BEGIN, ""]
    for t in tables().values():
        if t.internal:
            continue
        scope = ("per rank (computed in each rank's pass)" if t.scope == "rank"
                 else "per run (computed once, after the per-rank tables)")
        when = " Only with the option that enables it." if t.enabled is not None else ""
        lines += [f"## `{t.name}`: {t.title}", "", f"Scope: {scope}.{when}" + (f" {t.doc}" if t.doc else ""), "",
                  "| column | unit | definition |", "|---|---|---|"]
        lines += [f"| `{c.name}` | {c.unit} | {_cell(c.doc)} |" for c in t.columns]
        lines.append("")
    lines.append(README_END)
    return "\n".join(lines)


def update_readme(text: str) -> str:
    """``text`` (a Markdown page) with the part between the markers replaced by :func:`readme_section`."""
    start, end = text.find(README_BEGIN), text.find(README_END)
    if start < 0 or end < start:
        raise RegistryError("README has no tables:begin / tables:end markers")
    return text[:start] + readme_section() + text[end + len(README_END):]


def rewrite_page(path: Any, update: Callable[[str], str]) -> bool:
    """Rewrite the Markdown page at ``path`` with ``update(its text)`` (its generated sections); True when that
    changed it (shared by the generated pages' writers)."""
    text = path.read_text(encoding="utf-8")
    new = update(text)
    if new != text:
        path.write_text(new, encoding="utf-8")
    return new != text


def _main(argv: list[str] | None = None) -> int:
    import argparse
    from pathlib import Path

    ap = argparse.ArgumentParser(description="Write the table reference (from the column docs) into a Markdown page, "
                                             "between its tables:begin/end markers. "
                                             "Example: python -m tracekit.analyses.registry --readme docs/reference/tables.md")
    ap.add_argument("--readme", type=Path, required=True)
    a = ap.parse_args(argv)
    from tracekit.analyses import registry  # this file runs as __main__: use the one module the analyses import

    if registry.rewrite_page(a.readme, registry.update_readme):
        print(f"updated {a.readme}")
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
