"""Cross-check tracekit's numbers against HolisticTraceAnalysis (HTA), on request only.

:func:`hta_crosscheck` runs HTA over the same per-rank files a
:class:`~tracekit.traces.traceset.TraceSet` was loaded from and returns one row
per rank with HTA's computation/communication overlap and temporal breakdown.
HTA is imported lazily inside the function: ``import tracekit`` and
``tracekit.analyze`` never import it.

How HTA is driven (and which of its pitfalls are avoided):

- ``HTA_DISABLE_NS_ROUNDING=1`` is set while HTA runs (and the previous value
  restored afterwards). Without it HTA rounds every kernel's start up and its end
  down to whole microseconds, which shrinks short kernels and skews overlap.
- The rank -> file map is passed explicitly (``trace_files={rank: path}``) with
  the ranks tracekit read from ``distributedInfo``, so HTA's own rank guessing
  (a regex over the raw file text) is never used. ``trace_dir`` is the files'
  common parent. HTA reads ``*.json`` and ``*.json.gz`` itself but decides by the
  file *name*; a file whose name and content disagree (gzip data named
  ``.json``, or another suffix) is passed through a correctly named symlink.
- ``visualize=False`` everywhere (no plotly figures).
- HTA logs through the ``hta`` logger (to stderr via logging's last-resort
  handler) and sometimes prints; while it runs, both are re-routed to the
  ``tracekit.hta`` logger at DEBUG level, and its warnings are suppressed.
- Each HTA call is guarded: an exception, an empty/None result or NaN values
  (HTA's behaviour on CPU-only traces or traces without communication kernels)
  become a message in ``hta_error`` instead of a crash or a silent blank; so does
  anything else raised while driving HTA. The registered table
  (:func:`hta_table`) prints one warning line per rank with an ``hta_error``, and
  the rest of the report prints as usual: ``--hta`` never stops a report.
- HTA numbers ranks by its own reading of each file even with explicit
  ``trace_files``; its result rows are mapped back to tracekit's ranks (with one
  file, its only rank), and a disagreement that cannot be resolved is an ``hta_error``.

Aggregation of ``hta_overlap_pct``: HTA 0.5's ``get_comm_comp_overlap`` returns
*one* value per rank, computed over every GPU kernel it keeps as
``|∪comm ∩ ∪comp| / |∪comm|`` (the same formula as tracekit's ``overlap_pct``),
so it is taken as is. Some HTA versions return one row per (rank, iteration);
then the per-iteration percentages are averaged with equal weight per
iteration (HTA gives no per-iteration comm time to weight by) and
``hta_iterations`` says how many were averaged.

Scope difference to tracekit: HTA keeps only GPU kernels whose launch (by
correlation id) is a CPU event of the trace that starts before the end of the
last ProfilerStep (``include_last_profiler_step=True``, used here so the last
step is not dropped; HTA's own default drops it). Kernels launched *before* the
profiler window opened ("pre-window" kernels, typically the tail of the previous
step's allreduces) are therefore never seen by HTA, while tracekit's per-rank
``overlap_pct`` covers every GPU activity in the trace. On the reference traces
that alone explains the whole difference (up to ~16 points when a rank starts
the window with a long exposed allreduce); :func:`tracekit_overlap_in_hta_scope`
computes tracekit's overlap over HTA's scope, which agrees with HTA to 0.01 points.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import logging
import math
import os
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from tracekit.analyses.registry import AnalysisWarning, Column, Table
from tracekit.errors import MissingDependencyError
from tracekit.traces.traceset import TraceSet

if TYPE_CHECKING:  # pandas enters only when the table runs (--hta): importing this module must not import it
    import pandas as pd

log = logging.getLogger("tracekit.hta")

NS_ROUNDING_ENV = "HTA_DISABLE_NS_ROUNDING"

#: columns of :func:`hta_crosscheck`'s result, in order
HTA_COLUMNS = (
    "rank", "hta_overlap_pct", "hta_iterations", "hta_idle_us", "hta_compute_us", "hta_non_compute_us",
    "hta_kernel_us", "hta_idle_pct", "hta_compute_pct", "hta_non_compute_pct", "hta_error",
)
#: HTA temporal-breakdown column -> ours
_TEMPORAL = {
    "idle_time(us)": "hta_idle_us",
    "compute_time(us)": "hta_compute_us",
    "non_compute_time(us)": "hta_non_compute_us",
    "kernel_time(us)": "hta_kernel_us",
    "idle_time_pctg": "hta_idle_pct",
    "compute_time_pctg": "hta_compute_pct",
    "non_compute_time_pctg": "hta_non_compute_pct",
}


def _import_hta() -> Any:
    try:
        from hta.trace_analysis import TraceAnalysis  # noqa: PLC0415 - optional, lazy on purpose
    except ImportError as e:
        raise MissingDependencyError("holistictraceanalysis", "--hta", "pip install 'tracekit[hta]'") from e
    return TraceAnalysis


def _load_hta(trace_analysis: Any, files: dict[int, str], trace_dir: str, include_last: bool) -> Any:
    """HTA's ``TraceAnalysis`` over ``files``, its traces parsed in this process.

    ``TraceAnalysis(...)`` parses several ranks in a *fork*-context multiprocessing
    pool. Forking a process that already runs threads (torch's intra-op pool after
    a run in the same process, a progress bar, a dask client) can deadlock the
    children on a lock held by a thread that does not exist in them: the test
    suite hung there. A cross-check runs once, so serial parsing is the safe
    choice. HTA versions whose ``load_traces`` has no ``use_multiprocessing``
    are built through their own constructor.
    """
    from hta.common.trace import Trace  # noqa: PLC0415 - optional, lazy on purpose

    if "use_multiprocessing" not in inspect.signature(Trace.load_traces).parameters:
        return trace_analysis(trace_files=files, trace_dir=trace_dir, include_last_profiler_step=include_last)
    ta = trace_analysis.__new__(trace_analysis)
    ta.t = Trace(files, trace_dir)
    ta.t.load_traces(include_last, use_multiprocessing=False)
    return ta


# -- scoped environment / logging ---------------------------------------------------------------

@contextlib.contextmanager
def _scoped_env(name: str, value: str) -> Iterator[None]:
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old


class _ToDebug(logging.Handler):
    """Re-emit every record of HTA's logger on ``tracekit.hta`` at DEBUG."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            log.debug("hta %s: %s", record.levelname.lower(), record.getMessage())
        except Exception:  # noqa: BLE001 - a logging hiccup must never break the cross-check
            pass


