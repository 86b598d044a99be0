"""What-if scenarios: edit the replay graph of the predicted (profiler-free) step, evaluate it again.

A :class:`Scenario` is a set of changes applied together to a copy of the graph (:func:`apply`). Each family
of changes is declared once, in its module of :mod:`tracekit.replay.changes` (options, what it needs from the
run, its edits); they compose in one order: the phases of :class:`~tracekit.replay.family.Phase`, every
family's edit of a phase by family position, then one step of the engine's own:

1. ``PLAN``: the network's factors and checks (``bandwidth_x`` or ``busbw_gbps``, ``world_size``,
   ``comm_hook``); a 1-rank run grown to more ranks gets the allreduces it issued (:mod:`tracekit.replay.grow`);
2. ``GRAPHS``: compiled graphs split or merged;
3. ``REGROUP``: ``bucket_cap_mb`` / ``first_bucket_cap_mb``: DDP's gradients regrouped into other buckets
   (:mod:`tracekit.replay.buckets`) with the network's factors;
4. ``SCALE``: every other collective's transfer scaled (:mod:`tracekit.replay.network`); the hook's cast
   kernels added (:mod:`tracekit.replay.hook`);
5. ``RANKS``: with one rank, the CPU work of enqueueing collectives removed (:mod:`tracekit.replay.enqueue`)
   and the compute that ran beside communication given its duration without it
   (:mod:`tracekit.replay.contention`);
6. ``HOST``: host work removed: the CPU work between compiled graphs at each graph break
   (:mod:`tracekit.replay.breaks`);
7. every scenario but one rank (or a grown run): the compute kernels re-timed for how much of them overlaps
   communication in the scenario's timeline against the baseline prediction's
   (:func:`tracekit.replay.contention.readjust`: one extra evaluation).

Each scenario's figures (per rank and step: :func:`tracekit.replay.figures.step_figures`) are
compared with the baseline prediction: ``predicted_step_us`` (mean over steps of the slowest
rank, as the baseline's), ``delta_us`` = scenario − baseline, ``delta_pct`` = 100 × delta /
baseline; ``compute_us``, ``exposed_comm_us``, ``idle_us``, ``wait_us`` (means per rank and step)
with their ``delta_*``. A scenario that cannot apply to the run raises
:class:`~tracekit.errors.ScenarioError` (its message names the option and the reason).
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pandas as pd

from tracekit.cpus import usable_cpus
from tracekit.errors import ConfigError, ScenarioError
from tracekit.replay import contention, ddp, figures, network, simulate
from tracekit.replay.changes import FAMILIES, OPTIONS
from tracekit.replay.family import Context, Edits, Phase
from tracekit.replay.graph import Graph
from tracekit.replay.scenario_spec import Scenario
from tracekit.runner.per_rank import map_forked
from tracekit.traces.traceset import TraceSet

__all__ = ["Context", "Scenario", "apply", "context", "evaluate", "expand"]

MOVED = ("compute_us", "exposed_comm_us", "idle_us", "wait_us")
#: scenarios are evaluated in forked processes from this many graph nodes over all of them (below, forking
#: costs more than it saves: a scenario of a 900k-node graph takes ~0.8 s, of a 10k-node one ~10 ms)
PARALLEL_MIN_NODES = 500_000

#: the options ``--sweep`` takes: every option but the flags
_SWEPT = {k: o for k, o in OPTIONS.items() if o.kind is not bool}


def expand(base: Scenario, sweeps: list[str] | tuple[str, ...] = ()) -> list[Scenario]:
    """``base`` alone, or one scenario per combination of the sweeps' values (``bucket-cap-mb=1,5,25``)
    on top of ``base``; an empty ``base`` without sweeps gives no scenario (the baseline only)."""
    axes = []
    for s in sweeps:
        key, _, values = s.partition("=")
        field = key.strip().lstrip("-").replace("-", "_")
        if field not in _SWEPT or not values.strip():
            raise ConfigError(f"--sweep {s!r}: expected OPTION=V1,V2,... with OPTION one of "
                              + ", ".join(k.replace("_", "-") for k in _SWEPT))
        try:
            axes.append([(field, _SWEPT[field].parse(v.strip())) for v in values.split(",") if v.strip()])
        except ValueError as e:
            raise ConfigError(f"--sweep {s!r}: {e}") from None
    out = [base.replace(**dict(combo)) for combo in itertools.product(*axes)] if axes else (
        [base] if base.changes() else [])
    for sc in out:
        sc.validate()
    return out


def context(g: Graph, traces: TraceSet, coll: pd.DataFrame | None, offsets: dict[int, float] | None,
            comm: dict[int, np.ndarray]) -> Context:
    """The :class:`Context` of graph ``g`` (built from ``traces`` and the ``collectives`` table ``coll``)."""
    m = simulate.matched_collectives(coll, offsets)
    if len(m):
        info = coll[["rank", "start_ns", "end_ns", "step", "phase", "coll_name", "pg_name", "dtype", "bytes",
                     "launch_ts_ns"]].drop_duplicates(["rank", "start_ns", "end_ns"])
        m = m.merge(info, on=["rank", "start_ns", "end_ns"], how="left").reset_index(drop=True)
        m["node"] = [_coll_node(g, int(r), int(s), int(e)) for r, s, e in zip(m["rank"], m["start_ns"], m["end_ns"])]
        m = m[m["node"] >= 0].reset_index(drop=True)
    man = traces.manifest
    try:
        lay, why = ddp.layout(man), None
    except ScenarioError as e:
        lay, why = None, str(e)
    run = man.run if man is not None else None
    applied = (run.parallel_applied or {}) if run is not None else {}
    ctx = Context(traces, m, comm, network.AlphaBeta(0.0, float("nan"), 0), lay, why,
                  run.backend if run is not None else None,
                  int(run.world_size) if run is not None and run.world_size else len(traces), applied.get("comm_hook"))
    ctx.coll_bytes = network.collective_bytes(ctx.colls, ctx.layout)
    ctx.fp32 = _fp32_allreduce(ctx.colls) if len(m) else np.zeros(0, dtype=bool)
    ctx.fit = network.fit(ctx.coll_bytes, m["transfer_ns"].to_numpy(dtype=float) if len(m) else np.zeros(0))
    return ctx


def _coll_node(g: Graph, rank: int, start_ns: int, end_ns: int) -> int:
    """The node of the rank's matched collective recorded at ``[start_ns, end_ns]``, -1 where the graph has none."""
    info = g.find_rank(rank)
    return info.coll.get((start_ns, end_ns), (-1, -1))[1] if info is not None else -1


