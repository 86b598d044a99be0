"""Step figures of one timeline of the graph: the recorded window or a replay of it.

For each rank and ProfilerStep, per step (µs):

- ``step_us``: the step's length, the one definition of :mod:`tracekit.traces.steps` (the step every table
  of ``tracekit analyze`` measures) on this timeline's times: from the start of its CPU range
  ``ProfilerStep#N`` (or, if later, the end of the previous step; for the first step, the end of the GPU
  work launched before the window) to the end of that range or, if later, the end of the last GPU
  operation launched inside it;

with the GPU operations that *start* inside the step:

- ``compute_us`` / ``comm_us``: the union of compute / communication GPU time in the step
  (classes of :func:`tracekit.analyses.classify.classify_gpu`);
- ``exposed_comm_us``: communication time not covered by compute; ``overlap_pct`` =
  100 × (comm − exposed) / comm (NaN without communication);
- ``idle_us``: step length minus the union of all GPU time (GPU idle);
- ``wait_us``: per matched collective, the part of this rank's kernel (or CPU range)
  before the last rank arrived, bounded by the kernel's own length, summed.

The same function reads the recorded times (``Graph.orig_start``/``orig_end``, the
window as the profiler saw it) and a replay's, so window and prediction are measured
one way.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tracekit.analyses import intervals as iv
from tracekit.replay.graph import COLL, GPU_OP, Graph, RankNodes
from tracekit.traces import steps as step_defs

NS_PER_US = 1000.0
STEP_COLUMNS = ("rank", "step", "step_us", "compute_us", "comm_us", "exposed_comm_us", "overlap_pct", "idle_us",
                "wait_us")


def step_figures(g: Graph, start: np.ndarray, end: np.ndarray, comm_mask: dict[int, np.ndarray]) -> pd.DataFrame:
    """One row per rank and step (module doc). ``start``/``end``: node times of the timeline;
    ``comm_mask``: per rank, which of ``Graph.ranks[rank].gpu_node`` are communication. Every rank's steps are
    computed at once (:func:`_steps_of`)."""
    kind, rank_of = g.array("kind"), g.array("rank")
    wait = _waits(g, start, end, kind)
    linked = nodes_by_rank(np.flatnonzero(((kind == GPU_OP) | (kind == COLL)) & (wait >= 0)), rank_of)
    ranks = [(rank, info) for rank, info in sorted(g.ranks.items()) if info.steps]
    if not ranks:
        return pd.DataFrame(columns=list(STEP_COLUMNS))
    return pd.DataFrame(_steps_of(ranks, start, end, comm_mask, linked, wait))


def _windows(info: RankNodes, start: np.ndarray, end: np.ndarray, gpu_end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each step's [lo, hi) on this timeline: :func:`tracekit.traces.steps.step_windows`, the step every table
    measures, on the node times of the recorded window or of a replay."""
    steps = info.steps
    host_ts = np.array([int(start[a]) for _, a, _ in steps], dtype=np.int64)
    host_end = np.array([int(end[b]) for _, _, b in steps], dtype=np.int64)
    gpu = info.gpu
    if gpu is None:
        return step_defs.step_windows(np.array([s for s, _, _ in steps]), host_ts, host_end,
                                      np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), None)
    s = start[np.asarray(info.gpu_node)]
    stream = np.asarray(gpu["stream"]) if "stream" in gpu else np.zeros(s.size, dtype=np.int64)
    back = step_defs.backlog_end(np.asarray(gpu["pre_window"], dtype=bool), stream, s, gpu_end,
                                 int(host_ts[0]) if host_ts.size else None)
    return step_defs.step_windows(np.array([st for st, _, _ in steps]), host_ts, host_end, np.asarray(gpu["step"]),
                                  gpu_end, back)