@contextlib.contextmanager
def _quiet_hta() -> Iterator[None]:
    """Route HTA's logging, prints and warnings to DEBUG while it runs; restore everything afterwards."""
    hta_logger = logging.getLogger("hta")
    root = logging.getLogger()
    saved_hta = (list(hta_logger.handlers), hta_logger.propagate, hta_logger.level, hta_logger.disabled)
    saved_root = (list(root.handlers), root.level)
    # HTA's HtaConfig may call logging.config.fileConfig, which disables every existing logger
    saved_disabled = {name: lg.disabled for name, lg in logging.Logger.manager.loggerDict.items()
                      if isinstance(lg, logging.Logger)}
    hta_logger.handlers = [_ToDebug()]
    hta_logger.propagate = False
    hta_logger.setLevel(logging.DEBUG if log.isEnabledFor(logging.DEBUG) else logging.WARNING)
    out, err = io.StringIO(), io.StringIO()
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            warnings.simplefilter("ignore")
            yield
    finally:
        hta_logger.handlers, hta_logger.propagate, _, hta_logger.disabled = saved_hta
        hta_logger.setLevel(saved_hta[2])
        root.handlers, _ = saved_root
        root.setLevel(saved_root[1])
        for name, was in saved_disabled.items():
            lg = logging.Logger.manager.loggerDict.get(name)
            if isinstance(lg, logging.Logger):
                lg.disabled = was
        for what, buf in (("stdout", out), ("stderr", err)):
            text = buf.getvalue().strip()
            if text:
                log.debug("hta %s:\n%s", what, text)


# -- file map -----------------------------------------------------------------------------------

def _hta_name_ok(path: Path) -> bool:
    """HTA gunzips by name (``.gz``) and reads ``.json`` as text: does the name match the content?"""
    name = path.name
    if not (name.endswith(".gz") or name.endswith(".json")):
        return False
    try:
        with open(path, "rb") as fh:
            is_gzip = fh.read(2) == b"\x1f\x8b"
    except OSError:
        return True  # let HTA report the unreadable file
    return is_gzip == name.endswith(".gz")


