"""Bucket scenarios: DDP's gradients regrouped under another ``bucket_cap_mb`` / first-bucket cap.

On the graph of each rank and step whose DDP allreduces match run.json's layout
(:func:`tracekit.replay.ddp.bucket_rows`):

- **Gradient ready times** come from the trace: the k-th ``torch::autograd::AccumulateGrad`` op of
  the step's backward produced the k-th parameter of the layout (DDP's rebuilt order is the order
  the gradients became ready); the parameter is ready at that op's end (DDP's autograd hook runs
  right after it). The step's count of those ops must equal the layout's parameter count.
- **New buckets**: :func:`tracekit.replay.ddp.assign` under the new caps (a new bucket holding exactly
  the parameters of a recorded one keeps that one's measured transfer, bandwidth term scaled, and its
  own launch offset and pickup in the step, so the recorded layout replays as recorded). Bucket ``j`` is
  ready when its last parameter is; its allreduce is launched ``launch_offset`` after that (the rank's
  median, over the recorded buckets, of launch − ready: DDP copies the gradients into the bucket first) and
  starts ``pickup`` later (median of start − max(launch, previous bucket's end, the compute it waited
  for)), on GPU no earlier than ``pickup`` after the previous bucket's allreduce ends (one process group runs its
  collectives in order on one NCCL stream; a new bucket launched as a recorded one was keeps that one's recorded
  gap behind the collective before it), on gloo no earlier than ``pickup`` after the bucket W before it
  ends (W: the worker threads that ran the rank's recorded buckets, a pool that runs them side by side),
  and no earlier than the compute GPU work launched before it ends. Its transfer is the alpha-beta fit's
  (:mod:`tracekit.replay.network`) for its bytes, times the scenario's network factor; instances are
  linked across ranks like recorded ones (each ends at the last arrival plus its transfer).
- **Recorded buckets** keep their place in the graph with no transfer of their own; each ends when
  the new buckets that hold a gradient of it or of a bucket before it and could start before it ended in the
  recording have ended (a new bucket could start when its last gradient was ready, or later where it is launched
  as a recorded bucket that was, its gloo worker woken late, or queued behind a new bucket that could), and the
  last one when every new bucket has,
  so what waited for the backward's allreduces (DDP's finalize, the optimizer, a stream wait, the main
  thread's wait for a gloo worker) waits for the new ones. (Joining a recorded bucket to a new bucket that
  could only start after it ended would make work that waited for it wait for work it launched itself: a
  cycle. Joining it to one that holds only later gradients made work that waited for it wait for a later
  bucket: on gloo, whose workers run buckets side by side, the recorded layout regrouped then replayed up to
  5.5 % slower than the baseline.) So the recorded layout, regrouped, replays as the baseline to
  the ns on every committed multi-rank run with a bucket layout (tests/replay/test_scenarios.py).

- **The CPU cost of launching a bucket**: DDP's autograd hook runs after each parameter's
  ``READY_OP``, inside the engine's :data:`HOOK_OP` for it; for the parameter that completes a bucket it
  also launches the bucket's collective. A bucket's *launch work* is the predicted CPU work of that window
  (its recorded work less the profiler's cost of its own events, as the baseline prediction sheds it) in
  excess of the median predicted window of the parameters that complete no bucket (the per-parameter work:
  copying the gradient into its bucket). (Taking the excess from the recorded windows and scaling it by the
  thread's predicted / recorded work in the step, a dense thread's average rate, takes about half the launch
  work away; docs/whatif.md.) In each step every recorded bucket's launch
  work changes by (new buckets / recorded buckets - 1) times itself: added at its window, or taken from its
  window and the thread's work after it; fewer, larger buckets issue less CPU work, more, smaller ones more,
  and the recorded layout keeps it unchanged. GPU collectives only: on gloo the window's excess is not
  launch work (the allreduce runs on gloo's worker threads, which compete with the backward for the cores;
  scaling the excess predicted +7 % for cap 1 MB where +/-0 % was predicted without it and -15 % measured,
  docs/whatif.md). Not modelled: that the work added or removed moves to the new buckets' launch positions
  (it stays at the recorded ones).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from tracekit.errors import ScenarioError
from tracekit.replay import ddp
from tracekit.replay.graph import (ARRIVE, COLL, CPU_SEG, GPU_OP, ORIGIN, SYNC_SEG, WAIT_SEG, Graph, Resource,
                                   work_segments)
from tracekit.traces import schema

if TYPE_CHECKING:
    from tracekit.replay.family import Context, ScenarioValues
    from tracekit.traces.traceset import RankTrace

READY_OP = "torch::autograd::AccumulateGrad"
#: the autograd engine's call of a parameter's AccumulateGrad; DDP's hook runs inside it, after READY_OP ends
HOOK_OP = "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad"


def _cpu_ops(rt: RankTrace, name: str) -> pd.DataFrame:
    """The rank's CPU operators named ``name``, by start time."""
    ev = rt.events
    return ev[(ev["kind"] == schema.CPU_OP).to_numpy() & (ev["name"] == name).to_numpy()].sort_values("ts_ns")


