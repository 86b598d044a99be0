"""How far the profiled window is from the real step, and the bucket timing recorded without the profiler.

``profiler_distortion`` (per rank; run facts in ``meta["profiler_distortion"]``):

- ``unprofiled_step_us``: mean of run.json ``timings.per_rank[].step_s`` (the timed steps,
  profiler off, each between device synchronizes);
- ``profiled_step_us``: mean of ``timings.per_rank[].profiled_step_s`` (the profiler's
  recorded steps timed the same way; ``source`` = ``run.json``), or, for runs that did not
  record it, the mean step of the trace (``steps.step_us``, the step on the device's clock:
  :mod:`tracekit.traces.steps`; ``source`` = ``trace``);
- ``ratio`` = profiled / unprofiled; the window is *distorted* above :data:`DISTORTED_RATIO`;
- ``gpu_idle_pct``, ``launch_idle_pct``, ``kernels_per_step``: the profiled window's means
  (table ``gpu_idle``): what makes a rank CPU-bound under the profiler;
- ``cupti_step_us``: mean of the profiler's warm-up steps after the first (run.json ``window_step_s``: CUPTI's
  activity tracing on, nothing recorded; the first carries CUPTI's start-up), timed as the others; NaN when the
  window had fewer than 2 warm-up steps (``--profile-warmup``) or run.json predates ``window_step_s``;
  ``cupti_ratio`` = cupti / unprofiled: how much of the distortion comes with CUPTI alone, before any
  operator is recorded.

``meta["profiler_distortion"]``: ``ratio`` of the run (per step the slowest rank, profiled
over unprofiled: ``timings.profiled`` / ``timings.overall``; else the largest rank ratio),
``unprofiled_step_us``, ``profiled_step_us``, ``source``, ``distorted`` (bool), ``threshold``,
``doubtful`` (bool), ``doubt`` (why, or None), ``cupti_step_us`` (per warm-up step the slowest rank, their
mean; None when unknown) and ``cupti_ratio`` (cupti / unprofiled, None when unknown). The profiler only adds
work, so a ratio below :data:`DOUBTFUL_BELOW` is no distortion: it is marked doubtful with the first reason that
applies
(:func:`doubt_reason`): the unprofiled mean is raised by slow outlier steps (warm-up, recompiles), or else
run-to-run noise (clocks, other load) of that size.

``bucket_events`` (per rank): the bucket figures measured with CUDA events in the unprofiled
steps (run.json ``bucket_timing``, see :mod:`tracekit.profile.bucket_events`) beside the same
figures from the trace's bucket timeline (``comm``: the bucket allreduce kernels' time per
step, their union: allreduces that overlap each other count once; ``exposed``: their part after the step's
last backward compute kernel, a union too). ``agree`` is
false when the bucket counts differ or a figure differs by more than
:data:`AGREE_REL` of the event figure and :data:`AGREE_MIN_US`.
"""

from __future__ import annotations

import statistics
from typing import Any, ClassVar

import msgspec
import numpy as np

from tracekit.analyses import intervals as iv
from tracekit.analyses.findings import Finding, FindingContext, Quote, group_means, rounded
from tracekit.analyses.gpu_idle import GPU_IDLE_PCT, LAUNCH_BOUND_SHARE
from tracekit.analyses.registry import Column, RunContext, Table, View
from tracekit.traces import cols as C
from tracekit.traces.manifest import Manifest

NS_PER_US = 1000.0
#: the profiled window counts as distorted when its step is this many times the unprofiled one
DISTORTED_RATIO = 1.15
#: below this ratio the profiled window ran faster than the unprofiled steps: doubtful, not a distortion
DOUBTFUL_BELOW = 0.95
#: an unprofiled step this many times the median is an outlier (warm-up, recompile) that raises the mean
OUTLIER_STEP = 1.5
#: event and trace figures agree within this share of the event figure ...
AGREE_REL = 0.25
#: ... or within this many µs per step (small figures are noisy)
AGREE_MIN_US = 200.0