def _trace_files(traces: TraceSet, tmp: Path) -> tuple[dict[int, str], str]:
    files: dict[int, str] = {}
    for rank, rt in traces.ranks.items():
        p = Path(rt.path).resolve()
        if not _hta_name_ok(p):
            with open(p, "rb") as fh:
                suffix = ".json.gz" if fh.read(2) == b"\x1f\x8b" else ".json"
            link = tmp / f"rank{rank}{suffix}"
            link.symlink_to(p)
            p = link
        files[int(rank)] = str(p)
    trace_dir = os.path.commonpath([os.path.dirname(f) for f in files.values()])
    return files, trace_dir


# -- main entry ---------------------------------------------------------------------------------

def _describe(e: BaseException) -> str:
    msg = str(e).strip().splitlines()[0] if str(e).strip() else ""
    return f"{type(e).__name__}: {msg}" if msg else type(e).__name__


def _empty_rows(ranks: list[int]) -> dict[int, dict[str, Any]]:
    return {r: {c: (r if c == "rank" else None if c == "hta_error" else np.nan) for c in HTA_COLUMNS}
            for r in ranks}


def hta_crosscheck(traces: TraceSet, *, include_last_profiler_step: bool = True) -> pd.DataFrame:
    """Run HTA on the files of ``traces``; one row per rank (:data:`HTA_COLUMNS`).

    - ``hta_overlap_pct``: HTA's ``comp_comm_overlap_pctg`` (see the module doc for scope and aggregation).
    - ``hta_iterations``: number of per-iteration values averaged (1 for HTA >= 0.5, which gives one per rank).
    - ``hta_idle_us`` / ``hta_compute_us`` / ``hta_non_compute_us`` / ``hta_kernel_us`` and the
      ``*_pct`` columns: HTA's ``get_temporal_breakdown`` (µs, % of ``hta_kernel_us``, HTA's GPU span).
    - ``hta_error``: None, or why some values are missing (HTA raised, or returned nothing/NaN,
      e.g. on a CPU-only trace).

    ``include_last_profiler_step`` is passed to HTA; True (default) keeps the last ProfilerStep's
    kernels, which makes HTA's window the closest to tracekit's whole-trace numbers.

    Raises :class:`~tracekit.errors.MissingDependencyError` when HTA is not installed.
    """
    import pandas as pd  # noqa: PLC0415 - only with --hta (HTA itself is pandas)

    TraceAnalysis = _import_hta()  # noqa: N806
    ranks = sorted(int(r) for r in traces.ranks)
    rows = _empty_rows(ranks)
    errors: dict[int, list[str]] = {r: [] for r in ranks}

    def fail(msg: str, which: list[int] | None = None) -> None:
        for r in which if which is not None else ranks:
            errors[r].append(msg)

    try:
        _run_hta(TraceAnalysis, traces, ranks, rows, fail, include_last_profiler_step)
    except (Exception, SystemExit) as e:  # noqa: BLE001 - whatever HTA (or driving it) raises, the report still prints
        fail(f"HTA cross-check failed ({_describe(e)})")
    for r in ranks:
        rows[r]["hta_error"] = "; ".join(dict.fromkeys(errors[r])) or None
    out = pd.DataFrame([rows[r] for r in ranks], columns=list(HTA_COLUMNS))
    out["rank"] = out["rank"].astype(np.int64)
    return out


def _run_hta(TraceAnalysis: Any, traces: TraceSet, ranks: list[int], rows: dict[int, dict[str, Any]],  # noqa: N803
             fail: Any, include_last_profiler_step: bool) -> None:
    with tempfile.TemporaryDirectory(prefix="tracekit-hta-") as tmp, \
            _scoped_env(NS_ROUNDING_ENV, "1"), _quiet_hta():
        files, trace_dir = _trace_files(traces, Path(tmp))
        ta = None
        try:
            ta = _load_hta(TraceAnalysis, files, trace_dir, include_last_profiler_step)
        except Exception as e:  # noqa: BLE001 - HTA raises anything; report it per rank
            fail(f"HTA could not load the traces ({_describe(e)})")
        if ta is not None:
            loaded = getattr(getattr(ta, "t", None), "traces", None) or {}
            usable = []
            for r in ranks:
                df = loaded.get(r)
                if df is None or len(df) == 0:
                    fail("HTA loaded no events for this rank", [r])
                elif "stream" not in df.columns or not bool((df["stream"] != -1).any()):
                    fail("HTA found no GPU kernels (CPU-only trace?): no overlap or temporal breakdown", [r])
                else:
                    usable.append(r)
            if usable:
                # HTA's analyzers loop over every loaded rank: hide the unusable ones so one
                # CPU-only rank cannot make the call fail (or go NaN) for the others
                ta.t.traces = {r: loaded[r] for r in usable}
                try:
                    _overlap(ta, usable, rows, fail)
                    _temporal(ta, usable, rows, fail)
                finally:
                    ta.t.traces = loaded


