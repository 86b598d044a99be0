"""How much slower the CPU ran in each profiled step than in the least disturbed one.

Why: besides a fixed cost per recorded event, the profiler slows the CPU down unevenly:
in some steps every operator takes longer (measured on an H100: the same operators of a
16 x Linear(4096) step ran 1.68x and 1.87x longer in the 2nd and 3rd profiled step than in
the 1st, with the same kernels; docs/whatif.md). A per-event cost cannot express that, but
the trace shows it: a training step repeats the same operators, so the same operator in
two steps should take about as long.

Definition. For one rank, every CPU operator and runtime call that starts inside a
``ProfilerStep`` range is keyed by (thread, name, its occurrence number among that
thread's events of that name in the step). Keys present in every step whose median
duration across steps is at least :data:`MIN_EVENT_NS` are compared:
``ratio(step, key) = dur(step, key) / median over steps of dur(key)``. The step's
*slowness* is the median of its ratios over keys; its *speed factor* is the smallest
slowness of the rank's steps divided by its own (1.0 for the least disturbed step, < 1 for
slower ones). The replay multiplies the step's CPU work segments by it.

The least disturbed step is still profiled: a slowdown common to every step is not seen
here (the per-event costs of :mod:`tracekit.replay.costs` cover the profiler's fixed cost).
Needs at least two steps with :data:`MIN_KEYS` common keys; otherwise every factor is 1.0.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tracekit.traces import schema

#: events shorter than this (median across steps) are left out: their length is mostly the profiler's own
MIN_EVENT_NS = 5_000
#: fewer comparable events than this: no factor (1.0 everywhere)
MIN_KEYS = 20


def step_speed(cpu: pd.DataFrame, steps: pd.DataFrame) -> dict[int, float]:
    """{step: speed factor} for one rank (module doc). ``cpu``: the rank's CPU events (``ts_ns``,
    ``end_ns``, ``tid``, ``name``, ``kind``); ``steps``: its ``ProfilerStep`` ranges (``step``, ``ts_ns``,
    ``end_ns``)."""
    names = cpu["name"]
    if isinstance(names.dtype, pd.CategoricalDtype):
        codes = names.cat.codes.to_numpy().astype(np.int64)
    else:
        codes = pd.factorize(names)[0].astype(np.int64)
    is_step = schema.name_mask(names, schema.STEP_PREFIX, prefix=True)
    return step_speed_of(cpu["kind"].to_numpy(), cpu["ts_ns"].to_numpy(), cpu["end_ns"].to_numpy(),
                         cpu["tid"].to_numpy(), codes, is_step, steps)


def step_speed_of(kind: np.ndarray, ts: np.ndarray, end: np.ndarray, tid: np.ndarray, name: np.ndarray,
                  is_step: np.ndarray, steps: pd.DataFrame) -> dict[int, float]:
    """:func:`step_speed` on columns: ``name`` holds one integer code per distinct name, ``is_step`` marks the
    ``ProfilerStep#`` ranges."""
    if len(steps["step"]) < 2:
        return {int(s): 1.0 for s in steps["step"]}
    slow = _slowness(kind, ts, end, tid, name, is_step, steps)
    if slow is None:
        return {int(s): 1.0 for s in steps["step"]}
    best = float(min(slow.values()))
    return {s: (best / v if v > 0 else 1.0) for s, v in slow.items()}


def _slowness(kind: np.ndarray, ts: np.ndarray, end: np.ndarray, tid: np.ndarray, name: np.ndarray,
              is_step: np.ndarray, steps: pd.DataFrame) -> dict[int, float] | None:
    """{step: slowness} (module doc) over the steps that have events; None without enough common keys."""
    keep = (kind != schema.ANNOTATION) & ~is_step
    starts, ends = np.asarray(steps["ts_ns"]), np.asarray(steps["end_ns"])
    order = np.argsort(starts)
    starts, ends, ids = starts[order], ends[order], np.asarray(steps["step"])[order]
    k = np.searchsorted(starts, ts, side="right") - 1
    inside = keep & (k >= 0) & (ts < ends[np.maximum(k, 0)])
    if not inside.any():
        return None
    step, t, nm, start = ids[k[inside]], tid[inside], name[inside], ts[inside]
    dur = (end - ts)[inside].astype(float)
    # occurrence of each event among its thread's events of that name in the step, by start time
    by_time = np.lexsort((start, t, step))
    grouped = by_time[np.lexsort((nm[by_time], t[by_time], step[by_time]))]
    g_key = np.stack([step[grouped], t[grouped], nm[grouped]])
    new = np.r_[True, (g_key[:, 1:] != g_key[:, :-1]).any(axis=0)]
    first = np.maximum.accumulate(np.where(new, np.arange(grouped.size), 0))
    occ = np.empty(grouped.size, dtype=np.int64)
    occ[grouped] = np.arange(grouped.size) - first
    # one row per (thread, name, occurrence), one column per step: the event's duration
    _, t_idx = np.unique(t, return_inverse=True)
    _, n_idx = np.unique(nm, return_inverse=True)
    key = (t_idx.astype(np.int64) * (int(n_idx.max()) + 1) + n_idx) * (int(occ.max()) + 1) + occ
    keys, row = np.unique(key, return_inverse=True)
    cols, col = np.unique(step, return_inverse=True)
    wide = np.full((keys.size, cols.size), np.nan)
    wide[row, col] = dur
    wide = wide[~np.isnan(wide).any(axis=1)]  # keys present in every step
    med = np.median(wide, axis=1)
    wide, med = wide[med >= MIN_EVENT_NS], med[med >= MIN_EVENT_NS]
    if len(wide) < MIN_KEYS:
        return None
    per_step = np.median(wide / med[:, None], axis=0)
    return {int(s): float(v) for s, v in zip(cols.tolist(), per_step.tolist())}
