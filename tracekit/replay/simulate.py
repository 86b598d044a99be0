"""Build the whole run's graph (every rank, collectives linked) and evaluate it.

:func:`build` adds each rank's nodes (:class:`tracekit.replay.builder.RankBuilder`) and
links the matched collectives across ranks; :func:`evaluate` computes every node's
start and end in one pass in dependency order (Kahn's algorithm): the graph is a DAG
because every inferred edge points back in the recorded time, except the collective
links, which join nodes that ran together. A cycle (an inferred edge that contradicts
another) is broken by evaluating the nodes left with the edges already resolved, and
counted in ``Graph.notes``.

The pass runs over *runs* rather than nodes (:func:`runs`): a CPU segment whose only edge is
:data:`~tracekit.replay.graph.CHAIN` and whose predecessor nothing else needs is timed with its run's
head, by a cumulative sum after the pass. The result is the node-by-node pass's, to the ns (tested on
random graphs and the committed runs).
"""

from __future__ import annotations

import gc
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pandas as pd

from tracekit.analyses import crossrank
from tracekit.replay.costs import ProfilerCosts
from tracekit.replay.builder import RankBuilder
from tracekit.replay.graph import CHAIN, ORIGIN, Graph
from tracekit.traces.traceset import TraceSet


@contextmanager
def paused_gc() -> Iterator[None]:
    """CPython's cyclic garbage collector off for the block, back as it was after.

    A graph is millions of small lists and tuples (edges); allocating them triggers the collector's full
    passes, each of which walks every tracked object, the graph built so far included, and finds nothing: the
    graph holds no reference cycles. Reference counting still frees everything as usual. The CLI runs with
    the collector off already (:func:`tracekit.cli.entry`); this is for the library (``tracekit.whatif``,
    ``analyze(..., whatif=True)``): on the 2 x 72 MB inductor pair (887k nodes) the replay and its two
    evaluations took 3.3-3.9 s instead of 4.4-5.0 s (three alternating runs on a busy 2-core host, the same
    result).
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def matched_collectives(coll: pd.DataFrame, offsets: dict[int, float] | None) -> pd.DataFrame:
    """Rows of ``coll`` (the stacked ``collectives`` table) in accepted cross-rank matches, with
    ``transfer_ns`` = this rank's end − the latest start across ranks (clock offsets applied), ≥ 0."""
    if coll is None or coll.empty:
        return pd.DataFrame(columns=["rank", "start_ns", "end_ns", "key", "transfer_ns"])
    inst = pd.DataFrame(crossrank.match(coll, offsets)[0])  # the match gives columns
    m = pd.DataFrame(crossrank._matchable(coll))  # noqa: SLF001 - the same rows the match used
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


def _by_rank(matched: pd.DataFrame) -> dict[int, dict[str, object]]:
    """The matched instances split by rank: {rank: {"start_ns", "end_ns", "transfer_ns": int64 arrays, "key":
    list}}, each rank's rows in table order (one pass, not one frame slice per rank)."""
    if not len(matched):
        return {}
    rank = matched["rank"].to_numpy()
    cols = {c: matched[c].to_numpy().astype(np.int64) for c in ("start_ns", "end_ns", "transfer_ns")}
    key = matched["key"].to_numpy()
    order = np.argsort(rank, kind="stable")
    ranks, first = np.unique(rank[order], return_index=True)
    return {int(r): {**{c: v[rows] for c, v in cols.items()}, "key": key[rows].tolist()}
            for r, rows in zip(ranks.tolist(), np.split(order, first[1:]))}


