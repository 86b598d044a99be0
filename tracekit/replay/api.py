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
  ``error_pct`` = 100 × (predicted − measured) / measured;
- ``measured_spread_pct`` and ``measured_drift_pct``: how steady that truth is: its own p90/p50 − 1,
  and how far its median moved from the last warm-up steps (:func:`_measured_drift`);
- ``window_step_ratio``, ``window_slowest_step`` and ``predicted_step_median_us``: the window's slowest step
  over its median step (per step the slowest rank), which step that is, and the median over steps of the
  predicted step (null with fewer than 3 steps); from a ratio of
  :data:`UNEVEN_STEP_RATIO` a note says that one step carries the mean (a stall in a window of a few steps:
  ``predicted_step_us`` is still the mean);
- ``predicted_gpu_idle_pct``, ``window_gpu_idle_pct`` and ``regime``: how far to trust the prediction, from
  the GPU idle share of the prediction and of the window, and the error on benchmark runs of the same regime
  (:mod:`tracekit.replay.trust`; null on CPU runs).

Tables: ``ranks`` (per rank, means over steps: window, replayed and predicted step, and the
window's and the prediction's compute, communication, exposed communication, overlap,
GPU idle and wait, see :mod:`tracekit.replay.figures`) and ``steps`` (per rank and step,
window and predicted figures side by side).
"""

from __future__ import annotations

import functools
import os
import statistics
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from tracekit.analyses.classify import COMM, COMPUTE, class_codes, class_mask
from tracekit.analyses.distortion import cupti_step_us
from tracekit.analyses.findings import as_dicts, as_table
from tracekit.analyses.registry import AnalysisResult
from tracekit.errors import ReplayError, ScenarioError
from tracekit.traces import schema
from tracekit.traces.decode import LAUNCHES_KEY
from tracekit.jsonable import jsonable
from tracekit.replay import advice as advice_mod
from tracekit.replay import costs as cost_model
from tracekit.replay import figures, simulate
from tracekit.replay import scenarios as scenario_mod
from tracekit.replay import timeline as timeline_mod
from tracekit.replay import trust
from tracekit.replay import validation
from tracekit.runner.options import RunOptions
from tracekit.runner.pipeline import load_and_analyze
from tracekit.traces import cache, loader
from tracekit.traces.manifest import Manifest
from tracekit.traces.traceset import RankTrace, TraceSet

RANK_COLUMNS = ("rank", "window_step_us", "replayed_step_us", "replay_error_pct", "predicted_step_us",
                "measured_unprofiled_step_us", "error_pct", "bound", "window_idle_us", "predicted_idle_us",
                "window_exposed_comm_us", "predicted_exposed_comm_us", "window_overlap_pct", "predicted_overlap_pct",
                "window_wait_us", "predicted_wait_us")
#: the analyze tables the replay reads (``instances``: the cross-rank match, which sets the clock offsets)
REPLAY_TABLES = ("collectives", "instances")
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
    #: per scenario and rank (means over steps): predicted step, compute, exposed comm, idle, wait
    scenario_ranks: pd.DataFrame | None = None
    #: with ``advice``: analyze's findings quoting the predicted saving (tracekit.replay.advice)
    advice: list[dict[str, Any]] | None = None
    #: one step of the window and of the prediction, to draw (tracekit.replay.timeline; not in the JSON)
    timeline: pd.DataFrame | None = None
    #: the run's communication backend (``gloo`` for a CPU run, ``nccl`` for a GPU one without run.json): the
    #: checks listed are those of runs like it
    backend: str | None = None

    @property
    def scenario_checks(self) -> list[dict[str, Any]]:
        """How far the changes of :attr:`scenarios` were checked against the same change made for real
        (:mod:`tracekit.replay.validation`); empty without scenarios."""
        changes = list(dict.fromkeys(k for s in self.scenarios for k in s.get("changes", {})))
        one_rank = len(self.ranks) == 1 if "rank" in self.ranks else None
        return [c.to_dict() for c in validation.checks_for(changes, one_rank, self.backend)]

    @property
    def scenario_ranking(self) -> list[dict[str, Any]]:
        """How often predictions ordered the variants of a baseline as their paired timings did
        (:class:`tracekit.replay.validation.Ranking`); empty without scenarios."""
        return [r.to_dict() for r in validation.rankings_for(len(self.scenarios))]

    def to_dict(self) -> dict[str, Any]:
        return jsonable({"baseline": self.baseline, "scenarios": self.scenarios,
                         "scenario_checks": self.scenario_checks, "scenario_ranking": self.scenario_ranking,
                         "profiler_cost": self.profiler_cost,
                         "ranks": self.ranks, "steps": self.steps, "scenario_ranks": self.scenario_ranks,
                         "advice": self.advice, "notes": self.notes})


def whatif(source: str | os.PathLike[str] | list[str], *, comm_pattern: str | None = None,
           sweep: list[str] | tuple[str, ...] = (), advice: bool = False, profiler_probe: str | None = None,
           **changes: Any) -> WhatifResult:
    """The baseline prediction for a run folder or trace files (module doc), and the scenario the options
    ``changes`` describe (all of them combined; every option of :data:`tracekit.replay.changes.OPTIONS`, e.g.
    ``bucket_cap_mb=5``; None / False: unchanged) or one per value of each ``sweep``
    (``"bucket-cap-mb=1,5,25"``, on top of the other options): :mod:`tracekit.replay.scenarios`. ``advice``:
    analyze's findings that advise a change, with the replay's predicted saving (:mod:`tracekit.replay.advice`).
    ``profiler_probe``: subtract that calibration probe's cost per event (run.json
    ``profiler_cost.probes``) instead of the run's own figure (:meth:`ProfilerCosts.of`). An unknown option is a
    TypeError, as for any keyword."""
    base = scenario_mod.Scenario(**changes)
    specs = scenario_mod.expand(base, sweep)  # bad options fail before the traces are read
    paths = [str(p) for p in source] if isinstance(source, (list, tuple)) else [str(source)]
    # the whole result is cached, keyed by the inputs' identities, the options and the code (tracekit.traces.cache)
    return cache.result(WHATIF_CACHE, [loader.inputs_key(paths)], (comm_pattern, specs, advice, profiler_probe),
                        lambda: _whatif(paths, specs, comm_pattern=comm_pattern, advice=advice,
                                        profiler_probe=profiler_probe), packages=("pandas",))


#: the cache kind of :func:`whatif`'s results
WHATIF_CACHE = "whatif"


def _whatif(paths: list[str], specs: list[scenario_mod.Scenario], *, comm_pattern: str | None, advice: bool,
            profiler_probe: str | None) -> WhatifResult:
    """:func:`whatif`, computed."""
    # the replay reads the collectives and the clock offsets of their cross-rank match; the advice, every finding
    only = () if advice else REPLAY_TABLES
    traces, res = load_and_analyze(paths, RunOptions.of(comm_pattern=comm_pattern, keep_events=True, only=only))
    found = advice_mod.findings_of(res.tables.get("findings")) if advice else []
    extra = [s for s in advice_mod.candidates(found) if s not in specs]
    replay = functools.partial(whatif_traces, traces, res.tables.get("collectives"), res.meta,
                               comm_pattern=comm_pattern, profiler_probe=profiler_probe)
    try:
        result = replay(scenarios=specs + extra, quiet=extra)
    except ScenarioError as e:  # none of the scenarios applies: name the run
        if specs:
            raise ScenarioError(f"{paths[0] if len(paths) == 1 else ', '.join(paths)}: {e}") from None
        result = replay()
    if advice:
        result.advice = advice_mod.quote(found, result.scenarios, result.baseline)
        names = {s.name for s in extra}
        if specs and not any(s["name"] not in names for s in result.scenarios):
            raise ScenarioError(f"{paths[0]}: " + "; ".join(n for n in result.notes if n.startswith("scenario ")))
        result.scenarios = [s for s in result.scenarios if s["name"] not in names]
        if result.scenario_ranks is not None:
            result.scenario_ranks = result.scenario_ranks[~result.scenario_ranks["scenario"].isin(names)]
    return result


def advise(traces: TraceSet, res: AnalysisResult, *, comm_pattern: str | None = None) -> WhatifResult | None:
    """``tracekit analyze --whatif``: the findings of ``res`` quoted with the replay, in place.

    Findings that advise a change get ``evidence["whatif"]`` from the best scenario carrying it out
    (:mod:`tracekit.replay.advice`) plus ``prediction_error_pct``: the baseline prediction's error against
    the run's measured unprofiled step (None where run.json has none: the saving is then unchecked);
    ``profiler_distortion`` gets the predicted unprofiled step; the findings are ranked by predicted saving.
    ``res.meta["whatif"]``: the baseline and the notes. ``traces`` must keep their events. Returns the
    replay's result, or None (with ``res.meta["whatif"]["error"]``) when the traces cannot be replayed."""
    found = as_dicts(res.tables["findings"]) if "findings" in res.tables else []
    extra = advice_mod.candidates(found)
    try:
        result = whatif_traces(traces, res.tables.get("collectives"), res.meta, comm_pattern=comm_pattern,
                               scenarios=extra, quiet=extra)
    except ScenarioError:  # none of the findings' scenarios applies: the baseline still quotes the distortion
        result = whatif_traces(traces, res.tables.get("collectives"), res.meta, comm_pattern=comm_pattern)
    except ReplayError as e:
        res.meta["whatif"] = {"error": str(e)}
        return None
    quoted = advice_mod.quote(found, result.scenarios, result.baseline)
    for f in quoted:
        if f["evidence"].get("whatif") is not None:
            f["evidence"]["whatif"]["prediction_error_pct"] = result.baseline.get("error_pct")
            f["evidence"]["whatif"]["self_check_failed"] = bool(result.baseline.get("self_check_failed"))
            if f["evidence"]["whatif"].get("changes"):
                f["evidence"]["whatif"]["change_error_pp"] = change_error_pp(f["evidence"]["whatif"]["changes"])
    if "findings" in res.tables:
        res.set_table("findings", as_table(quoted))
    res.meta["whatif"] = jsonable({"baseline": result.baseline, "profiler_cost": result.profiler_cost,
                                   "notes": result.notes})
    return result


