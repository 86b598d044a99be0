"""The ``no_graph_breaks`` scenario: the graph breaks' own time removed from the replay graph.

Graph breaks are found as :mod:`tracekit.analyses.graphbreaks` finds them: consecutive compiled
subgraphs (``CompiledFunction`` in the forward, ``CompiledFunctionBackward`` in the backward) of a
step whose boundary is of kind ``graph_break`` (different compiled regions: dynamo broke the
graph). At each such boundary the CPU work on the subgraphs' thread from the last kernel launch of
one subgraph to the first launch of the next -- the first one's epilogue, the eager frame, dynamo's
guard checks and cache lookup, the resumed frame's entry, the next one's prologue: a merged graph
runs one prologue and one epilogue where the two ran two each -- is set to zero, except the work
that runs there without the break too (:data:`KEEP_PREFIXES`: in the backward, gradient
accumulation and DDP's hooks). Everything else follows in the replay: the next subgraph's launches
come earlier, so the GPU idle the break caused shrinks where the GPU waited for them, and not where
the GPU was busy anyway (the CPU-bound and the GPU-bound case).

Under DDPOptimizer the merged graph is cut again at DDP's bucket boundaries, usually in fewer
places than the broken graphs were (:mod:`tracekit.replay.resplit`, from run.json's compiled graphs).
Then a DDPOptimizer split the merged graph would not have is removed like a break; a break where the
merged graph is cut anyway keeps the cost of a split there (its CPU work scaled to the median gap of
the rank's splits in that pass); and for each cut of the merged graph where the recorded run had no
boundary, one removed split is kept (a split costs about the same wherever it falls). Without
run.json's compiled graphs only the breaks are removed and every split is kept (a note says so).

Assumed: the merged graph runs the same kernels; GPU work launched inside the gap (eager ops
between the graphs) is kept, only its CPU side goes; the compiled code's CPU time does not change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from tracekit.analyses.graphbreaks import WHATS, compiled_arrays, rank_in_group, boundary_table
from tracekit.errors import ScenarioError
from tracekit.replay import resplit
from tracekit.replay.graph import SYNC_SEG, Graph, Thread, work_segments
from tracekit.traces import schema

if TYPE_CHECKING:
    from tracekit.replay.family import Context
    from tracekit.traces.traceset import RankTrace


@dataclass(frozen=True)
class Gap:
    """One boundary between consecutive compiled subgraphs of a step: ``pass_``, ``step``, ``fwd_index``
    (the boundary's index in forward order: it follows forward subgraph ``fwd_index``), ``of`` (boundaries
    of that pass in that step), ``kind`` (``ddp_split`` | ``graph_break`` | ``unknown``), and the CPU gap
    ``[lo, hi)`` ns on thread ``tid`` between the two subgraphs."""

    pass_: str
    step: int
    fwd_index: int
    of: int
    kind: str
    tid: int
    lo: int
    hi: int


#: CPU work in a gap that is not the break's: the autograd engine accumulating gradients, with DDP's hooks
#: (copies into buckets, allreduce launches) inside
KEEP_PREFIXES = ("autograd::engine::evaluate_function: torch::autograd::AccumulateGrad",)


def boundary_gaps(rt: RankTrace) -> list[Gap]:
    """Every subgraph boundary of the rank whose two subgraphs ran on one thread: its gap (module doc)."""
    _, bnd = boundary_table(rt)
    if not len(bnd):
        return []
    c = compiled_arrays(rt)
    out = []
    for pass_, what in (("forward", "fwd"), ("backward", "bwd")):
        rows = np.flatnonzero(c.what == WHATS.index(what))
        if rows.size < 2:
            continue
        rows = rows[np.lexsort((c.ts_ns[rows], c.step[rows]))]
        step = c.step[rows]
        has = np.flatnonzero(step[1:] == step[:-1])  # boundary after rows[k]
        index = rank_in_group(step[has])
        per_step = dict(zip(*np.unique(step[has], return_counts=True)))
        kinds = {(s, i): k for p, s, i, k in zip(bnd["pass"].tolist(), bnd["step"].tolist(), bnd["index"].tolist(),
                                                  bnd["kind"].tolist()) if p == pass_}  # (step, index) -> kind
        for k, i in zip(has.tolist(), index.tolist()):
            a, b = rows[k], rows[k + 1]
            st = int(step[k])
            n = int(per_step[st])
            if c.tid[a] == c.tid[b]:
                tid = int(c.tid[a])
                lo = _last_launch_end(rt, tid, int(c.ts_ns[a]), int(c.end_ns[a]))
                hi = _first_launch_start(rt, tid, int(c.ts_ns[b]), int(c.end_ns[b]))
                # the backward runs the subgraphs in reverse: its i-th boundary is the forward's (n-1-i)-th
                out.append(Gap(pass_, st, i if pass_ == "forward" else n - 1 - i, n, str(kinds.get((st, int(i)))),
                               tid, lo, hi))
    return out


def _launches(rt: RankTrace, tid: int) -> tuple[np.ndarray, np.ndarray]:
    """(starts, ends) ns of the runtime calls on ``tid`` that put work on the GPU, by start."""
    def build() -> tuple[np.ndarray, np.ndarray]:
        sel = np.flatnonzero((rt.column("kind") == schema.LAUNCH) & (rt.column("correlation") >= 0)
                             & (rt.column("tid") == tid))
        ts, end = rt.column("ts_ns")[sel], rt.column("end_ns")[sel]
        order = np.argsort(ts, kind="stable")
        return ts[order], end[order]

    return rt.memo(("breaks.launches", tid), build)


def _launches_inside(rt: RankTrace, tid: int, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
    """(starts, ends) ns of the GPU launches on ``tid`` that lie inside ``[lo, hi]``: a subgraph's launches."""
    ts, end = _launches(rt, tid)
    a, b = np.searchsorted(ts, lo), np.searchsorted(ts, hi, side="right")
    inside = end[a:b] <= hi
    return ts[a:b][inside], end[a:b][inside]