def _ready_ends(rt: RankTrace, steps: pd.DataFrame) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Per step: (end ns, tid) of the rank's AccumulateGrad ops, in order."""
    acc = _cpu_ops(rt, READY_OP)
    out = {}
    for step, s, e in zip(steps["step"], steps["ts_ns"], steps["end_ns"]):
        sel = acc[(acc["ts_ns"] >= s) & (acc["ts_ns"] < e)]
        out[int(step)] = (sel["end_ns"].to_numpy(dtype=np.int64), sel["tid"].to_numpy(dtype=np.int64))
    return out


class _Rank:
    """One rank's recorded buckets and readiness, and the new buckets' nodes (module doc)."""

    def __init__(self, g: Graph, ctx: Context, rank: int, rows: pd.DataFrame, lay: ddp.Layout) -> None:
        self.g, self.rank, self.lay = g, rank, lay
        info = g.rank_nodes(rank)
        self.threads, self.coll = info.threads, info.coll
        #: every node of the rank's recorded collectives (arrivals and collectives)
        self.coll_nodes = {v for pair in self.coll.values() for v in pair}
        #: layout position of each recorded bucket's last parameter
        self.last_param = np.cumsum(np.bincount(lay.bucket_of)) - 1
        self.rt = rt = next(r for r in ctx.traces if r.rank == rank)
        self._hook_ops: dict[int, tuple[np.ndarray, np.ndarray]] | None = None
        self.ready = _ready_ends(rt, rt.steps)
        self.rows = {int(s): r.sort_values("bucket") for s, r in rows.groupby("step")}
        self.gpu = info.gpu
        self.gpu_node = info.gpu_node
        if self.gpu is not None:
            comm = ctx.comm.get(rank, np.zeros(len(self.gpu["step"]), dtype=bool))
            colls = np.fromiter((n for _, n in self.coll.values()), dtype=np.int64)
            ok = ~comm & ~np.asarray(self.gpu["pre_window"], dtype=bool) & ~np.isin(info.gpu_node, colls)
            lts = np.asarray(self.gpu["launch_ts_ns"])[ok]
            order = np.argsort(lts, kind="stable")
            self.c_lts, self.c_idx = lts[order], np.flatnonzero(ok)[order]

    def usable(self, step: int) -> bool:
        ends, _ = self.ready.get(step, (np.zeros(0), None))
        return step in self.rows and ends.size == len(self.lay.param_bytes)

    def _compute_before(self, t: int) -> int | None:
        """Index (gpu row) of the last compute op launched at or before ``t``."""
        if self.gpu is None or not self.c_lts.size:
            return None
        k = int(np.searchsorted(self.c_lts, t, side="right")) - 1
        return int(self.c_idx[k]) if k >= 0 else None

    def recorded_delays(self, step: int) -> dict[int, tuple[int, int]]:
        """{recorded bucket: (launch offset, pickup)} in ns in ``step`` (module doc)."""
        out = {}
        last = self.last_param
        ends, r = self.ready[step][0], self.rows[step]
        prev_end = None
        for b, lts, s, e in zip(r["bucket"], r["launch_ts_ns"], r["start_ns"], r["end_ns"]):
            ready = int(ends[last[int(b)]])
            lts = int(lts) if lts >= 0 else ready
            floor = lts if prev_end is None else max(lts, prev_end)
            c = self._compute_before(lts)
            if c is not None:
                floor = max(floor, int(self.gpu["end_ns"][c]))
            out[int(b)] = (lts - ready, max(0, int(s) - floor))
            prev_end = int(e)
        return out

    def delays(self) -> tuple[int, int]:
        """(launch offset, pickup) in ns: medians over the recorded buckets of the usable steps."""
        got = [d for step in self.rows if self.usable(step) for d in self.recorded_delays(step).values()]
        off, pick = [o for o, _ in got], [p for _, p in got]
        return (max(0, int(np.median(off))) if off else 0), (int(np.median(pick)) if pick else 0)

    def add_buckets(self, step: int, new: list[list[int]], off: int,
                    pick: int) -> list[tuple[int, int, int | None]]:
        """(arrive, collective, measured transfer or None) of the new buckets of ``step``; the recorded
        buckets turned into joins."""
        g, ends, tids = self.g, *self.ready[step]
        r = self.rows[step]
        first_arrive = self.coll[(int(r["start_ns"].iat[0]), int(r["end_ns"].iat[0]))][0]
        kind = GPU_OP if self.gpu is not None else COLL
        # a new bucket that is a recorded one keeps that one's measured transfer, launch offset and pickup
        of = np.asarray(self.lay.bucket_of)
        key = {int(b): tuple(np.flatnonzero(of == int(b)).tolist()) for b in r["bucket"]}
        measured = {key[int(b)]: g.dur[self.coll[(int(s), int(e))][1]]
                    for b, s, e in zip(r["bucket"], r["start_ns"], r["end_ns"])}
        own = {key[b]: d for b, d in self.recorded_delays(step).items()}
        # a new bucket whose last parameter completed a recorded bucket is launched where that one was
        launch = {key[int(b)][-1]: self._launch_edges(*self.coll[(int(s), int(e))])
                  for b, s, e in zip(r["bucket"], r["start_ns"], r["end_ns"])}
        gap = {key[int(b)][-1]: self._stream_gap(self.coll[(int(s), int(e))][0])
               for b, s, e in zip(r["bucket"], r["start_ns"], r["end_ns"])}
        nodes, ready = [], []
        # one NCCL stream runs the new buckets one at a time; gloo's pool of worker threads, as many as it has
        pool = Resource(1 if kind == GPU_OP else self._workers())
        origin = g.rank_nodes(self.rank).origin  # where an edge from ORIGIN counts from
        for j, members in enumerate(new):
            t, tid = int(ends[members[-1]]), int(tids[members[-1]])
            b_off, b_pick = own.get(tuple(members), (off, pick))
            seg = self.threads[tid].seg_ending_at(t)
            reused = launch.get(members[-1])
            sp = list(reused) if reused else ([(seg, b_off + b_pick)] if seg is not None else [])
            # the recorded time it could start at: its gradient, or later where it is launched as a recorded bucket
            # that was (its worker woken late), or follows a new bucket that is
            start = max([t, *((origin if p == ORIGIN else g.orig_end[p]) + d for p, d in reused or [])])
            ahead = pool.ahead()
            if ahead is not None:  # queued: on the stream, the recorded gap behind the collective before it
                queued = gap[members[-1]] if kind == GPU_OP and reused and gap[members[-1]] is not None else b_pick
                sp += pool.edge(queued)
                start = max(start, ready[ahead])
            if (kind == COLL or ahead is None) and not reused:
                # after what the first recorded bucket waited for on its stream, if done
                sp += [(p, d) for p, d in g.start_edges(first_arrive)
                       if p >= 0 and g.kind[p] in (GPU_OP, COLL, ARRIVE) and g.orig_end[p] <= t]
            c = None if reused else self._compute_before(t + b_off)  # the compute enqueued at the launch
            if c is not None:
                sp.append((int(self.gpu_node[c]), b_pick))
            ready.append(start)
            arrive = g.add(0, ARRIVE, self.rank, t, t, sp)
            node = g.add(0, kind, self.rank, t, t, [(arrive, 0)])
            pool.queue(node)
            nodes.append((arrive, node, measured.get(tuple(members))))
        self._scale_launch_work(step, len(new) / len(r))
        last, lastpos = len(r) - 1, self.last_param
        for b, s, e in zip(r["bucket"], r["start_ns"], r["end_ns"]):
            arrive, node = self.coll[(int(s), int(e))]
            g.clear_transfer(node)
            joined = [c for (_, c, _), t, m in zip(nodes, ready, new)
                      if int(b) == last or (t <= int(e) and m[0] <= lastpos[int(b)])]
            g.set_start(node, [(arrive, 0)] + [(c, 0) for c in joined])
        return nodes

    def _launch_edges(self, arrive: int, node: int) -> list[tuple[int, int]]:
        """A recorded bucket's launch: the start edges of its arrival from CPU segments and compute (not from
        other collectives, which the new buckets replace). A new bucket whose last parameter is that bucket's
        is launched by them (the same hook call launches it), so the recorded layout replays as the baseline
        does and merged buckets launch as the recorded ones did, with the launch segment's profiler cost
        already shed; other new buckets get the median offset and pickup (module doc).

        A gloo collective (``node`` a backend range on a worker thread) follows the worker's segment before it:
        a wait that the launching thread ended (the worker was woken by the hook's call), or work after the
        worker's previous collective (it was queued behind it). The first is launched by what ended the wait
        (its end edges); the second's order is the recorded layout's, and that previous collective waits for
        the new buckets ready before it ended, so keeping it would make a new bucket wait for itself: left out
        (gloo's workers run the new buckets side by side)."""
        g, colls = self.g, self.coll_nodes
        lo, hi = self._thread_nodes(node) if g.kind[node] == COLL else (0, 0)
        edges = []
        for p, d in g.start_edges(arrive):
            if lo <= p < hi:  # the worker's own segment before the range
                edges += [(q, e + d) for q, e in g.end_edges(p) if q >= 0] if g.kind[p] == WAIT_SEG else []
            elif p >= 0:
                edges.append((p, d))
        out = [(p, d) for p, d in edges if p not in colls and g.kind[p] in (CPU_SEG, SYNC_SEG, WAIT_SEG, GPU_OP)]
        if not out and g.kind[node] == COLL:
            # the first range of its worker thread in the window: the graph anchors it at its recorded time (the
            # thread's first cut), and so does its twin, or the recorded layout would not replay as the baseline
            out = [(p, d) for p, d in g.start_edges(arrive) if p == ORIGIN]
        return out

    def _stream_gap(self, arrive: int) -> int | None:
        """The delay of a recorded GPU bucket's arrival behind the collective before it on its stream (None: it
        did not queue behind one, or a gloo run)."""
        if self.gpu is None:
            return None
        got = [d for p, d in self.g.start_edges(arrive) if p in self.coll_nodes]
        return max(got) if got else None

    def _workers(self) -> int:
        """How many worker threads ran the rank's recorded gloo buckets (0 on GPU runs)."""
        if self.gpu is not None:
            return 0
        nodes = {self.coll[(int(s), int(e))][1] for r in self.rows.values()
                 for s, e in zip(r["start_ns"], r["end_ns"])}
        return max(1, len({self._thread_nodes(v) for v in nodes}))

    def _thread_nodes(self, node: int) -> tuple[int, int]:
        """The node range [first, end) of the CPU thread whose segment ``node`` is ((0, 0): none)."""
        for th in self.threads.values():
            lo, hi = th.node_range()
            if lo <= node < hi:
                return lo, hi
        return 0, 0

    def _hook_windows(self, step: int) -> list[tuple[int, int, int]]:
        """Per parameter of ``step`` (layout order): (tid, start, end) of the CPU time DDP's autograd hook ran
        in: from the end of its :data:`READY_OP` to the end of the enclosing :data:`HOOK_OP` (start = end
        where none encloses it)."""
        if self._hook_ops is None:
            self._hook_ops = {int(t): (o["ts_ns"].to_numpy(dtype=np.int64), o["end_ns"].to_numpy(dtype=np.int64))
                              for t, o in _cpu_ops(self.rt, HOOK_OP).groupby("tid")}
        out = []
        for t, tid in zip(*self.ready[step]):
            ts, end = self._hook_ops.get(int(tid), (np.zeros(0, np.int64), np.zeros(0, np.int64)))
            k = int(np.searchsorted(ts, t, side="right")) - 1
            out.append((int(tid), int(t), int(end[k]) if k >= 0 and end[k] >= t else int(t)))
        return out

    def _window_segments(self, tid: int, s: int, e: int) -> list[int]:
        """The CPU work segments of thread ``tid`` inside ``[s, e]``."""
        th = self.threads.get(tid)
        if th is None or e <= s:
            return []
        return work_segments(self.g, th, s, e)

    def _scale_launch_work(self, step: int, f: float) -> None:
        """Scale the bucket launch work of ``step`` by ``f`` (module doc, "The CPU cost of launching a bucket");
        GPU collectives only (on gloo the window's excess is not launch work: module doc)."""
        if f == 1.0 or self.gpu is None:
            return
        g = self.g
        wins = self._hook_windows(step)
        segs = [self._window_segments(*w) for w in wins]
        # each window's work as predicted: the profiler's cost of its own events taken out (before any work moves)
        work = np.array([sum(g.dur[v] for v in vs) for vs in segs], dtype=float)
        ends = set(self.last_param.tolist())
        others = [w for k, w in enumerate(work) if k not in ends]
        base = float(np.median(others)) if others else 0.0
        todo = [k for k in sorted(ends) if k < len(work) and work[k] > base and segs[k]]
        for k in todo:
            self._shift_work(wins[k][0], segs[k][0], int(round((f - 1.0) * (work[k] - base))))

    def _shift_work(self, tid: int, first: int, delta: int) -> None:
        """Add ``delta`` ns of CPU work at node ``first`` of thread ``tid``; a negative one is taken from it
        and the thread's next work segments, as far as they have it."""
        g = self.g
        if delta >= 0:
            g.dur[first] += delta
            return
        need, last = -delta, self.threads[tid].first_node + self.threads[tid].cuts.size - 2
        for v in range(first, last + 1):
            if g.kind[v] == CPU_SEG:
                take = min(need, g.dur[v])
                g.dur[v] -= take
                need -= take
                if not need:
                    return


