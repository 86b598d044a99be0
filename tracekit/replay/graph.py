"""The dependency graph of a profiled window, built from the traces (no torch).

Nodes (one list per field, indexed by node id; times in integer ns):

- **CPU segments.** Each CPU thread's timeline is cut at every start and end of a
  recorded event on it (operators, annotations, runtime calls). The piece between two
  consecutive cuts is one segment: by default *work* that takes its measured length.
  Segments run in order on their thread. Three kinds are not work:

  * *sync*: the inside of a call that blocks on the GPU (``cudaDeviceSynchronize``,
    ``cudaStreamSynchronize``, ``cudaEventSynchronize``, a blocking ``cudaMemcpy``;
    :data:`SYNC_PATTERN`) or of a copy call that returned only after its own copy ended.
    It ends when the GPU work it waited for ends (plus the measured wake-up delay). The
    work waited for is inferred: the GPU operation, launched before the call returned,
    whose end is the latest at or before the call's end.
  * *wait*: a stretch of at least :data:`WAIT_MIN_NS` that ends within
    :data:`WAKE_MAX_NS` (or :data:`WAKE_FRACTION` of its length, for long stretches: the
    autograd engine's final callbacks run unrecorded for a few hundred µs after the
    device thread's last operator) after a cut on another worker thread of the rank (a thread
    that records operators), i.e. this thread resumed because that one got there: the
    autograd engine's device thread finishing the backward, gloo's worker ending a
    collective, the main thread starting ``backward()``. It ends that many ns after
    the other thread's cut, whenever that happens in the replay.
  * *collective* (CPU backends): a backend range such as ``gloo:all_reduce`` on its
    worker thread, matched across ranks (below).

- **GPU operations** (kernels, copies, memsets), in order on their stream. One starts
  when its stream is free, its launch call has started and the launch latency passed
  (measured per operation, capped at the rank's typical latency where the operation
  waited for something else), and the work it waits for across streams is done.
  Cross-stream waits come from ``cudaStreamWaitEvent``: the wait applies to the next
  launch of the same thread, and the event is the last ``cudaEventRecord`` of that
  thread before it; the launch then waits for the last operation enqueued before that
  record on every other stream of the device that had ended when the launched operation
  started in the recording (the trace does not name the event's stream; a candidate
  still running then cannot have been waited for).

- **Collectives across ranks.** A matched collective instance (the ``step_seq``-th of
  its process group in its step, checked as in :mod:`tracekit.analyses.crossrank`)
  becomes one *arrive* node per rank (when that rank's kernel or range could start) and
  the kernel/range itself, which ends at the latest arrival of all ranks plus this
  rank's measured transfer time (its end minus the latest start across ranks): waiting
  for a late peer is never baked into the replay.

Every dependency is an edge ``(pred, delay)``: a node starts at the latest
``end(pred) + delay`` of its *start* edges; it ends at ``start + duration`` or, if later,
the latest ``end(pred) + delay`` of its *end* edges (syncs and waits end when what they
waited for ends). :mod:`tracekit.replay.simulate` evaluates the graph.

**Profiler cost.** With a :class:`~tracekit.replay.costs.ProfilerCosts`, each cut on a
CPU thread sheds half the per-event cost of the event that starts or ends there
(``cpu_op_ns`` for operators and annotations, ``runtime_ns`` for runtime calls, each times
the weight of the event's kind: :func:`~tracekit.replay.costs.event_kinds`) from the
segment that ends at it; a segment cannot go below zero, and what it could not shed is
taken from the thread's next work segments. Launch latency sheds half the cost of a
runtime call that launched GPU work (:attr:`~tracekit.replay.costs.ProfilerCosts.launch_ns`).
GPU durations are kept as measured.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from tracekit.replay.costs import ProfilerCosts, event_kinds
from tracekit.replay.speed import step_speed
from tracekit.traces import schema
from tracekit.traces.traceset import RankTrace

#: runtime calls that block the calling thread until GPU work ends
SYNC_PATTERN = re.compile(r"(?:Device|Stream|Event|Ctx)Synchronize|^cudaMemcpy$|^cuMemcpyDtoH|^hipMemcpy$"
                          r"|^cudaMemcpy2D$|^cudaMemcpyFromSymbol$")
#: copy calls that block when the destination is pageable host memory (decided from the timing)
COPY_PATTERN = re.compile(r"Memcpy")
STREAM_WAIT_PATTERN = re.compile(r"StreamWaitEvent")
EVENT_RECORD_PATTERN = re.compile(r"EventRecord")
#: a stretch shorter than this is never taken for a wait on another thread
WAIT_MIN_NS = 10_000
#: ... and it must end at most this long after the other thread's cut, or this share of its length
WAKE_MAX_NS = 100_000
WAKE_FRACTION = 0.25
#: wake-up delay after a sync whose GPU work had already ended (no measured delay to copy)
DEFAULT_WAKE_NS = 3_000
#: how far a GPU op may start before the end of one it waited for (clock noise between streams)
CLOCK_SLACK_NS = 1_000
#: a GPU op is launch-bound when it starts this long after its stream's previous op ended
LAUNCH_BOUND_GAP_NS = 1_000

CPU_SEG, SYNC_SEG, WAIT_SEG, GPU_OP, ARRIVE, COLL = range(6)
KIND_NAMES = ("cpu", "sync", "wait", "gpu", "arrive", "collective")


@dataclass
class Graph:
    """Nodes as parallel lists (see module doc). ``sp``/``ep``: start/end edges ``[(pred, delay), ...]``."""

    dur: list[int] = field(default_factory=list)
    sp: list[list[tuple[int, int]]] = field(default_factory=list)
    ep: list[list[tuple[int, int]]] = field(default_factory=list)
    kind: list[int] = field(default_factory=list)
    rank: list[int] = field(default_factory=list)
    orig_start: list[int] = field(default_factory=list)
    orig_end: list[int] = field(default_factory=list)
    #: per rank: {"steps": [(step, start node, end node)], "gpu": the rank's ``RankTrace.gpu`` (None without
    #: GPU activity), "gpu_node": node of each of its rows, "origin": ns, "threads": {tid: _Thread},
    #: "coll": {(start_ns, end_ns) of a matched collective: (arrive node, kernel / range node)}}
    ranks: dict[int, dict] = field(default_factory=dict)
    #: what the evaluation had to work around (dependency cycles), for the report's notes
    notes: list[str] = field(default_factory=list)
    #: the window as recorded, where it differs from this graph (built with a profiler cost): every node's
    #: duration, and the start / end edges of the nodes whose delays shed the cost (:meth:`recorded`)
    dur_rec: list[int] = field(default_factory=list)
    sp_rec: dict[int, list[tuple[int, int]]] = field(default_factory=dict)
    ep_rec: dict[int, list[tuple[int, int]]] = field(default_factory=dict)

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
                     dur_rec=self.dur_rec)

    def add_chain(self, cuts: np.ndarray, kind: int, rank: int, lead: int) -> None:
        """Nodes for the pieces between consecutive ``cuts``, each after the one before; the first starts
        ``lead`` ns after the origin (bulk :meth:`add` of a thread's segments)."""
        n = cuts.size - 1
        if n <= 0:
            return
        first = len(self.dur)
        lengths = np.diff(cuts).tolist()
        self.dur.extend(lengths)
        self.dur_rec.extend(lengths)
        self.sp.append([(ORIGIN, lead)])
        self.sp.extend([[(v, 0)] for v in range(first, first + n - 1)])
        self.ep.extend([[] for _ in range(n)])
        self.kind.extend([kind] * n)
        self.rank.extend([rank] * n)
        self.orig_start.extend(cuts[:-1].tolist())
        self.orig_end.extend(cuts[1:].tolist())

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


ORIGIN = -1  # a start edge from the origin: ``(ORIGIN, delay)`` starts a node ``delay`` after time 0


@dataclass
class _Thread:
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


def cpu_events(rt: RankTrace) -> pd.DataFrame:
    """The rank's CPU-side events (operators, annotations, runtime calls) with their kind and name."""
    ev = rt.events
    sel = ev["kind"].isin((schema.CPU_OP, schema.ANNOTATION, schema.LAUNCH)).to_numpy()
    cols = ev.loc[sel, ["kind", "ts_ns", "end_ns", "tid", "correlation", "name"]]
    return cols[cols["end_ns"] >= cols["ts_ns"]]


def _seg_costs(ev: pd.DataFrame, cuts: np.ndarray, costs: ProfilerCosts) -> np.ndarray:
    """Profiler cost shed by each segment of a thread: half an event's cost at each of its two cuts,
    charged to the segment ending at the cut (module doc). ``ev`` carries ``cost_kind``
    (:func:`tracekit.replay.costs.event_kinds`)."""
    per_event = costs.per_event(ev["cost_kind"].to_numpy()) / 2.0
    at_cut = np.zeros(cuts.size)
    np.add.at(at_cut, np.searchsorted(cuts, ev["ts_ns"].to_numpy()), per_event)
    np.add.at(at_cut, np.searchsorted(cuts, ev["end_ns"].to_numpy()), per_event)
    return at_cut[1:]  # segment k ends at cut k + 1


def _shed(lengths: np.ndarray, cost: np.ndarray, work: np.ndarray) -> np.ndarray:
    """Segment durations after shedding ``cost``: work segments only, never below zero; what one could not
    shed is carried to the next work segment of the thread.

    In closed form: over the work segments in order, with P and S the running sums of their lengths and
    costs, the total shed by segment k is T_k = min(T_(k-1) + L_k, S_k) = P_k + min(0, min over j <= k of
    (S_j - P_j)); each segment sheds T_k - T_(k-1).
    """
    out = lengths.astype(float).copy()
    if not cost.any():
        return out
    idx = np.flatnonzero(work)
    if idx.size == 0:
        return out
    lw = out[idx]
    p = np.cumsum(lw)
    total = p + np.minimum(0.0, np.minimum.accumulate(np.cumsum(cost[idx]) - p))
    out[idx] = lw - np.diff(total, prepend=0.0)
    return np.maximum(out, 0.0)


class RankBuilder:
    """Adds one rank's nodes to a :class:`Graph` (module doc). Call :meth:`build`, then read
    :attr:`coll_nodes` ({(start_ns, end_ns): node}) for the cross-rank collective links."""

    def __init__(self, g: Graph, rt: RankTrace, costs: ProfilerCosts, origin: int) -> None:
        self.g, self.rt, self.costs, self.origin, self.rank = g, rt, costs, origin, rt.rank
        self.threads: dict[int, _Thread] = {}
        self.seg_kind: dict[int, np.ndarray] = {}
        #: (start_ns, end_ns) of a matched collective -> (its arrive node, its kernel / range node)
        self.coll_nodes: dict[tuple[int, int], tuple[int, int]] = {}
        self.by_tid: dict[int, pd.DataFrame] = {}
        self.gpu_node = np.zeros(0, dtype=np.int64)
        self.speed: dict[int, float] | None = None

    def build(self, coll_ranges: pd.DataFrame) -> None:
        """``coll_ranges``: this rank's matched collective instances (``start_ns``, ``end_ns``)."""
        cpu = cpu_events(self.rt)
        gpu_corr = self.rt.gpu["correlation"].to_numpy() if self.rt.has_gpu_activity else np.zeros(0, np.int64)
        cpu = cpu.assign(cost_kind=event_kinds(cpu, gpu_corr))
        self.by_tid = {int(tid): ev for tid, ev in cpu.groupby("tid", sort=True)}  # one grouping for every pass
        self._threads(cpu)
        self._gpu_ops(cpu)
        self._syncs(cpu)
        self._cpu_collectives(cpu, coll_ranges)
        self._waits(cpu)
        self._durations(cpu)
        self._steps(cpu)

    # -- CPU threads -------------------------------------------------------------------------------
    def _threads(self, cpu: pd.DataFrame) -> None:
        g = self.g
        for tid, ev in self.by_tid.items():
            cuts = np.unique(np.concatenate([ev["ts_ns"].to_numpy(), ev["end_ns"].to_numpy()]))
            worker = bool((ev["kind"] != schema.LAUNCH).any())
            th = _Thread(int(tid), cuts, len(g.dur), worker)
            g.add_chain(cuts, CPU_SEG, self.rank, int(cuts[0]) - self.origin)
            self.threads[int(tid)] = th
            self.seg_kind[int(tid)] = np.full(max(cuts.size - 1, 0), CPU_SEG, dtype=np.int8)

    def _covered(self, tid: int, s: int, e: int) -> range:
        """Segment indices (of thread ``tid``) inside ``[s, e]``."""
        cuts = self.threads[tid].cuts
        return range(int(np.searchsorted(cuts, s)), int(np.searchsorted(cuts, e)))

    def _launch_seg(self, tid: int, ts: int) -> tuple[int, int]:
        """Start edge target for work that begins at CPU time ``ts`` on ``tid``: (node, 0) of the
        segment ending there, or the origin."""
        th = self.threads.get(tid)
        node = th.seg_ending_at(ts) if th is not None else None
        return (node, 0) if node is not None else (ORIGIN, ts - self.origin)

    # -- GPU operations ----------------------------------------------------------------------------
    def _gpu_ops(self, cpu: pd.DataFrame) -> None:
        gpu = self.rt.gpu
        n = len(gpu)
        self.gpu = gpu
        self.gpu_node = np.full(n, -1, dtype=np.int64)
        if n == 0:
            return
        ts, end = gpu["ts_ns"].to_numpy(), gpu["end_ns"].to_numpy()
        stream, pre = gpu["stream"].to_numpy(), gpu["pre_window"].to_numpy(dtype=bool)
        lts, ltid = gpu["launch_ts_ns"].to_numpy(), gpu["launch_tid"].to_numpy()
        lat_rec = self._latencies(ts, end, stream, pre, lts)
        lat = np.maximum(0, lat_rec - self.costs.launch_ns / 2).astype(np.int64)
        deps = self._stream_wait_deps(cpu, gpu)
        last_on: dict[int, int] = {}
        g = self.g
        for i in range(n):
            sp: list[tuple[int, int]] = []
            s = int(stream[i])
            if s in last_on:
                sp.append((last_on[s], 0))
            shed = 0
            if pre[i]:
                sp.append((ORIGIN, int(ts[i]) - self.origin))
            else:
                node, d = self._launch_seg(int(ltid[i]), int(lts[i]))
                sp.append((node, d + int(lat[i])))
                shed = int(lat_rec[i] - lat[i])
            for j in deps.get(i, ()):
                # the trace does not name the stream an event was recorded on: a candidate still running
                # when this op started was not waited for
                if self.gpu_node[j] >= 0 and end[j] <= ts[i] + CLOCK_SLACK_NS:
                    sp.append((int(self.gpu_node[j]), 0))
            node = g.add(int(end[i] - ts[i]), GPU_OP, self.rank, int(ts[i]), int(end[i]), sp)
            if shed:  # the launch edge as recorded: the latency before the runtime call's cost was shed
                at = 1 if s in last_on else 0
                g.sp_rec[node] = [*sp[:at], (sp[at][0], sp[at][1] + shed), *sp[at + 1:]]
            self.gpu_node[i] = node
            last_on[s] = node

    def _latencies(self, ts: np.ndarray, end: np.ndarray, stream: np.ndarray, pre: np.ndarray,
                   lts: np.ndarray) -> np.ndarray:
        """Launch-to-start latency per GPU op (module doc): measured where the op was launch-bound
        (capped at 3x the rank's median), else the median, as recorded (the caller sheds the profiler's cost)."""
        prev_end = np.full(ts.size, np.iinfo(np.int64).min)
        order = np.lexsort((ts, stream))
        same = np.r_[False, stream[order][1:] == stream[order][:-1]]
        prev_end[order[same]] = end[order][np.flatnonzero(same) - 1]
        observed = np.where(pre, 0, ts - lts)
        bound = ~pre & (ts - prev_end > LAUNCH_BOUND_GAP_NS) & (observed >= 0)
        typical = float(np.median(observed[bound])) if bound.any() else 5_000.0
        lat = np.where(bound, np.minimum(observed, 3 * typical), np.minimum(observed, typical))
        return lat.astype(np.int64)

    def _stream_wait_deps(self, cpu: pd.DataFrame, gpu: pd.DataFrame) -> dict[int, list[int]]:
        """GPU op index -> indices of the ops it waits for on other streams (``cudaStreamWaitEvent``)."""
        names = cpu["name"]
        waits = cpu[schema.name_mask(names, STREAM_WAIT_PATTERN.pattern)]
        if waits.empty:
            return {}
        records = cpu[schema.name_mask(names, EVENT_RECORD_PATTERN.pattern)]
        stream, lts = gpu["stream"].to_numpy(), gpu["launch_ts_ns"].to_numpy()
        ltid, pre = gpu["launch_tid"].to_numpy(), gpu["pre_window"].to_numpy(dtype=bool)
        by_stream = {}
        for s in np.unique(stream):
            ops = np.flatnonzero(stream == s)
            by_stream[int(s)] = (ops, np.maximum.accumulate(lts[ops]))
        out: dict[int, list[int]] = {}
        for tid, w in waits.groupby("tid"):
            mine = np.flatnonzero(~pre & (ltid == tid))
            mine = mine[np.argsort(lts[mine], kind="stable")]
            rec = np.sort(records.loc[records["tid"] == tid, "ts_ns"].to_numpy())
            wts = w["ts_ns"].to_numpy()
            k = np.searchsorted(lts[mine], wts, side="right")  # the next launch of the thread after each wait
            r = np.searchsorted(rec, wts) - 1  # the thread's last event record before it
            ok = (k < mine.size) & (r >= 0)
            first, rec_ts = mine[k[ok]], rec[r[ok]]
            # every op of that launch (a graph launch has many): ops of the thread with the same launch time
            lo = np.searchsorted(lts[mine], lts[first], side="left")
            hi = np.searchsorted(lts[mine], lts[first], side="right")
            for s_id, (ops, launched) in by_stream.items():
                j = np.searchsorted(launched, rec_ts) - 1
                use = (j >= 0) & (stream[first] != s_id)
                for a_, b_, dep in zip(lo[use], hi[use], ops[j[use]]):
                    for t in mine[a_:b_]:
                        out.setdefault(int(t), []).append(int(dep))
        return out

    # -- syncs -------------------------------------------------------------------------------------
    def _gpu_waited_for(self, call_end: int) -> int | None:
        """Index of the GPU op launched before ``call_end`` whose end is the latest at or before it."""
        k = int(np.searchsorted(self._ends, call_end, side="right")) - 1
        for _ in range(64):
            if k < 0:
                return None
            i = int(self._by_end[k])
            if self._launched[i] < call_end:
                return i
            k -= 1
        return None

    def _syncs(self, cpu: pd.DataFrame) -> None:
        self.end_edges: dict[int, list[tuple[int, int]]] = {}
        self.zero: set[int] = set()
        if not len(self.gpu_node):
            return
        end = self.gpu["end_ns"].to_numpy()
        self._by_end = np.argsort(end, kind="stable")  # for _gpu_waited_for
        self._ends = end[self._by_end]
        self._launched = np.where(self.gpu["pre_window"].to_numpy(dtype=bool), -1, self.gpu["launch_ts_ns"].to_numpy())
        rt_calls = cpu[(cpu["kind"] == schema.LAUNCH).to_numpy()]
        sync = schema.name_mask(rt_calls["name"], SYNC_PATTERN.pattern)
        copy = schema.name_mask(rt_calls["name"], COPY_PATTERN.pattern) & ~sync
        own = self._own_op_end(rt_calls)
        s, e = rt_calls["ts_ns"].to_numpy(), rt_calls["end_ns"].to_numpy()
        blocking = copy & (own > s) & (own <= e)
        wake = []
        for i in np.flatnonzero(sync | blocking):
            dep = self._gpu_waited_for(int(e[i]))
            segs = self._covered(int(rt_calls["tid"].iat[i]), int(s[i]), int(e[i]))
            if dep is None or not len(segs):
                continue
            tid = int(rt_calls["tid"].iat[i])
            g_end = int(self.gpu["end_ns"].iat[dep])
            nodes = [self.threads[tid].first_node + k for k in segs]
            self.seg_kind[tid][list(segs)] = SYNC_SEG
            if g_end > s[i]:  # the call waited: it lasts until the GPU work ends, plus the wake-up
                self.zero.update(nodes)
                self.end_edges.setdefault(nodes[-1], []).append((int(self.gpu_node[dep]), int(e[i]) - g_end))
                wake.append(int(e[i]) - g_end)
            else:
                self.end_edges.setdefault(nodes[-1], []).append((int(self.gpu_node[dep]), -1))
        typical = int(np.median(wake)) if wake else DEFAULT_WAKE_NS
        for edges in self.end_edges.values():  # no measured wake-up: the rank's typical one
            edges[:] = [(p, typical if d < 0 else d) for p, d in edges]

    def _own_op_end(self, calls: pd.DataFrame) -> np.ndarray:
        """End of the GPU op each runtime call launched (by correlation), -1 when none."""
        corr = self.gpu["correlation"].to_numpy()
        order = np.argsort(corr, kind="stable")
        c = calls["correlation"].to_numpy()
        pos = np.clip(np.searchsorted(corr[order], c), 0, max(corr.size - 1, 0))
        hit = (corr.size > 0) & (c >= 0) & (corr[order][pos] == c)
        return np.where(hit, self.gpu["end_ns"].to_numpy()[order][pos], -1)

    # -- collectives, waits, durations, steps --------------------------------------------------------
    def _split_arrive(self, node: int) -> int:
        """Give ``node`` an arrive node carrying its start edges; ``node`` then starts at its arrival."""
        g = self.g
        arrive = g.add(0, ARRIVE, self.rank, g.orig_start[node], g.orig_start[node], g.sp[node])
        g.sp[node] = [(arrive, 0)]
        if node in g.sp_rec:
            g.sp_rec[arrive] = g.sp_rec.pop(node)
        return arrive

    def _cpu_collectives(self, cpu: pd.DataFrame, coll_ranges: pd.DataFrame) -> None:
        """Arrive nodes for this rank's matched collectives: kernels on GPU runs, backend ranges on CPU."""
        if coll_ranges.empty:
            return
        keys = set(zip(coll_ranges["start_ns"].astype(np.int64), coll_ranges["end_ns"].astype(np.int64)))
        if len(self.gpu_node):
            ts, end = self.gpu["ts_ns"].to_numpy(), self.gpu["end_ns"].to_numpy()
            for i in range(ts.size):
                if (int(ts[i]), int(end[i])) in keys:
                    node = int(self.gpu_node[i])
                    self.coll_nodes[(int(ts[i]), int(end[i]))] = (self._split_arrive(node), node)
            return
        rng = cpu[(cpu["kind"] == schema.ANNOTATION).to_numpy()]
        for s, e, tid in zip(rng["ts_ns"].to_numpy(), rng["end_ns"].to_numpy(), rng["tid"].to_numpy()):
            if (int(s), int(e)) not in keys:
                continue
            segs = self._covered(int(tid), int(s), int(e))
            if not len(segs):
                continue
            th = self.threads[int(tid)]
            node = th.first_node + segs[0]
            self.seg_kind[int(tid)][list(segs)] = COLL
            self.zero.update(th.first_node + k for k in segs[1:])
            self.g.kind[node] = COLL
            self.coll_nodes[(int(s), int(e))] = (self._split_arrive(node), node)

    def _signals(self, tid: int) -> tuple[np.ndarray, np.ndarray]:
        """(cut times, node of the segment ending there) on the other worker threads, by time."""
        times, nodes = [], []
        for other in self.threads.values():
            if other.tid == tid or not other.worker or other.cuts.size < 2:
                continue
            times.append(other.cuts[1:])
            nodes.append(np.arange(other.first_node, other.first_node + other.cuts.size - 1))
        if not times:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        t, n = np.concatenate(times), np.concatenate(nodes)
        order = np.argsort(t, kind="stable")
        return t[order], n[order]

    def _waits(self, cpu: pd.DataFrame) -> None:
        for tid, ev in self.by_tid.items():
            th, kind = self.threads[int(tid)], self.seg_kind[int(tid)]
            if kind.size == 0:
                continue
            in_call = np.zeros(kind.size, dtype=bool)
            calls = ev[(ev["kind"] == schema.LAUNCH).to_numpy()]
            lo = np.searchsorted(th.cuts, calls["ts_ns"].to_numpy())
            hi = np.searchsorted(th.cuts, calls["end_ns"].to_numpy())
            for a, b in zip(lo, hi):
                in_call[a:b] = True
            t, nodes = self._signals(int(tid))
            if t.size == 0:
                continue
            start, end = th.cuts[:-1], th.cuts[1:]
            j = np.searchsorted(t, end, side="right") - 1
            a = np.where(j >= 0, t[np.maximum(j, 0)], -1)
            hit = ((kind == CPU_SEG) & ~in_call & (end - start >= WAIT_MIN_NS) & (j >= 0) & (a > start)
                   & (end - a <= np.maximum(WAKE_MAX_NS, WAKE_FRACTION * (end - start))))
            for k in np.flatnonzero(hit):
                node = th.first_node + int(k)
                kind[k] = WAIT_SEG
                self.g.kind[node] = WAIT_SEG
                self.zero.add(node)
                self.end_edges.setdefault(node, []).append((int(nodes[j[k]]), int(end[k] - a[k])))

    def _durations(self, cpu: pd.DataFrame) -> None:
        g = self.g
        for tid, ev in self.by_tid.items():
            th, kind = self.threads[int(tid)], self.seg_kind[int(tid)]
            if kind.size == 0:
                continue
            cost = _seg_costs(ev, th.cuts, self.costs)
            work = _shed(np.diff(th.cuts), cost, kind == CPU_SEG)
            dur = np.rint(np.where(kind == CPU_SEG, work * self._seg_speed(th.cuts), work)).astype(np.int64)
            rec = np.diff(th.cuts).astype(np.int64)
            first = th.first_node
            zero = [v - first for v in self.zero if first <= v < first + kind.size]
            dur[zero] = rec[zero] = 0
            coll = kind == COLL  # its duration is the transfer time, set when the ranks are linked
            dur[coll] = rec[coll] = np.asarray(g.dur[first:first + kind.size], dtype=np.int64)[coll]
            g.dur[first:first + kind.size] = dur.tolist()
            g.dur_rec[first:first + kind.size] = rec.tolist()
            for k in np.flatnonzero(kind == SYNC_SEG):
                g.kind[first + k] = SYNC_SEG
            for node, edges in self.end_edges.items():
                if first <= node < first + kind.size:
                    c = int(round(cost[node - first]))
                    g.ep[node] = [(p, max(0, d - c)) for p, d in edges]
                    g.ep_rec[node] = list(edges)

    def _seg_speed(self, cuts: np.ndarray) -> np.ndarray:
        """Speed factor (:mod:`tracekit.replay.speed`) of each segment between ``cuts``: its step's, 1.0
        for segments outside every step."""
        out = np.ones(max(cuts.size - 1, 0))
        if not self.costs.step_speed or out.size == 0:
            return out
        if self.speed is None:
            self.speed = step_speed(cpu_events(self.rt), self.rt.steps)
        for step, s, e in zip(self.rt.steps["step"], self.rt.steps["ts_ns"], self.rt.steps["end_ns"]):
            f = self.speed.get(int(step), 1.0)
            if f != 1.0:
                a, b = np.searchsorted(cuts, s), np.searchsorted(cuts, e)
                out[a:max(a, b)] = f
        return out

    def _steps(self, cpu: pd.DataFrame) -> None:
        steps = self.rt.steps
        marks = cpu[schema.name_mask(cpu["name"], schema.STEP_PREFIX, prefix=True)]
        out = []
        for step, s, e in zip(steps["step"], steps["ts_ns"], steps["end_ns"]):
            row = marks[(marks["ts_ns"] == s) & (marks["end_ns"] == e)]
            if row.empty:
                continue
            th = self.threads[int(row["tid"].iat[0])]
            a, b = th.seg_starting_at(int(s)), th.seg_ending_at(int(e))
            if a is not None and b is not None:
                out.append((int(step), a, b))
        self.g.ranks[self.rank] = {"steps": out, "gpu": self.gpu if len(self.gpu_node) else None,
                                   "gpu_node": self.gpu_node, "origin": self.origin,
                                   # for what-if scenarios (tracekit.replay.scenarios), which edit the graph
                                   "threads": self.threads, "coll": self.coll_nodes}
