"""Run a per-rank function over every rank of a :class:`TraceSet`, in parallel when it pays.

The per-rank analyses (breakdown, collective table, buckets, bucket timeline,
graph breaks) are independent across ranks. On large traces they are spread
over forked processes: the children inherit the loaded traces (nothing is
pickled on the way in) and send back only their small result tables, while
this process works on its own share. Small inputs, one rank, one CPU or
platforms without ``fork`` run serially.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar


from tracekit.cpus import usable_cpus
from tracekit.traces.loader import fork_context
from tracekit.traces.traceset import RankTrace, TraceSet

T = TypeVar("T")
#: below this many events over all ranks, forking costs more than it saves
PARALLEL_MIN_EVENTS = 200_000

# set only while a pool is alive; forked children read them
_traces: TraceSet | None = None
_fn: Callable[[RankTrace], Any] | None = None


def _run(rank: int) -> Any:
    assert _traces is not None and _fn is not None
    return _fn(_traces.ranks[rank])


def map_ranks(traces: TraceSet, fn: Callable[[RankTrace], T], workers: int | None = None) -> dict[int, T]:
    """``{rank: fn(rank_trace)}`` for every rank, in rank order.

    ``workers``: processes to use, this one included (default: one per rank, at
    most the CPU count, and 1 for inputs under :data:`PARALLEL_MIN_EVENTS`).
    ``fn``'s results must be picklable. Exceptions propagate as if run serially.
    """
    global _traces, _fn
    ranks = list(traces.ranks)
    n = workers if workers is not None else min(len(ranks), usable_cpus())
    if workers is None and sum(rt.n_events for rt in traces) < PARALLEL_MIN_EVENTS:
        n = 1
    ctx = fork_context()
    if n <= 1 or len(ranks) <= 1 or ctx is None or _traces is not None:  # (no nested pools)
        return {r: fn(traces.ranks[r]) for r in ranks}
    n = min(n, len(ranks))
    mine = ranks[::n]  # this process takes every n-th rank; the children the rest
    theirs = [r for r in ranks if r not in mine]
    _traces, _fn = traces, fn
    try:
        with ProcessPoolExecutor(max_workers=n - 1, mp_context=ctx) as pool:
            futures = {r: pool.submit(_run, r) for r in theirs}
            out = {r: fn(traces.ranks[r]) for r in mine}
            out |= {r: f.result() for r, f in futures.items()}
    finally:
        _traces = _fn = None
    return {r: out[r] for r in ranks}