def regroup(g: Graph, ctx: Context, comm: dict[int, np.ndarray], sc: ScenarioValues, factor: float, *,
            drop: bool = False) -> tuple[np.ndarray, list[str], list[tuple[int, int, int, float]]]:
    """Regroup ``g`` in place under ``sc``'s caps (module doc). ``factor``: the scenario's network factor
    on the transfer's bandwidth term; ``drop``: one rank, no transfer. Returns the rows of
    ``ctx.colls`` it replaced, notes, and the new buckets' collectives as (arrive node, collective node, rank,
    bytes); ``comm`` gains the new GPU collective nodes."""
    name = sc.name
    if ctx.layout is None:
        raise ScenarioError(f"{name}: {ctx.layout_error}")
    lay = ctx.layout
    if not np.isfinite(ctx.fit.ns_per_byte):
        raise ScenarioError(f"{name}: no collective of known size to fit the transfer time to")
    rows = ddp.bucket_rows(ctx.colls, len(lay.sizes))
    if rows.empty:
        raise ScenarioError(f"{name}: no step's backward allreduces match run.json's {len(lay.sizes)} buckets")
    cap = int((sc.bucket_cap_mb if sc.bucket_cap_mb is not None else lay.cap_bytes / ddp.MB) * ddp.MB)
    first = _scenario_first_cap(sc, lay)
    new = ddp.assign(lay.param_bytes, cap, first)
    notes = _layout_notes(name, lay)
    nbytes = [sum(lay.param_bytes[k] for k in m) for m in new]
    transfer = [0 if drop else int(round(ctx.fit.alpha_ns + b * ctx.fit.ns_per_byte * factor)) for b in nbytes]
    groups: dict[tuple[int, int], list[tuple[int, int, int | None]]] = {}
    added: list[tuple[int, int, int, float]] = []
    replaced = np.zeros(len(ctx.colls), dtype=bool)
    for rank, r in rows.groupby("rank"):
        rk = _Rank(g, ctx, int(rank), r, lay)
        off, pick = rk.delays()
        for step in sorted(rk.rows):
            if not rk.usable(step):
                continue
            pairs = rk.add_buckets(step, new, off, pick)
            for j, pair in enumerate(pairs):
                groups.setdefault((step, j), []).append(pair)
                added.append((pair[0], pair[1], int(rank), float(nbytes[j])))
            replaced[rk.rows[step].index.to_numpy()] = True
            extend_comm(g, comm, int(rank), step, [c for _, c, _ in pairs])
    if not replaced.any():
        raise ScenarioError(f"{name}: the trace's AccumulateGrad ops do not match run.json's {len(lay.param_bytes)} "
                            "parameters in any step (gradient-ready times unknown)")
    for (step, j), members in groups.items():
        _link(g, members, transfer[j], ctx.fit.alpha_ns, factor, drop)
    notes.append(f"{name}: {len(new)} bucket{'s' if len(new) > 1 else ''} of {', '.join(f'{b / ddp.MB:.1f}' for b in nbytes)} MiB "
                 f"(recorded: {len(lay.sizes)})")
    return replaced, notes, added