DISTORTION_COLUMNS = ("rank", "unprofiled_step_us", "profiled_step_us", "ratio", "source", "gpu_idle_pct",
                      "launch_idle_pct", "kernels_per_step", "cupti_step_us", "cupti_ratio")
EVENT_COLUMNS = ("rank", "clock", "event_steps", "event_buckets_per_step", "trace_buckets_per_step",
                 "event_comm_us_per_step", "trace_comm_us_per_step", "event_exposed_us_per_step",
                 "trace_exposed_us_per_step", "event_overlap_pct", "trace_overlap_pct", "agree", "note")


def _floats(v: Any) -> list[float]:
    if not isinstance(v, list):
        return []
    return [float(x) for x in v if isinstance(x, (int, float)) and not isinstance(x, bool) and np.isfinite(x)]


def _mean_us(v: Any) -> float:
    xs = _floats(v)
    return 1e6 * statistics.fmean(xs) if xs else np.nan


def cupti_steps(manifest: Manifest | None, row: Any) -> list[float]:
    """The profiler's warm-up steps after the first of one ``timings.per_rank`` row, s (module doc); [] when
    the window had fewer than 2 warm-up steps or run.json does not say how long each step of it took."""
    win = manifest.profile_window if manifest is not None else None
    steps = _floats(getattr(row, "window_step_s", None))
    if win is None or not win.warmup or win.warmup < 2 or win.wait is None or win.active is None \
            or len(steps) != win.wait + win.warmup + win.active:
        return []
    return steps[win.wait + 1:win.wait + win.warmup]


def cupti_step_us(manifest: Manifest | None) -> float | None:
    """The run's CUPTI-only step, µs: per warm-up step after the first the slowest rank, their mean (module doc);
    None unless every rank timed such steps."""
    t = manifest.timings if manifest is not None else None
    per_rank = [cupti_steps(manifest, r) for r in (t.per_rank if t else [])]
    slowest = [max(s) for s in zip(*per_rank)] if per_rank and all(per_rank) else []
    return 1e6 * statistics.fmean(slowest) if slowest else None


def distortion_rows(manifest: Manifest | None, steps: Any, idle: Any) -> C.Cols:
    """The ``profiler_distortion`` rows (see module doc); empty without run.json timings. ``steps`` and ``idle``
    (tables ``steps``, ``gpu_idle``) may be frames or Cols."""
    per_rank = [r for r in (manifest.timings.per_rank if manifest is not None and manifest.timings else [])
                if r.rank is not None]
    if not per_rank:
        return C.empty(DISTORTION_COLUMNS)
    steps, idle = C.as_cols(steps), C.as_cols(idle)
    step_mean = _rank_means(steps, ("step_us",))
    idle_mean = _rank_means(idle, ("gpu_idle_pct", "launch_idle_pct", "kernels"))
    nan3 = (np.nan, np.nan, np.nan)
    rows = []
    for r in per_rank:
        rank = r.rank
        unprof = _mean_us(r.step_s)
        prof, source = _mean_us(r.profiled_step_s), "run.json"
        if not np.isfinite(prof) and C.nrows(steps):
            prof, source = (step_mean[rank][0], "trace") if rank in step_mean else (np.nan, None)
        idle_pct, launch_pct, kernels = idle_mean.get(rank, nan3)
        cupti = _mean_us(cupti_steps(manifest, r))
        rows.append({"rank": rank, "unprofiled_step_us": unprof, "profiled_step_us": prof,
                     "ratio": prof / unprof if unprof > 0 else np.nan, "source": source,
                     "gpu_idle_pct": idle_pct, "launch_idle_pct": launch_pct, "kernels_per_step": kernels,
                     "cupti_step_us": cupti, "cupti_ratio": cupti / unprof if unprof > 0 else np.nan})
    return _from_rows(rows, DISTORTION_COLUMNS)


