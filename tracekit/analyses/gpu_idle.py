"""GPU idle time inside each step, and how much of it waited for the CPU to launch work.

Per rank and step (window = the step on the device's clock, :meth:`RankTrace.step_windows`,
:mod:`tracekit.traces.steps`; GPU and CPU timestamps share kineto's clock):

- ``gpu_busy_us`` = |∪ all GPU activity (any step, any stream) ∩ window|;
- ``gpu_idle_us`` = window length − ``gpu_busy_us``: no kernel, memcpy or memset running;
- ``launch_idle_us``: the part of ``gpu_idle_us`` in *launch gaps*: for each gap of the busy
  union, from its start until the launch call (CUDA runtime/driver call start) of the activity
  that ends it, when that call came after the gap began: the GPU had nothing queued and waited
  for the CPU. The rest of the idle time waited on something else (the launch latency, a
  synchronize, an event on another stream, the step's end);
- ``*_pct`` = 100 · value / ``step_us``; ``kernels``: activities launched in the step.

A busy-waiting NCCL kernel counts as busy: a rank that waits for its peers is not idle,
the peer that arrives late (CPU-bound) is.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from tracekit.analyses import intervals as iv
from tracekit.analyses.collectives import result_table
from tracekit.analyses.findings import Finding, FindingContext, Quote, rounded
from tracekit.analyses.registry import Column, RankContext, Table
from tracekit.traces import cols as C
from tracekit.traces.arrays import unique
from tracekit.traces.frames import NO_ROWS, Columnar
from tracekit.traces.steps import STEP_DOC

NS_PER_US = 1000.0
COLUMNS = ("rank", "step", "step_us", "gpu_busy_us", "gpu_idle_us", "gpu_idle_pct", "launch_idle_us",
           "launch_idle_pct", "kernels")


def launch_gaps(gpu: Columnar) -> tuple[np.ndarray, np.ndarray]:
    """The launch gaps (see module doc) of a rank's GPU activity, as disjoint ``(starts, ends)`` in ns."""
    ts, end = np.asarray(gpu["ts_ns"], dtype=np.int64), np.asarray(gpu["end_ns"], dtype=np.int64)
    if ts.size < 2:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    order = np.argsort(ts, kind="stable")
    ts, end, launch = ts[order], end[order], np.asarray(gpu["launch_ts_ns"], dtype=np.int64)[order]
    s, e = iv.union(ts, end)
    if s.size < 2:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    opener = np.searchsorted(ts, s[1:], side="left")  # the first activity of each later busy interval
    gap_s, gap_e, at = e[:-1], s[1:], launch[opener]
    late = (at >= 0) & (at > gap_s)
    return gap_s[late], np.minimum(gap_e[late], at[late])