def change_error_pp(changes: dict[str, Any]) -> float | None:
    """How far predictions of such a change were off where it was made for real: the median over the checked
    settings (:data:`tracekit.replay.validation.CHECKS`, verdict ``checked``) of their median |predicted −
    measured change|, in points of the baseline step; None where no setting of these changes was checked (the
    prediction is then unvalidated, and the quote says so)."""
    done = [c.delta_error_pp_median for c in validation.checks_for(list(changes))
            if c.verdict == validation.CHECKED and c.delta_error_pp_median is not None]
    return float(statistics.median(done)) if done else None


def _warmup_clause(traces: TraceSet) -> str:
    """How much the run's CUPTI-only warm-up steps ran above its unprofiled step: what the profiler really cost
    the run (beside a calibration that says it cost nothing), or "" where run.json has not both."""
    cupti, (measured, _) = cupti_step_us(traces.manifest), _measured(traces)
    if not cupti or not measured:
        return ""
    return f"; the run's CUPTI-only warm-up steps ran {cupti / measured:.2f}x its unprofiled step"


def _check_replayable(traces: TraceSet) -> tuple[list[str], bool]:
    """(notes on what cannot be replayed, whether a rank's whole window is replayed as one step: it has no
    ProfilerStep range); raises :class:`ReplayError` when nothing can."""
    notes, usable, whole = [], 0, False
    for rt in traces:
        if rt.has_gpu_activity and bool(rt.gpu_column("pre_window").all()):
            notes.append(f"rank {rt.rank} ({rt.path.name}): GPU activity without CPU launch calls (a cuda-only "
                         "capture?): the CPU side that issues the work is missing")
        elif not rt.step_arrays()["step"].size and not (rt.column("kind") == schema.CPU_OP).any():
            notes.append(f"rank {rt.rank} ({rt.path.name}): no ProfilerStep ranges and no CPU operators (a cuda-only "
                         "capture?): its step cannot be replayed")
        elif not rt.step_arrays()["step"].size:
            rt.window_as_one_step()
            whole = True
            notes.append(f"rank {rt.rank} ({rt.path.name}): no ProfilerStep ranges (a plain `with profile():` "
                         "capture?): the whole window is replayed as one step (step 0), so the figures per step are "
                         "the window's")
            usable += 1
        else:
            usable += 1
            if rt.has_gpu_activity and (n := _launches_missing(rt)):
                notes.append(f"rank {rt.rank} ({rt.path.name}): {n} GPU operation(s) with no launch recorded ran "
                             "after ones launched in the window on their stream, so they were launched in the "
                             "window and their launch calls are missing from the trace (a sampled or filtered "
                             "trace?): they belong to no step, and the steps' lengths are uncertain")
    if not usable:
        raise ReplayError("nothing to predict: " + "; ".join(notes))
    if not traces.has_gpu_activity and any(rt.meta.get(LAUNCHES_KEY) for rt in traces):
        notes.append("kernel records missing (device launches, no kernel, copy or memset recorded): the replay "
                     "covers CPU threads and collectives only, and the device's time is unknown")
    elif not traces.has_gpu_activity:
        notes.append("no GPU activity (CPU run): the replay covers CPU threads and collectives only")
        notes += shared_cores_notes(traces.manifest)
    return notes, whole