def _rank_means(t: C.Cols, columns: tuple[str, ...]) -> dict[Any, tuple[float, ...]]:
    """Per rank with rows in ``t``, the mean of each of ``columns`` over its rows (NaN when none is present):
    one grouping for all ranks, not a filter per rank (quadratic at thousands of ranks)."""
    if not C.nrows(t):
        return {}
    ranks, means = group_means(t, "rank", columns)
    return dict(zip(ranks.tolist(), zip(*(m.tolist() for m in means))))


def _from_rows(rows: list[dict[str, Any]], columns: tuple[str, ...]) -> C.Cols:
    """``pd.DataFrame(rows, columns=columns)`` as Cols (each column's dtype as pandas infers it: :func:`C.column`)."""
    if not rows:
        return C.empty(columns)
    return {c: C.column([r[c] for r in rows]) for c in columns}


def run_distortion(manifest: Manifest | None, rows: Any) -> dict[str, Any] | None:
    """``meta["profiler_distortion"]`` (see module doc), or None when it cannot be computed."""
    t = manifest.timings if manifest is not None else None
    unprof = t.overall.mean_sec_per_iter if t and t.overall else None
    prof = t.profiled.mean_sec_per_iter if t and t.profiled else None
    if unprof is not None and prof is not None and unprof > 0 and prof > 0:
        u, p, source = 1e6 * float(unprof), 1e6 * float(prof), "run.json"
    else:
        rows = C.as_cols(rows)
        i = _argmax_present(rows, "ratio")
        if i is None:
            return None
        u, p = float(rows["unprofiled_step_us"][i]), float(rows["profiled_step_us"][i])
        source = str(rows["source"][i])
    ratio = p / u
    doubt = doubt_reason(ratio, source, t)
    cupti = cupti_step_us(manifest)
    return {"ratio": round(ratio, 3), "unprofiled_step_us": round(u, 1), "profiled_step_us": round(p, 1),
            "source": source, "distorted": bool(ratio > DISTORTED_RATIO), "threshold": DISTORTED_RATIO,
            "doubtful": doubt is not None, "doubt": doubt,
            "cupti_step_us": round(cupti, 1) if cupti is not None else None,
            "cupti_ratio": round(cupti / u, 3) if cupti is not None else None}


def _argmax_present(t: C.Cols, column: str) -> int | None:
    """The row of the largest present value of ``column`` (the first of ties: ``idxmax`` after ``dropna``), or
    None without one."""
    if not C.nrows(t):
        return None
    v = np.asarray(t[column], dtype=np.float64)
    ok = np.flatnonzero(~np.isnan(v))
    return int(ok[np.argmax(v[ok])]) if len(ok) else None


def doubt_reason(ratio: float, source: str, timings: Any) -> str | None:
    """Why a ratio below :data:`DOUBTFUL_BELOW` cannot be a profiler effect (module doc), else None."""
    if ratio >= DOUBTFUL_BELOW:
        return None
    overall = timings.overall if timings is not None else None
    steps = _floats(overall.step_s) if overall is not None else []
    if steps:
        med, top = statistics.median(steps), max(steps)
        if top > OUTLIER_STEP * med:
            return (f"the unprofiled mean is raised by slow steps (max {top * 1e3:.2f} ms vs median "
                    f"{med * 1e3:.2f} ms: warm-up, recompiles or clocks ramping up)")
    n_prof = len(_floats(timings.profiled.step_s)) if timings is not None and timings.profiled else 0
    which = f"the profiled steps ({n_prof})" if source != "trace" else "the trace's steps"
    return (f"{which} ran faster than the unprofiled ones ({len(steps)}), which the profiler "
            "cannot cause: run-to-run noise (clocks, other load) of this size, so the ratio says nothing")


def _distortion_table(ctx: RunContext) -> C.Cols:
    rows = distortion_rows(ctx.manifest, ctx.tables["steps"], ctx.tables["gpu_idle"])
    ctx.meta["profiler_distortion"] = run_distortion(ctx.manifest, rows)
    return rows


_NO_FIGURES = {"buckets": np.nan, "comm": np.nan, "exposed": np.nan}


