"""``--world-size N`` from a 1-rank NCCL run: DDP's allreduces given the transfer they would have over N GPUs.

DDP on one rank is real DDP: its reducer buckets the gradients and calls allreduce for every bucket
(a ``record_param_comms`` op with ``Group size`` 1 in the trace), but NCCL launches no kernel for a
group of one, so the run has no collective to scale (:mod:`tracekit.replay.network` scales recorded
ones). Here each allreduce call of the trace gets a new NCCL kernel:

- it starts once the call has returned (a start edge from the CPU segment ending at the op's end), after
  the previous new kernel (one process group runs its collectives in order on one NCCL stream) and after
  the last GPU operation launched before the call started (ProcessGroupNCCL makes its stream wait for the
  current stream at the call);
- it lasts the transfer of its bytes (``In msg nelems`` x the dtype's size) over N ranks by the default
  alpha-beta of the GPUs' interconnect (:data:`NVLINK4_ALLREDUCE`, measured with NCCL, not on this run:
  the run has no transfer to fit), or of the bus bandwidth given (``busbw_gbps``, NVLink 4's latency), its
  bandwidth term divided by ``bandwidth_x``;
- the first GPU operation launched after a step's last call waits for the step's new kernels (DDP's
  finalize makes the current stream wait for the allreduces before the optimizer reads the gradients).

**Compute beside communication.** An NCCL kernel takes SMs and memory bandwidth from the compute kernels it
overlaps (on 2 x H200 the same GEMM ran 25-31 % longer beside an allreduce: docs/whatif.md). The graph with
the new kernels is evaluated once; each GPU operation of the rank gets its duration times
``1 + (CONTENTION_SLOWDOWN - 1) x f``, ``f`` the share of it that overlapped a new kernel, and the caller
evaluates the graph again (one round: the overlaps of the second evaluation are not fed back).

Every rank is taken to be this one: same compute, no skew between ranks, so no rank waits for a late peer
(CPU-bound steps: each rank's own jitter makes every collective wait for the later rank, which this does
not predict). Not modelled either: the CPU work of enqueueing a real NCCL kernel (a group of one returns
early; :mod:`tracekit.replay.enqueue` sheds it from a multi-rank run, 0-17 µs a call in the committed runs'
predictions: too uncertain to add as a constant). Both make the real change larger than predicted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tracekit.errors import ScenarioError
from tracekit.replay import contention, network, simulate
from tracekit.replay.graph import GPU_OP, Graph, Resource
from tracekit.traces import schema
from tracekit.traces.traceset import assign_steps

if TYPE_CHECKING:
    from tracekit.replay.family import Context

#: NCCL allreduce over NVLink 4 through NVSwitch (H100 / H200 SXM), NCCL 2.28 with NVLS off, as
#: ``{ranks: (alpha ns, bus bandwidth GB/s)}``: least squares ``t = alpha + bytes x 2(n-1)/n / busbw`` over
#: 1 to 256 MiB, CUDA-event medians of 20 calls (benchmarks/gpu/nccl_busbw.py on a 4 x H200 host,
#: benchmarks/results/nccl_busbw_h200x4.jsonl). More ranks than measured take the largest.
NVLINK4_ALLREDUCE: dict[int, tuple[float, float]] = {2: (68_600.0, 305.0), 4: (104_300.0, 337.7)}
#: GPU names (run.json ``hardware.ranks[].gpu_name``) the default applies to
NVLINK4_GPUS = ("H100", "H200")
#: a compute kernel's duration beside an allreduce over its duration alone: the middle of the 25-31 % a GEMM of
#: the GPU-bound MLP ran longer beside one on 2 x H200 (docs/whatif.md), set before any 1-rank run
#: was predicted with it
CONTENTION_SLOWDOWN = 1.28


def link(gpu_name: str | None, n: int, busbw: float | None = None) -> tuple[float, float, str]:
    """(alpha ns, bus bandwidth GB/s, what they are) for an allreduce over ``n`` GPUs named ``gpu_name``;
    ``busbw``: the bus bandwidth given (``--busbw-gbps``; the latency stays NVLink 4's). :class:`ScenarioError`
    where neither is known."""
    k = max([m for m in NVLINK4_ALLREDUCE if m <= n] or [min(NVLINK4_ALLREDUCE)])
    if busbw:
        alpha = NVLINK4_ALLREDUCE[k][0]
        return alpha, busbw, (f"bus bandwidth {busbw:g} GB/s as given, the latency of NVLink 4 measured on {k} x H200 "
                              f"(alpha {alpha / 1e3:.1f} us)")
    if not gpu_name or not any(k in gpu_name for k in NVLINK4_GPUS):
        raise ScenarioError(f"--world-size {n}: a 1-rank run has no transfer to scale, and the allreduce speed of "
                            f"{gpu_name or 'its GPU (not in run.json)'} is not known here (measured: "
                            f"{', '.join(NVLINK4_GPUS)} over NVLink; give --busbw-gbps)")
    alpha, busbw = NVLINK4_ALLREDUCE[k]
    return alpha, busbw, f"NVLink 4, {k} x H200 measured (alpha {alpha / 1e3:.1f} us, bus bandwidth {busbw:.0f} GB/s)"


def allreduce_calls(ctx: Context) -> dict[str, np.ndarray]:
    """The 1-rank trace's allreduce calls (``record_param_comms``, collective ``allreduce``) by end:
    ``ts_ns``, ``end_ns``, ``tid``, ``bytes``, ``step`` (the ProfilerStep its end falls in, -1 for none)."""
    (rt,) = list(ctx.traces)
    ev = rt.events
    rows = ev[(ev["name"] == "record_param_comms") & (ev["coll_name"].astype(str) == "allreduce")
              & (ev["kind"] == schema.CPU_OP)].sort_values("end_ns")
    size = rows["dtype"].astype(str).map(schema.DTYPE_BYTES).astype(float).to_numpy()
    end = rows["end_ns"].to_numpy(dtype=np.int64)
    return {"ts_ns": rows["ts_ns"].to_numpy(dtype=np.int64), "end_ns": end, "tid": rows["tid"].to_numpy(dtype=np.int64),
            "bytes": rows["in_nelems"].to_numpy(dtype=float) * size, "step": assign_steps(rt.step_arrays(), end)}


def add_allreduces(g: Graph, ctx: Context, n: int, bandwidth_x: float | None, name: str, *,
                   busbw: float | None = None) -> tuple[dict[int, list[int]], list[str]]:
    """Add the new NCCL kernels of a 1-rank run grown to ``n`` ranks to ``g`` (module doc); returns the new
    nodes per step and notes. :class:`ScenarioError` where it cannot apply."""
    if ctx.backend != "nccl" or not ctx.traces.has_gpu_activity:
        raise ScenarioError(f"--world-size {n}: a 1-rank {ctx.backend or 'CPU'} run has no transfer to scale, and "
                            "only NCCL over NVLink has a default here")
    rank = next(iter(ctx.traces)).rank
    hosts = ctx.traces.manifest.hardware.ranks if ctx.traces.manifest and ctx.traces.manifest.hardware else []
    alpha, busbw, what = link(hosts[0].gpu_name if hosts else None, n, busbw)
    calls = allreduce_calls(ctx)
    ok = np.isfinite(calls["bytes"]) & (calls["bytes"] > 0) & (calls["step"] >= 0)
    if not ok.any():
        raise ScenarioError(f"--world-size {n}: no allreduce call of known size in the trace (record_param_comms)")
    info = g.rank_nodes(rank)
    gpu, gpu_node, threads = info.gpu, np.asarray(info.gpu_node), info.threads
    valid = ~np.asarray(gpu["pre_window"], dtype=bool)
    lts = np.asarray(gpu["launch_ts_ns"])
    order = np.flatnonzero(valid)[np.argsort(lts[valid], kind="stable")]
    lts_sorted = lts[order]
    per_step: dict[int, list[int]] = {}
    stream = Resource(1)  # the new kernels run on one NCCL stream, one after the other
    keys = ("ts_ns", "end_ns", "tid", "bytes", "step")
    for ts, end, tid, nbytes, step in zip(*(calls[k][ok].tolist() for k in keys)):
        th = threads.get(tid)
        seg = th.seg_ending_at(end) if th is not None else None
        sp = [(seg, 0)] if seg is not None else []
        sp += stream.edge(0)
        k = int(np.searchsorted(lts_sorted, ts, side="right")) - 1
        if k >= 0:
            sp.append((int(gpu_node[order[k]]), 0))
        t = alpha + nbytes * network.ring(n) / (busbw * (bandwidth_x or 1.0))
        node = g.add(int(round(t)), GPU_OP, rank, end, end, sp)
        stream.queue(node)
        per_step.setdefault(step, []).append(node)
    for step, nodes in per_step.items():
        last = g.orig_start[nodes[-1]]
        k = int(np.searchsorted(lts_sorted, last, side="right"))
        if k < lts_sorted.size:  # DDP's finalize: the stream waits for the allreduces
            v = int(gpu_node[order[k]])
            g.add_start(v, [(c, 0) for c in nodes])
    added = sum(len(v) for v in per_step.values())
    slowed = slow_beside(g, [(gpu_node[valid], [v for nodes in per_step.values() for v in nodes])])
    notes = [f"{name}: {added} allreduces of the 1-rank trace given their transfer over {n} ranks ({what}; not "
             "measured on this run), every rank taken to be this one "
             f"(no skew between ranks); {slowed} GPU operations beside them {CONTENTION_SLOWDOWN:.2f}x slower for "
             "the time they overlap (measured on 2 x H200, not on this run)"]
    return per_step, notes


def slow_beside(g: Graph, groups: list[tuple[np.ndarray, list[int]]]) -> int:
    """For each group ``(ops, new)``: scale the duration of each GPU operation of ``ops`` by the share of it that
    overlapped the ``new`` kernels (:func:`tracekit.replay.contention.share_beside`) in one evaluation of ``g``, in
    place (module doc); returns how many were."""
    groups = [(ops, new) for ops, new in groups if new and ops.size]
    if not groups:
        return 0
    start, end = simulate.evaluate(g)
    done = 0
    for ops, new in groups:
        frac = contention.share_beside(start, end, ops, new)
        hit = np.flatnonzero(frac > 0)
        for i in hit.tolist():
            v = int(ops[i])
            g.dur[v] = int(round(g.dur[v] * (1.0 + (CONTENTION_SLOWDOWN - 1.0) * frac[i])))
        done += int(hit.size)
    return done
