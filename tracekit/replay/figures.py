"""Step figures of one timeline of the graph: the recorded window or a replay of it.

For each rank and ProfilerStep, per step (µs):

- ``step_us``: the step's length: from the start of its CPU range ``ProfilerStep#N`` (or,
  if later, the end of the previous step) to the end of that range or, if later, the end of
  the last GPU operation launched inside it. A step timed between device synchronizes (as
  ``tracekit profile`` records them) is its CPU range; in a trace whose CPU runs ahead of
  the GPU, a step lasts until its GPU work is done and starts no earlier than the previous
  step's ended, so consecutive steps tile the GPU-bound timeline;

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


def _union_in(starts: np.ndarray, ends: np.ndarray, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
    return iv.union(*iv.clip(starts, ends, lo, hi))


def step_figures(g: Graph, start: np.ndarray, end: np.ndarray, comm_mask: dict[int, np.ndarray]) -> pd.DataFrame:
    """One row per rank and step (module doc). ``start``/``end``: node times of the timeline;
    ``comm_mask``: per rank, which of ``Graph.ranks[rank]["gpu_node"]`` are communication."""
    kind = np.asarray(g.kind)
    rank_of = np.asarray(g.rank)
    wait = _waits(g, start, end)
    rows = []
    for rank, info in sorted(g.ranks.items()):
        nodes = info["gpu_node"]
        comm = comm_mask.get(rank, np.zeros(nodes.size, dtype=bool))
        s, e = start[nodes], end[nodes]
        coll_nodes = np.flatnonzero((rank_of == rank) & ((kind == GPU_OP) | (kind == COLL)) & (wait >= 0))
        gpu_step = info["gpu"]["step"].to_numpy() if info["gpu"] is not None else np.zeros(0, dtype=np.int64)
        prev_end = None
        for step, a, b in info["steps"]:
            lo, hi = int(start[a]), int(end[b])
            mine = gpu_step == step
            if mine.any():  # the step lasts until its GPU work is done ...
                hi = max(hi, int(e[mine].max()))
            if prev_end is not None:  # ... and its GPU work cannot start before the previous step's is
                lo = max(lo, prev_end)
            prev_end = hi
            inside = (s >= lo) & (s < hi)
            busy = _union_in(s[inside], e[inside], lo, hi)
            cu = _union_in(s[inside & ~comm], e[inside & ~comm], lo, hi)
            co = _union_in(s[inside & comm], e[inside & comm], lo, hi)
            comm_len = iv.length(*co)
            exposed = comm_len - iv.intersect_length(co, cu)
            w = coll_nodes[(start[coll_nodes] >= lo) & (start[coll_nodes] < hi)]
            rows.append({
                "rank": rank, "step": step, "step_us": (hi - lo) / NS_PER_US,
                "compute_us": iv.length(*cu) / NS_PER_US if nodes.size else np.nan,
                "comm_us": comm_len / NS_PER_US if nodes.size else np.nan,
                "exposed_comm_us": exposed / NS_PER_US if nodes.size else np.nan,
                "overlap_pct": 100.0 * (comm_len - exposed) / comm_len if comm_len else np.nan,
                "idle_us": (hi - lo - iv.length(*busy)) / NS_PER_US if nodes.size else np.nan,
                "wait_us": float(wait[w].sum()) / NS_PER_US,
            })
    return pd.DataFrame(rows, columns=list(STEP_COLUMNS))


def _waits(g: Graph, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Per node: the wait of a linked collective (module doc), -1 for every other node."""
    out = np.full(len(g.dur), -1, dtype=np.int64)
    kind = np.asarray(g.kind)
    for v in np.flatnonzero((kind == GPU_OP) | (kind == COLL)).tolist():
        edges = g.ep[v]
        if not edges:
            continue
        last = max(int(end[p]) for p, _ in edges)  # the other ranks' arrivals (arrive nodes end at once)
        out[v] = min(max(0, last - int(start[v])), int(end[v] - start[v]))
    return out
