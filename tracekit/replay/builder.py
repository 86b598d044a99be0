"""Build the replay graph (:mod:`tracekit.replay.graph`) of a profiled window from the traces (no torch).

Nodes (times in integer ns):

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
  when its stream is free (plus, for an op queued behind the one before, the gap it
  started after it: :meth:`RankBuilder._latencies`), its launch call has started and the
  launch latency passed (measured per operation where the op was launch-bound, at most
  the rank's typical latency otherwise), and the work it waits for across streams is done.
  Cross-stream waits come from ``cudaStreamWaitEvent``: the wait applies to the next
  launch of the same thread, and the event is the last ``cudaEventRecord`` of that
  thread before it (in a trace with no ``cudaEventRecord`` at all, as kineto wrote them
  before 2023, the wait itself: PyTorch records the event right before it waits); the launch then waits for the last operation enqueued before that
  record on every other stream of the device that had ended when the launched operation
  started in the recording (the trace does not name the event's stream; a candidate
  still running then cannot have been waited for).

- **Collectives across ranks.** A matched collective instance (the ``step_seq``-th of
  its process group in its step, checked as in :mod:`tracekit.analyses.crossrank`)
  becomes one *arrive* node per rank (when that rank's kernel or range could start) and
  the kernel/range itself, which ends at the latest arrival of all ranks plus this
  rank's measured transfer time (its end minus the latest start across ranks): waiting
  for a late peer is never baked into the replay. The arrivals meet at one *group* node
  per instance (:meth:`Graph.link`), so an instance across N ranks has 2N edges, not N².

Every dependency is an edge ``(pred, delay)`` (:mod:`tracekit.replay.graph`: how the evaluation reads them,
and their kinds); :mod:`tracekit.replay.simulate` evaluates the graph.

**Profiler cost.** With a :class:`~tracekit.replay.costs.ProfilerCosts`, each cut on a
CPU thread sheds half the per-event cost of the event that starts or ends there
(``cpu_op_ns`` for operators and annotations, ``runtime_ns`` for runtime calls, each times
the weight of the event's kind: :func:`~tracekit.replay.costs.event_kinds`) from the
segment that ends at it, but never more than the thread's bound per cut
(:meth:`~tracekit.replay.costs.ProfilerCosts.cut_bound`: a quantile of the lengths of its work
segments); a segment cannot go below zero, and what it could not shed is taken from the
thread's next work segments. Launch latency sheds half the cost of a
runtime call that launched GPU work (:attr:`~tracekit.replay.costs.ProfilerCosts.launch_ns`).
GPU durations are kept as measured.
"""


from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from tracekit.analyses.graphbreaks import HOST_SYNC_PATTERN
from tracekit.replay.costs import TRITON_PREFIX, ProfilerCosts, kinds_of
from tracekit.replay.graph import (ARRIVE, COLL, CPU_SEG, GPU_OP, ORIGIN, SYNC_SEG, WAIT_SEG, Graph, RankNodes,
                                   Thread)
from tracekit.replay.speed import step_speed_of
from tracekit.traces import schema
from tracekit.traces.traceset import RankTrace

#: runtime calls that block the calling thread until GPU work ends
SYNC_PATTERN = re.compile(HOST_SYNC_PATTERN)  # the graph-break tables' (host_sync_us): the same calls
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


#: the columns of ``RankTrace.gpu`` kept in ``RankNodes.gpu`` (step figures, bucket scenarios)
GPU_COLUMNS = ("step", "pre_window", "launch_ts_ns", "end_ns", "stream")


def cpu_events(rt: RankTrace) -> pd.DataFrame:
    """The rank's CPU-side events (operators, annotations, runtime calls) with their kind and name."""
    return rt.events.iloc[cpu_rows(rt)][["kind", "ts_ns", "end_ns", "tid", "correlation", "name"]]


def cpu_rows(rt: RankTrace) -> np.ndarray:
    """Rows of ``rt.events`` that :func:`cpu_events` keeps, in trace order."""
    kind, ts, end = rt.column("kind"), rt.column("ts_ns"), rt.column("end_ns")
    return np.flatnonzero(np.isin(kind, (schema.CPU_OP, schema.ANNOTATION, schema.LAUNCH)) & (end >= ts))