def _trace_bucket_figures(timeline: C.Cols, buckets: C.Cols) -> dict[Any, dict[str, float]]:
    """Per rank, per step means from its bucket timeline: buckets, comm (|∪ bucket allreduce kernels| per step),
    exposed (|∪ their parts after the step's last backward compute kernel|), and ``sum`` (the kernels' summed
    durations: above comm where allreduces overlap each other). A rank without a timeline (CPU traces: no
    kernels) gets the count and comm from the ``buckets`` table (the gloo ranges, offsets from the backward
    start) and exposed unknown; a rank in neither is left out. All ranks at once: one grouping per table."""
    out = {}
    if C.nrows(buckets):
        s = np.rint(np.asarray(buckets["start_offset_us"], dtype=float) * NS_PER_US)
        e = s + np.rint(np.asarray(buckets["dur_us"], dtype=float) * NS_PER_US)
        out = {rank: figs | {"exposed": np.nan}
               for rank, figs in _step_means(buckets, {"comm": (s, e)}, s, e).items()}
    if C.nrows(timeline):
        s, e = np.asarray(timeline["start_ns"], dtype=float), np.asarray(timeline["end_ns"], dtype=float)
        bwd = np.asarray(timeline["bwd_compute_end_ns"], dtype=float)
        tail = np.where(bwd >= 0, np.maximum(s, bwd), e)  # backward's end unknown (-1): nothing counted exposed
        out |= _step_means(timeline, {"comm": (s, e), "exposed": (np.minimum(tail, e), e)}, s, e)
    return out


def _step_means(t: C.Cols, unions: dict[str, tuple[np.ndarray, np.ndarray]], start: np.ndarray,
                end: np.ndarray) -> dict[Any, dict[str, float]]:
    """Per rank with rows in ``t``: ``buckets`` (rows per step), each of ``unions`` (name: per row an interval
    in ns; per step the length of their union, in µs) and ``sum`` (per step the summed ``end − start``, µs),
    their means over the rank's steps (``groupby("step")`` per rank: rows without a step or an interval in none,
    a rank whose rows all lack one gets NaN)."""
    if not C.nrows(t):
        return {}
    per_step = C.Groups(t, ["rank", "step"])
    ok = (per_step.codes >= 0) & np.isfinite(start) & np.isfinite(end)
    seg = per_step.codes[ok]
    step_figs = {"buckets": per_step.size(), "sum": np.bincount(seg, weights=(end - start)[ok],
                                                                minlength=per_step.n) / NS_PER_US}
    for k, (a, b) in unions.items():
        a_ok, b_ok = a[ok].astype(np.int64), b[ok].astype(np.int64)
        step_figs[k] = iv.segment_lengths(a_ok, np.maximum(a_ok, b_ok), seg, per_step.n) / NS_PER_US
    per_rank = C.Groups(per_step.keys, ["rank"])
    means = {k: per_rank.mean(v).tolist() for k, v in step_figs.items()}
    blank = dict.fromkeys(["buckets", "sum", *unions], np.nan)
    out = {rank: blank for rank in C.Groups(t, ["rank"]).keys["rank"].tolist()}
    out |= {rank: {k: v[i] for k, v in means.items()} for i, rank in enumerate(per_rank.keys["rank"].tolist())}
    return out


def _differs(ev: float | None, tr: float) -> bool:
    if ev is None or not np.isfinite(tr):
        return False
    return abs(tr - ev) > max(AGREE_REL * abs(ev), AGREE_MIN_US)