#: the most the replay of the window as recorded may differ from the window (the self-check, %): every committed
#: benchmark run replays within 1 % (docs/whatif.md); beyond this the predictions are not to be trusted
SELF_CHECK_LIMIT_PCT = 2.0


def self_check_failed(replay_error_pct: float | None) -> bool:
    """Whether a self-check (replayed vs recorded window, %) is beyond :data:`SELF_CHECK_LIMIT_PCT`."""
    return replay_error_pct is not None and abs(replay_error_pct) > SELF_CHECK_LIMIT_PCT


def self_check_note(baseline: dict[str, Any], ranks: pd.DataFrame) -> list[str]:
    """The note when the replay does not reproduce the profiled window (the slowest rank's, or any rank's, self-check
    beyond :data:`SELF_CHECK_LIMIT_PCT`): what the trace holds does not explain its step, so no predicted figure
    of the run is to be trusted. Sets ``baseline["self_check_failed"]``."""
    bad = ranks[[self_check_failed(v) for v in ranks["replay_error_pct"]]] if len(ranks) else ranks
    failed = self_check_failed(baseline.get("replay_error_pct")) or len(bad) > 0
    baseline["self_check_failed"] = failed
    if not failed:
        return []
    worst = bad.loc[bad["replay_error_pct"].abs().idxmax()] if len(bad) else None
    where = (f"; {len(bad)} of {len(ranks)} rank{'s' if len(ranks) > 1 else ''} beyond it, the worst rank "
             f"{int(worst['rank'])} at {worst['replay_error_pct']:+.1f} %") if worst is not None else ""
    base = baseline.get("replay_error_pct")
    return [f"self-check failed: the trace replayed as recorded gives a step "
            f"{'' if base is None else f'{base:+.1f} % '}off the profiled window (limit +/-{SELF_CHECK_LIMIT_PCT:g} %"
            f"{where}): the trace does not hold what made its steps this long (events missing from a cut, sampled "
            "or filtered trace, or waits the replay does not model), so the predicted figures of this run are not "
            "to be trusted"]