def _name_codes(rt: RankTrace) -> np.ndarray:
    """One integer per distinct event name: the Categorical's codes (a plain column is factorized)."""
    if rt.categories("name") is not None:  # the codes, without building the event table
        return rt.column("name")
    return pd.factorize(rt.events["name"])[0]


@dataclass
class CpuEvents:
    """:func:`cpu_events` as numpy columns (trace order), with the name tests the builder needs."""

    kind: np.ndarray
    ts: np.ndarray
    end: np.ndarray
    tid: np.ndarray
    corr: np.ndarray
    name: np.ndarray          # one code per distinct name (the events' Categorical codes)
    sync: np.ndarray          # name matches SYNC_PATTERN
    copy: np.ndarray          # ... COPY_PATTERN
    stream_wait: np.ndarray   # ... STREAM_WAIT_PATTERN
    record: np.ndarray        # ... EVENT_RECORD_PATTERN
    step: np.ndarray          # name starts with ProfilerStep#
    cost_kind: np.ndarray     # tracekit.replay.costs.event_kinds

    @classmethod
    def of(cls, rt: RankTrace, gpu_correlations: np.ndarray) -> CpuEvents:
        rows = cpu_rows(rt)
        col = {c: rt.column(c)[rows] for c in ("kind", "ts_ns", "end_ns", "tid", "correlation")}

        def hits(pattern: str, prefix: bool = False) -> np.ndarray:
            return rt.name_hits(pattern, prefix=prefix)[rows]

        triton = hits(TRITON_PREFIX, True)
        return cls(kind=col["kind"], ts=col["ts_ns"], end=col["end_ns"], tid=col["tid"], corr=col["correlation"],
                   name=_name_codes(rt)[rows],
                   sync=hits(SYNC_PATTERN.pattern), copy=hits(COPY_PATTERN.pattern),
                   stream_wait=hits(STREAM_WAIT_PATTERN.pattern), record=hits(EVENT_RECORD_PATTERN.pattern),
                   step=hits(schema.STEP_PREFIX, True),
                   cost_kind=kinds_of(col["kind"], col["correlation"], triton, gpu_correlations))


def _seg_costs(ts: np.ndarray, end: np.ndarray, cost_kind: np.ndarray, cuts: np.ndarray,
               costs: ProfilerCosts) -> np.ndarray:
    """Profiler cost shed by each segment of a thread: half an event's cost at each of its two cuts,
    charged to the segment ending at the cut (module doc). ``cost_kind``: the events' kinds
    (:func:`tracekit.replay.costs.event_kinds`)."""
    per_event = costs.per_event(cost_kind) / 2.0
    at_cut = np.bincount(np.searchsorted(cuts, ts), per_event, minlength=cuts.size)
    at_cut += np.bincount(np.searchsorted(cuts, end), per_event, minlength=cuts.size)
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


