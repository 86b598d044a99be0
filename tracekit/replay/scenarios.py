"""What-if scenarios: edit the replay graph of the predicted (profiler-free) step, evaluate it again.

A :class:`Scenario` is a set of changes applied together to a copy of the graph
(:func:`apply`), in this order:

1. ``bucket_cap_mb`` / ``first_bucket_cap_mb``: DDP's gradients regrouped into other buckets
   (:mod:`tracekit.replay.buckets`);
2. ``bandwidth_x`` or ``busbw_gbps``, ``world_size``, ``comm_hook``: every collective's transfer scaled
   (:mod:`tracekit.replay.network`; the regrouped buckets get the same factors); a 1-rank run grown to
   more ranks gets the allreduces it issued (:mod:`tracekit.replay.grow`); the hook's cast kernels
   added (:mod:`tracekit.replay.hook`), and with one rank the compute that ran beside communication
   given its duration without it (:mod:`tracekit.replay.contention`);
3. ``no_graph_breaks``: the CPU work between compiled graphs at each graph break removed
   (:mod:`tracekit.replay.breaks`);
4. every scenario but one rank: the compute kernels re-timed for how much of them overlaps
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
from dataclasses import fields, replace
from typing import Any

import numpy as np
import pandas as pd

from tracekit.cpus import usable_cpus
from tracekit.errors import ConfigError, ScenarioError
from tracekit.replay import (breaks, buckets, contention, ddp, enqueue, figures, grow, hook as hook_mod, network,
                             simulate)
from tracekit.replay.graph import Graph
from tracekit.replay.scenario_spec import Context, Scenario
from tracekit.runner.per_rank import map_forked
from tracekit.traces.traceset import TraceSet

__all__ = ["Context", "Scenario", "apply", "context", "evaluate", "expand"]

MOVED = ("compute_us", "exposed_comm_us", "idle_us", "wait_us")
#: scenarios are evaluated in forked processes from this many graph nodes over all of them (below, forking
#: costs more than it saves: a scenario of a 900k-node graph takes ~0.8 s, of a 10k-node one ~10 ms)
PARALLEL_MIN_NODES = 500_000


_TYPES = {"bucket_cap_mb": float, "first_bucket_cap_mb": float, "bandwidth_x": float, "world_size": int,
          "comm_hook": str, "busbw_gbps": float}


def expand(base: Scenario, sweeps: list[str] | tuple[str, ...] = ()) -> list[Scenario]:
    """``base`` alone, or one scenario per combination of the sweeps' values (``bucket-cap-mb=1,5,25``)
    on top of ``base``; an empty ``base`` without sweeps gives no scenario (the baseline only)."""
    axes = []
    for s in sweeps:
        key, _, values = s.partition("=")
        field = key.strip().lstrip("-").replace("-", "_")
        if field not in _TYPES or not values.strip():
            raise ConfigError(f"--sweep {s!r}: expected OPTION=V1,V2,... with OPTION one of "
                              + ", ".join(k.replace("_", "-") for k in _TYPES))
        try:
            axes.append([(field, _TYPES[field](v.strip())) for v in values.split(",") if v.strip()])
        except ValueError as e:
            raise ConfigError(f"--sweep {s!r}: {e}") from None
    out = [replace(base, **dict(combo)) for combo in itertools.product(*axes)] if axes else (
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
        m["node"] = [g.ranks.get(int(r), {}).get("coll", {}).get((int(s), int(e)), (-1, -1))[1]
                     for r, s, e in zip(m["rank"], m["start_ns"], m["end_ns"])]
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
    ctx.fit = network.fit(collective_bytes(ctx), m["transfer_ns"].to_numpy(dtype=float) if len(m) else np.zeros(0))
    return ctx


def collective_bytes(ctx: Context) -> np.ndarray:
    """Bytes per row of ``ctx.colls``: the trace's, else (gloo) the DDP bucket's size from run.json."""
    if not len(ctx.colls):
        return np.zeros(0)
    b = ctx.colls["bytes"].to_numpy(dtype=float).copy()
    if ctx.layout is not None and not np.isfinite(b).all():
        rows = ddp.bucket_rows(ctx.colls, len(ctx.layout.sizes))
        sizes = np.asarray(ctx.layout.sizes, dtype=float)[rows["bucket"].to_numpy(dtype=int)]
        idx = rows.index.to_numpy()
        b[idx] = np.where(np.isfinite(b[idx]), b[idx], sizes)
    return b


def clone(g: Graph) -> Graph:
    """A copy a scenario may edit: node lists copied (an edit replaces a node's edge list, never mutates it)."""
    return Graph(dur=list(g.dur), sp=list(g.sp), ep=list(g.ep), kind=list(g.kind), rank=list(g.rank),
                 orig_start=list(g.orig_start), orig_end=list(g.orig_end),
                 ranks={r: dict(v) for r, v in g.ranks.items()}, notes=[], dur_rec=list(g.dur_rec),
                 _arrays=dict(g._arrays))


def _fp32_allreduce(colls: pd.DataFrame) -> np.ndarray:
    dt = colls["dtype"].astype(str).str.lower()
    return (colls["coll_name"].astype(str).str.contains("allreduce")
            & (dt.isin(network.FP32) | colls["dtype"].isna())).to_numpy()


def apply(base: Graph, ctx: Context, sc: Scenario) -> tuple[Graph, dict[int, np.ndarray], list[str]]:
    """The graph of scenario ``sc`` (module doc), the communication mask per rank and notes."""
    g, comm, notes = clone(base), dict(ctx.comm), []
    if sc.world_size is not None and sc.world_size == ctx.world_size:  # the run's own: a sweep's reference row
        notes.append(f"{sc.name}: world-size={sc.world_size} is the run's own world size: nothing to change there")
        sc = replace(sc, world_size=None)
    if sc.world_size and sc.world_size > 1 and ctx.world_size == 1 and not len(ctx.colls):
        return _grown(g, ctx, sc)
    bw = _bandwidth_factor(ctx, sc)
    wf = network.world_factor(sc.world_size, ctx.world_size)
    hook = network.hook_factor(sc.comm_hook, ctx.backend, ctx.applied_hook)
    if (sc.bandwidth_x or sc.busbw_gbps or sc.world_size or sc.comm_hook) and not len(ctx.colls):
        raise ScenarioError(f"{sc.name}: no collective matched across ranks in the trace to scale")
    fp32 = _fp32_allreduce(ctx.colls) if len(ctx.colls) else np.zeros(0, dtype=bool)
    if hook != 1.0 and not fp32.any():
        raise ScenarioError(f"--comm-hook {sc.comm_hook}: no fp32 allreduce in the trace: nothing to compress")
    replaced = np.zeros(len(ctx.colls), dtype=bool)
    added: list[tuple[int, int, int, float]] = []  # the regrouped buckets' collectives, when the hook compresses them
    if sc.bucket_cap_mb is not None or sc.first_bucket_cap_mb is not None:
        grads_fp32 = len(ctx.colls) and fp32[(ctx.colls["phase"] == "backward").to_numpy()].all()  # grads' dtype
        replaced, more, new = buckets.regroup(g, ctx, comm, sc, bw * wf * (hook if grads_fp32 else 1.0),
                                              drop=sc.world_size == 1)
        added = new if grads_fp32 and hook != 1.0 else []
        notes += more
    if sc.busbw_gbps:
        notes.append(f"{sc.name}: the run's collectives fit a bus bandwidth of "
                     f"{network.ring(ctx.world_size) / ctx.fit.ns_per_byte:.1f} GB/s ({ctx.world_size} ranks)")
    if len(ctx.colls) and (bw != 1.0 or wf != 1.0 or hook != 1.0):
        f = np.full(len(ctx.colls), bw * wf)
        if hook != 1.0:
            f = np.where(fp32, f * hook, f)
        keep = ~replaced
        network.scale(g, ctx.colls["node"].to_numpy()[keep], f[keep], ctx.fit.alpha_ns, drop=sc.world_size == 1)
        if ctx.fit.note:
            notes.append(f"{sc.name}: alpha-beta fit: {ctx.fit.note}")
        if sc.comm_hook:
            notes += _casts(g, ctx, keep & fp32, added, sc.name)
    if sc.world_size == 1:
        if ctx.traces.has_gpu_activity:
            notes += enqueue.shed(g, ctx, sc.name)
        done, beside = contention.relieve(g, ctx.traces, ctx.comm)
        if beside:
            notes.append(f"{sc.name}: {done} of {beside} compute kernels that ran beside communication get their "
                         "duration without it (the slowdown of the same kernel measured in the trace)")
    if sc.no_graph_breaks:
        notes += breaks.remove(g, ctx)
    if sc.world_size != 1:
        notes += _retime(g, ctx, comm, sc.name)
    return g, comm, notes


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


def _bandwidth_factor(ctx: Context, sc: Scenario) -> float:
    """The factor on every collective's bandwidth term for ``sc``'s network: ``1 / bandwidth_x``, or the run's
    fitted bus bandwidth over ``busbw_gbps`` (:mod:`tracekit.replay.network`), else 1."""
    if sc.bandwidth_x:
        return 1.0 / sc.bandwidth_x
    if not sc.busbw_gbps:
        return 1.0
    if ctx.world_size < 2 or not np.isfinite(ctx.fit.ns_per_byte) or ctx.fit.ns_per_byte <= 0:
        raise ScenarioError(f"--busbw-gbps {sc.busbw_gbps:g}: no collective of known size to fit the run's own bus "
                            "bandwidth to")
    return network.ring(ctx.world_size) / ctx.fit.ns_per_byte / sc.busbw_gbps


def _grown(g: Graph, ctx: Context, sc: Scenario) -> tuple[Graph, dict[int, np.ndarray], list[str]]:
    """A 1-rank run grown to ``sc.world_size`` ranks (:mod:`tracekit.replay.grow`); the other changes of ``sc``
    need recorded collectives, except ``bandwidth_x`` and ``no_graph_breaks``."""
    if sc.bucket_cap_mb is not None or sc.first_bucket_cap_mb is not None or sc.comm_hook:
        raise ScenarioError(f"{sc.name}: a 1-rank run grown to {sc.world_size} ranks takes no bucket or hook "
                            "change with it (its buckets have no recorded transfer)")
    comm = dict(ctx.comm)
    per_step, notes = grow.add_allreduces(g, ctx, int(sc.world_size), sc.bandwidth_x, sc.name, busbw=sc.busbw_gbps)
    rank = next(iter(ctx.traces)).rank
    for step, nodes in per_step.items():
        buckets.extend_comm(g, comm, rank, step, nodes)
    if sc.no_graph_breaks:
        notes += breaks.remove(g, ctx)
    return g, comm, notes


def _casts(g: Graph, ctx: Context, rows: np.ndarray, added: list[tuple[int, int, int, float]],
           name: str) -> list[str]:
    """The comm hook's compress/decompress kernels and CPU work (:mod:`tracekit.replay.hook`) on the fp32
    allreduces ``rows`` of ``ctx.colls`` and on the regrouped buckets' new collectives ``added`` ((arrive node,
    collective node, rank, fp32 bytes): :func:`tracekit.replay.buckets.regroup`), and what the notes say."""
    c, rate = ctx.colls[rows], hook_mod.copy_throughput(ctx.traces)
    nodes = np.concatenate([c["node"].to_numpy(dtype=np.int64), np.array([a[1] for a in added], dtype=np.int64)])
    ranks = np.concatenate([c["rank"].to_numpy(dtype=np.int64), np.array([a[2] for a in added], dtype=np.int64)])
    nbytes = np.concatenate([collective_bytes(ctx)[rows], np.array([a[3] for a in added], dtype=float)])
    arrives = {a[1]: a[0] for a in added}
    done = hook_mod.add_casts(g, ctx.traces, nodes, ranks, nbytes, rate, arrives)
    cpu = hook_mod.add_cpu_work(g, nodes, ranks, hook_mod.HOOK_CPU_NS, arrives)
    notes = [f"{name}: the hook's CPU work, {hook_mod.HOOK_CPU_NS / 1e3:.1f} us per bucket and step (fitted on "
             f"2 x H200, not measured on this run: docs/whatif.md), added before {cpu} of {len(nodes)} allreduce "
             "launches"]
    if done < len(nodes):
        notes.append(f"{name}: the hook's compress/decompress kernels are modelled on {done} of {len(nodes)} "
                     "allreduces (the others' ranks have no device copy of >= 1 MiB in the trace to measure memory "
                     "speed by)")
    if rate:
        notes.append(f"{name}: compress/decompress kernels at the trace's device-copy speed "
                     f"({np.median(list(rate.values())):.0f} GB/s read + written)")
    return notes


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


def fields_of() -> list[str]:
    """The option names a scenario takes (for the CLI's and the library's keyword arguments)."""
    return [f.name for f in fields(Scenario)]