def build(traces: TraceSet, coll: pd.DataFrame | None, costs: ProfilerCosts,
          offsets: dict[int, float] | None = None) -> Graph:
    """The run's graph with ``costs`` taken out (module doc of :mod:`tracekit.replay.graph`)."""
    g = Graph()
    matched = matched_collectives(coll, offsets)
    off = offsets or {}
    starts = [int(rt.column("ts_ns").min() - off.get(rt.rank, 0.0)) for rt in traces]
    origin = min(starts) if starts else 0
    members: dict[object, list[tuple[int, int, int]]] = {}
    per_rank = _by_rank(matched)
    none = {c: np.zeros(0, dtype=np.int64) for c in ("start_ns", "end_ns", "transfer_ns")} | {"key": []}
    for rt in traces:
        b = RankBuilder(g, rt, costs, origin + int(off.get(rt.rank, 0.0)))
        mine = per_rank.get(rt.rank, none)
        b.build(mine)
        for s, e, key, transfer in zip(mine["start_ns"].tolist(), mine["end_ns"].tolist(), mine["key"],
                                       mine["transfer_ns"].tolist()):
            nodes = b.coll_nodes.get((int(s), int(e)))
            if nodes is not None:
                members.setdefault(key, []).append((nodes[0], nodes[1], int(transfer)))
    for group in members.values():
        for _, node, transfer in group:
            g.dur[node] = g.dur_rec[node] = transfer
        g.link(group)
    return g


