"""The ``no_graph_breaks`` scenario: the graph breaks' own time removed from the replay graph.

Graph breaks are found as :mod:`tracekit.analyses.graphbreaks` finds them: consecutive compiled
subgraphs (``CompiledFunction`` in the forward, ``CompiledFunctionBackward`` in the backward) of a
step whose boundary is of kind ``graph_break`` (different compiled regions: dynamo broke the
graph; a DDPOptimizer split is kept). At each such boundary the CPU work on the subgraphs' thread
between the end of one and the start of the next -- the eager frame, dynamo's guard checks and
cache lookup, the resumed frame's entry -- is set to zero, except the work that runs there without
the break too (:data:`KEEP_PREFIXES`: in the backward, gradient accumulation and DDP's hooks). Everything else follows in the replay:
the next subgraph's launches come earlier, so the GPU idle the break caused shrinks where the GPU
waited for them, and not where the GPU was busy anyway (the CPU-bound and the GPU-bound case).

Assumed: the merged graph runs the same kernels; GPU work launched inside the gap (eager ops
between the graphs) is kept, only its CPU side goes; the compiled code's CPU time does not change.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tracekit.analyses.graphbreaks import WHATS, compiled_arrays, rank_in_group, boundary_table
from tracekit.errors import ScenarioError
from tracekit.replay.graph import CPU_SEG, Graph

if TYPE_CHECKING:
    from tracekit.replay.scenario_spec import Context
    from tracekit.traces.traceset import RankTrace

#: CPU work in a gap that is not the break's: the autograd engine accumulating gradients, with DDP's hooks
#: (copies into buckets, allreduce launches) inside
KEEP_PREFIXES = ("autograd::engine::evaluate_function: torch::autograd::AccumulateGrad",)


def break_gaps(rt: RankTrace) -> list[tuple[int, int, int]]:
    """(tid, gap start ns, gap end ns) of every graph-break boundary of the rank (module doc)."""
    region, bnd = boundary_table(rt)
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
        kinds = bnd[bnd["pass"] == pass_].set_index(["step", "index"])["kind"]
        for k, i in zip(has.tolist(), index.tolist()):
            a, b = rows[k], rows[k + 1]
            if kinds.get((int(step[k]), int(i))) == "graph_break" and c.tid[a] == c.tid[b]:
                out.append((int(c.tid[a]), int(c.end_ns[a]), int(c.ts_ns[b])))
    return out


def _kept(rt: RankTrace, tid: int, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
    """Ranges inside a gap that run without the break too: gradient accumulation and DDP's hooks."""
    ev = rt.events
    sel = ((ev["tid"] == tid) & (ev["ts_ns"] >= lo) & (ev["end_ns"] <= hi)).to_numpy()
    names = ev["name"].to_numpy()[sel]
    keep = np.array([n.startswith(KEEP_PREFIXES) for n in names], dtype=bool)
    return ev["ts_ns"].to_numpy()[sel][keep], ev["end_ns"].to_numpy()[sel][keep]


def remove(g: Graph, ctx: Context) -> list[str]:
    """Zero the CPU work segments inside every graph-break gap of every rank, in place (module doc)."""
    removed, count = 0, 0
    for rt in ctx.traces:
        threads = g.ranks.get(rt.rank, {}).get("threads", {})
        for tid, lo, hi in break_gaps(rt):
            th = threads.get(tid)
            if th is None or hi <= lo:
                continue
            ks, ke = _kept(rt, tid, lo, hi)
            a, b = int(np.searchsorted(th.cuts, lo)), int(np.searchsorted(th.cuts, hi))
            for k in range(a, b):
                v = th.first_node + k
                inside = ((ks <= th.cuts[k]) & (ke >= th.cuts[k + 1])).any()
                if g.kind[v] == CPU_SEG and not inside:
                    removed += g.dur[v]
                    g.dur[v] = 0
            count += 1
    if not count:
        raise ScenarioError("--no-graph-breaks: no graph break in the trace (no consecutive compiled graphs of "
                            "different regions in a step)")
    return [f"no-graph-breaks: {count} boundaries, {removed / 1e3:.0f} µs of CPU work between graphs removed "
            f"(all ranks and steps)"]
