"""The CPU work of enqueueing an NCCL kernel, which a group of one does not do (``--world-size 1``).

ProcessGroupNCCL runs each collective call inside a ``nccl:<op>`` range (``record_param_comms``) on the
calling thread. For a group of two or more ranks, NCCL's group end launches the collective's kernel inside that
range as a *launch block* of runtime calls with NCCL's host-side work between them. In every NCCL trace we
have (torch 2.4-2.11, H100 and H200) the block is: an unnamed runtime call, ``cudaEventRecord`` +
``cudaStreamWaitEvent`` (NCCL's stream waits for the caller's), ``cudaGetFuncBySymbol``, the launch
(``cuLaunchKernelEx``), then ``cudaEventRecord`` + ``cudaStreamWaitEvent`` (the caller's stream waits for
NCCL's); PyTorch's own event calls (``cudaStreamIsCapturing``, ``cudaEventRecordWithFlags``,
``cudaEventRecord``) follow it. A group of one launches nothing: in the same programs profiled on 1 and 2
ranks (4 x H200, torch 2.11) its ``nccl:all_reduce`` ranges held only PyTorch's three event calls and lasted
25-31 µs where the 2-rank ranges lasted 70-110 µs (recorded, profiler included).

:func:`launch_blocks` finds, per rank, the block of each collective whose kernel (a communication GPU
operation of the replay) was launched inside a ``nccl:`` range: from the start of the first runtime call of the
range to the end of the launch and of the ``EventRecord`` / ``StreamWaitEvent`` calls right after it. In a
``--world-size 1`` scenario :func:`shed` sets the CPU work segments inside every block to zero (they already
shed the profiler's cost in the baseline prediction: what is removed is the predicted CPU time of the block).

Not shed: NCCL's work in the range before its first runtime call (the 1-rank ranges also spent 5-10 µs less
there, recorded), and anything of PyTorch's around the call. Ranges without a launch of a communication kernel
(a group of one in a multi-rank run, a collective launched before the window) are left as they are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from tracekit.replay.graph import Graph, work_segments
from tracekit.traces import schema

if TYPE_CHECKING:
    from tracekit.replay.family import Context
    from tracekit.traces.traceset import RankTrace

#: the annotation ProcessGroupNCCL (and RCCL's build of it) opens around a collective call
RANGE_PREFIX = "nccl:"
#: calls right after the launch that still belong to the block: NCCL joins its stream back to the caller's
JOIN_PATTERN = r"^(?:cuda|hip)(?:EventRecord|StreamWaitEvent)$"


@dataclass(frozen=True)
class Block:
    """One collective's launch block: CPU thread ``tid``, ``[lo, hi)`` ns on the trace's clock."""

    tid: int
    lo: int
    hi: int


def launch_blocks(rt: RankTrace, comm: np.ndarray) -> list[Block]:
    """The launch block of every collective of ``rt`` whose communication kernel (``comm``: per row of
    ``rt.gpu``) was launched inside a ``nccl:`` range of the launching thread, in range order (module doc)."""
    kind, tid = rt.column("kind"), rt.column("tid")
    ranges = np.flatnonzero((kind == schema.ANNOTATION) & rt.name_hits(RANGE_PREFIX, prefix=True))
    if not ranges.size or not rt.has_gpu_activity:
        return []
    comm = np.asarray(comm[: rt.n_gpu], dtype=bool)  # a scenario may have appended nodes after the recorded ones
    comm_corr = np.unique(rt.gpu_column("correlation")[comm & ~rt.gpu_column("pre_window")])
    calls = np.flatnonzero(kind == schema.LAUNCH)
    ts, end = rt.column("ts_ns"), rt.column("end_ns")
    calls = calls[np.lexsort((ts[calls], tid[calls]))]  # by thread, then start
    c_tid, c_ts, c_end = tid[calls], ts[calls], end[calls]
    launches_comm = np.isin(rt.column("correlation")[calls], comm_corr[comm_corr >= 0])
    joins = rt.name_hits(JOIN_PATTERN)[calls]
    out = []
    for r in ranges.tolist():
        t = int(tid[r])
        a, b = int(np.searchsorted(c_tid, t, side="left")), int(np.searchsorted(c_tid, t, side="right"))
        inside = np.arange(a + int(np.searchsorted(c_ts[a:b], ts[r], side="left")),
                           a + int(np.searchsorted(c_ts[a:b], end[r], side="right")))
        inside = inside[c_end[inside] <= end[r]]
        hit = np.flatnonzero(launches_comm[inside])
        if not hit.size:
            continue
        k = int(hit[0])
        while k + 1 < inside.size and joins[inside[k + 1]]:
            k += 1
        out.append(Block(t, int(c_ts[inside[0]]), int(c_end[inside[k]])))
    return out


def shed(g: Graph, ctx: Context, name: str) -> list[str]:
    """Set the CPU work inside every launch block of every rank to zero, in place (``g`` is a scenario's
    copy); returns the scenario's note."""
    removed = _zero_blocks(g, ctx)
    if not removed.size:
        return [f"{name}: no NCCL kernel launched inside a nccl: range of the trace: the CPU work of enqueueing "
                "collectives, which a group of one does not do, is kept"]
    return [f"{name}: NCCL's launch of {removed.size} collective kernels taken off the CPU (median "
            f"{np.median(removed) / 1e3:.1f} µs each in the prediction, all ranks and steps): a group of one "
            "launches none"]


def _zero_blocks(g: Graph, ctx: Context) -> np.ndarray:
    """Zero the CPU work inside each launch block of every rank of ``g``, in place; returns the predicted work
    (ns) each block held."""
    out = []
    for rt in ctx.traces:
        info = g.find_rank(rt.rank)
        threads = info.threads if info is not None else {}
        comm = ctx.comm.get(rt.rank)
        for b in launch_blocks(rt, comm) if comm is not None else ():
            th = threads.get(b.tid)
            if th is None:
                continue
            segs = work_segments(g, th, b.lo, b.hi)
            out.append(sum(g.dur[v] for v in segs))
            for v in segs:
                g.dur[v] = 0
    return np.asarray(out, dtype=np.int64)
