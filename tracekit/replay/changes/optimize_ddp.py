"""``--optimize-ddp ddp_optimizer|no_optimization``: dynamo's DDPOptimizer on, or off, for a compiled DDP run.

**ddp_optimizer** (from a run with one backward graph per step): the backward is split at DDP's bucket
boundaries, so each bucket's allreduce is ready when its gradients are, not when the whole backward ends. The
trace does not say which kernel of the one graph computes which gradient; DDP fills its buckets in the order
the backward produces gradients (bucket 0 first, run.json's bucket layout), so bucket ``b`` is taken to be ready
once the share ``F_b`` of the graph's GPU work is done, ``F_b`` the bytes of buckets ``0..b`` over all buckets'
bytes: its allreduce waits for the backward kernel at that position (and is launched by the CPU segment that
launched it) instead of the last one. Each of the ``n - 1`` new graph boundaries of the forward and of the
backward costs :data:`SPLIT_NS` of host work (the run's own forward splits where it has them, else the default),
added where the boundary falls; the loss of fusion across a split is not modelled.

**no_optimization** (from a run DDPOptimizer split): every allreduce waits for the step's last backward kernel and
is launched after the last backward graph's CPU op; each forward and backward boundary between the split graphs
loses :data:`SPLIT_NS` of its host work (the run's own forward splits' median, where it has them).

Both apply only to compiled DDP runs (run.json's ``optimize_ddp``) with a bucket layout and the backward
allreduces matched to it; the run's own mode is noted and changes nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tracekit.analyses.graphbreaks import WHATS, boundary_table, compiled_arrays
from tracekit.errors import ScenarioError
from tracekit.replay import contention, ddp, grow
from tracekit.replay.changes._launches import RankLaunches
from tracekit.replay.family import Edits, Family, Option, Phase
from tracekit.replay.graph import CPU_KINDS, CPU_SEG, GPU_OP, EdgeKind, Graph

if TYPE_CHECKING:
    import pandas as pd

    from tracekit.analyses.graphbreaks import Compiled
    from tracekit.replay.family import Context
    from tracekit.traces.traceset import RankTrace

#: host work of one graph boundary DDPOptimizer adds (dynamo's exit from one compiled graph and entry into the
#: next), ns: the median forward ddp_split gap of sample_traces/fixtures/h200x4_compare/inductor (29.4 us; a forward split
#: runs no DDP hook) when the run has no forward split of its own to measure
SPLIT_NS = 29_400
MODES = ("ddp_optimizer", "no_optimization")
_FWD, _BWD = WHATS.index("fwd"), WHATS.index("bwd")


def _run_mode(ctx: Context) -> str | None:
    """The run's DDPOptimizer mode (run.json), None for an eager or non-DDP run."""
    cfg = ctx.traces.manifest.config if ctx.traces.manifest is not None else None
    mode = cfg.get("optimize_ddp_resolved") if isinstance(cfg, dict) else None
    return mode if isinstance(mode, str) else None


def _split_cost(rt: RankTrace) -> int | None:
    """Median host work of the rank's forward ddp_split boundaries, ns (None: it has none)."""
    _, bt = boundary_table(rt)
    kind, pass_ = np.asarray(bt["kind"]).astype(str), np.asarray(bt["pass"]).astype(str)
    gaps = np.asarray(bt["gap_cpu_us"], dtype=float)[(kind == "ddp_split") & (pass_ == "forward")]
    gaps = gaps[np.isfinite(gaps)]
    return int(round(1e3 * float(np.median(gaps)))) if gaps.size else None