def _call(fn: Any, what: str, fail: Any, usable: list[int]) -> pd.DataFrame | None:
    import pandas as pd  # noqa: PLC0415 - only with --hta

    try:
        df = fn(visualize=False)
    except Exception as e:  # noqa: BLE001
        fail(f"HTA {what} failed ({_describe(e)})", usable)
        return None
    if df is None or not isinstance(df, pd.DataFrame) or df.empty or "rank" not in df.columns:
        fail(f"HTA {what} returned no result", usable)
        return None
    return df


def _own_ranks(df: pd.DataFrame, usable: list[int], what: str, fail: Any) -> pd.Series | None:
    """The ``rank`` column of an HTA result in tracekit's numbering, or None (reported) when HTA's own
    rank detection disagrees with the rank map in a way that cannot be resolved.

    HTA numbers ranks by its own reading of each file (``distributedInfo.rank``, default 0), even with
    explicit ``trace_files``; with one file the only rank is unambiguous and is renamed.
    """
    import pandas as pd  # noqa: PLC0415 - only with --hta

    got = pd.to_numeric(df["rank"], errors="coerce")
    seen = sorted({int(v) for v in got.dropna()})
    if set(seen) <= set(usable):
        return got
    if len(seen) == 1 and len(usable) == 1:
        return pd.Series(usable[0], index=df.index)
    fail(f"HTA {what}: HTA's rank detection disagrees with the rank map (HTA ranks {seen})", usable)
    return None


def _overlap(ta: Any, usable: list[int], rows: dict[int, dict[str, Any]], fail: Any) -> None:
    import pandas as pd  # noqa: PLC0415 - only with --hta

    df = _call(ta.get_comm_comp_overlap, "get_comm_comp_overlap", fail, usable)
    if df is None:
        return
    col = next((c for c in ("comp_comm_overlap_pctg", "comp_comm_overlap_ratio") if c in df.columns), None)
    if col is None:
        fail(f"HTA get_comm_comp_overlap returned unexpected columns {list(df.columns)}", usable)
        return
    ranks = _own_ranks(df, usable, "get_comm_comp_overlap", fail)
    if ranks is None:
        return
    scale = 100.0 if col.endswith("ratio") else 1.0
    vals = (pd.to_numeric(df[col], errors="coerce") * scale).to_numpy(dtype=float)
    for r in usable:
        v = vals[(ranks == r).to_numpy()]
        if len(v) == 0:
            fail("HTA get_comm_comp_overlap has no row for this rank", [r])
            continue
        finite = v[np.isfinite(v)]
        if len(finite) == 0:
            fail("HTA overlap is undefined (no communication kernels seen by HTA)", [r])
            continue
        rows[r]["hta_overlap_pct"] = float(finite.mean())
        rows[r]["hta_iterations"] = int(len(finite))


def _temporal(ta: Any, usable: list[int], rows: dict[int, dict[str, Any]], fail: Any) -> None:
    import pandas as pd  # noqa: PLC0415 - only with --hta

    df = _call(ta.get_temporal_breakdown, "get_temporal_breakdown", fail, usable)
    if df is None:
        return
    ranks = _own_ranks(df, usable, "get_temporal_breakdown", fail)
    if ranks is None:
        return
    for r in usable:
        mine = df[(ranks == r).to_numpy()]
        if len(mine) != 1:
            fail(f"HTA get_temporal_breakdown has {len(mine)} rows for this rank", [r])
            continue
        got = False
        for src, dst in _TEMPORAL.items():
            if src in mine.columns:
                v = pd.to_numeric(mine[src], errors="coerce").iloc[0]
                if v is not None and not (isinstance(v, float) and math.isnan(v)):
                    rows[r][dst] = float(v)
                    got = True
        if not got:
            fail("HTA get_temporal_breakdown gave no values", [r])


# -- helpers for comparing with tracekit -------------------------------------------------------

