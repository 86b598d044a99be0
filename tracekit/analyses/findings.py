"""Ranked findings: plain-English verdicts with their evidence, most costly first.

A finding is a typed record: a :class:`Finding` subclass (a msgspec Struct) whose own fields are its
evidence, declared next to the analysis whose tables it reads (the ``gpu_idle`` finding in
:mod:`.gpu_idle`, ``rank_waiting`` in :mod:`.crossrank`, ...) with the classmethod ``detect(ctx)`` that
finds it, and listed in that module's ``FINDINGS``. :func:`kinds` collects them as
:func:`~tracekit.analyses.registry.tables` collects tables; :func:`detect_all` runs them, :func:`ranked`
orders them (one ranking for all). Adding a finding is one class in its analysis module plus its test::

    class LateOptimizer(Finding, tag="late_optimizer"):            # the code, stable
        \"\"\"``late_optimizer``: the optimizer step starts after ...\"\"\"
        optimizer_us_per_step: float | None                        # its evidence, in this order

        ORDER: ClassVar[int] = 65                                  # when it runs among the others
        TIMING: ClassVar[bool] = True                              # measured in the profiled window

        @classmethod
        def detect(cls, ctx: FindingContext) -> list[LateOptimizer]:
            ...  # ctx.result (tables so far, meta), ctx.manifest, ctx.earlier(code)

    FINDINGS = [LateOptimizer]

As a row of the ``findings`` table (and in ``--format json``) a finding is
``{"code", "severity", "rank", "message", "evidence"}`` where ``evidence`` is ``cost_us``, ``step_us``,
the record's own fields in declaration order (unset ones left out), then what the ranking added:
``ranks`` and ``worst_rank`` when it fired on every rank, ``distorted_window``; ``tracekit analyze
--whatif`` adds ``whatif`` (the replay's predicted saving and its error: :func:`tracekit.replay.api.advise`,
which quotes the rows after the analyses ran). ``evidence["cost_us"]`` is the estimated
cost in µs per step (``None`` when it cannot be estimated from the traces, e.g. a whole model that ran
uncompiled). Severity is the cost as a share of the mean step: ≥ :data:`SEVERITY_HIGH_PCT` high,
≥ :data:`SEVERITY_MEDIUM_PCT` medium, else low; a cost that cannot be estimated is high. A finding that
fires on every rank is reported once with ``rank = None`` (evidence of the costliest rank, ``ranks``
listing them all), except the per-rank ones (``PER_RANK``).

Codes (stable): ``profiler_distortion``, ``allreduce_after_backward``, ``backward_comm_exposed``,
``rank_waiting``, ``gpu_idle``, ``graph_break``, ``compile_skipped``, ``exposed_first_bucket``,
``exposed_last_bucket``, ``gemm_below_peak``, ``unfused_chain``.

A *qualifier* (``QUALIFIER``; ``profiler_distortion``: the profiled step is more than
:data:`~tracekit.analyses.distortion.DISTORTED_RATIO` times the unprofiled one) runs after the others
have been collapsed, sees them (``ctx.others``), may rewrite them (:meth:`Finding.qualify`: the timing
findings of a distorted window say "measured under a distorted window" and carry
``evidence["distorted_window"] = True``) and always ranks first.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, NamedTuple

import msgspec
import numpy as np
from msgspec import UNSET, UnsetType

from tracekit.analyses.registry import Column, RegistryError, RunContext, Table, View, analysis_modules
from tracekit.traces import cols as C
from tracekit.traces.manifest import Manifest

#: severity thresholds: cost as % of the mean step time
SEVERITY_HIGH_PCT = 10.0
SEVERITY_MEDIUM_PCT = 3.0
_SEVERITY_ORDER = {"high": 0, "medium": 1, "low": 2}


def severity(cost_us: float | None, step_us: float | None) -> str:
    """``high`` / ``medium`` / ``low`` from the cost's share of the step (``high`` when either is unknown)."""
    if cost_us is None or step_us is None or not math.isfinite(step_us) or step_us <= 0:
        return "high"
    pct = 100.0 * cost_us / step_us
    return "high" if pct >= SEVERITY_HIGH_PCT else "medium" if pct >= SEVERITY_MEDIUM_PCT else "low"