class _Step:
    """One rank's step: its compiled graphs' GPU work in launch order, and its bucket collectives."""

    def __init__(self, g: Graph, r: RankLaunches, c: Compiled, step: int, rows: pd.DataFrame) -> None:
        self.g = g
        self.ops: dict[int, list[tuple[int, int, int]]] = {}  # what -> [(start, end, tid)]
        self.kernels: dict[int, list[int]] = {}                # what -> GPU nodes, in launch order
        for what in (_FWD, _BWD):
            sel = (c.what == what) & (c.step == step)
            self.ops[what] = list(zip(c.ts_ns[sel].tolist(), c.end_ns[sel].tolist(), c.tid[sel].tolist()))
            idx = np.unique(np.concatenate([r.launched(tid, s, e) for s, e, tid in self.ops[what]]
                                           or [np.zeros(0, dtype=np.int64)]))
            idx = idx[~r.comm[idx]]
            self.kernels[what] = r.nodes[idx[np.argsort(r.launch_ts[idx], kind="stable")]].tolist()
        self.threads = r.threads
        self.comm_nodes = r.comm_nodes
        coll = g.rank_nodes(int(rows["rank"].iat[0])).coll  # rows: one rank's
        self.arrives = [coll[(int(s), int(e))][0] for s, e in zip(rows["start_ns"], rows["end_ns"])]

    def launch_segment(self, v: int) -> tuple[int, int] | None:
        """The CPU segment that launched GPU node ``v`` and the launch delay."""
        return next(((e.pred, e.delay) for e in self.g.edges(v) if e.kind is EdgeKind.LAUNCH), None)

    def wait_for(self, arrive: int, kernel: int, cpu: tuple[int, int] | None) -> None:
        """Bucket ``arrive`` waits for compute ``kernel`` (not for the compute stream's work at its recorded launch:
        the backward's end, the hooks' copies after it) and is launched ``cpu[1]`` ns after CPU segment ``cpu[0]``
        ends; it keeps its place behind the collectives before it."""
        g = self.g
        edges = g.edges(arrive)
        own_cpu = [e for e in edges if e.pred >= 0 and g.kind[e.pred] in CPU_KINDS]
        keep = [(e.pred, e.delay) for e in edges if e not in own_cpu and not (
            e.pred >= 0 and g.kind[e.pred] == GPU_OP and e.pred not in self.comm_nodes)]
        new = [(kernel, 0)]
        if cpu is not None:  # the hook after the graph launches it, a launch latency after that segment
            new.append(cpu)
        g.set_start(arrive, keep + new)


def _at(fractions: np.ndarray, k: int) -> list[int]:
    """Index of the kernel (of ``k``) at each share of the work."""
    return [max(0, int(np.ceil(f * k - 1e-9)) - 1) for f in fractions]


def _add_host(g: Graph, st: _Step, kernels: list[int], at: list[int], ns: int) -> None:
    """``ns`` more host work on the CPU segment that launched each kernel ``kernels[i]`` of ``at`` (one boundary
    each, distinct positions)."""
    for i in sorted(set(at)):
        seg = st.launch_segment(kernels[i])
        if seg is not None and seg[0] >= 0 and g.kind[seg[0]] == CPU_SEG:
            g.dur[seg[0]] += ns


def _remove_host(g: Graph, st: _Step, what: int, ns: int) -> int:
    """Take up to ``ns`` of host work out of each boundary between consecutive graphs of pass ``what``."""
    removed = 0
    ops = sorted(st.ops[what])
    for (_, end, tid), (nxt, _, tid2) in zip(ops, ops[1:]):
        th = st.threads.get(tid)
        if th is None or tid2 != tid:
            continue
        need = ns
        for v in th.nodes_in(end, nxt):
            if need and g.kind[v] == CPU_SEG:
                take = min(need, g.dur[v])
                g.dur[v] -= take
                need -= take
        removed += ns - need
    return removed


def _one_step(g: Graph, st: _Step, lay: ddp.Layout, mode: str, cost: int) -> bool:
    """Split (``ddp_optimizer``) or merge (``no_optimization``) one rank's step; False where it cannot."""
    fwd, bwd = st.kernels[_FWD], st.kernels[_BWD]
    if not bwd:
        return False
    sizes = np.asarray(lay.sizes, dtype=float)
    share = np.cumsum(sizes) / sizes.sum()
    if mode == "ddp_optimizer":
        at = _at(share, len(bwd))
        for arrive, j in zip(st.arrives, at):
            st.wait_for(arrive, bwd[j], st.launch_segment(bwd[j]))
        _add_host(g, st, bwd, at[:-1], cost)
        if fwd:  # forward splits in forward order: the last bucket's parameters come first
            _add_host(g, st, fwd, _at(np.cumsum(sizes[::-1])[:-1] / sizes.sum(), len(fwd)), cost)
        return True
    last_end, _, tid = max((e, s, t) for s, e, t in st.ops[_BWD])
    th = st.threads.get(tid)
    seg = th.seg_ending_at(last_end) if th is not None else None
    launch = st.launch_segment(bwd[-1])
    for arrive in st.arrives:
        st.wait_for(arrive, bwd[-1], (seg, launch[1] if launch else 0) if seg is not None else None)
    _remove_host(g, st, _FWD, cost)
    _remove_host(g, st, _BWD, cost)
    return True


