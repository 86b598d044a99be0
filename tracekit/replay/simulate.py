"""Build the whole run's graph (every rank, collectives linked) and evaluate it.

:func:`build` adds each rank's nodes (:class:`tracekit.replay.graph.RankBuilder`) and
links the matched collectives across ranks; :func:`evaluate` computes every node's
start and end in one pass in dependency order (Kahn's algorithm): the graph is a DAG
because every inferred edge points back in the recorded time, except the collective
links, which join nodes that ran together. A cycle (an inferred edge that contradicts
another) is broken by evaluating the nodes left with the edges already resolved, and
counted in ``Graph.notes``.
"""

from __future__ import annotations

from collections import deque

import numpy as np
import pandas as pd

from tracekit.analyses import crossrank
from tracekit.replay.costs import ProfilerCosts
from tracekit.replay.graph import ORIGIN, Graph, RankBuilder
from tracekit.traces.traceset import TraceSet


def matched_collectives(coll: pd.DataFrame, offsets: dict[int, float] | None) -> pd.DataFrame:
    """Rows of ``coll`` (the stacked ``collectives`` table) in accepted cross-rank matches, with
    ``transfer_ns`` = this rank's end − the latest start across ranks (clock offsets applied), ≥ 0."""
    if coll is None or coll.empty:
        return pd.DataFrame(columns=["rank", "start_ns", "end_ns", "key", "transfer_ns"])
    inst, _ = crossrank.match(coll, offsets)
    m = crossrank._matchable(coll)  # noqa: SLF001 - the same rows the match used
    ok = inst[inst["accepted"] & (inst["ranks"] >= 2)][crossrank.KEY]
    m = m.merge(ok, on=crossrank.KEY)
    if m.empty:
        return pd.DataFrame(columns=["rank", "start_ns", "end_ns", "key", "transfer_ns"])
    off = m["rank"].map(offsets or {}).fillna(0.0).to_numpy()
    start, end = m["start_ns"].to_numpy(dtype=float) - off, m["end_ns"].to_numpy(dtype=float) - off
    key = pd.MultiIndex.from_frame(m[crossrank.KEY].astype(str)).to_flat_index()
    last = pd.Series(start).groupby(np.asarray(key, dtype=object)).transform("max").to_numpy()
    transfer = np.clip(end - last, 0, end - start)
    return pd.DataFrame({"rank": m["rank"].to_numpy(), "start_ns": m["start_ns"].astype(np.int64).to_numpy(),
                         "end_ns": m["end_ns"].astype(np.int64).to_numpy(), "key": key,
                         "transfer_ns": transfer.astype(np.int64)})


def build(traces: TraceSet, coll: pd.DataFrame | None, costs: ProfilerCosts,
          offsets: dict[int, float] | None = None) -> Graph:
    """The run's graph with ``costs`` taken out (module doc of :mod:`tracekit.replay.graph`)."""
    g = Graph()
    matched = matched_collectives(coll, offsets)
    off = offsets or {}
    starts = [int(rt.events["ts_ns"].min() - off.get(rt.rank, 0.0)) for rt in traces]
    origin = min(starts) if starts else 0
    members: dict[object, list[tuple[int, int, int]]] = {}
    for rt in traces:
        b = RankBuilder(g, rt, costs, origin + int(off.get(rt.rank, 0.0)))
        mine = matched[matched["rank"] == rt.rank]
        b.build(mine)
        for s, e, key, transfer in zip(mine["start_ns"], mine["end_ns"], mine["key"], mine["transfer_ns"]):
            nodes = b.coll_nodes.get((int(s), int(e)))
            if nodes is not None:
                members.setdefault(key, []).append((nodes[0], nodes[1], int(transfer)))
    for group in members.values():
        for arrive, node, transfer in group:
            g.dur[node] = g.dur_rec[node] = transfer
            g.ep[node] = [(other, transfer) for other, _, _ in group if other != arrive]
    return g


def evaluate(g: Graph) -> tuple[np.ndarray, np.ndarray]:
    """(start, end) of every node, in ns after the origin.

    Fast path: every edge points back in recorded time, so the nodes in order of their recorded end
    (then start) are almost always a topological order; one pass in that order suffices. If a node's
    predecessor is not evaluated yet when its turn comes, the pass is redone in the order of
    :func:`_kahn_order`.
    """
    n = len(g.dur)
    order = np.lexsort((np.arange(n), np.asarray(g.orig_start), np.asarray(g.orig_end))).tolist()
    times = _in_order(g, order, strict=True)
    if times is None:
        times = _in_order(g, _kahn_order(g), strict=False)
    return times


def _in_order(g: Graph, order: list[int], *, strict: bool) -> tuple[np.ndarray, np.ndarray] | None:
    """Evaluate the nodes in ``order``: start = latest start edge (≥ 0), end = start + duration or the
    latest end edge. ``strict``: None as soon as a predecessor is not evaluated yet; otherwise it counts
    as ending at 0 (a node :func:`_kahn_order` released from a cycle)."""
    n = len(g.dur)
    # one slot past the nodes for ORIGIN (-1 indexes it): an edge from the origin ends at its delay. In strict
    # mode an unevaluated predecessor is None, so reading it raises instead of a check on every edge.
    end: list = [None if strict else 0] * n + [0]
    start = [0] * n
    sp, ep, dur = g.sp, g.ep, g.dur
    try:
        for v in order:
            s = 0
            for p, d in sp[v]:
                t = end[p] + d
                if t > s:
                    s = t
            e = s + dur[v]
            for p, d in ep[v]:
                t = end[p] + d
                if t > e:
                    e = t
            start[v] = s
            end[v] = e
    except TypeError:  # a predecessor after its successor in ``order``
        return None
    assert ORIGIN == -1
    return np.asarray(start, dtype=np.int64), np.asarray(end[:n], dtype=np.int64)


def _kahn_order(g: Graph) -> list[int]:
    """A dependency order of every node (Kahn's algorithm); a cycle is broken at its lowest pending node,
    noted in ``g.notes`` (module doc)."""
    n = len(g.dur)
    succ: list[list[int]] = [[] for _ in range(n)]
    indeg = [0] * n
    for v in range(n):
        for p, _ in (*g.sp[v], *g.ep[v]):
            if p != ORIGIN:
                succ[p].append(v)
                indeg[v] += 1
    order: list[int] = []
    queued = bytearray(n)
    queue = deque(v for v in range(n) if indeg[v] == 0)
    for v in queue:
        queued[v] = 1
    while len(order) < n:
        if not queue:  # a cycle: release the lowest pending node with what is known
            v = next(i for i in range(n) if not queued[i])
            g.notes.append(f"dependency cycle at node {v} ({g.kind[v]}): evaluated without its unresolved edges")
            queued[v] = 1
            queue.append(v)
        v = queue.popleft()
        order.append(v)
        for w in succ[v]:
            indeg[w] -= 1
            if indeg[w] == 0 and not queued[w]:
                queued[w] = 1
                queue.append(w)
    return order
