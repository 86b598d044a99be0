"""The replay graph of a profiled window: its nodes, its typed edges and the edits scenarios make (no torch).

:mod:`tracekit.replay.builder` builds it from the traces (and takes the profiler's cost out);
:mod:`tracekit.replay.simulate` evaluates it; what-if scenarios edit a copy (:meth:`Graph.copy`) through the
methods here, never through the edge lists or the per-rank tables directly (``tests/test_architecture.py``).

**Nodes** (one list per field, indexed by node id; times in integer ns) have a :class:`NodeKind`: CPU
segments of a thread (*work*, *sync*: the inside of a call that blocks on the GPU, *wait*: a thread
waiting for another one), GPU operations, and per collective instance one *arrive* node per rank, the
collective itself (a GPU kernel, or a backend range on a CPU thread) and one *group* node that the
arrivals meet at.

**Edges** are ``(pred, delay)`` pairs: a node starts at the latest ``end(pred) + delay`` of its *start*
edges; it ends at ``start + duration`` or, if later, the latest ``end(pred) + delay`` of its *end* edges
(syncs and waits end when what they waited for ends; a collective at the latest arrival plus its transfer).
``pred`` :data:`ORIGIN` counts from the window's origin. Every edge has an :class:`EdgeKind`, which follows
from the kinds of the two nodes it joins (as HTA's critical path types its edges, ``CPEdgeType``):
:meth:`Graph.edges` gives them typed. A CPU segment that only follows the one before it has the shared
:data:`CHAIN` as its start edges (read them with :meth:`Graph.start_edges`).

**Exclusive resources** (one NCCL stream, gloo's pool of worker threads): work a scenario adds queues on
one through :class:`Resource`, which gives each job the edge from the job whose place it takes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from enum import Enum, IntEnum
from itertools import repeat
from typing import NamedTuple

import numpy as np


class NodeKind(IntEnum):
    """What a node is (module doc). Integer-valued: the graph stores plain ints, which compare equal."""

    CPU = 0         # CPU work segment
    SYNC = 1        # inside a call that blocks on the GPU
    WAIT = 2        # a thread waiting for another thread's cut
    GPU = 3         # kernel, copy or memset on a stream
    ARRIVE = 4      # when one rank's part of a collective could start
    COLLECTIVE = 5  # a CPU backend's collective range (GPU collectives are GPU nodes)
    GROUP = 6       # where the arrivals of one collective instance meet


CPU_SEG, SYNC_SEG, WAIT_SEG, GPU_OP, ARRIVE, COLL, GROUP = NodeKind
KIND_NAMES = ("cpu", "sync", "wait", "gpu", "arrive", "collective", "group")
#: node kinds that run on a CPU thread
CPU_KINDS = frozenset((CPU_SEG, SYNC_SEG, WAIT_SEG, COLL))


class EdgeKind(Enum):
    """Why a node waits for another (module doc); :meth:`Graph.edge_kind` derives it from the nodes."""

    ORIGIN = "origin"          # from the window's origin (a thread's first segment, work before the window)
    THREAD = "thread"          # program order on a CPU thread, or a backend range after the segment that began it
    LAUNCH = "launch"          # a CPU segment launched a GPU operation or a collective (plus the launch latency)
    STREAM = "stream"          # GPU operation after GPU operation: stream order, or a cross-stream event wait
    SYNC = "sync"              # end of a blocking call after the GPU work it waited for (plus the wake-up)
    WAKE = "wake"              # end of a thread's wait after another thread's cut
    ARRIVAL = "arrival"        # a collective, or its group, after a rank's arrival
    TRANSFER = "transfer"      # end of a collective: the latest arrival plus this rank's transfer
    DEPENDENCY = "dependency"  # any other order a scenario or the builder adds (e.g. a bucket after its gradient)


class Edge(NamedTuple):
    """One edge into a node, typed (:meth:`Graph.edges`)."""

    pred: int
    delay: int
    kind: EdgeKind


@dataclass
class Graph:
    """Nodes as parallel lists (see module doc). ``sp``/``ep``: start/end edges ``[(pred, delay), ...]``: the
    evaluation reads them directly; edits go through the methods below."""

    dur: list[int] = field(default_factory=list)
    sp: list[list[tuple[int, int]]] = field(default_factory=list)
    ep: list[list[tuple[int, int]]] = field(default_factory=list)
    kind: list[int] = field(default_factory=list)
    rank: list[int] = field(default_factory=list)
    orig_start: list[int] = field(default_factory=list)
    orig_end: list[int] = field(default_factory=list)
    #: per rank: its steps, GPU operations, threads and collectives (:class:`RankNodes`)
    ranks: dict[int, RankNodes] = field(default_factory=dict)
    #: what the evaluation had to work around (dependency cycles), for the report's notes
    notes: list[str] = field(default_factory=list)
    #: the window as recorded, where it differs from this graph (built with a profiler cost): every node's
    #: duration, and the start / end edges of the nodes whose delays shed the cost (:meth:`recorded`)
    dur_rec: list[int] = field(default_factory=list)
    sp_rec: dict[int, list[tuple[int, int]]] = field(default_factory=dict)
    ep_rec: dict[int, list[tuple[int, int]]] = field(default_factory=dict)

    #: node lists converted to arrays (:meth:`array`), shared with :meth:`recorded` and scenario clones
    _arrays: dict[str, np.ndarray] = field(default_factory=dict, repr=False, compare=False)

    def array(self, name: str) -> np.ndarray:
        """The node list ``name`` (``orig_start``, ``orig_end``, ``kind`` or ``rank``) as an int64 array, converted
        once. These lists only grow once the graph is built (scenarios append nodes, never change one's kind
        or recorded times), so a cached array is extended, not rebuilt. Do not mutate the result."""
        values = getattr(self, name)
        have = self._arrays.get(name)
        n = 0 if have is None else have.size
        if n != len(values):
            tail = np.asarray(values[n:], dtype=np.int64)
            self._arrays[name] = np.concatenate([have, tail]) if n else tail
        return self._arrays[name]

    def orig_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """``orig_start`` and ``orig_end`` as arrays (:meth:`array`)."""
        return self.array("orig_start"), self.array("orig_end")

    def recorded(self) -> Graph:
        """The same graph with nothing taken out: the window as recorded (the self-check), without a
        second build. Shares the rank tables; edge lists are shared where they did not change."""
        sp, ep = list(self.sp), list(self.ep)
        for node, edges in self.sp_rec.items():
            sp[node] = edges
        for node, edges in self.ep_rec.items():
            ep[node] = edges
        return Graph(dur=list(self.dur_rec), sp=sp, ep=ep, kind=self.kind, rank=self.rank,
                     orig_start=self.orig_start, orig_end=self.orig_end, ranks=self.ranks, notes=list(self.notes),
                     dur_rec=self.dur_rec, _arrays=self._arrays)

    def add_chain(self, cuts: np.ndarray, kind: int, rank: int, lead: int) -> None:
        """Nodes for the pieces between consecutive ``cuts``, each after the one before; the first starts
        ``lead`` ns after the origin (bulk :meth:`add` of a thread's segments)."""
        n = cuts.size - 1
        if n <= 0:
            return
        lengths = np.diff(cuts).tolist()
        self.dur.extend(lengths)
        self.dur_rec.extend(lengths)
        self.sp.append([(ORIGIN, lead)])
        self.sp.extend(repeat(CHAIN, n - 1))
        self.ep.extend(repeat(NO_EDGES, n))
        self.kind.extend([kind] * n)
        self.rank.extend([rank] * n)
        self.orig_start.extend(cuts[:-1].tolist())
        self.orig_end.extend(cuts[1:].tolist())

    def add_many(self, dur: np.ndarray, kind: int, rank: int, start: np.ndarray, end: np.ndarray,
                 sp: list[list[tuple[int, int]]]) -> None:
        """Bulk :meth:`add` of nodes of one kind (durations clipped at 0)."""
        n = len(sp)
        d = np.maximum(0, dur).astype(np.int64).tolist()
        self.dur.extend(d)
        self.dur_rec.extend(d)
        self.sp.extend(sp)
        self.ep.extend([] for _ in range(n))
        self.kind.extend([kind] * n)
        self.rank.extend([rank] * n)
        self.orig_start.extend(np.asarray(start, dtype=np.int64).tolist())
        self.orig_end.extend(np.asarray(end, dtype=np.int64).tolist())

    def link(self, members: list[tuple[int, int, int]]) -> None:
        """One collective instance across ranks: the node of each member ``(arrive, node, transfer)`` ends at
        the latest arrival of all members plus its ``transfer`` (its end edges; the caller sets its duration to
        ``transfer``). The arrivals meet at one zero-length *group* node (kind :data:`GROUP`, recorded at the
        latest arrival, the first member's rank) that each node waits for: 2N edges for N ranks, where an edge
        from every arrival to every node would be N² (4 million per instance at 2048 ranks). A member's own
        arrival among the group's changes nothing as long as its node starts at that arrival and lasts at least
        the delay of its end edge: every edit keeps the two equal (:func:`~tracekit.replay.network.scale`, the
        comm hook's casts). A member alone has no end edge."""
        if len(members) < 2:
            for _, node, _ in members:
                self.ep[node] = []
            return
        arrives = [a for a, _, _ in members]
        # recorded at the latest arrival: the evaluation's recorded order puts it after every arrival and, like
        # the per-pair edges before it, before each member's node (which ended after that arrival)
        t = max(self.orig_end[a] for a in arrives)
        group = self.add(0, GROUP, self.rank[members[0][1]], t, t, [(a, 0) for a in arrives])
        for _, node, transfer in members:
            self.ep[node] = [(group, transfer)]

    def start_edges(self, v: int) -> list[tuple[int, int]]:
        """``sp[v]`` with :data:`CHAIN` resolved: the node before it, no delay."""
        edges = self.sp[v]
        return [(v - 1, 0)] if edges is CHAIN else list(edges)

    def add(self, dur: int, kind: int, rank: int, start: int, end: int,
            sp: list[tuple[int, int]] | None = None) -> int:
        self.dur.append(max(0, int(dur)))
        self.dur_rec.append(max(0, int(dur)))
        self.sp.append(sp if sp is not None else [])
        self.ep.append([])
        self.kind.append(kind)
        self.rank.append(rank)
        self.orig_start.append(int(start))
        self.orig_end.append(int(end))
        return len(self.dur) - 1

    def copy(self) -> Graph:
        """A copy a scenario may edit: node lists copied, each rank's table copied (an edit replaces a node's edge
        list, never mutates it; :meth:`RankNodes.add_gpu_nodes` replaces the rank's arrays)."""
        return Graph(dur=list(self.dur), sp=list(self.sp), ep=list(self.ep), kind=list(self.kind),
                     rank=list(self.rank), orig_start=list(self.orig_start), orig_end=list(self.orig_end),
                     ranks={r: replace(v) for r, v in self.ranks.items()}, notes=[], dur_rec=list(self.dur_rec),
                     _arrays=dict(self._arrays))

    # -- reading edges -----------------------------------------------------------------------------
    def end_edges(self, v: int) -> list[tuple[int, int]]:
        """``ep[v]`` as a list of ``(pred, delay)``."""
        return list(self.ep[v])

    def edge_kind(self, v: int, pred: int, *, end: bool = False) -> EdgeKind:
        """The kind of the edge from ``pred`` into node ``v`` (a start edge, or with ``end`` an end edge)."""
        if pred == ORIGIN:
            return EdgeKind.ORIGIN
        pk, vk = self.kind[pred], self.kind[v]
        if end:
            if pk == GROUP:
                return EdgeKind.TRANSFER
            return EdgeKind.SYNC if vk == SYNC_SEG else EdgeKind.WAKE if vk == WAIT_SEG else EdgeKind.DEPENDENCY
        if pk in (ARRIVE, GROUP):
            return EdgeKind.ARRIVAL
        if pk in CPU_KINDS:
            return EdgeKind.THREAD if vk in CPU_KINDS else EdgeKind.LAUNCH if vk in (GPU_OP, ARRIVE) \
                else EdgeKind.DEPENDENCY
        return EdgeKind.STREAM if pk == GPU_OP and vk == GPU_OP else EdgeKind.DEPENDENCY

    def edges(self, v: int, *, end: bool = False) -> list[Edge]:
        """The start (``end``: end) edges of node ``v``, typed."""
        raw = self.ep[v] if end else self.start_edges(v)
        return [Edge(p, d, self.edge_kind(v, p, end=end)) for p, d in raw]

    # -- edits (a scenario's copy) -------------------------------------------------------------------
    def set_start(self, v: int, edges: Iterable[tuple[int, int]]) -> None:
        """Node ``v`` starts after ``edges`` (``(pred, delay)``) and nothing else."""
        self.sp[v] = [(int(p), int(d)) for p, d in edges]

    def add_start(self, v: int, edges: Iterable[tuple[int, int]]) -> None:
        """Node ``v`` also starts after ``edges``."""
        self.sp[v] = self.start_edges(v) + [(int(p), int(d)) for p, d in edges]

    def set_end(self, v: int, edges: Iterable[tuple[int, int]]) -> None:
        """Node ``v`` ends no earlier than ``edges`` (``(pred, delay)``) and nothing else (none: at its duration)."""
        self.ep[v] = [(int(p), int(d)) for p, d in edges]

    def set_transfer(self, node: int, ns: int) -> None:
        """A linked collective's transfer becomes ``ns``: its duration, and the delay of its end edges (it ends
        that long after the latest arrival; :meth:`link`)."""
        self.dur[node] = ns
        self.ep[node] = [(p, ns) for p, _ in self.ep[node]]

    def extend_transfer(self, node: int, ns: int) -> None:
        """A linked collective's transfer lasts ``ns`` longer (duration and end edges)."""
        self.dur[node] += ns
        self.ep[node] = [(p, d + ns) for p, d in self.ep[node]]

    def clear_transfer(self, node: int) -> None:
        """A collective that moves nothing: no duration, no wait for the other ranks."""
        self.dur[node] = 0
        self.ep[node] = []

    def rank_nodes(self, rank: int) -> RankNodes:
        """The rank's table (:class:`RankNodes`); KeyError for a rank not in the graph."""
        return self.ranks[rank]

    def find_rank(self, rank: int) -> RankNodes | None:
        """The rank's table, None for a rank not in the graph."""
        return self.ranks.get(rank)


ORIGIN = -1  # a start edge from the origin: ``(ORIGIN, delay)`` starts a node ``delay`` after time 0


class _Chain:
    """The start edges of a node that follows the node before it (``v - 1``) with no delay and nothing else:
    most CPU segments. One shared object instead of a list per node (a large trace has ~10^6 of them), which
    the evaluation recognises by identity (:func:`tracekit.replay.simulate.evaluate`). Read the edges with
    :meth:`Graph.start_edges`; iterating it directly is a bug."""

    __slots__ = ()

    def __iter__(self):  # noqa: ANN204 - never returns
        raise RuntimeError("Graph.sp[v] is CHAIN: read it with Graph.start_edges(v)")

    def __repr__(self) -> str:
        return "CHAIN"


CHAIN = _Chain()
#: the end edges of a node without any (shared; edits replace ``ep[v]``, never append to it)
NO_EDGES: tuple[tuple[int, int], ...] = ()

@dataclass
class Thread:
    """One CPU thread's segments: node ``first_node + k`` is the piece between ``cuts[k]`` and ``cuts[k + 1]``."""

    tid: int
    cuts: np.ndarray          # sorted unique cut times
    first_node: int           # node id of segment k is first_node + k (segment k = [cuts[k], cuts[k+1]])
    worker: bool              # records operators (a source of wake-ups for other threads)

    def seg_ending_at(self, t: int) -> int | None:
        """Node of the segment that ends at cut ``t`` (None at the thread's first cut)."""
        k = int(np.searchsorted(self.cuts, t))
        return self.first_node + k - 1 if 0 < k < self.cuts.size and self.cuts[k] == t else None

    def seg_starting_at(self, t: int) -> int | None:
        k = int(np.searchsorted(self.cuts, t))
        return self.first_node + k if k < self.cuts.size - 1 and self.cuts[k] == t else None

    def node_range(self) -> tuple[int, int]:
        """The thread's nodes, ``[first, end)``."""
        return self.first_node, self.first_node + max(self.cuts.size - 1, 0)

    def nodes_in(self, s: int, e: int) -> range:
        """The nodes of the segments inside ``[s, e]`` (every kind), in order."""
        return range(self.first_node + int(np.searchsorted(self.cuts, s)),
                     self.first_node + int(np.searchsorted(self.cuts, e)))


@dataclass
class RankNodes:
    """One rank's part of the graph: what the step figures and the scenarios look nodes up by."""

    #: (step, start node, end node) of each ProfilerStep the graph holds
    steps: list[tuple[int, int, int]]
    #: columns of the rank's ``RankTrace.gpu`` (:data:`tracekit.replay.builder.GPU_COLUMNS`); None without GPU activity
    gpu: dict[str, np.ndarray] | None
    #: the node of each row of ``gpu`` (a scenario appends its new GPU nodes: :meth:`add_gpu_nodes`)
    gpu_node: np.ndarray
    #: the window's origin on the rank's clock, ns (an edge from :data:`ORIGIN` counts from it)
    origin: int
    threads: dict[int, Thread]
    #: (start_ns, end_ns) of a matched collective -> (its arrive node, its kernel / range node)
    coll: dict[tuple[int, int], tuple[int, int]]

    def add_gpu_nodes(self, step: int, nodes: list[int]) -> None:
        """Count new GPU nodes of ``step`` among the rank's GPU operations (on no recorded stream)."""
        if self.gpu is None or not nodes:
            return
        self.gpu_node = np.append(self.gpu_node, np.asarray(nodes, dtype=np.int64))
        gpu, n = self.gpu, len(nodes)
        self.gpu = {"step": np.append(gpu["step"], np.full(n, step, dtype=np.asarray(gpu["step"]).dtype)),
                    "pre_window": np.append(np.asarray(gpu["pre_window"], dtype=bool), np.zeros(n, dtype=bool)),
                    "stream": np.append(np.asarray(gpu["stream"]), np.full(n, -1, dtype=np.int64))}


def work_segments(g: Graph, th: Thread, s: int, e: int) -> list[int]:
    """The nodes of the CPU work segments (kind :data:`CPU_SEG`) of thread ``th`` inside ``[s, e]``, in order."""
    return [v for v in th.nodes_in(s, e) if g.kind[v] == CPU_SEG]


class Resource:
    """An exclusive resource with ``slots`` places, taken in queueing order (SimPy's ``Resource``, as edges): one
    NCCL stream runs one collective at a time (1), gloo's pool runs one collective per worker thread. The ``j``-th
    job queued takes the place the ``(j - slots)``-th frees: it starts no earlier than that job's end plus its
    gap. Scenarios queue the work they add through :meth:`queue` instead of writing that edge themselves."""

    def __init__(self, slots: int) -> None:
        if slots < 1:
            raise ValueError(f"a resource needs at least one slot, got {slots}")
        self.slots = slots
        self.jobs: list[int] = []

    def ahead(self) -> int | None:
        """Index (in queueing order) of the job the next one waits for; None while a place is free."""
        j = len(self.jobs) - self.slots
        return j if j >= 0 else None

    def edge(self, gap: int) -> list[tuple[int, int]]:
        """The start edge of the next job: ``gap`` after the job it waits for ends ([] while a place is free)."""
        j = self.ahead()
        return [] if j is None else [(self.jobs[j], int(gap))]

    def queue(self, node: int) -> None:
        """Node ``node`` holds the next place (after :meth:`edge` gave its start edge)."""
        self.jobs.append(node)
