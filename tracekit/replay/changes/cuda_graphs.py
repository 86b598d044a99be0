"""``--cuda-graphs``: every compiled graph replayed as a CUDA graph (``torch.compile(mode="reduce-overhead")``).

Each execution of a compiled graph in the window (a ``CompiledFunction`` op, forward, or a
``CompiledFunctionBackward`` op, backward: :func:`tracekit.analyses.graphbreaks.compiled_arrays`) is one graph
replay: the host work of the inductor call inside it (``## Call CompiledFxGraph ##``: the generated code's Python,
one launch call per kernel; the whole op where the trace has no such call; the AOT and autograd wrappers around it
run in reduce-overhead mode too and stay) becomes one graph replay of :data:`GRAPH_REPLAY_NS` plus
:data:`GRAPH_REPLAY_PER_OP_NS` per GPU operation the graph launched (or the median host time of the run's own graph
replays, where the trace has ``cudaGraphLaunch`` inside compiled graphs), and every GPU operation the graph launched
is launched by that one launch, with its own launch latency, in its stream order: the kernels of a launch-bound graph
run back to back.

Kept as launched, and counted in the notes (cudagraph trees do not capture them, or the model cannot say):

- a graph whose host work holds a blocking call (a sync: the host waits for the GPU inside it);
- a graph that launched a collective (NCCL kernels outside a graph capture are not replayed with it);
- a graph that launched no GPU work (a CPU graph: nothing to capture);
- a graph whose host time holds no CPU work in the replay (only waits for another thread, or no time at all):
  no host work for a graph launch to replace;
- a graph already replayed as a CUDA graph (``cudaGraphLaunch`` among its launches).

What it does not model: the GPU time of the copies of non-static inputs into the graph's static buffers (their host
time is part of a replay's), re-recordings (dynamic shapes), and graphs cudagraph trees skip for reasons the trace
does not show (mutated inputs, CPU tensors): run.json's compile facts list those for a run made with the mode
(``compile.per_rank[].cudagraphs``). On an eager run it does not apply.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tracekit.analyses.graphbreaks import WHATS, compiled_arrays, innermost_region
from tracekit.errors import ScenarioError
from tracekit.replay.changes._launches import RankLaunches
from tracekit.replay.family import Edits, Family, Option, Phase
from tracekit.replay.graph import CPU_SEG, SYNC_SEG, EdgeKind, Graph, Thread

if TYPE_CHECKING:
    from tracekit.replay.family import Context
    from tracekit.traces.traceset import RankTrace

#: host time of one graph replay when the trace has none to measure, ns: ``GRAPH_REPLAY_NS + GRAPH_REPLAY_PER_OP_NS x``
#: the GPU operations the graph launched. cudagraph trees' replay checks each static input, copies the others into the
#: graph's buffers and rebuilds each output tensor in Python before and after ``cudaGraphLaunch``, so it grows with the
#: graph. The line is a least-squares fit of the 30 replays of the two reduce-overhead traces of
#: sample_traces/whatif/h100_cuda_graphs (mlp512x16, resnet18: 55 to 366 us for 2 to 132 operations, rms residual
#: 31 us; H100, torch 2.11), host time after the profiler's cost, against the operations each replay launched: a fit of
#: what a replay costs in a trace, not of any step time. Graphs beyond 132 operations extrapolate it (MobileNetV2's reach
#: 411 in sample_traces/whatif/h100_cuda_graphs_heldout, whose check covers them)
GRAPH_REPLAY_NS = 80_000
GRAPH_REPLAY_PER_OP_NS = 2_000
GRAPH_LAUNCH = "cudaGraphLaunch"
_GRAPH_OPS = (WHATS.index("fwd"), WHATS.index("bwd"))
_FXGRAPH = WHATS.index("fxgraph")


def _graph_ops(rt: RankTrace) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(start, end, tid) of the rank's compiled-graph executions in steps: of each forward or backward op, the
    inductor call inside it (``## Call CompiledFxGraph ##``: the generated code that launches the kernels, what
    a CUDA graph replaces) where the trace has one, else the whole op. The AOT and autograd wrappers around the
    call run in reduce-overhead mode too, so they stay."""
    c = compiled_arrays(rt)
    ops = np.flatnonzero(np.isin(c.what, _GRAPH_OPS))
    calls = np.flatnonzero(c.what == _FXGRAPH)
    s, e, tid = c.ts_ns[ops].copy(), c.end_ns[ops].copy(), c.tid[ops]
    owner = innermost_region(c, calls, ops)  # per inductor call, the op (index into ops) it runs inside
    inside = owner >= 0
    # of each op's calls, the first (calls are sorted by start: np.unique's first index)
    op, first = np.unique(owner[inside], return_index=True)
    call = calls[inside][first]
    s[op], e[op] = c.ts_ns[call], c.end_ns[call]
    return s, e, tid


def _graph_launched(rt: RankTrace) -> tuple[np.ndarray, np.ndarray]:
    """(time, thread) of the rank's :data:`GRAPH_LAUNCH` calls."""
    ev = rt.name_hits(GRAPH_LAUNCH)
    return rt.column("ts_ns")[ev], rt.column("tid")[ev]


def _segments(g: Graph, th: Thread, s: int, e: int) -> tuple[list[int], bool]:
    """(CPU work segments of ``th`` inside ``[s, e]``, whether a blocking call is among its segments)."""
    nodes = th.nodes_in(s, e)
    return [v for v in nodes if g.kind[v] == CPU_SEG], any(g.kind[v] == SYNC_SEG for v in nodes)