def event_rows(manifest: Manifest | None, timeline: Any, buckets: Any = None) -> C.Cols:
    """The ``bucket_events`` rows (see module doc); empty when run.json has no bucket timing. ``timeline`` and
    ``buckets`` (tables ``bucket_timeline``, ``buckets``) may be frames or Cols."""
    bt = manifest.bucket_timing if manifest is not None else None
    if bt is None or not bt.per_rank:
        return C.empty(EVENT_COLUMNS)
    trace = _trace_bucket_figures(C.as_cols(timeline), C.as_cols(buckets))
    rows = []
    for r in bt.per_rank:
        num = {k: (float(v) if v is not None else None) for k, v in r.summary.items()}
        tr = trace.get(r.rank, _NO_FIGURES)
        ev_comm, ev_exp = num.get("comm_us_per_step"), num.get("exposed_us_per_step")
        why = [w for w, bad in (
            ("bucket count", num.get("buckets_per_step") is not None and np.isfinite(tr["buckets"])
             and round(tr["buckets"], 1) != round(num["buckets_per_step"], 1)),
            ("comm per step", _differs(ev_comm, tr["comm"])), ("exposed per step", _differs(ev_exp, tr["exposed"])))
            if bad]
        unavailable = r.unavailable
        known = ev_comm is not None and np.isfinite(tr["comm"])
        note = (f"unavailable: {unavailable}" if unavailable else "no bucket allreduces in the trace" if not known
                else f"trace differs from the unprofiled steps: {', '.join(why)}" if why else "")
        rows.append({
            "rank": r.rank, "clock": r.clock, "event_steps": num.get("steps"),
            "event_buckets_per_step": num.get("buckets_per_step"), "trace_buckets_per_step": tr["buckets"],
            "event_comm_us_per_step": ev_comm, "trace_comm_us_per_step": tr["comm"],
            "event_exposed_us_per_step": ev_exp, "trace_exposed_us_per_step": tr["exposed"],
            "event_overlap_pct": num.get("overlap_pct"),
            "trace_overlap_pct": 100.0 * (tr["comm"] - tr["exposed"]) / tr["comm"] if tr["comm"] > 0 else np.nan,
            "agree": (not why) if known else None, "note": note})
    return _from_rows(rows, EVENT_COLUMNS)


def _events_table(ctx: RunContext) -> C.Cols:
    rows = event_rows(ctx.manifest, ctx.tables["bucket_timeline"], ctx.tables["buckets"])
    if not C.nrows(rows) and ctx.manifest is not None:  # say why there is nothing, per rank
        rows = _from_rows([dict.fromkeys(EVENT_COLUMNS) | {
            "rank": int(r), "note": "unavailable: run.json has no bucket_timing (an older tracekit)"}
            for r in ctx.meta.get("ranks", [])], EVENT_COLUMNS)
    bad = C.take(rows, _disagrees(rows)) if C.nrows(rows) else rows
    if C.nrows(bad):
        ctx.meta.setdefault("notes", []).append(_disagreement_note(bad))
    return rows


def _disagrees(events: C.Cols) -> np.ndarray:
    """Rows of a ``bucket_events`` table whose ``agree`` is False (null: not compared, so not a disagreement)."""
    return np.asarray(events["agree"] == False, dtype=bool)  # noqa: E712 (an object column: True, False, None)


def _disagreement_note(bad: Any) -> str:
    """The run summary's note when the trace's bucket figures disagree with the unprofiled bucket timing:
    which ranks, by how much (first such rank), and which figure to believe. ``bad``: those rows of
    ``bucket_events`` (a frame or Cols)."""
    bad = C.as_cols(bad)
    first = {k: v[0] for k, v in bad.items()}
    clock = "CUDA events" if first["clock"] == "cuda_events" else "host clock"
    return (f"bucket timing: on rank(s) {', '.join(str(int(r)) for r in bad['rank'])} the DDP bucket allreduces "
            f"in the profiled window differ from the same buckets timed without the profiler "
            f"({first['note'].split(': ', 1)[-1]}; rank {int(first['rank'])}: "
            f"{first['trace_comm_us_per_step']:.0f} µs of bucket communication per step in the trace vs "
            f"{first['event_comm_us_per_step']:.0f} µs without the profiler, {clock}). The profiler changes "
            f"the timing it records; the figures without it are what training sees (table bucket_events)")