def evaluate(g: Graph, plan: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(start, end) of every node, in ns after the origin.

    Fast path: every edge points back in recorded time, so the nodes in order of their recorded end
    (then start) are almost always a topological order; one pass in that order suffices, over *runs*
    (:func:`runs`) rather than nodes. If a node's predecessor is not evaluated yet when its turn comes,
    the pass is redone node by node in the order of :func:`_kahn_order`. ``plan``: :func:`runs` of a graph
    with the same predecessors (the recorded graph of the same build: only delays differ), computed once.
    """
    n = len(g.dur)
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    times = _by_runs(g, plan if plan is not None else runs(g))
    if times is None:
        times = _in_order(g, _kahn_order(g), strict=False)
    return times


def runs(g: Graph) -> tuple[np.ndarray, np.ndarray]:
    """(absorbed, head): the nodes whose times follow from the node before them, and each node's run head.

    A node is *absorbed* when its only edge is :data:`~tracekit.replay.graph.CHAIN` (it starts when node
    ``v - 1`` ends) and no other node depends on ``v - 1``. A run is a head and the absorbed nodes after it:
    only its last node can be a predecessor elsewhere, and every node of it ends at the head's end plus the
    durations up to it. On a large trace ~90 % of the nodes (CPU segments between two recorded events that
    launch nothing) are absorbed."""
    n = len(g.dur)
    sp, ep = g.sp, g.ep
    plain = np.fromiter(map(id, sp), dtype=np.int64, count=n) == id(CHAIN)
    plain &= ~np.fromiter(map(bool, ep), dtype=bool, count=n)
    preds: list[int] = []
    for v in np.flatnonzero(~plain).tolist():
        preds.extend(p for p, _ in g.start_edges(v))
        preds.extend(p for p, _ in ep[v])
    referenced = np.zeros(n + 1, dtype=bool)  # slot n: ORIGIN (-1)
    referenced[np.asarray(preds, dtype=np.int64)] = True
    absorbed = plain.copy()
    absorbed[0] = False
    absorbed[1:] &= ~referenced[:n - 1]
    head = np.maximum.accumulate(np.where(absorbed, 0, np.arange(n)))
    return absorbed, head


def _by_runs(g: Graph, plan: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray] | None:
    """The fast path of :func:`evaluate`: heads in recorded order, each run's last node set with its head;
    None when the order is not topological."""
    n = len(g.dur)
    absorbed, head = plan
    heads = np.flatnonzero(~absorbed)
    dur = np.asarray(g.dur, dtype=np.int64)
    cum = np.cumsum(dur)
    tail = np.r_[heads[1:], n] - 1
    rest = cum[tail] - cum[heads]  # the absorbed nodes' durations after each head
    orig_start, orig_end = g.orig_arrays()
    o = np.lexsort((heads, orig_start[heads], orig_end[heads]))
    hv = heads[o]
    got = _pass(g, hv.tolist(), tail[o].tolist(), rest[o].tolist(), strict=True)
    if got is None:
        return None
    start_a = np.empty(n, dtype=np.int64)
    end_a = np.empty(n, dtype=np.int64)
    start_a[hv], end_a[hv] = got
    a = np.flatnonzero(absorbed)
    end_a[a] = end_a[head[a]] + cum[a] - cum[head[a]]
    start_a[a] = end_a[a] - dur[a]
    return start_a, end_a


def _pass(g: Graph, order: list[int], tail: list[int], rest: list[int], *,
          strict: bool) -> tuple[list[int], list[int]] | None:
    """One pass over the nodes in ``order``: start = latest start edge (≥ 0), end = start + duration or the
    latest end edge; each node's run ends ``rest`` after it, at node ``tail`` (:func:`runs`; a node alone:
    itself and 0). Returns (starts, ends) in ``order``. ``strict``: None as soon as a predecessor is not
    evaluated yet; otherwise it counts as ending at 0 (a node :func:`_kahn_order` released from a cycle)."""
    # one slot past the nodes for ORIGIN (-1 indexes it): an edge from the origin ends at its delay. In strict
    # mode an unevaluated predecessor is None, so reading it raises instead of a check on every edge.
    end: list = [None if strict else 0] * len(g.dur) + [0]
    sp, ep, durs = g.sp, g.ep, g.dur
    out_s, out_e = [], []
    try:
        for v, t, r in zip(order, tail, rest):
            edges = sp[v]
            if edges is CHAIN:  # ends are never negative: max(0, end of v - 1)
                s = end[v - 1]
            else:
                s = 0
                for p, d in edges:
                    x = end[p] + d
                    if x > s:
                        s = x
            e = s + durs[v]
            for p, d in ep[v]:
                x = end[p] + d
                if x > e:
                    e = x
            end[v] = e
            end[t] = e + r
            out_s.append(s)
            out_e.append(e)
    except TypeError:  # a predecessor after its successor in the order
        return None
    assert ORIGIN == -1
    return out_s, out_e


def _in_order(g: Graph, order: list[int], *, strict: bool) -> tuple[np.ndarray, np.ndarray] | None:
    """Every node evaluated in ``order`` (:func:`_pass`, each node alone)."""
    got = _pass(g, order, order, [0] * len(order), strict=strict)
    if got is None:
        return None
    start = np.zeros(len(g.dur), dtype=np.int64)
    end = np.zeros(len(g.dur), dtype=np.int64)
    idx = np.asarray(order, dtype=np.int64)
    start[idx], end[idx] = got
    return start, end


def _kahn_order(g: Graph) -> list[int]:
    """A dependency order of every node (Kahn's algorithm); a cycle is broken at its lowest pending node,
    noted in ``g.notes`` (module doc)."""
    n = len(g.dur)
    succ: list[list[int]] = [[] for _ in range(n)]
    indeg = [0] * n
    for v in range(n):
        for p, _ in (*g.start_edges(v), *g.ep[v]):
            if p != ORIGIN:
                succ[p].append(v)
                indeg[v] += 1
    order: list[int] = []
    broken: list[int] = []
    queued = bytearray(n)
    queue = deque(v for v in range(n) if indeg[v] == 0)
    for v in queue:
        queued[v] = 1
    while len(order) < n:
        if not queue:  # a cycle: release the lowest pending node with what is known
            v = next(i for i in range(n) if not queued[i])
            broken.append(v)
            queued[v] = 1
            queue.append(v)
        v = queue.popleft()
        order.append(v)
        for w in succ[v]:
            indeg[w] -= 1
            if indeg[w] == 0 and not queued[w]:
                queued[w] = 1
                queue.append(w)
    if broken:  # one note per evaluation, not one per node: a scenario can break a cycle at every step
        v = broken[0]
        g.notes.append(f"dependency cycle at node {v} ({g.kind[v]}): evaluated without its unresolved edges"
                       if len(broken) == 1 else
                       f"dependency cycles at {len(broken)} nodes, the first at node {v} ({g.kind[v]}): evaluated "
                       "without their unresolved edges")
    return order