def idle_rows(gpu: Columnar, steps: Columnar, rank: int) -> dict[str, np.ndarray]:
    """One row per step of ``steps`` (columns :data:`COLUMNS`, as arrays) from a rank's GPU activity."""
    lo, hi = np.asarray(steps["ts_ns"], dtype=np.int64), np.asarray(steps["end_ns"], dtype=np.int64)
    step = np.asarray(steps["step"]).astype(np.int64)
    step_ns = hi - lo
    nonempty = step_ns > 0  # an empty (or reversed) window intersects nothing

    def covered(cover: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        return np.where(nonempty, iv.covered_per_interval(lo, hi, cover), 0)

    busy_ns = covered((np.asarray(gpu["ts_ns"], dtype=np.int64), np.asarray(gpu["end_ns"], dtype=np.int64)))
    launch_ns = covered(launch_gaps(gpu))
    k_steps, k_counts = unique(np.asarray(gpu["step"]), return_counts=True)
    pos = np.minimum(np.searchsorted(k_steps, step), max(k_steps.size - 1, 0))
    kernels = np.where(k_steps[pos] == step, k_counts[pos], 0) if k_steps.size else np.zeros(step.size, np.int64)

    def pct(x: np.ndarray) -> np.ndarray:
        return np.divide(100.0 * x, step_ns, out=np.full(step.size, np.nan), where=nonempty)

    return {
        "rank": np.full(step.size, rank, dtype=np.int64), "step": step, "step_us": step_ns / NS_PER_US,
        "gpu_busy_us": busy_ns / NS_PER_US, "gpu_idle_us": (step_ns - busy_ns) / NS_PER_US,
        "gpu_idle_pct": pct(step_ns - busy_ns), "launch_idle_us": launch_ns / NS_PER_US,
        "launch_idle_pct": pct(launch_ns), "kernels": kernels.astype(np.int64),
    }  # in the order of COLUMNS


def gpu_idle_table(ctx: RankContext) -> Columnar:
    rt = ctx.trace
    if not rt.has_gpu_activity or not rt.step_arrays()["step"].size:
        return NO_ROWS
    return idle_rows(rt.gpu_arrays(), rt.step_windows(), rt.rank)


TABLES = [
    Table(
        name="gpu_idle", scope="rank", title="GPU idle time per step (and how much waited for CPU launches)",
        doc="Window: the step on the device's clock (step_us, the steps table's). A launch gap is the part of a gap between GPU "
            "activities before the launch call of the activity that ends it: the GPU had nothing queued. "
            "Busy-waiting NCCL kernels count as busy. Used by the gpu_idle and rank_waiting findings.",
        columns=(
            Column("rank", "rank", "the rank"),
            Column("step", "step", "the ProfilerStep"),
            Column("step_us", "us", STEP_DOC),
            Column("gpu_busy_us", "us", "|∪ all GPU activity ∩ the step's window| (any stream, any step's work)"),
            Column("gpu_idle_us", "us", "step_us − gpu_busy_us: nothing running on the GPU"),
            Column("gpu_idle_pct", "pct", "100 · gpu_idle_us / step_us"),
            Column("launch_idle_us", "us", "part of gpu_idle_us in launch gaps: from a gap's start until the launch "
                                           "call of the activity that ends it, when that call came later (the GPU "
                                           "waited for the CPU)"),
            Column("launch_idle_pct", "pct", "100 · launch_idle_us / step_us"),
            Column("kernels", "count", "GPU activities launched in the step"),
        ),
        compute=gpu_idle_table, order=25,
    ),
]


# -- the finding read from this table (see tracekit.analyses.findings) -----------------------------

#: a rank whose GPU is idle less than this % of its step is GPU-bound, at least this much it waits for something
#: else: the one threshold of analyze's and whatif's classes (:mod:`tracekit.replay.trust`); set in a gap of the
#: committed runs' idle shares (docs/whatif.md, "How far to trust a prediction")
GPU_BOUND_MAX_IDLE_PCT = 15.0
#: a rank's GPU is "mostly idle" when nothing runs on it for this % of its step (mean over steps; above
#: :data:`GPU_BOUND_MAX_IDLE_PCT`, so a rank the finding calls CPU-bound is never a GPU-bound one in whatif) ...
GPU_IDLE_PCT = 30.0
#: ... and the idle time is at least this many µs per step
GPU_IDLE_MIN_US = 100.0
#: idle time is "waiting for the CPU" (CPU-bound) when launch gaps make up this share of it
LAUNCH_BOUND_SHARE = 0.5


class GpuIdle(Finding, tag="gpu_idle"):
    """``gpu_idle``: nothing runs on a rank's GPU for at least :data:`GPU_IDLE_PCT` % of its step (mean over
    steps, table ``gpu_idle``) and at least :data:`GPU_IDLE_MIN_US` µs; says whether it waited for CPU
    launches and which ranks wait for it (``rank_waiting``). Cost: the idle µs per step."""

    gpu_idle_pct: float | None
    launch_idle_pct: float | None
    gpu_idle_us_per_step: float | None
    kernels_per_step: float | None
    cpu_bound: bool
    makes_wait: list[int] | None

    QUOTES: ClassVar[dict[str, Quote]] = {
        "step_us": Quote("gpu_idle", "step_us", "mean"), "cost_us": Quote("gpu_idle", "gpu_idle_us", "mean"),
        "gpu_idle_us_per_step": Quote("gpu_idle", "gpu_idle_us", "mean"),
        "gpu_idle_pct": Quote("gpu_idle", "gpu_idle_pct", "mean"),
        "launch_idle_pct": Quote("gpu_idle", "launch_idle_pct", "mean"),
        "kernels_per_step": Quote("gpu_idle", "kernels", "mean")}
    ORDER: ClassVar[int] = 40
    TIMING: ClassVar[bool] = True

    @classmethod
    def detect(cls, ctx: FindingContext) -> list[GpuIdle]:
        return gpu_idle_findings(ctx.result, ctx.earlier("rank_waiting"))


def gpu_idle_findings(result: Any, waiting: list[Any]) -> list[GpuIdle]:
    """The :class:`GpuIdle` findings of ``result``; ``waiting``: the ``rank_waiting`` findings (who waits for whom)."""
    if not hasattr(result, "tables"):
        return []
    idle = result_table(result, "gpu_idle")
    if not C.nrows(idle):
        return []
    g = C.Groups(idle, ["rank"])
    agg = {"rank": g.keys["rank"], **{k: C.group_mean(idle[c], g.codes, g.n) for k, c in (
        ("idle_us", "gpu_idle_us"), ("step_us", "step_us"), ("idle_pct", "gpu_idle_pct"),
        ("launch_pct", "launch_idle_pct"), ("kernels", "kernels"))}}
    agg = C.take(agg, (agg["idle_pct"] >= GPU_IDLE_PCT) & (agg["idle_us"] >= GPU_IDLE_MIN_US))
    out = []
    victims_of: dict[int, list[int]] = {}  # straggler -> the ranks that wait for it (one pass, not one per rank)
    for f in waiting:
        victims_of.setdefault(f.straggler, []).append(f.rank)
    victims_of = {k: sorted(v) for k, v in victims_of.items()}
    # plain floats per column (a Python object per row would cost seconds at 16384 ranks)
    cols = zip(agg["rank"].tolist(), *(agg[k].astype(float).tolist()
                                       for k in ("idle_us", "step_us", "idle_pct", "launch_pct", "kernels")))
    for rank, idle_us, step_us, idle_pct, launch_pct, kernels in cols:
        bound = launch_pct >= LAUNCH_BOUND_SHARE * idle_pct
        what = (f"{launch_pct:.0f}% of the step waiting for the CPU to launch the next kernel ({kernels:.0f} "
                f"kernels per step): the rank is CPU-bound" if bound else
                f"only {launch_pct:.0f}% of the step in launch gaps: the rest waits on synchronizes, other streams "
                f"or the step's end")
        victims = victims_of.get(int(rank), [])
        hurts = (f"; rank{'s' if len(victims) > 1 else ''} {', '.join(map(str, victims))} wait{'' if len(victims) > 1 else 's'} "
                 f"for it at the collectives (rank_waiting)") if victims else ""
        msg = (f"rank {int(rank)}'s GPU is idle {idle_pct:.0f}% of each step ({idle_us:.0f} of {step_us:.0f} µs), "
               f"{what}{hurts}")
        out.append(GpuIdle(rank=int(rank), message=msg, cost_us=idle_us, step_us=step_us,
                           gpu_idle_pct=rounded(idle_pct), launch_idle_pct=rounded(launch_pct),
                           gpu_idle_us_per_step=rounded(idle_us), kernels_per_step=rounded(kernels), cpu_bound=bound,
                           makes_wait=victims or None))
    return out


FINDINGS = [GpuIdle]