def rounded(x: Any, nd: int = 1) -> Any:
    """``x`` rounded to ``nd`` decimals as a float; None for None, NaN and infinities (of any float type).
    (``math.isfinite``, not numpy's: this runs a few times per rank and finding, 180,000 times at 16384 ranks.)"""
    if x is None:
        return None
    x = float(x)
    return round(x, nd) if math.isfinite(x) else None


class Quote(NamedTuple):
    """Where one evidence figure comes from: a value computed from a table's rows of one rank.

    ``how`` over the rank's rows (after ``where``): ``mean`` (of ``column``), ``median``, ``sum``,
    ``per_step`` (the sum over the number of distinct ``step`` values), ``rows`` (how many),
    ``rows_per_step`` (how many over the distinct steps), ``nunique`` (distinct values of ``column``),
    ``ratio`` (``column`` = ``"a/b"``: Σa / Σb; ``a`` may be ``"x-y"``: Σx − Σy), ``pct`` (100 · the
    ratio), ``share_pct`` (100 · Σ ``column`` over the ``where`` rows / Σ ``column`` over all the rank's
    rows). Missing values are skipped, as pandas' reductions do."""

    table: str
    column: str
    how: str
    #: the evidence field holding the rank whose rows are read; None: the finding's rank (an all-rank finding:
    #: its ``worst_rank``)
    rank: str | None = None
    #: only the rows where this holds: ``"col"`` (true), ``"!col"`` (false), ``"col>=N"``, ``"col=min@g"`` /
    #: ``"col=max@g"`` (``col`` is its smallest / largest value among the rows of the same ``g``); None: all
    where: str | None = None
    #: the figure is the value times this (bytes -> MB: 1e-6)
    scale: float = 1.0


class Finding(msgspec.Struct, kw_only=True, tag_field="code"):
    """One finding (module doc). Subclasses declare a ``tag`` (the code), their evidence fields, the
    class settings below and ``detect``. ``cost_us`` and ``step_us`` (µs per step) are rounded to 0.1 µs;
    the severity comes from the unrounded values."""

    rank: int | None
    message: str
    cost_us: float | None
    step_us: float | None
    severity: str = ""
    #: set when the finding fired on every rank and is reported once (:func:`collapse`)
    ranks: list[int] | UnsetType = UNSET
    worst_rank: int | UnsetType = UNSET
    #: set by a qualifier: measured under a distorted profiler window
    distorted_window: bool | UnsetType = UNSET

    #: where each evidence figure comes from: ``{field: Quote}`` (:class:`Quote`: a table's rows of the finding's
    #: rank, reduced). ``tests/analyses/test_finding_quotes.py`` checks every registered finding on every committed run
    #: that fires it against its tables, and that every number its message prints is one of these, a
    #: :attr:`FACTS` field or a rank.
    QUOTES: ClassVar[dict[str, Quote]] = {"step_us": Quote("steps", "step_us", "mean")}
    #: evidence fields the message may print that are no table's rows: run.json facts (a bucket cap, the
    #: unprofiled step), thresholds; each finding says why in a comment
    FACTS: ClassVar[tuple[str, ...]] = ()
    #: run order among the findings (a finding may read those with a lower ORDER: ``ctx.earlier``)
    ORDER: ClassVar[int] = 100
    #: its numbers are times measured in the profiled window (a distorted window may fake them)
    TIMING: ClassVar[bool] = False
    #: never collapsed into one all-rank finding (each rank's text names its own peer)
    PER_RANK: ClassVar[bool] = False
    #: runs after the others are collapsed, may rewrite them (:meth:`qualify`) and ranks first
    QUALIFIER: ClassVar[bool] = False

    def __post_init__(self) -> None:
        if not self.severity:
            self.severity = severity(self.cost_us, self.step_us)
        self.cost_us, self.step_us = rounded(self.cost_us), rounded(self.step_us)

    @classmethod
    def detect(cls, ctx: FindingContext) -> list[Finding]:
        """Every instance of this finding in the run (per rank; before the all-rank collapse)."""
        raise NotImplementedError(f"{cls.__name__}.detect")

    def qualify(self, other: Finding) -> Finding:
        """``other`` as this qualifier sees it (only ``QUALIFIER`` findings change anything)."""
        return other

    @property
    def code(self) -> str:
        return code_of(type(self))

    def evidence(self) -> dict[str, Any]:
        """The ``evidence`` dict of the JSON form (module doc)."""
        ev: dict[str, Any] = {"cost_us": self.cost_us, "step_us": self.step_us}
        own = (k for k in self.__struct_fields__ if k not in _BASE_FIELDS)
        ev |= {k: v for k in own if (v := getattr(self, k)) is not UNSET}
        ev |= {k: v for k in ("ranks", "worst_rank", "distorted_window") if (v := getattr(self, k)) is not UNSET}
        return ev

    def row(self) -> dict[str, Any]:
        """The finding as a row of the ``findings`` table."""
        return {"code": self.code, "severity": self.severity, "rank": self.rank, "message": self.message,
                "evidence": self.evidence()}


