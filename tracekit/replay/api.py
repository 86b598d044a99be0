"""``tracekit.whatif(path)``: the baseline prediction, what ``tracekit whatif`` prints.

Run-level figures (``baseline``, µs per step; a step lasts as long as its slowest rank,
as run.json's ``timings.overall`` counts it):

- ``profiled_step_us``: the recorded window: mean over the trace's ProfilerSteps;
- ``replayed_step_us``: the replay of the window as recorded (nothing taken out); its
  distance from the window, ``replay_error_pct``, is the replay's self-check;
- ``predicted_step_us``: the replay with the profiler's own cost per event taken out
  (``profiler_cost``: measured for the run, or the documented defaults);
- ``measured_unprofiled_step_us``: run.json ``timings.overall`` (the timed steps, profiler
  off), null without run.json; it is never an input to the prediction, only its check:
  ``error_pct`` = 100 × (predicted − measured) / measured.

Tables: ``ranks`` (per rank, means over steps: window, replayed and predicted step, and the
window's and the prediction's compute, communication, exposed communication, overlap,
GPU idle and wait, see :mod:`tracekit.replay.figures`) and ``steps`` (per rank and step,
window and predicted figures side by side).
"""

from __future__ import annotations

import os
import statistics
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from tracekit.analyses.classify import COMM, classify_gpu
from tracekit.runner.options import RunOptions
from tracekit.runner.pipeline import load_and_analyze
from tracekit.errors import ReplayError
from tracekit.jsonable import jsonable
from tracekit.replay import costs as cost_model
from tracekit.replay import figures, simulate
from tracekit.traces.traceset import TraceSet

RANK_COLUMNS = ("rank", "window_step_us", "replayed_step_us", "replay_error_pct", "predicted_step_us",
                "measured_unprofiled_step_us", "error_pct", "window_idle_us", "predicted_idle_us",
                "window_exposed_comm_us", "predicted_exposed_comm_us", "window_overlap_pct", "predicted_overlap_pct",
                "window_wait_us", "predicted_wait_us")
FIGURES = ("step_us", "compute_us", "comm_us", "exposed_comm_us", "overlap_pct", "idle_us", "wait_us")


@dataclass
class WhatifResult:
    """What ``tracekit whatif`` reports (module doc); :meth:`to_dict` is its JSON."""

    baseline: dict[str, Any]
    profiler_cost: dict[str, Any]
    ranks: pd.DataFrame
    steps: pd.DataFrame
    scenarios: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return jsonable({"baseline": self.baseline, "scenarios": self.scenarios, "profiler_cost": self.profiler_cost,
                         "ranks": self.ranks, "steps": self.steps, "notes": self.notes})


def whatif(source: str | os.PathLike[str] | list[str], *, comm_pattern: str | None = None) -> WhatifResult:
    """The baseline prediction for a run folder or trace files (module doc)."""
    paths = [str(p) for p in source] if isinstance(source, (list, tuple)) else [str(source)]
    traces, res = load_and_analyze(paths, RunOptions.of(comm_pattern=comm_pattern, keep_events=True))
    return whatif_traces(traces, res.tables.get("collectives"), res.meta, comm_pattern=comm_pattern)


def _check_replayable(traces: TraceSet) -> list[str]:
    """Notes on what cannot be replayed; raises :class:`ReplayError` when nothing can."""
    notes, usable = [], 0
    for rt in traces:
        if rt.has_gpu_activity and bool(rt.gpu["pre_window"].all()):
            notes.append(f"rank {rt.rank} ({rt.path.name}): GPU activity without CPU launch calls (a cuda-only "
                         "capture?): the CPU side that issues the work is missing")
        elif rt.steps.empty:
            notes.append(f"rank {rt.rank} ({rt.path.name}): no ProfilerStep ranges: its step cannot be replayed")
        else:
            usable += 1
    if not usable:
        raise ReplayError("nothing to predict: " + "; ".join(notes))
    if not traces.has_gpu_activity:
        notes.append("no GPU activity (CPU run): the replay covers CPU threads and collectives only")
    return notes


