"""``--bandwidth-x`` / ``--busbw-gbps``, ``--world-size``, ``--comm-hook``: every collective's transfer scaled
(:mod:`tracekit.replay.network`; the regrouped buckets of :mod:`.buckets` get the same factors); a 1-rank run
grown to more ranks gets the allreduces it issued (:mod:`tracekit.replay.grow`); the hook's cast kernels added
(:mod:`tracekit.replay.hook`); a group of one rank sheds what it does not do (:mod:`tracekit.replay.enqueue`,
:func:`tracekit.replay.contention.relieve`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tracekit.errors import ScenarioError
from tracekit.replay import buckets, contention, enqueue, grow, network
from tracekit.replay import hook as hook_mod
from tracekit.replay.family import Edits, Family, Option, Phase

if TYPE_CHECKING:
    from tracekit.replay.family import Context, ScenarioValues


def plan(ctx: Context, ed: Edits) -> None:
    """The factors the later phases share, and the checks, before any edit; a 1-rank run without collectives
    grown to more ranks gets its allreduces here (no other change of this family applies to it then)."""
    sc = ed.sc
    if sc.world_size is not None and sc.world_size == ctx.world_size:  # the run's own: a sweep's reference row
        ed.notes.append(f"{sc.name}: world-size={sc.world_size} is the run's own world size: nothing to change there")
        ed.sc = sc = sc.replace(world_size=None)
    if sc.world_size and sc.world_size > 1 and ctx.world_size == 1 and not len(ctx.colls):
        _grow(ctx, ed)
        return
    ed.bandwidth_factor = _bandwidth_factor(ctx, sc)
    ed.world_factor = network.world_factor(sc.world_size, ctx.world_size)
    ed.hook_factor = network.hook_factor(sc.comm_hook, ctx.backend, ctx.applied_hook)
    if (sc.bandwidth_x or sc.busbw_gbps or sc.world_size or sc.comm_hook) and not len(ctx.colls):
        raise ScenarioError(f"{sc.name}: no collective matched across ranks in the trace to scale")
    if ed.hook_factor != 1.0 and not ctx.fp32.any():
        raise ScenarioError(f"--comm-hook {sc.comm_hook}: no fp32 allreduce in the trace: nothing to compress")


def scale(ctx: Context, ed: Edits) -> None:
    """Scale the transfer of every collective the regrouping did not replace; the hook's casts."""
    sc, g = ed.sc, ed.g
    if ed.grown:
        return
    if sc.busbw_gbps:
        ed.notes.append(f"{sc.name}: the run's collectives fit a bus bandwidth of "
                        f"{network.ring(ctx.world_size) / ctx.fit.ns_per_byte:.1f} GB/s ({ctx.world_size} ranks)")
    if not len(ctx.colls) or (ed.bandwidth_factor == 1.0 and ed.world_factor == 1.0 and ed.hook_factor == 1.0):
        return
    f = np.full(len(ctx.colls), ed.network_factor)
    if ed.hook_factor != 1.0:
        f = np.where(ctx.fp32, f * ed.hook_factor, f)
    keep = ~ed.replaced
    network.scale(g, ctx.colls["node"].to_numpy()[keep], f[keep], ctx.fit.alpha_ns, drop=sc.world_size == 1)
    if ctx.fit.note:
        ed.notes.append(f"{sc.name}: alpha-beta fit: {ctx.fit.note}")
    if sc.comm_hook:
        ed.notes += _casts(ed, ctx, keep & ctx.fp32)


def one_rank(ctx: Context, ed: Edits) -> None:
    """A group of one rank: no collective to enqueue, no communication to slow compute (and no re-timing)."""
    sc = ed.sc
    if sc.world_size != 1:
        return
    ed.retime = False
    if ctx.traces.has_gpu_activity:
        ed.notes += enqueue.shed(ed.g, ctx, sc.name)
    done, beside = contention.relieve(ed.g, ctx.traces, ctx.comm)
    if beside:
        ed.notes.append(f"{sc.name}: {done} of {beside} compute kernels that ran beside communication get their "
                        "duration without it (the slowdown of the same kernel measured in the trace)")


def _bandwidth_factor(ctx: Context, sc: ScenarioValues) -> float:
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


def _grow(ctx: Context, ed: Edits) -> None:
    """A 1-rank run grown to ``sc.world_size`` ranks (:mod:`tracekit.replay.grow`); ``bandwidth_x`` and
    ``busbw_gbps`` apply to its new allreduces, the comm hook does not (each family refuses what it cannot do on
    a grown run: :attr:`Edits.grown`)."""
    sc = ed.sc
    if sc.comm_hook:
        raise ScenarioError(f"{sc.name}: a 1-rank run grown to {sc.world_size} ranks takes no hook change with it "
                            "(its allreduces have no recorded transfer)")
    per_step, notes = grow.add_allreduces(ed.g, ctx, int(sc.world_size), sc.bandwidth_x, sc.name,
                                          busbw=sc.busbw_gbps)
    rank = next(iter(ctx.traces)).rank
    for step, nodes in per_step.items():
        buckets.extend_comm(ed.g, ed.comm, rank, step, nodes)
    ed.notes += notes
    ed.grown, ed.retime = True, False


def _casts(ed: Edits, ctx: Context, rows: np.ndarray) -> list[str]:
    """The comm hook's compress/decompress kernels and CPU work (:mod:`tracekit.replay.hook`) on the fp32
    allreduces ``rows`` of ``ctx.colls`` and on the regrouped buckets' new collectives ``ed.added`` ((arrive node,
    collective node, rank, fp32 bytes): :func:`tracekit.replay.buckets.regroup`), and what the notes say."""
    g, name, added = ed.g, ed.sc.name, ed.added
    c, rate = ctx.colls[rows], hook_mod.copy_throughput(ctx.traces)
    nodes = np.concatenate([c["node"].to_numpy(dtype=np.int64), np.array([a[1] for a in added], dtype=np.int64)])
    ranks = np.concatenate([c["rank"].to_numpy(dtype=np.int64), np.array([a[2] for a in added], dtype=np.int64)])
    nbytes = np.concatenate([ctx.coll_bytes[rows], np.array([a[3] for a in added], dtype=float)])
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


def _check(sc: ScenarioValues) -> str | None:
    if sc.bandwidth_x is not None and sc.busbw_gbps is not None:
        return "--bandwidth-x and --busbw-gbps both set the network's bandwidth: give one"
    return None


SCENARIO = Family(
    name="network", position=30,
    options=(
        Option("comm_hook", str, "DDP compress hook: fp32 allreduces move half the bytes (NCCL runs only).",
               choices=("bf16", "fp16")),
        Option("bandwidth_x", float, "K times the network bandwidth (alpha-beta model fitted to the run's "
               "collectives).", metavar="K", above=0),
        Option("world_size", int, "N ranks: ring factor 2(N-1)/N on the bandwidth term, same per-rank compute; from "
               "a 1-rank NCCL run, DDP's allreduce calls get kernels of the NVLink default (or --busbw-gbps).",
               metavar="N", at_least=1),
        Option("busbw_gbps", float, "The network's allreduce bus bandwidth (nccl-tests' busbw, GB/s) instead of the "
               "run's fitted one; from a 1-rank run, instead of the NVLink default.", metavar="GBPS", above=0),
    ),
    needs="collectives matched across ranks (a 1-rank NCCL run: its allreduce calls, for --world-size)",
    edits={Phase.PLAN: plan, Phase.SCALE: scale, Phase.RANKS: one_rank},
    check=_check)
