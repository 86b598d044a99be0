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
    if len(steps) < 2:
        return {int(s): 1.0 for s in steps["step"]}
    slow = _slowness(cpu, steps)
    if slow is None:
        return {int(s): 1.0 for s in steps["step"]}
    best = float(slow.min())
    return {int(s): (best / float(v) if v > 0 else 1.0) for s, v in slow.items()}


def _slowness(cpu: pd.DataFrame, steps: pd.DataFrame) -> pd.Series | None:
    ev = cpu[(cpu["kind"] != schema.ANNOTATION) & ~schema.name_mask(cpu["name"], schema.STEP_PREFIX, prefix=True)]
    starts, ends = steps["ts_ns"].to_numpy(), steps["end_ns"].to_numpy()
    order = np.argsort(starts)
    starts, ends, ids = starts[order], ends[order], steps["step"].to_numpy()[order]
    ts = ev["ts_ns"].to_numpy()
    k = np.searchsorted(starts, ts, side="right") - 1
    inside = (k >= 0) & (ts < ends[np.maximum(k, 0)])
    ev = ev[inside].assign(step=ids[k[inside]], dur=(ev["end_ns"] - ev["ts_ns"]).to_numpy()[inside])
    if ev.empty:
        return None
    ev = ev.sort_values(["step", "tid", "ts_ns"], kind="stable")
    ev["occ"] = ev.groupby(["step", "tid", "name"], sort=False).cumcount()
    wide = ev.pivot_table(index=["tid", "name", "occ"], columns="step", values="dur", aggfunc="first")
    wide = wide.dropna()
    med = wide.median(axis=1)
    wide = wide[med >= MIN_EVENT_NS]
    if len(wide) < MIN_KEYS:
        return None
    ratios = wide.div(med[wide.index], axis=0)
    return ratios.median(axis=0)