def _in_windows(sorted_starts: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(index, window) of every item whose start lies in each window [lo, hi) (``sorted_starts`` ascending; an
    item in two windows appears twice)."""
    i0 = np.searchsorted(sorted_starts, lo, side="left")
    i1 = np.maximum(np.searchsorted(sorted_starts, hi, side="left"), i0)
    counts = i1 - i0
    seg = np.repeat(np.arange(lo.size), counts)
    idx = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts) + np.repeat(i0, counts)
    return idx, seg


def _steps_of(ranks: list[tuple[int, dict]], start: np.ndarray, end: np.ndarray, comm_mask: dict[int, np.ndarray],
              linked: dict[int, np.ndarray], wait: np.ndarray) -> dict[str, np.ndarray]:
    """The columns of :func:`step_figures`, every rank's steps at once (segmented interval sums).

    Each rank's times are moved into a stretch of their own (``shift``) so that one sort and one search find
    the GPU operations and collectives that start in each of its steps; the lengths are then taken relative to
    each step's start, so no sum mixes ranks or steps."""
    empty = np.zeros(0, dtype=np.int64)
    nodes = [info.gpu_node for _, info in ranks]
    comm = [comm_mask.get(r, np.zeros(n.size, dtype=bool)) for (r, _), n in zip(ranks, nodes)]
    colls = [linked.get(r, empty) for r, _ in ranks]
    wins = [_windows(info, start, end, end[n]) for (_, info), n in zip(ranks, nodes)]
    base = np.array([min([int(lo.min())] + [int(start[n].min()) for n in (nd, c) if n.size])
                     for (lo, _), nd, c in zip(wins, nodes, colls)], dtype=np.int64)
    top = np.array([max([int(hi.max())] + [int(end[n].max()) for n in (nd, c) if n.size])
                    for (_, hi), nd, c in zip(wins, nodes, colls)], dtype=np.int64)
    width = int((top - base).max()) + 1
    shift = np.arange(len(ranks), dtype=np.int64) * width - base
    n_steps = np.array([lo.size for lo, _ in wins])
    lo = np.concatenate([w[0] for w in wins])
    hi = np.concatenate([w[1] for w in wins])
    lo_s, hi_s = lo + np.repeat(shift, n_steps), hi + np.repeat(shift, n_steps)  # the steps, shifted
    sizes = np.array([n.size for n in nodes])
    all_nodes, op_shift = np.concatenate(nodes), np.repeat(shift, sizes)
    s_all, e_all, c_all = start[all_nodes] + op_shift, end[all_nodes] + op_shift, np.concatenate(comm)
    order = np.argsort(s_all, kind="stable")
    idx, seg = _in_windows(s_all[order], lo_s, hi_s)
    i = order[idx]
    n = lo.size
    # the GPU operations that start in each step, clipped to its end, relative to its start
    si, ei, ci = s_all[i] - lo_s[seg], np.minimum(e_all[i], hi_s[seg]) - lo_s[seg], c_all[i]
    busy = iv.segment_lengths(si, ei, seg, n)
    cu, co = (si[~ci], ei[~ci]), (si[ci], ei[ci])
    compute = iv.segment_lengths(*cu, seg[~ci], n)
    comm_len = iv.segment_lengths(*co, seg[ci], n)
    exposed = comm_len - iv.segment_intersect_lengths(co, seg[ci], cu, seg[~ci], n)
    cn = np.concatenate(colls) if colls else empty
    c_start = start[cn] + np.repeat(shift, [c.size for c in colls])
    c_order = np.argsort(c_start, kind="stable")
    w_idx, w_seg = _in_windows(c_start[c_order], lo_s, hi_s)
    waited = np.bincount(w_seg, weights=wait[cn[c_order]][w_idx].astype(float), minlength=n)
    has_gpu = np.repeat(np.where(sizes > 0, 1.0, np.nan), n_steps)
    return {
        "rank": np.repeat(np.array([r for r, _ in ranks], dtype=np.int64), n_steps),
        "step": np.array([st for _, info in ranks for st, _, _ in info.steps]),
        "step_us": (hi - lo) / NS_PER_US,
        "compute_us": compute / NS_PER_US * has_gpu, "comm_us": comm_len / NS_PER_US * has_gpu,
        "exposed_comm_us": exposed / NS_PER_US * has_gpu,
        "overlap_pct": np.divide(100.0 * (comm_len - exposed), comm_len, out=np.full(n, np.nan),
                                 where=comm_len > 0),
        "idle_us": (hi - lo - busy) / NS_PER_US * has_gpu,
        "wait_us": waited / NS_PER_US,
    }


def nodes_by_rank(nodes: np.ndarray, rank_of: np.ndarray) -> dict[int, np.ndarray]:
    """``nodes`` split by their rank, each part in node order (one pass, not one scan per rank)."""
    if not nodes.size:
        return {}
    r = rank_of[nodes]
    order = np.argsort(r, kind="stable")
    ranks, first = np.unique(r[order], return_index=True)
    return dict(zip(ranks.tolist(), np.split(nodes[order], first[1:])))


def _waits(g: Graph, start: np.ndarray, end: np.ndarray, kind: np.ndarray) -> np.ndarray:
    """Per node: the wait of a linked collective (module doc), -1 for every other node."""
    out = np.full(len(g.dur), -1, dtype=np.int64)
    ep = g.ep
    linked = [v for v in np.flatnonzero((kind == GPU_OP) | (kind == COLL)).tolist() if ep[v]]
    if not linked:
        return out
    preds = [p for v in linked for p, _ in ep[v]]
    owner = np.repeat(np.arange(len(linked)), [len(ep[v]) for v in linked])
    last = np.full(len(linked), np.iinfo(np.int64).min)
    np.maximum.at(last, owner, end[np.asarray(preds, dtype=np.int64)])  # the other ranks' arrivals
    v = np.asarray(linked, dtype=np.int64)
    out[v] = np.minimum(np.maximum(0, last - start[v]), end[v] - start[v])
    return out