def _fp32_allreduce(colls: pd.DataFrame) -> np.ndarray:
    """Per row of ``colls``: an allreduce of fp32 data (or of unknown dtype)."""
    dt = colls["dtype"].astype(str).str.lower()
    return (colls["coll_name"].astype(str).str.contains("allreduce")
            & (dt.isin(network.FP32) | colls["dtype"].isna())).to_numpy()


def apply(base: Graph, ctx: Context, sc: Scenario) -> tuple[Graph, dict[int, np.ndarray], list[str]]:
    """The graph of scenario ``sc`` (module doc), the communication mask per rank and notes."""
    ed = Edits(g=base.copy(), comm=dict(ctx.comm), sc=sc, replaced=np.zeros(len(ctx.colls), dtype=bool))
    for phase in Phase:
        for family in FAMILIES:
            edit = family.edits.get(phase)
            if edit is not None and family.applies(ed.sc):
                edit(ctx, ed)
    if ed.retime:
        ed.notes += _retime(ed.g, ctx, ed.comm, ed.sc.name)
    return ed.g, ed.comm, ed.notes


def _retime(g: Graph, ctx: Context, comm: dict[int, np.ndarray], name: str) -> list[str]:
    """The compute kernels of scenario graph ``g`` re-timed for their overlap with communication in it
    (:func:`tracekit.replay.contention.readjust`: one more evaluation); a note when any moved."""
    if not ctx.compute or not any(m.any() for m in ctx.comm.values()):
        return []
    changed, modelled = contention.readjust(g, ctx, comm, simulate.evaluate(g))
    if not changed:
        return []
    return [f"{name}: {changed} of {modelled} compute kernels that ran beside communication in the recorded window "
            "re-timed for their overlap with it in this scenario (the slowdown measured in the trace)"]