def _events_view(t: Any, opts: Any) -> View | None:
    e = C.as_cols(t["bucket_events"])
    if not C.nrows(e) or C.isna(e["event_steps"]).all():
        return None
    return View("DDP buckets: unprofiled steps (bucket timing: CUDA events, host clock on CPU) vs the profiled "
                "window (trace), µs per step", e)


def _distortion_view(t: Any, opts: Any) -> View | None:
    d = C.as_cols(t["profiler_distortion"])
    return View("Profiler distortion (profiled step vs unprofiled step, per rank)", d) if C.nrows(d) else None


TABLES = [
    Table(
        name="profiler_distortion", scope="run", title="Profiler distortion (profiled vs unprofiled step, per rank)",
        doc=f"From run.json timings (tracekit profile times the profiler's recorded steps like the unprofiled ones); "
            f"older runs fall back to the trace's ProfilerStep ranges (source trace). The run's ratio is in "
            f"meta.profiler_distortion; above {DISTORTED_RATIO} the finding profiler_distortion ranks first.",
        columns=(
            Column("rank", "rank", "the rank"),
            Column("unprofiled_step_us", "us", "mean of the timed steps, profiler off (run.json step_s)"),
            Column("profiled_step_us", "us", "mean of the profiler's recorded steps (run.json profiled_step_s, "
                                             "else the trace's steps: steps.step_us)"),
            Column("ratio", "count", "profiled_step_us / unprofiled_step_us"),
            Column("source", "name", "run.json or trace (where profiled_step_us comes from)"),
            Column("gpu_idle_pct", "pct", "mean gpu_idle_pct of the profiled steps (table gpu_idle)"),
            Column("launch_idle_pct", "pct", "mean launch_idle_pct of the profiled steps: GPU waiting for launches"),
            Column("kernels_per_step", "count", "GPU activities launched per profiled step"),
            Column("cupti_step_us", "us", "mean of the profiler's warm-up steps after the first (CUPTI's activity "
                                          "tracing on, nothing recorded; run.json window_step_s)"),
            Column("cupti_ratio", "count", "cupti_step_us / unprofiled_step_us"),
        ),
        compute=_distortion_table, needs=("steps", "gpu_idle"), view=_distortion_view, order=12,
    ),
    Table(
        name="bucket_events", scope="run", title="DDP buckets measured without the profiler vs the trace",
        doc=f"Event figures: run.json bucket_timing (tracekit profile --bucket-timing: CUDA events, or host clocks "
            f"on gloo, per bucket in the unprofiled steps). Trace figures: the bucket timeline of the profiled "
            f"window. agree is false when bucket counts differ or comm/exposed differ by more than "
            f"{AGREE_REL:.0%} of the event figure and {AGREE_MIN_US:.0f} µs.",
        columns=(
            Column("rank", "rank", "the rank"),
            Column("clock", "name", "cuda_events or host"),
            Column("event_steps", "count", "unprofiled steps with bucket marks"),
            Column("event_buckets_per_step", "count", "bucket allreduces per step (events)"),
            Column("trace_buckets_per_step", "count", "bucket allreduces per step (trace)"),
            Column("event_comm_us_per_step", "us", "|∪ bucket allreduce [start, end]| per step (events)"),
            Column("trace_comm_us_per_step", "us", "|∪ bucket allreduce kernels| per step (trace; CPU traces: the "
                                                   "gloo ranges of the buckets table): allreduces that overlap each "
                                                   "other count once"),
            Column("event_exposed_us_per_step", "us", "bucket allreduce time after backward end per step (events)"),
            Column("trace_exposed_us_per_step", "us", "|∪ bucket allreduce time after the last backward compute "
                                                      "kernel| per step (trace: the tail_exposed_us intervals)"),
            Column("event_overlap_pct", "pct", "100 · (comm − exposed) / comm over all steps (events)"),
            Column("trace_overlap_pct", "pct", "the same from the trace figures"),
            Column("agree", "bool", "the trace's figures match the unprofiled ones (null when either is missing)"),
            Column("note", "text", "what differs, or why the events are unavailable"),
        ),
        compute=lambda ctx: _events_table(ctx),
        needs=("bucket_timeline", "buckets"), view=_events_view, order=45,
    ),
]


