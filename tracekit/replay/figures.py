"""Step figures of one timeline of the graph: the recorded window or a replay of it.

For each rank and ProfilerStep, per step (µs):

- ``step_us``: the step's length: from the start of its CPU range ``ProfilerStep#N`` (or,
  if later, the end of the previous step) to the end of that range or, if later, the end of
  the last GPU operation launched inside it. A step timed between device synchronizes (as
  ``tracekit profile`` records them) is its CPU range; in a trace whose CPU runs ahead of
  the GPU, a step lasts until its GPU work is done and starts no earlier than the previous
  step's ended, so consecutive steps tile the GPU-bound timeline. The first step's predecessor
  is the GPU work launched before the window (recorded because it ran inside it): where the CPU
  had queued whole steps ahead, the first step starts when that backlog has drained, not
  when its CPU range began (otherwise its length would carry the backlog, which no step of the
  unprofiled program takes). An operation with no launch recorded that runs after one launched in
  the window on its stream is no backlog (its launch is missing from the trace: :func:`_backlog_end`),
  and a step never ends before it starts;

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
from tracekit.replay.graph import COLL, GPU_OP, Graph

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


def _windows(info: dict, start: np.ndarray, end: np.ndarray, gpu_end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each step's [lo, hi) (module doc): its CPU range, to the end of its GPU work, from the previous step's end."""
    gpu = info.gpu
    gpu_step = np.asarray(gpu["step"]) if gpu is not None else np.zeros(0, dtype=np.int64)
    last_end = _last_end_per_step(gpu_step, gpu_end)
    lo, hi = [], []
    # the GPU work launched before the window is the previous step's: the first step starts after it too
    prev_end = _backlog_end(info, start, gpu_end) if gpu is not None else None
    for step, a, b in info.steps:
        x, y = int(start[a]), int(end[b])
        if step in last_end:  # the step lasts until its GPU work is done ...
            y = max(y, last_end[step])
        if prev_end is not None:  # ... and its GPU work cannot start before the previous step's is
            x = max(x, prev_end)
        y = max(y, x)  # (a step with no GPU work of its own behind a longer backlog is empty, never negative)
        prev_end = y
        lo.append(x)
        hi.append(y)
    return np.asarray(lo, dtype=np.int64), np.asarray(hi, dtype=np.int64)


def launched_in_window_later(pre: np.ndarray, stream: np.ndarray, start: np.ndarray) -> np.ndarray:
    """Mask of the GPU operations with no launch recorded (``pre``) that start after an operation launched in
    the window on their stream. A stream runs its operations in launch order, so these were not launched
    before the window: their launch is missing from the trace (a sampled or filtered trace)."""
    streams, inv = np.unique(stream, return_inverse=True)
    first = np.full(streams.size, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(first, inv[~pre], start[~pre])  # each stream's first operation launched in the window
    return pre & (start > first[inv])


def _backlog_end(info: dict, start: np.ndarray, gpu_end: np.ndarray) -> int | None:
    """The end of the GPU work launched before the window (no launch recorded), or None: the operations
    with no launch recorded that start before their stream's first operation launched in the window, and on a
    stream with none, before the first step (:func:`launched_in_window_later` takes out the rest, which would
    otherwise push the first step's start past its end)."""
    gpu = info.gpu
    pre = np.asarray(gpu["pre_window"], dtype=bool)
    if not pre.any():
        return None
    s = start[np.asarray(info.gpu_node)]
    stream = np.asarray(gpu["stream"]) if "stream" in gpu else np.zeros(pre.size, dtype=np.int64)
    window = int(start[info.steps[0][1]]) if info.steps else int(s.max()) + 1
    has_launched = np.isin(stream, stream[~pre])
    keep = pre & ~launched_in_window_later(pre, stream, s) & (has_launched | (s < window))
    return int(gpu_end[keep].max()) if keep.any() else None


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


def _last_end_per_step(step: np.ndarray, end: np.ndarray) -> dict[int, int]:
    """{step: the latest end of the GPU operations launched in it}."""
    steps, last = iv.group_reduce(step, end, np.maximum)
    return dict(zip(steps.tolist(), last.tolist()))


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