_BASE_FIELDS = frozenset(Finding.__struct_fields__)


def code_of(kind: type[Finding]) -> str:
    """The stable code of a finding class (its msgspec tag)."""
    return kind.__struct_config__.tag


@functools.cache
def kinds() -> tuple[type[Finding], ...]:
    """Every registered finding class (``FINDINGS`` of the analysis modules), in run order."""
    found: dict[str, type[Finding]] = {}
    for m in analysis_modules():
        for kind in getattr(m, "FINDINGS", ()):
            code = code_of(kind)
            if code in found:
                raise RegistryError(f"finding {code!r} registered twice ({m.__name__})")
            found[code] = kind
    return tuple(sorted(found.values(), key=lambda k: (k.ORDER, code_of(k))))


@dataclass
class FindingContext:
    """What ``detect`` gets: the result so far (``result.tables``, ``result.meta``; the tables the
    ``findings`` table needs are there, as frames or Cols: read them with :func:`~tracekit.traces.cols.as_cols`),
    the run's manifest, the findings of lower ``ORDER`` (:meth:`earlier`) and, for a qualifier, the others after
    the collapse (``others``)."""

    result: Any
    manifest: Manifest | None
    others: list[Finding] = field(default_factory=list)
    _found: dict[str, list[Finding]] = field(default_factory=dict)

    def earlier(self, code: str) -> list[Finding]:
        """The findings ``code`` made (per rank, before the collapse); it must have a lower ORDER."""
        if code not in self._found:
            raise RegistryError(f"finding {code!r} is read before it ran (give the reader a higher ORDER)")
        return self._found[code]


def detect_all(result: Any, manifest: Manifest | None) -> list[Finding]:
    """All findings of ``result``, ranked (module doc)."""
    ctx = FindingContext(result, manifest)
    found: list[Finding] = []
    for kind in kinds():
        if not kind.QUALIFIER:
            ctx._found[code_of(kind)] = out = kind.detect(ctx)
            found += out
    ranks = sorted(int(r) for r in result.meta.get("ranks", [])) if isinstance(result.meta, dict) else []
    found = collapse(found, ranks)
    for kind in kinds():
        if kind.QUALIFIER:
            ctx.others = found
            out = kind.detect(ctx)
            for q in out:
                found = [q.qualify(f) for f in found]
            found = found + out
    return ranked(found)