def _launches_missing(rt: RankTrace) -> int:
    """GPU operations with no launch recorded that ran after one launched in the window on their stream
    (:meth:`tracekit.traces.traceset.RankTrace.launches_lost`, computed once per rank)."""
    return int(np.count_nonzero(rt.launches_lost()))


def shared_cores_notes(manifest: Manifest | None) -> list[str]:
    """A CPU run whose ranks' threads outnumbered their host's cores (run.json ``hardware.ranks[].cpus`` and
    ``torch_threads``: each rank's compute threads plus at least one gloo worker running a collective): the
    replay gives every thread a core of its own, so communication that overlapped compute there competed with
    it for the cores, which the prediction does not see. One note per such host."""
    hosts: dict[str | None, list[Any]] = {}
    for h in (manifest.hardware.ranks if manifest is not None and manifest.hardware is not None else []):
        hosts.setdefault(h.hostname, []).append(h)
    notes = []
    for host, ranks in hosts.items():
        if any(h.cpus is None or h.torch_threads is None for h in ranks):
            continue
        cpus, threads = min(h.cpus for h in ranks), max(h.torch_threads for h in ranks)
        if len(ranks) * (threads + 1) > cpus:
            notes.append(f"{len(ranks)} rank{'s' if len(ranks) > 1 else ''} on {host or 'one host'} ran "
                         f"{threads} compute thread{'s' if threads > 1 else ''} each and gloo's workers on {cpus} "
                         "cores: the replay gives every thread a core of its own, so communication that overlapped "
                         "compute here competed with it for the cores; predicted changes of buckets, ranks or "
                         "network are not checkable on such a host (README demo model on 2 cores: 18 points off, "
                         "docs/whatif.md)")
    return notes