def _summary(steps: pd.DataFrame) -> dict[str, float]:
    per_step = steps.groupby("step")["step_us"].max()
    out = {"predicted_step_us": float(per_step.mean()) if len(per_step) else float("nan")}
    out.update({k: float(steps[k].mean()) for k in MOVED})
    return out


def evaluate(base: Graph, ctx: Context, scenarios: list[Scenario], ref: pd.DataFrame | None = None
             ) -> tuple[list[dict[str, Any]], pd.DataFrame, list[str]]:
    """(rows of the ``scenarios`` key, per-rank table ``scenario_ranks``, notes). Scenarios that cannot
    apply become notes; :class:`ScenarioError` when none can. ``ref``: ``base``'s step figures
    (:func:`tracekit.replay.figures.step_figures`), when the caller has them."""
    if ref is None:
        ref = figures.step_figures(base, *simulate.evaluate(base), ctx.comm)
    b = _summary(ref)
    rows, ranks, notes, failed = [], [], [], []
    # each scenario edits its own copy of the graph: independent, so spread over the CPUs on large graphs
    workers = usable_cpus() if len(base.dur) * len(scenarios) >= PARALLEL_MIN_NODES else 1
    done = map_forked(lambda sc: _one(base, ctx, sc), scenarios, workers)
    for sc, (why, steps, more) in zip(scenarios, done):
        if steps is None:
            failed.append(why)
            continue
        s = _summary(steps)
        d = s["predicted_step_us"] - b["predicted_step_us"]
        row = {"name": sc.name, "changes": sc.changes(), "predicted_step_us": s["predicted_step_us"],
               "delta_us": d, "delta_pct": 100.0 * d / b["predicted_step_us"] if b["predicted_step_us"] else None}
        for k in MOVED:
            row[k], row[f"delta_{k}"] = s[k], s[k] - b[k]
        rows.append(row)
        per = steps.groupby("rank")[["step_us", *MOVED]].mean().reset_index()
        ranks.append(per.rename(columns={"step_us": "predicted_step_us"}).assign(scenario=sc.name))
        notes += more
    if scenarios and not rows:
        raise ScenarioError("; ".join(failed))
    table = pd.concat(ranks, ignore_index=True) if ranks else pd.DataFrame(
        columns=["scenario", "rank", "predicted_step_us", *MOVED])
    cols = ["scenario", "rank", "predicted_step_us", *MOVED]
    return rows, table[cols], failed + notes


def _one(base: Graph, ctx: Context, sc: Scenario) -> tuple[str | None, pd.DataFrame | None, list[str]]:
    """(why it cannot apply, or None; the step figures of ``sc``'s graph; its notes, the evaluation's among
    them): one scenario, in whichever process :func:`evaluate` gave it to."""
    try:
        g, comm, more = apply(base, ctx, sc)
    except ScenarioError as e:
        return f"scenario {sc.name} cannot be predicted: {str(e).removeprefix(sc.name + ': ')}", None, []
    steps = figures.step_figures(g, *simulate.evaluate(g), comm)
    return None, steps, list(dict.fromkeys(more + [f"{sc.name}: {n}" for n in g.notes]))  # the evaluation's (cycles)