def _woken(t: np.ndarray, start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each stretch ``[start, end]`` of a thread, given ``t``, the sorted cut times of the other worker threads:
    ``(j, a, woken)``: the index in ``t`` of the latest cut at or before ``end`` (-1: none), its time, and whether
    the stretch is a wait that cut ended (module doc: at least :data:`WAIT_MIN_NS` long, the cut inside it, and
    the stretch ending within :data:`WAKE_MAX_NS` or :data:`WAKE_FRACTION` of its length after it)."""
    j = np.searchsorted(t, end, side="right") - 1
    a = np.where(j >= 0, t[np.maximum(j, 0)], -1) if t.size else np.full(end.shape, -1)
    woken = ((end - start >= WAIT_MIN_NS) & (j >= 0) & (a > start)
             & (end - a <= np.maximum(WAKE_MAX_NS, WAKE_FRACTION * (end - start))))
    return j, a, woken


def _segments_ending_at(th: Thread, t: np.ndarray) -> np.ndarray:
    """Node of the segment of ``th`` that ends at each cut time of ``t``, -1 where ``t`` is not a cut or is the
    thread's first (vectorised :meth:`Thread.seg_ending_at`)."""
    cuts = th.cuts
    k = np.searchsorted(cuts, t)
    ok = (k > 0) & (k < cuts.size) & (cuts[np.minimum(k, cuts.size - 1)] == t)
    return np.where(ok, th.first_node + k - 1, -1)


class RankBuilder:
    """Adds one rank's nodes to a :class:`Graph` (module doc). Call :meth:`build`, then read
    :attr:`coll_nodes` ({(start_ns, end_ns): node}) for the cross-rank collective links."""

    def __init__(self, g: Graph, rt: RankTrace, costs: ProfilerCosts, origin: int) -> None:
        self.g, self.rt, self.costs, self.origin, self.rank = g, rt, costs, origin, rt.rank
        self.threads: dict[int, Thread] = {}
        self.seg_kind: dict[int, np.ndarray] = {}
        #: (start_ns, end_ns) of a matched collective -> (its arrive node, its kernel / range node)
        self.coll_nodes: dict[tuple[int, int], tuple[int, int]] = {}
        #: tid -> rows of :attr:`cpu` on that thread, in trace order
        self.by_tid: dict[int, np.ndarray] = {}
        self.gpu_node = np.zeros(0, dtype=np.int64)
        self.speed: dict[int, float] | None = None
        self.end_edges: dict[int, list[tuple[int, int]]] = {}
        self.zero: set[int] = set()
        #: tid -> :meth:`_signals` of that thread
        self.signals: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def build(self, coll_ranges: dict[str, Any]) -> None:
        """``coll_ranges``: this rank's matched collective instances (``start_ns``, ``end_ns`` arrays)."""
        rt = self.rt
        has_gpu = rt.has_gpu_activity
        # the columns of rt.gpu that the step figures and scenarios read (numpy arrays), not the whole table
        self.gpu = {c: rt.gpu_column(c) for c in GPU_COLUMNS} if has_gpu else None
        gcol = {c: rt.gpu_column(c) for c in ("ts_ns", "end_ns", "stream", "pre_window", "launch_ts_ns",
                                              "launch_tid", "correlation")} if has_gpu else None
        self.gcol = gcol
        self.cpu = cpu = CpuEvents.of(rt, gcol["correlation"] if has_gpu else np.zeros(0, np.int64))
        order = np.argsort(cpu.tid, kind="stable")  # one grouping for every pass
        tids, first = np.unique(cpu.tid[order], return_index=True)
        self.by_tid = {int(t): rows for t, rows in zip(tids.tolist(), np.split(order, first[1:]))} if tids.size \
            else {}
        self._threads()
        self._gpu_ops()
        self._syncs()
        self._cpu_collectives(coll_ranges)
        self._waits()
        self._first_wakes()
        self._durations()
        self._steps()

    # -- CPU threads -------------------------------------------------------------------------------
    def _threads(self) -> None:
        g, cpu = self.g, self.cpu
        for tid, rows in self.by_tid.items():
            cuts = np.sort(np.concatenate([cpu.ts[rows], cpu.end[rows]]))
            cuts = cuts[np.r_[True, cuts[1:] != cuts[:-1]]]  # np.unique's result, without its hash pass
            worker = bool((cpu.kind[rows] != schema.LAUNCH).any())
            th = Thread(tid, cuts, len(g.dur), worker)
            g.add_chain(cuts, CPU_SEG, self.rank, int(cuts[0]) - self.origin)
            self.threads[tid] = th
            self.seg_kind[tid] = np.full(max(cuts.size - 1, 0), CPU_SEG, dtype=np.int8)

    def _covered(self, tid: int, s: int, e: int) -> range:
        """Segment indices (of thread ``tid``) inside ``[s, e]``."""
        cuts = self.threads[tid].cuts
        return range(int(np.searchsorted(cuts, s)), int(np.searchsorted(cuts, e)))

    def _launch_segs(self, tid: np.ndarray, ts: np.ndarray) -> np.ndarray:
        """Per item: the node of the segment of thread ``tid`` ending at CPU time ``ts`` (where work that begins
        there starts), -1 where there is none (the work then starts ``ts`` after the origin)."""
        out = np.full(ts.size, -1, dtype=np.int64)
        for t in np.unique(tid).tolist():
            th = self.threads.get(int(t))
            if th is not None:
                sel = np.flatnonzero(tid == t)
                out[sel] = _segments_ending_at(th, ts[sel])
        return out

    # -- GPU operations ----------------------------------------------------------------------------
    def _gpu_ops(self) -> None:
        if self.gcol is None or not self.gcol["ts_ns"].size:
            return
        c = self.gcol
        ts, end, stream = c["ts_ns"], c["end_ns"], c["stream"]
        pre, lts, ltid = c["pre_window"].astype(bool), c["launch_ts_ns"], c["launch_tid"]
        n = ts.size
        lat_rec, gap_rec, gap = self._latencies(ts, end, stream, pre, lts)
        lat = np.maximum(0, lat_rec - self.costs.launch_ns / 2).astype(np.int64)
        deps = self._stream_wait_deps(stream, lts, ltid, pre)
        g = self.g
        base = len(g.dur)
        self.gpu_node = np.arange(base, base + n, dtype=np.int64)
        by_stream = np.lexsort((np.arange(n), stream))  # the previous op on the same stream
        prev = np.full(n, -1, dtype=np.int64)
        same = stream[by_stream][1:] == stream[by_stream][:-1]
        prev[by_stream[1:][same]] = base + by_stream[:-1][same]
        seg = np.where(pre, -1, self._launch_segs(ltid, lts))
        # the launch edge: from the origin for pre-window ops, else from the launch call's segment
        src = np.where(pre | (seg < 0), ORIGIN, seg)
        delay = np.where(pre, ts - self.origin, np.where(seg < 0, lts - self.origin, 0) + lat)
        shed = np.where(pre, 0, lat_rec - lat)
        sps, recs = [], {}
        for i, (p, s_, d, sh, gp, gr) in enumerate(zip(prev.tolist(), src.tolist(), delay.tolist(), shed.tolist(),
                                                        gap.tolist(), gap_rec.tolist())):
            sp = [(p, gp), (s_, d)] if p >= 0 else [(s_, d)]
            for j in deps.get(i, ()):
                # the trace does not name the stream an event was recorded on: a candidate still running
                # when this op started was not waited for
                if j < i and end[j] <= ts[i] + CLOCK_SLACK_NS:
                    sp.append((base + j, 0))
            sps.append(sp)
            if sh or gr != gp:  # as recorded: the latency before the runtime call's cost was shed; a queued op's gap
                at = 1 if p >= 0 else 0
                recs[base + i] = [*([(p, gr)] if p >= 0 else []), (s_, d + sh), *sp[at + 1:]]
        g.add_many(end - ts, GPU_OP, self.rank, ts, end, sps)
        g.sp_rec.update(recs)

    def _latencies(self, ts: np.ndarray, end: np.ndarray, stream: np.ndarray, pre: np.ndarray,
                   lts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(latency, gap, predicted gap)`` per GPU op (module doc), as recorded (the caller sheds the profiler's
        cost from the latency).

        An op is *launch-bound* when its stream was idle when it was launched (its previous op had ended)
        and it started more than :data:`LAUNCH_BOUND_GAP_NS` after that op: its latency is the measured one,
        capped at 3x the rank's median over such ops; every other op gets at most that median. An op
        launched while its stream was still busy was *queued*: it waited for its predecessor (or for work on
        another stream), not for its launch, and ``gap`` is how long after its predecessor's end it started
        (0 for the others). The replay of the recording keeps the gap; the prediction's is at most 3x the
        rank's median gap of queued ops (the GPU's own few µs between back-to-back kernels), not a long one
        (an NCCL kernel queued behind another starts once a GEMM beside it frees SMs, which the replay does
        not model; or an unmodelled wait on work the profiled CPU launched late).

        Why queued ops are told apart: counting an op as launch-bound whenever it starts more than the threshold
        after its predecessor would let collectives queued behind each other, a few µs apart, make the rank's
        median latency milliseconds, and a faster network in a scenario could not move them earlier
        (docs/whatif.md).
        """
        prev_end = np.full(ts.size, np.iinfo(np.int64).min)
        order = np.lexsort((ts, stream))
        same = np.r_[False, stream[order][1:] == stream[order][:-1]]
        prev_end[order[same]] = end[order][np.flatnonzero(same) - 1]
        observed = np.where(pre, 0, ts - lts)
        has_prev = prev_end > np.iinfo(np.int64).min
        queued = ~pre & has_prev & (prev_end > lts)
        bound = ~pre & ~queued & (ts - prev_end > LAUNCH_BOUND_GAP_NS) & (observed >= 0)
        typical = float(np.median(observed[bound])) if bound.any() else 5_000.0
        lat = np.where(bound, np.minimum(observed, 3 * typical), np.minimum(observed, typical))
        gap = np.where(queued, np.maximum(ts - prev_end, 0), 0).astype(np.int64)
        cap = 3 * int(np.median(gap[queued])) if queued.any() else 0
        return lat.astype(np.int64), gap, np.minimum(gap, cap)

    def _stream_wait_deps(self, stream: np.ndarray, lts: np.ndarray, ltid: np.ndarray,
                          pre: np.ndarray) -> dict[int, list[int]]:
        """GPU op index -> indices of the ops it waits for on other streams (``cudaStreamWaitEvent``)."""
        cpu = self.cpu
        waits = np.flatnonzero(cpu.stream_wait)
        if not waits.size:
            return {}
        records = np.flatnonzero(cpu.record)
        # kineto before 2023 left cudaEventRecord out of the trace; PyTorch records the event right before the
        # wait (Stream.wait_stream, c10d's NCCL stream), so with no record at all each wait stands for its own
        no_records = not records.size
        by_stream = {}
        for s in np.unique(stream):
            ops = np.flatnonzero(stream == s)
            by_stream[int(s)] = (ops, np.maximum.accumulate(lts[ops]))
        out: dict[int, list[int]] = {}
        for tid in np.unique(cpu.tid[waits]).tolist():
            mine = np.flatnonzero(~pre & (ltid == tid))
            mine = mine[np.argsort(lts[mine], kind="stable")]
            wts = cpu.ts[waits[cpu.tid[waits] == tid]]
            rec = np.sort(wts) - 1 if no_records else np.sort(cpu.ts[records[cpu.tid[records] == tid]])
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

    def _syncs(self) -> None:
        if not len(self.gpu_node):
            return
        c, cpu = self.gcol, self.cpu
        end = c["end_ns"]
        self._by_end = np.argsort(end, kind="stable")  # for _gpu_waited_for
        self._ends = end[self._by_end]
        self._launched = np.where(c["pre_window"].astype(bool), -1, c["launch_ts_ns"])
        calls = np.flatnonzero(cpu.kind == schema.LAUNCH)
        sync = cpu.sync[calls]
        copy = cpu.copy[calls] & ~sync
        s, e, tids = cpu.ts[calls], cpu.end[calls], cpu.tid[calls]
        own = self._own_op_end(cpu.corr[calls])
        blocking = copy & (own > s) & (own <= e)
        wake = []
        for i in np.flatnonzero(sync | blocking).tolist():
            dep = self._gpu_waited_for(int(e[i]))
            tid = int(tids[i])
            segs = self._covered(tid, int(s[i]), int(e[i]))
            if dep is None or not len(segs):
                continue
            g_end = int(end[dep])
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

    def _own_op_end(self, c: np.ndarray) -> np.ndarray:
        """End of the GPU op each runtime call (correlation ids ``c``) launched, -1 when none."""
        corr = self.gcol["correlation"]
        order = np.argsort(corr, kind="stable")
        pos = np.clip(np.searchsorted(corr[order], c), 0, max(corr.size - 1, 0))
        hit = (corr.size > 0) & (c >= 0) & (corr[order][pos] == c)
        return np.where(hit, self.gcol["end_ns"][order][pos], -1)

    # -- collectives, waits, durations, steps --------------------------------------------------------
    def _split_arrive(self, node: int) -> int:
        """Give ``node`` an arrive node carrying its start edges; ``node`` then starts at its arrival."""
        g = self.g
        arrive = g.add(0, ARRIVE, self.rank, g.orig_start[node], g.orig_start[node], g.start_edges(node))
        g.sp[node] = [(arrive, 0)]
        if node in g.sp_rec:
            g.sp_rec[arrive] = g.sp_rec.pop(node)
        return arrive

    def _cpu_collectives(self, coll_ranges: pd.DataFrame) -> None:
        """Arrive nodes for this rank's matched collectives: kernels on GPU runs, backend ranges on CPU."""
        if not len(coll_ranges["start_ns"]):
            return
        keys = set(zip(np.asarray(coll_ranges["start_ns"], dtype=np.int64).tolist(),
                       np.asarray(coll_ranges["end_ns"], dtype=np.int64).tolist()))
        if len(self.gpu_node):
            ts, end = self.gcol["ts_ns"].tolist(), self.gcol["end_ns"].tolist()
            for i, key in enumerate(zip(ts, end)):
                if key in keys:
                    node = int(self.gpu_node[i])
                    self.coll_nodes[key] = (self._split_arrive(node), node)
            return
        cpu = self.cpu
        rng = np.flatnonzero(cpu.kind == schema.ANNOTATION)
        for s, e, tid in zip(cpu.ts[rng].tolist(), cpu.end[rng].tolist(), cpu.tid[rng].tolist()):
            if (s, e) not in keys:
                continue
            segs = self._covered(tid, s, e)
            if not len(segs):
                continue
            th = self.threads[tid]
            node = th.first_node + segs[0]
            self.seg_kind[tid][list(segs)] = COLL
            self.zero.update(th.first_node + k for k in segs[1:])
            self.g.kind[node] = COLL
            self.coll_nodes[(s, e)] = (self._split_arrive(node), node)

    def _signals(self, tid: int) -> tuple[np.ndarray, np.ndarray]:
        """(cut times, node of the segment ending there) on the other worker threads, by time (computed once per
        thread: the waits and the first wake-ups both read them)."""
        have = self.signals.get(tid)
        if have is None:
            have = self.signals[tid] = self._signals_of(tid)
        return have

    def _signals_of(self, tid: int) -> tuple[np.ndarray, np.ndarray]:
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

    def _waits(self) -> None:
        cpu = self.cpu
        for tid, rows in self.by_tid.items():
            th, kind = self.threads[tid], self.seg_kind[tid]
            if kind.size == 0:
                continue
            calls = rows[cpu.kind[rows] == schema.LAUNCH]
            lo = np.searchsorted(th.cuts, cpu.ts[calls])
            hi = np.searchsorted(th.cuts, cpu.end[calls])
            inside = lo < hi  # segments [lo, hi) lie inside a runtime call
            depth = np.zeros(kind.size + 1, dtype=np.int64)
            np.add.at(depth, lo[inside], 1)
            np.add.at(depth, hi[inside], -1)
            in_call = np.cumsum(depth[:-1]) > 0
            t, nodes = self._signals(tid)
            if t.size == 0:
                continue
            start, end = th.cuts[:-1], th.cuts[1:]
            j, a, woken = _woken(t, start, end)
            hit = (kind == CPU_SEG) & ~in_call & woken
            for k in np.flatnonzero(hit).tolist():
                node = th.first_node + k
                kind[k] = WAIT_SEG
                self.g.kind[node] = WAIT_SEG
                self.zero.add(node)
                self.end_edges.setdefault(node, []).append((int(nodes[j[k]]), int(end[k] - a[k])))

    def _first_wakes(self) -> None:
        """A thread whose first event in the window comes after the origin starts, like a *wait*, a measured delay
        after the cut on another worker thread that woke it, when one lies as close before it as a wait's would
        (:data:`WAKE_MAX_NS` or :data:`WAKE_FRACTION` of the stretch since the origin): the autograd engine's
        device thread starts its first backward when the main thread enters ``backward()``, not at the time it
        was recorded to, which a faster main thread reaches earlier. Elsewhere its first segment keeps its start
        at the recorded time (an edge from the origin)."""
        for tid, th in self.threads.items():
            if th.cuts.size < 2 or th.cuts[0] - self.origin < WAIT_MIN_NS:  # no stretch to wait through
                continue
            t, nodes = self._signals(tid)
            j, a, woken = _woken(t, np.array([self.origin]), th.cuts[:1])
            if woken[0]:
                self.g.sp[th.first_node] = [(int(nodes[j[0]]), int(th.cuts[0] - a[0]))]

    def _durations(self) -> None:
        g, cpu = self.g, self.cpu
        zero = np.fromiter(self.zero, dtype=np.int64, count=len(self.zero))
        for tid, rows in self.by_tid.items():
            th, kind = self.threads[tid], self.seg_kind[tid]
            if kind.size == 0:
                continue
            lengths, is_work = np.diff(th.cuts), kind == CPU_SEG
            cost = _seg_costs(cpu.ts[rows], cpu.end[rows], cpu.cost_kind[rows], th.cuts, self.costs)
            cost = np.minimum(cost, self.costs.cut_bound(lengths[is_work]))
            work = _shed(lengths, cost, is_work)
            dur = np.rint(np.where(is_work, work * self._seg_speed(th.cuts), work)).astype(np.int64)
            rec = lengths.astype(np.int64)
            first = th.first_node
            mine = zero[(zero >= first) & (zero < first + kind.size)] - first
            dur[mine] = rec[mine] = 0
            coll = kind == COLL  # its duration is the transfer time, set when the ranks are linked
            dur[coll] = rec[coll] = np.asarray(g.dur[first:first + kind.size], dtype=np.int64)[coll]
            g.dur[first:first + kind.size] = dur.tolist()
            g.dur_rec[first:first + kind.size] = rec.tolist()
            for k in np.flatnonzero(kind == SYNC_SEG).tolist():
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
        st = self.rt.step_arrays()
        if self.speed is None:
            c = self.cpu
            self.speed = step_speed_of(c.kind, c.ts, c.end, c.tid, c.name, c.step, st)
        for step, s, e in zip(st["step"].tolist(), st["ts_ns"].tolist(), st["end_ns"].tolist()):
            f = self.speed.get(int(step), 1.0)
            if f != 1.0:
                a, b = np.searchsorted(cuts, s), np.searchsorted(cuts, e)
                out[a:max(a, b)] = f
        return out

    def _steps(self) -> None:
        steps, cpu = self.rt.step_arrays(), self.cpu
        marks = np.flatnonzero(cpu.step)
        tid_of: dict[tuple[int, int], int] = {}
        for key, tid in zip(zip(cpu.ts[marks].tolist(), cpu.end[marks].tolist()), cpu.tid[marks].tolist()):
            tid_of.setdefault(key, tid)  # the first mark of that range, in trace order
        out = []
        if not marks.size and steps["step"].size == 1 and self.threads:
            # the whole window as one step (RankTrace.window_as_one_step, no ProfilerStep range to anchor it):
            # from the first to the last segment of the thread with the most work, the main thread
            th = max(self.threads.values(), key=lambda t: t.cuts.size)
            if th.cuts.size >= 2:
                out.append((int(steps["step"][0]), th.first_node, th.first_node + th.cuts.size - 2))
        for step, s, e in zip(steps["step"].tolist(), steps["ts_ns"].tolist(), steps["end_ns"].tolist()):
            tid = tid_of.get((s, e))
            if tid is None:
                continue
            th = self.threads[tid]
            a, b = th.seg_starting_at(s), th.seg_ending_at(e)
            if a is not None and b is not None:
                out.append((step, a, b))
        self.g.ranks[self.rank] = RankNodes(steps=out, gpu=self.gpu if len(self.gpu_node) else None,
                                            gpu_node=self.gpu_node, origin=self.origin, threads=self.threads,
                                            coll=self.coll_nodes)