def whatif_traces(traces: TraceSet, coll: pd.DataFrame | None, meta: dict[str, Any], *,
                  comm_pattern: str | None = None,
                  scenarios: list[scenario_mod.Scenario] | None = None,
                  quiet: list[scenario_mod.Scenario] | None = None,
                  profiler_probe: str | None = None) -> WhatifResult:
    """:func:`whatif` on traces already loaded and analysed (``coll``: the ``collectives`` table)."""
    with simulate.paused_gc():  # the graph is millions of lists and tuples, and no cycles (simulate.paused_gc)
        return _whatif_traces(traces, coll, meta, comm_pattern=comm_pattern, scenarios=scenarios, quiet=quiet,
                              profiler_probe=profiler_probe)


def _whatif_traces(traces: TraceSet, coll: pd.DataFrame | None, meta: dict[str, Any], *,
                   comm_pattern: str | None, scenarios: list[scenario_mod.Scenario] | None,
                   quiet: list[scenario_mod.Scenario] | None, profiler_probe: str | None) -> WhatifResult:
    notes, whole = _check_replayable(traces)
    offsets = {int(r): 1000.0 * float(v) for r, v in (meta.get("clock_offsets_us") or {}).items()}
    costs = cost_model.ProfilerCosts.of(traces.manifest, probe=profiler_probe)
    comm = {rt.rank: class_mask(class_codes(rt, comm_pattern), COMM) if rt.has_gpu_activity
            else np.zeros(0, dtype=bool) for rt in traces}
    gp = simulate.build(traces, coll, costs, offsets)
    g = gp.recorded()  # the window as recorded, for the self-check: the same graph, nothing taken out
    window = figures.step_figures(g, *g.orig_arrays(), comm)
    plan = simulate.runs(gp)  # the two graphs have the same predecessors: one plan for both evaluations
    replayed = figures.step_figures(g, *simulate.evaluate(g, plan), comm)
    p_start, p_end = simulate.evaluate(gp, plan)
    predicted = figures.step_figures(gp, p_start, p_end, comm)
    notes += list(dict.fromkeys(g.notes + gp.notes))
    if costs.rejected is not None:
        notes.append(f"profiler cost: run.json's not used: {costs.rejected}{_warmup_clause(traces)}; the "
                     f"documented defaults instead ({costs.cpu_op_ns:.0f} ns per operator, {costs.runtime_ns:.0f} ns "
                     f"per runtime call, x{costs.scale:g}): the prediction is less certain")
    elif costs.source == "default":
        notes.append(f"profiler cost: no measurement in run.json; documented defaults used ({costs.cpu_op_ns:.0f} ns "
                     f"per operator, {costs.runtime_ns:.0f} ns per runtime call, x{costs.scale:g}): the prediction "
                     f"is less certain")
    steps = _steps_table(window, replayed, predicted)
    ranks = _ranks_table(steps, traces)
    baseline = _baseline(steps, traces, whole)
    notes += self_check_note(baseline, ranks) + uneven_steps_note(baseline) + cupti_note(baseline)
    if traces.manifest is None or traces.manifest.timings is None:
        notes.append(unchecked_note(baseline))
    elif whole:
        notes.append("run.json's unprofiled step is one step's time and the window replayed as one step holds "
                     "several: the prediction is not compared with it")
    result = WhatifResult(baseline=baseline, ranks=ranks, steps=steps, notes=notes,
                          profiler_cost={"cpu_op_ns": costs.cpu_op_ns, "runtime_ns": costs.runtime_ns,
                                         "scale": costs.scale, "cut_quantile": costs.cut_quantile,
                                         "source": costs.source, "rejected": costs.rejected},
                          timeline=timeline_mod.one_step(gp, p_start, p_end, comm), backend=_backend(traces))
    if scenarios:  # edits of the predicted graph, re-evaluated (tracekit.replay.scenarios)
        ctx = scenario_mod.context(gp, traces, coll, offsets, comm)
        ctx.compute = {rt.rank: class_mask(class_codes(rt, comm_pattern), COMPUTE) for rt in traces
                       if rt.has_gpu_activity}
        ctx.base_times = (p_start, p_end)
        result.scenarios, result.scenario_ranks, more = scenario_mod.evaluate(gp, ctx, scenarios, ref=predicted)
        hidden = tuple(f"{s.name}:" for s in quiet or ()) + tuple(f"scenario {s.name} " for s in quiet or ())
        result.notes += [n for n in more if not n.startswith(hidden)]  # ``quiet``: the advice's own scenarios
    return result