def collapse(found: list[Finding], ranks: list[int]) -> list[Finding]:
    """One finding with rank None for codes that fired on every rank (keep the costliest's text)."""
    out: list[Finding] = []
    by_code: dict[str, list[Finding]] = {}
    for f in found:
        by_code.setdefault(f.code, []).append(f)
    for fs in by_code.values():
        if not fs[0].PER_RANK and len(ranks) > 1 and sorted(f.rank for f in fs) == sorted(ranks):
            top = max(fs, key=lambda f: f.cost_us or 0.0)
            out.append(msgspec.structs.replace(top, rank=None, ranks=sorted(ranks), worst_rank=top.rank))
        else:
            out.extend(fs)
    return out


def ranked(found: list[Finding]) -> list[Finding]:
    """The one ranking: qualifiers first, then by severity, then by cost per step (unknown cost first)."""
    def key(f: Finding) -> tuple[int, int, float]:
        c = f.cost_us
        return (0 if f.QUALIFIER else 1, _SEVERITY_ORDER.get(f.severity, 3), -(c if c is not None else float("inf")))

    return sorted(found, key=key)


def step_means(result: Any, column: str = "step_us") -> dict[int, float]:
    """Per rank, the mean over its steps of ``steps.<column>`` (µs; by default ``step_us``, the step on the
    device's clock: :mod:`tracekit.traces.steps`), from the ``steps`` table (a frame or Cols): one grouping for
    all ranks; {} without the table or the column."""
    s = C.as_cols(result.steps)
    if not C.nrows(s) or "rank" not in s or column not in s:
        return {}
    ranks, (means,) = group_means(s, "rank", [column])
    return dict(zip(ranks.tolist(), means.tolist()))


def group_means(t: C.Cols, by: str, columns: Sequence[str]) -> tuple[np.ndarray, list[np.ndarray]]:
    """``t.groupby(by)[columns].mean()``: the sorted keys (a row whose key is missing in none) and per column the
    mean of its present values (NaN for none), float64, compensated sums over counts (:func:`C.group_mean`).
    Integer keys in a compact non-negative range (ranks) are their own group codes (no factorizing sort)."""
    key = np.asarray(t[by])
    values = [np.asarray(t[c]) for c in columns]
    if (key.dtype.kind not in "iu" or not len(key) or key.min() < 0 or key.max() > 4 * len(key) + 65536
            or any(v.dtype.kind not in "iufb" for v in values)):
        g = C.Groups(t, [by])
        return g.keys[by], [g.mean(v) for v in values]
    rows = np.bincount(key)
    present = np.flatnonzero(rows)
    means = [C.group_mean(v.astype(np.float64, copy=False), key, len(rows))[present] for v in values]
    return present.astype(key.dtype), means


def rank_step_us(result: Any, rank: int, means: dict[int, float] | None = None) -> float:
    """Rank ``rank``'s mean step (µs, ``ranks.step_mean_us``; NaN without steps); ``means`` from :func:`step_means`."""
    means = step_means(result) if means is None else means
    return means.get(int(rank), float("nan"))


# Each finding aggregates its table per rank with one groupby over all ranks, then builds a message
# only for the ranks where it fires: its cost is one pass over the rows, not a few pandas calls per
# rank (which dominated runs of thousands of ranks).


# -- registered table (see tracekit.analyses.registry) -------------------------------------------

FINDING_COLUMNS = ("code", "severity", "rank", "message", "evidence")


def as_table(found: list[dict[str, Any]]) -> C.Cols:
    """Findings (rows, see module doc) as the ``findings`` table (Cols, every column ``object``); ``rank`` is an
    int, or None for all-rank findings (what :func:`~tracekit.traces.cols.as_cols` makes of a nullable int)."""
    out = {c: C.obj([f[c] for f in found]) for c in FINDING_COLUMNS}
    out["rank"] = C.obj([_rank(r) for r in out["rank"]])
    return out