def _last_launch_end(rt: RankTrace, tid: int, lo: int, hi: int) -> int:
    """The end of the last GPU launch inside ``[lo, hi]`` on ``tid`` (``hi`` when there is none): where the
    subgraph's epilogue starts, which a merged graph runs once, after the next subgraph's launches."""
    _, end = _launches_inside(rt, tid, lo, hi)
    return int(end.max()) if end.size else hi


def _first_launch_start(rt: RankTrace, tid: int, lo: int, hi: int) -> int:
    """The start of the first GPU launch inside ``[lo, hi]`` on ``tid`` (``lo`` when there is none): where
    the subgraph's prologue ends, which a merged graph runs once, before the previous subgraph's launches."""
    ts, _ = _launches_inside(rt, tid, lo, hi)
    return int(ts.min()) if ts.size else lo


def _kept(rt: RankTrace, tid: int, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
    """Ranges inside a gap that run without the break too: gradient accumulation and DDP's hooks."""
    ev = rt.events
    sel = ((ev["tid"] == tid) & (ev["ts_ns"] >= lo) & (ev["end_ns"] <= hi)).to_numpy()
    names = ev["name"].to_numpy()[sel]
    keep = np.array([n.startswith(KEEP_PREFIXES) for n in names], dtype=bool)
    return ev["ts_ns"].to_numpy()[sel][keep], ev["end_ns"].to_numpy()[sel][keep]


def _actions(gaps: list[Gap], plan: resplit.Plan | None) -> list[tuple[Gap, float | None]]:
    """Per gap to change: the gap and the fraction of its CPU work to keep (0: removed; None: scaled to
    the median split of its pass, see :func:`remove`). Gaps left alone are not listed."""
    if plan is None:
        return [(b, 0.0) for b in gaps if b.kind == "graph_break"]
    kept = plan.kept()
    out: list[tuple[Gap, float | None]] = []
    proxies: dict[tuple[str, int], int] = {}  # removed splits kept for the merged graph's new cuts
    for b in sorted(gaps, key=lambda x: (x.pass_, x.step, x.fwd_index)):
        if b.of != plan.graphs - 1 or b.kind not in ("graph_break", "ddp_split"):
            if b.kind == "graph_break":
                out.append((b, 0.0))  # a step that does not match the recorded graphs: the break alone
            continue
        if b.fwd_index in kept:
            if b.kind == "graph_break":
                out.append((b, None))
            continue
        if b.kind == "ddp_split" and proxies.get((b.pass_, b.step), 0) < plan.new_cuts:
            proxies[(b.pass_, b.step)] = proxies.get((b.pass_, b.step), 0) + 1
            continue
        out.append((b, 0.0))
    return out


def remove(g: Graph, ctx: Context) -> list[str]:
    """Take the graph breaks' CPU work out of the replay graph of every rank, in place (module doc)."""
    plan, why = resplit.plan(ctx.traces.manifest)
    removed, count, syncs = 0.0, {"graph_break": 0, "ddp_split": 0, "as_split": 0}, 0
    for rt in ctx.traces:
        info = g.find_rank(rt.rank)
        threads = info.threads if info is not None else {}
        gaps = boundary_gaps(rt)
        split = {p: float(np.median([b.hi - b.lo for b in gaps if b.kind == "ddp_split" and b.pass_ == p]))
                 for p in {b.pass_ for b in gaps if b.kind == "ddp_split"}}
        for b, keep in _actions(gaps, plan):
            th = threads.get(b.tid)
            if th is None or b.hi <= b.lo:
                continue
            if keep is None:  # a break where the merged graph is cut anyway: a split's cost stays
                keep = min(1.0, split[b.pass_] / (b.hi - b.lo)) if b.pass_ in split else 0.0
            removed += _scale(g, th, rt, b, keep)
            count["as_split" if keep > 0 else b.kind] += 1
            if b.kind == "graph_break":
                syncs += _unsync(g, th, b)
    if not count["graph_break"] and not count["as_split"]:
        raise ScenarioError("--no-graph-breaks: no graph break in the trace (no consecutive compiled graphs of "
                            "different regions in a step)")
    notes = [f"no-graph-breaks: {count['graph_break']} break boundaries removed"
             + (f", {count['ddp_split']} DDPOptimizer splits the merged graph would not have removed"
                if count["ddp_split"] else "")
             + (f", {count['as_split']} breaks where DDPOptimizer would cut the merged graph anyway reduced to "
                f"a split's cost" if count["as_split"] else "")
             + f"; {removed / 1e3:.0f} µs of CPU work between graphs removed (all ranks and steps)"]
    if syncs:
        notes.append(f"no-graph-breaks: {syncs} host syncs in the eager code at the breaks (a data-dependent .item(), "
                     ".tolist() or nonzero: break_boundaries' host_sync_us) removed with them: the host no longer "
                     "waits for the GPU there")
    if plan is None:
        notes.append(f"no-graph-breaks: DDPOptimizer's cuts of the merged graph not modelled ({why}): every "
                     "recorded split is kept")
    elif plan.new_cuts:
        notes.append(f"no-graph-breaks: DDPOptimizer would cut the merged graph at {plan.new_cuts} place(s) "
                     "the recorded run was not cut at: as many removed splits are kept in their stead")
    return notes


def _unsync(g: Graph, th: Thread, b: Gap) -> int:
    """The blocking calls (sync segments) of thread ``th`` inside break ``b``'s gap no longer wait for the GPU: the
    data-dependent op that made the break made them, and goes with it. Returns how many calls there were."""
    nodes = [v for v in th.nodes_in(b.lo, b.hi) if g.kind[v] == SYNC_SEG]
    for v in nodes:
        g.dur[v] = 0
        g.set_end(v, [])
    return sum(1 for i, v in enumerate(nodes) if i == 0 or nodes[i - 1] != v - 1)


def _scale(g: Graph, th: Any, rt: RankTrace, b: Gap, keep: float) -> float:
    """Scale the CPU work segments inside gap ``b`` to ``keep`` of their length (but the work that runs
    without the break too); returns the ns removed."""
    ks, ke = _kept(rt, b.tid, b.lo, b.hi)
    cuts = th.cuts
    removed = 0.0
    for v in work_segments(g, th, b.lo, b.hi):
        k = v - th.first_node
        if not ((ks <= cuts[k]) & (ke >= cuts[k + 1])).any():
            new = int(round(g.dur[v] * keep))
            removed += g.dur[v] - new
            g.dur[v] = new
    return removed