def _scenario_first_cap(sc: ScenarioValues, lay: ddp.Layout) -> int | None:
    """The first bucket's cap under ``sc``: its own; else none of its own when ``sc`` gives a cap and the run's
    first cap was DDP's default (DDP drops the 1 MiB first bucket once ``bucket_cap_mb`` is given); else the run's."""
    if sc.first_bucket_cap_mb is not None:
        return int(sc.first_bucket_cap_mb * ddp.MB)
    if sc.bucket_cap_mb is not None and lay.first_cap_default:
        return None
    return lay.first_cap_bytes


def _link(g: Graph, members: list[tuple[int, int, int | None]], fitted: int, alpha_ns: float, factor: float,
          drop: bool) -> None:
    """One new bucket's instance across ranks: each rank's node ends at the last arrival plus its transfer:
    the fitted one, or a recorded bucket's measured one with its bandwidth term scaled by ``factor``."""
    linked = []
    for arrive, node, measured in members:
        if drop:
            t = 0
        elif measured is None:
            t = fitted
        else:
            a = min(alpha_ns, measured)
            t = int(round(a + (measured - a) * factor))
        g.dur[node] = t
        linked.append((arrive, node, t))
    if drop:
        for _, node, _ in linked:
            g.clear_transfer(node)
    else:
        g.link(linked)