def _replay(g: Graph, segs: list[int], ops: list[int], cost: int) -> int:
    """Replace the host work ``segs`` of one graph by one launch of ``cost`` ns (never more than it was) that
    launches every GPU node of ``ops``; returns the ns of host work removed."""
    before = sum(g.dur[v] for v in segs)
    launch = segs[0]
    for v in segs:
        g.dur[v] = 0
    g.dur[launch] = min(cost, before)
    inside = set(segs)
    for v in ops:
        edges = g.edges(v)
        own = [e for e in edges if e.kind is EdgeKind.LAUNCH or e.pred in inside]
        delay = max((e.delay for e in own), default=0)
        g.set_start(v, [(e.pred, e.delay) for e in edges if e not in own] + [(launch, delay)])
    return before - g.dur[launch]


def _executions(g: Graph, ctx: Context) -> list[tuple[RankLaunches, Thread, int, int, int, bool]]:
    """Every compiled-graph execution in steps whose host thread the graph has: ``(rank's launches, thread, start,
    end, tid, whether it already launched a CUDA graph)``, each rank's launch index built once."""
    out = []
    for rt in ctx.traces:
        if not rt.has_gpu_activity or g.find_rank(rt.rank) is None:
            continue
        r = RankLaunches(g, ctx, rt)
        gl_ts, gl_tid = _graph_launched(rt)
        for s, e, tid in zip(*(a.tolist() for a in _graph_ops(rt))):
            th = r.threads.get(tid)
            if th is not None:
                graphed = bool(((gl_tid == tid) & (gl_ts >= s) & (gl_ts <= e)).any())
                out.append((r, th, s, e, tid, graphed))
    return out


def capture(ctx: Context, ed: Edits) -> None:
    """Replay every capturable compiled graph as one CUDA graph launch (module doc)."""
    g = ed.g
    if not ctx.traces.has_gpu_activity:
        raise ScenarioError("--cuda-graphs: no GPU activity (a CPU run): CUDA graphs do not apply")
    runs = _executions(g, ctx)
    if not runs:
        raise ScenarioError("--cuda-graphs: no compiled graph in the trace (an eager run?): CUDA graphs apply to "
                            "torch.compile's graphs (mode reduce-overhead)")
    # host time (predicted graph) of every execution that already launched a CUDA graph, before any is replayed
    measured = [sum(g.dur[v] for v in _segments(g, th, s, e)[0])
                for _, th, s, e, _, graphed in runs if graphed]
    cost = int(np.median(measured)) if measured else None
    kept = {"sync": 0, "collective": 0, "no GPU work": 0, "no host work": 0, "already a CUDA graph": 0}
    done = removed = 0
    charged: list[int] = []
    for r, th, s, e, tid, graphed in runs:
        rows = r.launched(tid, s, e)
        segs, sync = _segments(g, th, s, e)
        why = ("already a CUDA graph" if graphed else "no GPU work" if not rows.size
               else "collective" if r.comm[rows].any() else "sync" if sync else "no host work" if not segs else None)
        if why is not None:
            kept[why] += 1
            continue
        one = cost if cost is not None else replay_ns(int(rows.size))
        removed += _replay(g, segs, r.nodes[rows].tolist(), one)
        charged.append(one)
        done += 1
    ed.notes += _notes(ed.sc.name, done, len(runs), removed, charged, cost, kept)


def replay_ns(ops: int) -> int:
    """Host time of one graph replay that launches ``ops`` GPU operations, ns (:data:`GRAPH_REPLAY_NS`)."""
    return GRAPH_REPLAY_NS + GRAPH_REPLAY_PER_OP_NS * ops


def _notes(name: str, done: int, graphs: int, removed: int, charged: list[int], measured: int | None,
           kept: dict[str, int]) -> list[str]:
    """``measured``: the median host time of the run's own graph replays, ns, where it has some."""
    if measured is not None:
        each = f"{measured / 1e3:.1f} us of host time each (the median of the run's own graph replays)"
    else:
        lo, hi = (min(charged), max(charged)) if charged else (GRAPH_REPLAY_NS, GRAPH_REPLAY_NS)
        span = f"{lo / 1e3:.0f}" if lo == hi else f"{lo / 1e3:.0f} to {hi / 1e3:.0f}"
        each = (f"{span} us of host time each ({GRAPH_REPLAY_NS / 1e3:.0f} us + "
                f"{GRAPH_REPLAY_PER_OP_NS / 1e3:.0f} us per GPU operation of the graph: measured on two H100 "
                "reduce-overhead traces, not on this run)")
    notes = [f"{name}: {done} of {graphs} compiled-graph executions (all ranks and steps) replayed as one CUDA "
             f"graph launch each, {each}: {removed / 1e3:.0f} us of host work removed in all"]
    why = {"sync": "with a blocking call inside", "collective": "with a collective launched inside",
           "no GPU work": "without GPU work", "no host work": "without host work to replace (only waits inside)",
           "already a CUDA graph": "already replayed as a CUDA graph"}
    out = [f"{n} {why[k]}" for k, n in kept.items() if n]
    if out:
        notes.append(f"{name}: kept as launched: " + ", ".join(out))
    return notes


SCENARIO = Family(
    name="cuda_graphs", position=40,
    options=(Option("cuda_graphs", bool, "Replay every compiled graph as one CUDA graph launch (torch.compile "
                    "mode reduce-overhead): its kernels' host launch cost replaced by one graph launch."),),
    needs="a compiled GPU run (torch.compile's CompiledFunction ops in the trace)",
    edits={Phase.HOST: capture})