def whatif_traces(traces: TraceSet, coll: pd.DataFrame | None, meta: dict[str, Any], *,
                  comm_pattern: str | None = None) -> WhatifResult:
    """:func:`whatif` on traces already loaded and analysed (``coll``: the ``collectives`` table)."""
    notes = _check_replayable(traces)
    offsets = {int(r): 1000.0 * float(v) for r, v in (meta.get("clock_offsets_us") or {}).items()}
    costs = cost_model.ProfilerCosts.of(traces.manifest)
    comm = {rt.rank: np.asarray(classify_gpu(rt, comm_pattern).array == COMM) if rt.has_gpu_activity
            else np.zeros(0, dtype=bool) for rt in traces}
    g = simulate.build(traces, coll, cost_model.NONE, offsets)
    window = figures.step_figures(g, np.asarray(g.orig_start), np.asarray(g.orig_end), comm)
    replayed = figures.step_figures(g, *simulate.evaluate(g), comm)
    gp = simulate.build(traces, coll, costs, offsets)
    predicted = figures.step_figures(gp, *simulate.evaluate(gp), comm)
    notes += list(dict.fromkeys(g.notes + gp.notes))
    if costs.source == "default":
        notes.append(f"profiler cost: no measurement in run.json; documented defaults used ({costs.cpu_op_ns:.0f} ns "
                     f"per operator, {costs.runtime_ns:.0f} ns per runtime call): the prediction is less certain")
    steps = _steps_table(window, replayed, predicted)
    ranks = _ranks_table(steps, traces)
    return WhatifResult(baseline=_baseline(steps, traces), ranks=ranks, steps=steps, notes=notes,
                        profiler_cost={"cpu_op_ns": costs.cpu_op_ns, "runtime_ns": costs.runtime_ns,
                                       "source": costs.source})


def _steps_table(window: pd.DataFrame, replayed: pd.DataFrame, predicted: pd.DataFrame) -> pd.DataFrame:
    out = window[["rank", "step"]].copy()
    for name, t in (("window", window), ("replayed", replayed), ("predicted", predicted)):
        for f in FIGURES if name != "replayed" else ("step_us",):
            out[f"{name}_{f}"] = t[f].to_numpy()
    return out


def _slowest_mean(steps: pd.DataFrame, col: str) -> float:
    per_step = steps.groupby("step")[col].max()
    return float(per_step.mean()) if len(per_step) else float("nan")


def _measured(traces: TraceSet) -> tuple[float | None, dict[int, float]]:
    """run.json's unprofiled step (overall, and per rank), µs; None where not recorded."""
    t = traces.manifest.timings if traces.manifest is not None else None
    if t is None:
        return None, {}
    overall = t.overall.mean_sec_per_iter * 1e6 if t.overall and t.overall.mean_sec_per_iter else None
    per = {r.rank: 1e6 * statistics.fmean(r.step_s) for r in t.per_rank if r.rank is not None and r.step_s}
    return overall, per


def _pct(a: float | None, b: float | None) -> float | None:
    return 100.0 * (a - b) / b if a is not None and b and np.isfinite(a) else None


def _baseline(steps: pd.DataFrame, traces: TraceSet) -> dict[str, Any]:
    prof = _slowest_mean(steps, "window_step_us")
    rep = _slowest_mean(steps, "replayed_step_us")
    pred = _slowest_mean(steps, "predicted_step_us")
    measured, _ = _measured(traces)
    return {"profiled_step_us": prof, "replayed_step_us": rep, "replay_error_pct": _pct(rep, prof),
            "predicted_step_us": pred, "measured_unprofiled_step_us": measured, "error_pct": _pct(pred, measured),
            "window_vs_measured_pct": _pct(prof, measured), "steps": int(steps["step"].nunique())}


def _ranks_table(steps: pd.DataFrame, traces: TraceSet) -> pd.DataFrame:
    _, per = _measured(traces)
    m = steps.groupby("rank").mean(numeric_only=True)
    rows = []
    for rank, r in m.iterrows():
        meas = per.get(int(rank))
        rows.append({"rank": int(rank), "window_step_us": r["window_step_us"],
                     "replayed_step_us": r["replayed_step_us"],
                     "replay_error_pct": _pct(r["replayed_step_us"], r["window_step_us"]),
                     "predicted_step_us": r["predicted_step_us"], "measured_unprofiled_step_us": meas,
                     "error_pct": _pct(r["predicted_step_us"], meas),
                     **{f"{w}_{f}": r[f"{w}_{f}"] for w in ("window", "predicted")
                        for f in ("idle_us", "exposed_comm_us", "overlap_pct", "wait_us")}})
    return pd.DataFrame(rows, columns=list(RANK_COLUMNS))