def tracekit_overlap_in_hta_scope(traces: TraceSet, comm_pattern: str | None = None) -> pd.DataFrame:
    """tracekit's overlap over the kernels HTA sees: columns ``rank``, ``tk_overlap_pct_launched``.

    Same formula as :func:`tracekit.analyses.breakdown.breakdown_of`, restricted to GPU activity
    whose launch is in the trace (``pre_window`` False), which is HTA's scope with
    ``include_last_profiler_step=True``.
    """
    import pandas as pd  # noqa: PLC0415 - a helper of the tests and the HTA comparison, not of analyze

    from tracekit.analyses import breakdown  # noqa: PLC0415 - keep module import light
    from tracekit.analyses.classify import classify_gpu  # noqa: PLC0415

    rows = []
    for rt in traces:
        pct = np.nan
        if rt.has_gpu_activity:
            g = rt.gpu
            cls = classify_gpu(rt, comm_pattern).to_numpy()
            m = ~g["pre_window"].to_numpy(dtype=bool)
            pct = breakdown.breakdown_of(g["ts_ns"].to_numpy()[m], g["end_ns"].to_numpy()[m], cls[m])["overlap_pct"]
        rows.append({"rank": int(rt.rank), "tk_overlap_pct_launched": float(pct)})
    return pd.DataFrame(rows, columns=["rank", "tk_overlap_pct_launched"])


def merge_hta(ranks_df: pd.DataFrame, hta_df: pd.DataFrame) -> pd.DataFrame:
    """Append HTA's columns to tracekit's per-rank table (left join on ``rank``).

    Adds ``hta_overlap_diff`` = ``hta_overlap_pct − overlap_pct`` (points) when both exist.
    """
    out = ranks_df.merge(hta_df, on="rank", how="left")
    if "overlap_pct" in out.columns and "hta_overlap_pct" in out.columns:
        out["hta_overlap_diff"] = out["hta_overlap_pct"] - out["overlap_pct"]
    return out


# -- registered table (see tracekit.analyses.registry) -------------------------------------------

def hta_table(traces: TraceSet) -> pd.DataFrame:
    """:func:`hta_crosscheck`, plus one :class:`AnalysisWarning` line per rank whose HTA figures are
    missing (``hta_error``): an HTA failure never stops the report."""
    df = hta_crosscheck(traces)
    for r, err in zip(df["rank"], df["hta_error"]):
        if err:
            warnings.warn(f"--hta: rank {int(r)}: {err}", AnalysisWarning, stacklevel=2)
    return df


TABLES = [
    Table(
        name="hta", scope="run", title="HTA's own numbers per rank (--hta)",
        doc="HolisticTraceAnalysis run on the same files (HTA_DISABLE_NS_ROUNDING=1, explicit trace_files). HTA "
            "sees only kernels launched inside the ProfilerStep window, so pre-window kernels explain differences "
            "to ranks. The text report adds the overlap, compute and idle shares to the per-rank breakdown. `--hta` "
            "never stops the report: whatever HTA raises or misses becomes `hta_error` and one warning line per "
            "rank (HTA's own rank numbering is mapped back to tracekit's; with one file, to its only rank).",
        columns=(
            Column("rank", "rank", "the rank"),
            Column("hta_overlap_pct", "pct", "HTA's comp_comm_overlap_pctg (|∪comm ∩ ∪comp| / |∪comm|)"),
            Column("hta_iterations", "count", "per-iteration values averaged (1 for HTA ≥ 0.5)"),
            Column("hta_idle_us", "us", "HTA temporal breakdown: idle time"),
            Column("hta_compute_us", "us", "HTA temporal breakdown: compute time"),
            Column("hta_non_compute_us", "us", "HTA temporal breakdown: non-compute (communication, memory) time"),
            Column("hta_kernel_us", "us", "HTA temporal breakdown: kernel time (HTA's GPU span)"),
            Column("hta_idle_pct", "pct", "hta_idle_us as % of hta_kernel_us"),
            Column("hta_compute_pct", "pct", "hta_compute_us as % of hta_kernel_us"),
            Column("hta_non_compute_pct", "pct", "hta_non_compute_us as % of hta_kernel_us"),
            Column("hta_error", "text", "null, or why some values are missing (HTA raised or returned nothing)"),
        ),
        compute=lambda ctx: hta_table(ctx.traces), enabled=lambda o: o.hta, order=95,
    ),
]