def resplit(ctx: Context, ed: Edits) -> None:
    """Split or merge the compiled backward at DDP's buckets (module doc)."""
    want, run = ed.sc.optimize_ddp, _run_mode(ctx)
    if run not in MODES:
        raise ScenarioError(f"--optimize-ddp {want}: the run is not a compiled DDP run with DDPOptimizer on or off "
                            f"(run.json optimize_ddp: {run or 'none'})")
    if want == run:
        ed.notes.append(f"{ed.sc.name}: the run's own mode: nothing to change")
        return
    if ctx.layout is None:
        raise ScenarioError(f"--optimize-ddp {want}: {ctx.layout_error}")
    rows = ddp.bucket_rows(ctx.colls, len(ctx.layout.sizes)) if len(ctx.colls) else ctx.colls
    if not len(rows):
        raise ScenarioError(f"--optimize-ddp {want}: no step's backward allreduces match run.json's "
                            f"{len(ctx.layout.sizes)} buckets")
    done = total = 0
    costs, beside = [], []
    for rt in ctx.traces:
        mine = rows[rows["rank"] == rt.rank]
        if not len(mine) or ed.g.find_rank(rt.rank) is None:
            continue
        own = _split_cost(rt)
        cost = own if own is not None else SPLIT_NS
        costs.append(own)
        compute, colls = set(), []
        launches, compiled = RankLaunches(ed.g, ctx, rt), compiled_arrays(rt)  # once per rank
        for step, r in mine.groupby("step"):
            total += 1
            st = _Step(ed.g, launches, compiled, int(step), r.sort_values("bucket"))
            done += _one_step(ed.g, st, ctx.layout, want, cost)
            compute |= set(st.kernels[_FWD]) | set(st.kernels[_BWD])
            colls += r["node"].astype(int).tolist()
        beside.append((np.array(sorted(compute), dtype=np.int64), colls))
    if not done:
        raise ScenarioError(f"--optimize-ddp {want}: no step with compiled backward graphs and DDP's buckets")
    slowed = grow.slow_beside(ed.g, beside) if want == "ddp_optimizer" else 0
    ed.notes.append(_note(ed.sc.name, want, done, total, len(ctx.layout.sizes), costs))
    if want == "no_optimization":
        relieved = _relieve(ed.g, beside)
        if relieved:
            ed.notes.append(f"{ed.sc.name}: {relieved} compiled kernels that ran beside an allreduce in the recorded "
                            f"window no longer do: their duration over 1 + {grow.CONTENTION_SLOWDOWN - 1:.2f} x the "
                            "share that overlapped (the slowdown measured on 2 x H200, not on this run)")
    if slowed:
        ed.notes.append(f"{ed.sc.name}: {slowed} compiled kernels that now run beside an allreduce "
                        f"{grow.CONTENTION_SLOWDOWN:.2f}x slower for the time they overlap (measured on 2 x H200, "
                        "not on this run)")


def _relieve(g: Graph, beside: list[tuple[np.ndarray, list[int]]]) -> int:
    """Merged graphs: every compute kernel that overlapped a bucket collective in the recorded window runs alone;
    its duration is divided by :data:`tracekit.replay.grow.CONTENTION_SLOWDOWN`'s factor at its overlapped share
    (the inverse of what the split adds). Returns how many changed."""
    rs, re_ = g.orig_arrays()
    done = 0
    for compute, colls in beside:
        share = contention.share_beside(rs, re_, compute, colls)
        for v, f in zip(compute.tolist(), share.tolist()):
            if f > 0:
                g.dur[v] = int(round(g.dur[v] / (1.0 + (grow.CONTENTION_SLOWDOWN - 1.0) * f)))
                done += 1
    return done


def _note(name: str, want: str, done: int, total: int, buckets: int, costs: list[int | None]) -> str:
    measured = [c for c in costs if c is not None]
    cost = (f"{np.median(measured) / 1e3:.1f} us (the run's forward splits)" if measured
            else f"{SPLIT_NS / 1e3:.1f} us (the default, not measured on this run)")
    if want == "ddp_optimizer":
        return (f"{name}: in {done} of {total} rank-steps the backward graph split at DDP's {buckets} buckets: each "
                f"allreduce waits for its share of the backward's GPU work (buckets' bytes; the trace does not name "
                f"the gradients' kernels); each new graph boundary {cost} of host work; fusion lost across the "
                "splits not modelled")
    return (f"{name}: in {done} of {total} rank-steps the split graphs merged: every allreduce waits for the end of "
            f"the backward; each boundary between graphs {cost} less host work")


SCENARIO = Family(
    name="optimize_ddp", position=50,
    options=(Option("optimize_ddp", str, "DDPOptimizer on (ddp_optimizer: the compiled backward split at DDP's "
                    "buckets, each allreduce ready with its gradients) or off (no_optimization: one graph, every "
                    "allreduce after the backward).", choices=MODES),),
    needs="a compiled DDP run (run.json optimize_ddp ddp_optimizer or no_optimization) with its bucket layout",
    edits={Phase.GRAPHS: resplit})