# -- the finding (see tracekit.analyses.findings) -----------------------------------------------------


class ProfilerDistortion(Finding, tag="profiler_distortion"):
    """``profiler_distortion``: the profiled step is more than :data:`DISTORTED_RATIO` × the unprofiled one.

    A qualifier: it runs after the other findings, names those it may invalidate (``may_invalidate``) and
    marks them (:meth:`qualify`), and always ranks first. Cost: profiled − unprofiled step, per step."""

    ratio: float
    unprofiled_step_us: float
    profiled_step_us: float
    source: str | None
    threshold: float
    worst_gpu_idle_pct: float | None
    worst_launch_idle_pct: float | None
    kernels_per_step: float | None
    cpu_bound: bool | None
    may_invalidate: list[str]
    bucket_events_disagree: list[int] | None
    #: the profiler's warm-up steps (CUPTI on, nothing recorded) over the unprofiled step (None: not timed)
    cupti_ratio: float | None = None
    #: the rank whose GPU idle figures name the likely cause (the largest gpu_idle_pct of the profiler_distortion
    #: table), None without one
    idle_rank: int | None = None

    #: the cause's figures: the idle_rank's row of the profiler_distortion table
    QUOTES: ClassVar[dict[str, Quote]] = {
        f: Quote("profiler_distortion", c, "mean", rank="idle_rank") for f, c in (
            ("worst_gpu_idle_pct", "gpu_idle_pct"), ("worst_launch_idle_pct", "launch_idle_pct"),
            ("kernels_per_step", "kernels_per_step"))}
    #: the ratio, the steps and the cost are run facts (``meta["profiler_distortion"]``: run.json's timings, per
    #: step the slowest rank, or the trace's rank with the largest ratio), no one rank's rows
    FACTS: ClassVar[tuple[str, ...]] = ("ratio", "unprofiled_step_us", "profiled_step_us", "step_us", "cost_us",
                                        "cupti_ratio", "threshold")
    ORDER: ClassVar[int] = 90
    QUALIFIER: ClassVar[bool] = True

    @classmethod
    def detect(cls, ctx: FindingContext) -> list[ProfilerDistortion]:
        return profiler_distortion(ctx.result, ctx.others)

    def qualify(self, other: Finding) -> Finding:
        """A timing finding, flagged as measured under this distorted window (text and evidence)."""
        if not other.TIMING:
            return other
        return msgspec.structs.replace(
            other, distorted_window=True,
            message=f"{other.message} [measured under a distorted window: the profiled step is "
                    f"{self.ratio:.2f}× the unprofiled one]")