def as_dicts(table: Any) -> list[dict[str, Any]]:
    """The ``findings`` table (Cols or a DataFrame) back as rows (dicts; ``rank`` None for all ranks)."""
    t = C.as_cols(table)
    if not C.nrows(t):
        return []
    return [{"code": code, "severity": sev, "rank": _rank(rank), "message": msg, "evidence": ev}
            for code, sev, rank, msg, ev in zip(*(t[c].tolist() for c in FINDING_COLUMNS))]


def _rank(r: Any) -> int | None:
    """A ``rank`` cell as an int; None for a missing one (None, NaN)."""
    return None if r is None or r != r else int(r)


def finding_lines(found: list[dict[str, Any]], markdown: bool = False) -> list[str]:
    """One numbered entry per finding (what the text report prints under "Findings")."""
    if not found:
        return ["No findings: nothing costly detected."]
    lines = []
    for i, f in enumerate(found, 1):
        who = "all ranks" if f.get("rank") is None else f"rank {f['rank']}"
        cost = f["evidence"].get("cost_us")
        cost_s = f"{cost:.0f} µs/step" if cost is not None else "cost unknown"
        if markdown:
            lines.append(f"{i}. **{f['severity']}** `{f['code']}` ({who}, {cost_s}): {f['message']}")
        else:
            lines.append(f"{i}. [{f['severity']}] {f['code']} ({who}, {cost_s})\n   {f['message']}")
        quote = _whatif_quote(f["evidence"].get("whatif"))
        if quote:
            lines.append(f"   {quote}")
    return lines


def _whatif_quote(w: dict[str, Any] | None) -> str | None:
    """The replay's figure for a finding (``tracekit analyze --whatif``), with its error where known."""
    if not w:
        return None
    err = w.get("prediction_error_pct", w.get("error_pct"))
    trust = (f"the replay's baseline is {err:+.1f} % off the measured step" if err is not None
             else "unchecked: no measured unprofiled step in run.json")
    if w.get("self_check_failed"):
        trust = "not to be trusted: the replay does not reproduce the profiled window (self-check failed)"
    if w.get("predicted_saving_us") is not None:
        change = w.get("change_error_pp")
        checked = ("; such a change was never made for real to check it: unvalidated" if change is None else
                   f"; such changes made for real were predicted within a median of {change:.1f} points of the step")
        return (f"what-if ({w['scenario']}): predicted saving {w['predicted_saving_us'] / 1000:.2f} ms per step "
                f"({w.get('predicted_saving_pct') or 0:.1f} %); {trust}{checked if 'change_error_pp' in w else ''}")
    if w.get("predicted_step_us") is not None:
        return f"what-if: predicted unprofiled step {w['predicted_step_us'] / 1000:.2f} ms; {trust}"
    if w.get("note"):
        return f"what-if: {w['note']}"
    return None


def _findings_table(ctx: RunContext) -> C.Cols:
    return as_table([f.row() for f in detect_all(ctx.result(), ctx.manifest)])


TABLES = [
    Table(
        name="findings", scope="run", title="Findings (plain-English verdicts, most costly first)",
        doc="Severity: estimated cost (µs per step) as a share of the mean step: ≥10% high, ≥3% medium, else low. "
            "Findings fire per rank; one that fires on every rank is reported once with rank null.",
        columns=(
            Column("code", "name", "stable identifier of the finding (see Findings below)"),
            Column("severity", "name", "high / medium / low"),
            Column("rank", "rank", "the rank it fired on; null when it fired on every rank"),
            Column("message", "text", "the verdict in plain English"),
            Column("evidence", "json", "the numbers behind it; cost_us is the estimated cost in µs per step "
                                       "(null when not estimable)"),
        ),
        compute=_findings_table,
        nullable_int=("rank",),
        needs=("ranks", "steps", "collectives", "instances", "waits", "bucket_timeline", "graph_breaks", "gpu_idle",
               "profiler_distortion", "bucket_events", "ops_rank", "fusion_chains"),
        view=lambda t, o: View("Findings", finding_lines(as_dicts(t["findings"]), o.fmt == "markdown")), order=5,
    ),
]
