"""Compute kernels slowed by the communication kernels that ran beside them.

On one GPU, an NCCL kernel takes SMs and memory bandwidth from the compute kernels it overlaps: on
2 x H200 the same GEMM took 25-31 % longer while an allreduce ran (docs/whatif.md). The replay keeps
every kernel's measured duration, so a scenario that removes the communication would keep that slowdown.

From the trace, per rank and compute kernel name: the median duration of its instances that overlapped
no communication kernel of the rank (*alone*) and of those that overlapped one (*beside*), each from at
least :data:`MIN_INSTANCES` instances; the kernel's slowdown is beside / alone where that exceeds 1 (else
1: no slowdown shown). ``--world-size 1`` (no peer, no collective) gives each instance that ran beside
communication its duration divided by its kernel's slowdown. Not modelled: the slowdown's change under
scenarios that keep the collectives but move or shorten them (bucket caps, the comm hook, bandwidth,
more ranks), and kernels that only ever ran beside communication (no alone duration to compare with).
"""

from __future__ import annotations

import numpy as np

from tracekit.replay.graph import Graph
from tracekit.traces.traceset import TraceSet

MIN_INSTANCES = 2


def beside_comm(start: np.ndarray, end: np.ndarray, comm: np.ndarray) -> np.ndarray:
    """Per GPU operation: did it overlap (by more than an instant) any operation flagged in ``comm``?"""
    cs, ce = start[comm], end[comm]
    order = np.argsort(cs, kind="stable")
    cs, ce = cs[order], np.maximum.accumulate(ce[order]) if ce.size else ce
    # the last communication op starting before this op ends; its running max end tells if any is still on
    k = np.searchsorted(cs, end, side="left") - 1
    hit = (k >= 0) & (ce[np.maximum(k, 0)] > start) if cs.size else np.zeros(start.size, dtype=bool)
    return hit & ~comm


def slowdowns(names: np.ndarray, dur: np.ndarray, beside: np.ndarray) -> dict[int, float]:
    """Kernel name code -> slowdown (> 1) beside communication (module doc)."""
    out: dict[int, float] = {}
    for code in np.unique(names[beside]).tolist():
        mine = names == code
        a, b = dur[mine & ~beside], dur[mine & beside]
        if a.size >= MIN_INSTANCES and b.size >= MIN_INSTANCES and np.median(a) > 0:
            s = float(np.median(b) / np.median(a))
            if s > 1.0:
                out[code] = s
    return out


def relieve(g: Graph, traces: TraceSet, comm: dict[int, np.ndarray]) -> tuple[int, int]:
    """Give every compute kernel that ran beside communication its alone duration, in place (``g`` is a
    scenario's copy). Returns (kernels shortened, kernels that ran beside communication)."""
    done = total = 0
    orig_start, orig_end = g.orig_arrays()
    for rt in traces:
        mask = comm.get(rt.rank)
        info = g.ranks.get(rt.rank)
        if mask is None or info is None or info.get("gpu") is None or not mask.any():
            continue
        nodes = np.asarray(info["gpu_node"])[:mask.size]
        start, end = orig_start[nodes], orig_end[nodes]
        names = rt.gpu_column("name")[:mask.size]
        beside = beside_comm(start, end, mask)
        slow = slowdowns(names, end - start, beside)
        total += int(beside.sum())
        for i in np.flatnonzero(beside).tolist():
            s = slow.get(int(names[i]))
            if s is not None:
                v = int(nodes[i])
                g.dur[v] = int(round(g.dur[v] / s))
                done += 1
    return done, total