#: what to say of a prediction that has no measured step and no regime (a CPU run; figures: docs/whatif.md)
UNCHECKED_NOTE = ("no unprofiled step time in run.json to check the prediction against: on the {} committed "
                  "CPU (gloo) benchmark runs its error was a median of {:.1f} %, at most {:.1f} % "
                  "(docs/whatif.md)").format(*trust.CPU_RUNS)


def _backend(traces: TraceSet) -> str:
    """run.json's backend, else ``nccl`` for a trace with GPU activity and ``gloo`` for one without."""
    run = traces.manifest.run if traces.manifest is not None else None
    if run is not None and run.backend:
        return str(run.backend)
    return "nccl" if traces.has_gpu_activity else "gloo"


def unchecked_note(baseline: dict[str, Any]) -> str:
    """The note for a prediction without a measured step: its regime's benchmark error where it has one
    (:mod:`tracekit.replay.trust`), else the figures over every benchmark run."""
    idle = baseline.get("predicted_gpu_idle_pct")
    regime = trust.regime_of(idle, baseline.get("window_gpu_idle_pct"))
    if regime is None:
        return UNCHECKED_NOTE
    several = bool((baseline.get("regime") or {}).get("multi_rank"))
    return ("no unprofiled step time in run.json to check the prediction against: "
            f"{trust.describe(regime, idle, several_ranks=several)} (docs/whatif.md)")


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


def _baseline(steps: pd.DataFrame, traces: TraceSet, whole_window: bool = False) -> dict[str, Any]:
    prof = _slowest_mean(steps, "window_step_us")
    rep = _slowest_mean(steps, "replayed_step_us")
    pred = _slowest_mean(steps, "predicted_step_us")
    # a window replayed as one step (no ProfilerStep range) holds several steps of run.json's: not comparable
    measured, _ = _measured(traces) if not whole_window else (None, None)
    cupti = cupti_step_us(traces.manifest) if not whole_window else None
    idle, window_idle = _idle_share(steps), _idle_share(steps, "window")
    regime = trust.regime_of(idle, window_idle)
    by_rank = rank_regimes(steps)
    several = len(traces) > 1
    if len({r["name"] for r in by_rank}) > 1:  # ranks of different kinds: the predicted step is the slowest rank's
        slowest = int(steps.groupby("rank")["predicted_step_us"].mean().idxmax())
        # (the slowest rank's own regime; a rank with no idle share has none: the run's then stands)
        regime = next((trust.regime_of(r["predicted_gpu_idle_pct"], r["window_gpu_idle_pct"]) for r in by_rank
                       if slowest in r["ranks"]), regime)
    return {"profiled_step_us": prof, "replayed_step_us": rep, "replay_error_pct": _pct(rep, prof),
            "predicted_step_us": pred, "measured_unprofiled_step_us": measured, "error_pct": _pct(pred, measured),
            "measured_spread_pct": _measured_spread(traces), "measured_drift_pct": _measured_drift(traces),
            "window_vs_measured_pct": _pct(prof, measured), "steps": int(steps["step"].nunique()),
            "cupti_step_us": cupti, "predicted_vs_cupti_pct": _pct(pred, cupti),
            "predicted_gpu_idle_pct": idle, "window_gpu_idle_pct": window_idle,
            "regime": regime.to_dict(several_ranks=several) if regime is not None else None,
            "rank_regimes": [{**r, **trust.regime_of(r["predicted_gpu_idle_pct"], r["window_gpu_idle_pct"])
                              .to_dict(several_ranks=several)} for r in by_rank] if len(by_rank) > 1 else None,
            **_step_spread(steps)}


