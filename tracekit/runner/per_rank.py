"""Run a per-rank function over every rank of a :class:`TraceSet`, in parallel when it pays.

The per-rank analyses (breakdown, collective table, buckets, bucket timeline,
graph breaks) are independent across ranks. On large traces they are spread
over forked processes: the children inherit the loaded traces (nothing is
pickled on the way in) and send back only their small result tables, while
this process works on its own share. Small inputs, one rank, one CPU or
platforms without ``fork`` run serially. :func:`map_forked` is the same for any
list of independent items (the replay's what-if scenarios).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar


from tracekit.cpus import usable_cpus
from tracekit.traces.loader import fork_context
from tracekit.traces.traceset import RankTrace, TraceSet

T = TypeVar("T")
R = TypeVar("R")
#: below this many events over all ranks, forking costs more than it saves
PARALLEL_MIN_EVENTS = 200_000

# set only while a pool is alive; forked children read them
_items: list[Any] | None = None
_fn: Callable[[Any], Any] | None = None


def _run(i: int) -> Any:
    assert _items is not None and _fn is not None
    return _fn(_items[i])


def map_forked(fn: Callable[[T], R], items: list[T], workers: int) -> list[R]:
    """``[fn(x) for x in items]``, spread over ``workers`` processes, this one included: forked children
    inherit ``fn`` and ``items`` (nothing is pickled on the way in; the results must be picklable) while this
    process works on every ``workers``-th item. Serial with one worker, one item, no ``fork`` or inside a
    child. Exceptions propagate as if run serially."""
    global _items, _fn
    ctx = fork_context()
    n = min(workers, len(items))
    if n <= 1 or ctx is None or _items is not None:  # (no nested pools)
        return [fn(x) for x in items]
    mine = set(range(0, len(items), n))
    _items, _fn = items, fn
    try:
        from concurrent.futures import ProcessPoolExecutor  # (10 ms of imports a serial run does without)

        with ProcessPoolExecutor(max_workers=n - 1, mp_context=ctx) as pool:
            futures = {i: pool.submit(_run, i) for i in range(len(items)) if i not in mine}
            out = {i: fn(items[i]) for i in sorted(mine)}
            out |= {i: f.result() for i, f in futures.items()}
    finally:
        _items = _fn = None
    return [out[i] for i in range(len(items))]


def map_ranks(traces: TraceSet, fn: Callable[[RankTrace], T], workers: int | None = None,
              skip: set[int] = frozenset()) -> dict[int, T]:
    """``{rank: fn(rank_trace)}`` for every rank but those in ``skip``, in rank order.

    ``workers``: processes to use, this one included (default: one per rank, at
    most the CPU count, and 1 for inputs under :data:`PARALLEL_MIN_EVENTS`).
    ``fn``'s results must be picklable. Exceptions propagate as if run serially.
    """
    ranks = [r for r in traces.ranks if r not in skip]
    n = workers if workers is not None else min(len(ranks), usable_cpus())
    if workers is None and sum(traces.ranks[r].n_events for r in ranks) < PARALLEL_MIN_EVENTS:
        n = 1
    return dict(zip(ranks, map_forked(lambda r: fn(traces.ranks[r]), ranks, n)))