def profiler_distortion(result: Any, others: list[Any]) -> list[ProfilerDistortion]:
    """The :class:`ProfilerDistortion` finding of ``result`` (at most one); ``others``: the findings it may
    invalidate. Names the likely cause from the profiled window (GPU idle share, launch gaps, kernels per step;
    table ``profiler_distortion``), the timing findings it may invalidate, and the ranks where the
    unprofiled bucket timing disagrees with the trace (table ``bucket_events``). Cost: profiled −
    unprofiled step, per step.
    """
    d = result.meta.get("profiler_distortion") if isinstance(result.meta, dict) else None
    if not d or not d.get("distorted"):
        return []
    ratio, u, p = d["ratio"], d["unprofiled_step_us"], d["profiled_step_us"]
    rows = C.as_cols(result.tables.get("profiler_distortion"))
    i = _argmax_present(rows, "gpu_idle_pct")
    if i is not None:
        worst = {k: v[i] for k, v in rows.items()}
        idle, launch, kern = float(worst["gpu_idle_pct"]), float(worst["launch_idle_pct"]), float(worst["kernels_per_step"])
        cpu_bound = launch >= LAUNCH_BOUND_SHARE * idle and idle >= GPU_IDLE_PCT
        cause = (f"likely cause: the ranks are CPU-bound under the profiler (rank {int(worst['rank'])}'s GPU is idle "
                 f"{idle:.0f}% of the profiled step, {launch:.0f}% waiting for kernel launches; {kern:.0f} kernels per "
                 f"step, each paying the profiler's per-launch cost)" if cpu_bound else
                 f"likely cause: per-kernel profiler cost ({kern:.0f} kernels per step; GPU idle up to {idle:.0f}% "
                 f"of the profiled step)")
    else:
        cause, idle, launch, kern, cpu_bound = _no_idle_cause(result), None, None, None, None
        worst = {"rank": None}
    hit = sorted({f.code for f in others if f.TIMING})
    ev_rows = C.as_cols(result.tables.get("bucket_events"))
    disagree = sorted(int(x) for x in ev_rows["rank"][_disagrees(ev_rows)]) if C.nrows(ev_rows) else []
    msg = (f"the profiled window runs {ratio:.2f}× the unprofiled step ({p / 1000:.1f} ms vs {u / 1000:.1f} ms per "
           f"step): {cause}{_cupti_clause(d.get('cupti_ratio'), ratio)}. Timings from this window over-state idle, "
           "waiting and exposed communication"
           + (f"; findings that may be artefacts of it: {', '.join(hit)}" if hit else "")
           + (f"; the bucket timing of the unprofiled steps disagrees with the trace on rank(s) "
              f"{', '.join(map(str, disagree))} (table bucket_events)" if disagree else "")
           + " (profile fewer kernels per step: a larger batch, or compare with the bucket_events table; "
             "`tracekit whatif` replays this trace without the profiler's cost and predicts the undisturbed step, "
             "with its measured error: docs/whatif.md)")
    return [ProfilerDistortion(rank=None, message=msg, cost_us=p - u, step_us=u, ratio=ratio, unprofiled_step_us=u,
                               profiled_step_us=p, source=d.get("source"), threshold=DISTORTED_RATIO,
                               worst_gpu_idle_pct=rounded(idle), worst_launch_idle_pct=rounded(launch),
                               kernels_per_step=rounded(kern), cpu_bound=cpu_bound, may_invalidate=hit,
                               bucket_events_disagree=disagree or None, cupti_ratio=d.get("cupti_ratio"),
                               idle_rank=int(worst["rank"]) if worst["rank"] is not None else None)]


def _cupti_clause(cupti: float | None, ratio: float) -> str:
    """What the profiler's warm-up steps say of where its cost comes from (module doc; "" when not timed)."""
    if cupti is None:
        return ""
    head = (f"; its warm-up steps, CUPTI's activity tracing on and nothing recorded yet, already ran {cupti:.2f}× "
            f"the unprofiled step")
    if cupti - 1.0 >= 0.5 * (ratio - 1.0):
        return head + (": at least half of the cost comes with CUPTI tracing every CUDA call, not with recording "
                       "operators (recording fewer would not remove it)")
    return head + ": most of the cost comes with recording operators (fewer of them, record_shapes off, reduce it)"


def _no_idle_cause(result: Any) -> str:
    """What is known and what is not when no rank has per-step GPU idle figures to name a cause."""
    meta = result.meta if isinstance(result.meta, dict) else {}
    if not meta.get("device_metrics"):
        return "the trace has no GPU activity (CPU-only), so the GPU idle share that would say why is unknown"
    man = meta.get("manifest")
    cuda_only = getattr(man, "config", {}).get("profile_activities") == "cuda" if man is not None else False
    what = ("the trace holds GPU activity only (captured with --profile-activities cuda: no CPU ops, no "
            "ProfilerStep ranges)" if cuda_only else "the trace holds GPU activity but no ProfilerStep ranges")
    return (f"cause unknown: {what}, so the GPU idle per step and the launch gaps that would say why cannot be "
            "measured; the ratio itself comes from run.json's timings")


FINDINGS = [ProfilerDistortion]