def rank_regimes(steps: pd.DataFrame) -> list[dict[str, Any]]:
    """Each rank's own regime (:func:`tracekit.replay.trust.regime_of` of its predicted and window GPU idle shares:
    mean idle over mean step), the ranks of one regime together: ``[{"name", "ranks", "predicted_gpu_idle_pct",
    "window_gpu_idle_pct"}]`` (the shares: means over those ranks), most ranks first; [] on a CPU run."""
    per_rank = steps.groupby("rank")[["predicted_idle_us", "predicted_step_us", "window_idle_us",
                                      "window_step_us"]].mean()
    pred = 100.0 * per_rank["predicted_idle_us"] / per_rank["predicted_step_us"]
    win = 100.0 * per_rank["window_idle_us"] / per_rank["window_step_us"]
    groups: dict[str, list[tuple[int, float, float]]] = {}
    for rank, p, w in zip(per_rank.index, pred, win):
        r = trust.regime_of(None if pd.isna(p) else float(p), None if pd.isna(w) else float(w))
        if r is not None:
            groups.setdefault(r.name, []).append((int(rank), float(p), float(w)))
    out = [{"name": name, "ranks": [m[0] for m in members],
            "predicted_gpu_idle_pct": float(np.mean([m[1] for m in members])),
            "window_gpu_idle_pct": float(np.mean([m[2] for m in members]))} for name, members in groups.items()]
    return sorted(out, key=lambda r: -len(r["ranks"]))


#: the window's slowest step over its median step from which a note says one step carries the mean: on the committed
#: runs the ratio is at most 1.29 but for four (1.50 to 3.51); their median-of-steps prediction was closer to the
#: measured step for three (87.7 -> 11.9 %, 60.9 -> 27.9 %, 8.4 -> 0.4 %) and farther for one (-9.5 -> -14.6 %)
UNEVEN_STEP_RATIO = 1.5


def _step_spread(steps: pd.DataFrame) -> dict[str, float | None]:
    """``window_step_ratio`` and ``predicted_step_median_us`` (module doc); None with fewer than 3 steps."""
    per = steps.groupby("step")[["window_step_us", "predicted_step_us"]].max()
    if len(per) < 3 or not per["window_step_us"].median() > 0:
        return {"window_step_ratio": None, "predicted_step_median_us": None, "window_slowest_step": None}
    w = per["window_step_us"]
    return {"window_step_ratio": float(w.max() / w.median()),
            "predicted_step_median_us": float(per["predicted_step_us"].median()),
            "window_slowest_step": int(w.idxmax())}


def cupti_note(baseline: dict[str, Any]) -> list[str]:
    """A note when the prediction is above the profiler's CUPTI-only warm-up steps (``cupti_step_us``): the
    profiler only adds time, so the undisturbed step is at most those, within the host's noise, and such a
    prediction keeps too much of the profiler's cost. They are profiled steps, not the unprofiled ones: the
    prediction never uses them, they bound it."""
    over = baseline.get("predicted_vs_cupti_pct")
    if over is None or over <= 0:
        return []
    return [f"the predicted step is {over:.1f} % above the profiler's warm-up steps (CUPTI on, nothing recorded: "
            f"{baseline['cupti_step_us'] / 1000:.2f} ms), which the undisturbed step cannot exceed but by the host's "
            f"noise: the prediction keeps too much of the profiler's cost"]