def _layout_notes(name: str, lay: ddp.Layout) -> list[str]:
    """Where the regrouping rests on an approximation: even split of bucket bytes, or DDP's rule not
    reproducing the recorded layout under the recorded caps."""
    notes = []
    if not lay.exact:
        notes.append(f"{name}: run.json has no per-parameter sizes (param_bytes): recorded buckets are regrouped "
                     "whole (merged, never split)")
    again = [sum(lay.param_bytes[k] for k in m) for m in ddp.assign(lay.param_bytes, lay.cap_bytes,
                                                                    lay.first_cap_bytes)]
    if again != lay.sizes:
        notes.append(f"{name}: DDP's bucketing rule under the recorded caps gives {len(again)} buckets, the run "
                     f"recorded {len(lay.sizes)}: the regrouping is approximate")
    return notes


def extend_comm(g: Graph, comm: dict[int, np.ndarray], rank: int, step: int, nodes: list[int]) -> None:
    """Count the new GPU collectives in the step figures: appended to the rank's GPU nodes as communication."""
    info = g.rank_nodes(rank)
    if info.gpu is None or not nodes:
        return
    info.add_gpu_nodes(step, nodes)
    comm[rank] = np.append(comm.get(rank, np.zeros(0, dtype=bool)), np.ones(len(nodes), dtype=bool))