def uneven_steps_note(baseline: dict[str, Any]) -> list[str]:
    """A note where one profiled step carries the mean (module doc)."""
    ratio = baseline.get("window_step_ratio")
    if ratio is None or ratio < UNEVEN_STEP_RATIO:
        return []
    med = baseline["predicted_step_median_us"]
    err = _pct(med, baseline.get("measured_unprofiled_step_us"))
    return [f"profiled step {baseline['window_slowest_step']} took {ratio:.1f}x the median of the window's "
            f"{baseline['steps']} steps: the predicted step (a mean over steps) carries it; the median over steps "
            f"predicts {med / 1e3:.2f} ms" + (f" ({err:+.1f} % vs measured)" if err is not None else "")
            + " (a stall in the window or the program's own: a few steps cannot tell)"]


def _idle_share(steps: pd.DataFrame, which: str = "predicted") -> float | None:
    """The prediction's (``which="window"``: the window's) GPU idle share, % (:mod:`tracekit.replay.trust`): per
    rank, mean idle over mean step; then the mean over ranks. None without GPU figures (a CPU run)."""
    per_rank = steps.groupby("rank")[[f"{which}_idle_us", f"{which}_step_us"]].mean()
    share = (per_rank[f"{which}_idle_us"] / per_rank[f"{which}_step_us"]).dropna()
    return float(100.0 * share.mean()) if len(share) else None


def _measured_spread(traces: TraceSet) -> float | None:
    """The truth's own noise: run.json's unprofiled p90 / p50 − 1 (overall, i.e. per step the slowest rank), %.
    An error smaller than this is within the host's step-to-step variation."""
    t = traces.manifest.timings if traces.manifest is not None else None
    sec = t.overall.sec_per_iter if t is not None and t.overall is not None else None
    p50, p90 = getattr(sec, "p50", None), getattr(sec, "p90", None)
    return 100.0 * (p90 / p50 - 1.0) if p50 and p90 else None


#: warm-up steps the drift compares with: the last ones (the first warm-up steps compile and allocate)
DRIFT_WARMUP_STEPS = 3


def _measured_drift(traces: TraceSet) -> float | None:
    """How far the unprofiled step moved within the run, %: the median of run.json's timed steps over the median
    of the last :data:`DRIFT_WARMUP_STEPS` warm-up steps, minus 1 (each step as long as its slowest rank).

    Both are the same program in the same process seconds apart, before any profiler ran; on a host whose
    speed is steady they agree within a few %, and where they do not, the measured step that checks the
    prediction is itself uncertain by about that much (docs/whatif.md, "How steady the truth is"). None with
    DRIFT_WARMUP_STEPS warm-up steps or fewer."""
    t = traces.manifest.timings if traces.manifest is not None else None
    if t is None or not t.overall or not t.overall.step_s or not t.warmup_step_s:
        return None
    per_rank = [v for v in t.warmup_step_s.values() if v]
    n = min((len(v) for v in per_rank), default=0)
    if n <= DRIFT_WARMUP_STEPS:
        return None
    tail = statistics.median(max(v[i] for v in per_rank) for i in range(n - DRIFT_WARMUP_STEPS, n))
    return _pct(statistics.median(t.overall.step_s), tail)


def _rank_bound(r: pd.Series) -> str | None:
    """A rank's regime name (:func:`rank_regimes`), from its means over steps; None on a CPU run."""
    def share(which: str) -> float | None:
        v = 100.0 * r[f"{which}_idle_us"] / r[f"{which}_step_us"] if r[f"{which}_step_us"] else float("nan")
        return None if pd.isna(v) else float(v)

    regime = trust.regime_of(share("predicted"), share("window"))
    return regime.name if regime is not None else None


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
                     "bound": _rank_bound(r),
                     **{f"{w}_{f}": r[f"{w}_{f}"] for w in ("window", "predicted")
                        for f in ("idle_us", "exposed_comm_us", "overlap_pct", "wait_us")}})
    return pd.DataFrame(rows, columns=list(RANK_COLUMNS))
