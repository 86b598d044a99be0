"""The data behind each figure of the HTML report: plain tables in, plain data out (no plotting here).

Times on the timeline are µs from the timeline's ``origin_ns`` (the earliest
``ProfilerStep`` start of the shown step over all ranks, after subtracting each
rank's clock offset). Lanes of one rank in one step:

- ``compute`` / ``comm`` / ``memory``: the union of that class's GPU activity
  *launched* in the step (the attribution of the per-step table), merged into
  disjoint segments; each segment carries its kernel count and longest kernel.
- ``idle``: the gaps of the union of all that activity between its first start
  and last end, so the lane sums to the step row's ``idle_us``.
- buckets: each backward allreduce of the step (bucket timeline) from
  gradient-ready (``ready_gpu_ns``: the latest end of the compute launched before
  it that had ended when its kernel started; ``ready_cpu_ns`` when unknown) to the end of its kernel; ``exposed`` are the
  parts of the kernel no compute kernel of the rank covers (they sum to the
  collective table's ``exposed_us``).
- compiled: compiled subgraphs and regions (CPU ranges) and the gaps between
  consecutive subgraphs, with their kind (``graph_break`` / ``ddp_split`` / ``unknown``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from tracekit.analyses import intervals as iv

NS_PER_US = 1000.0
CLASS_LANES = ("compute", "comm", "memory")


@dataclass(frozen=True)
class Segment:
    """One bar: ``[start_us, end_us)`` from the origin; ``count`` kernels; ``name`` (raw, unescaped) labels it."""

    start_us: float
    end_us: float
    name: str = ""
    count: int = 1

    @property
    def dur_us(self) -> float:
        return self.end_us - self.start_us


@dataclass(frozen=True)
class BucketSpan:
    """One DDP bucket in the shown step: gradient-ready -> allreduce end, with its exposed parts."""

    bucket: int
    bytes: float
    ready_us: float
    start_us: float
    end_us: float
    exposed: tuple[tuple[float, float], ...]
    exposed_us: float


@dataclass(frozen=True)
class Boundary:
    """The gap between two consecutive compiled subgraphs of one pass (CPU time)."""

    start_us: float
    end_us: float
    kind: str
    pass_: str
    index: int


@dataclass
class RankLanes:
    """Every lane of one rank (see module doc)."""

    rank: int
    lanes: dict[str, list[Segment]] = field(default_factory=dict)
    buckets: list[BucketSpan] = field(default_factory=list)
    subgraphs: list[Segment] = field(default_factory=list)
    regions: list[Segment] = field(default_factory=list)
    boundaries: list[Boundary] = field(default_factory=list)


@dataclass
class Timeline:
    """The per-rank timeline of one profiled step."""

    step: int
    origin_ns: int
    ranks: list[RankLanes]

    def rank(self, rank: int) -> RankLanes | None:
        return next((r for r in self.ranks if r.rank == rank), None)


@dataclass(frozen=True)
class Target:
    """Where a finding points on the timeline: rank (None = all), lane and ``[x0_us, x1_us]``."""

    rank: int | None
    lane: str
    x0_us: float
    x1_us: float


# -- step choice -------------------------------------------------------------------------------


def pick_step(steps: pd.DataFrame) -> int | None:
    """The step the timeline shows: among steps that launched GPU work on every rank (else all steps),
    the one whose slowest rank's ``step_us`` is the median (the lower middle for an even count;
    ties go to the later step, past warm-up effects)."""
    if steps is None or steps.empty:
        return None
    s = steps
    if "kernels" in s:
        full = s.groupby("step")["kernels"].min()
        good = full[full > 0].index
        if len(good):
            s = s[s["step"].isin(good)]
    slowest = s.groupby("step")["step_us"].max().sort_index()
    order = slowest.reset_index().sort_values(["step_us", "step"], ascending=[True, False], kind="stable")
    return int(order["step"].iloc[(len(order) - 1) // 2])


# -- interval helpers --------------------------------------------------------------------------


def gaps(starts: np.ndarray, ends: np.ndarray, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
    """The parts of ``[lo, hi)`` that no interval covers (disjoint, sorted)."""
    s, e = iv.union(*iv.clip(starts, ends, lo, hi))
    gs = np.concatenate([[lo], e]).astype(np.int64)
    ge = np.concatenate([s, [hi]]).astype(np.int64)
    keep = ge > gs
    return gs[keep], ge[keep]


def _us(ns: np.ndarray | int, origin_ns: int) -> np.ndarray:
    return (np.asarray(ns, dtype=np.int64) - origin_ns) / NS_PER_US


def merged_segments(ts_ns: np.ndarray, end_ns: np.ndarray, names: np.ndarray, origin_ns: int) -> list[Segment]:
    """Union of the intervals as segments, each with its kernel count and longest kernel's name."""
    ts_ns, end_ns = np.asarray(ts_ns, np.int64), np.asarray(end_ns, np.int64)
    s, e = iv.union(ts_ns, end_ns)
    if s.size == 0:
        return []
    k = np.searchsorted(s, ts_ns, side="right") - 1  # each interval's merged segment (zero-length: may be -1)
    ok = (k >= 0) & (ts_ns < e[np.clip(k, 0, None)])
    counts = np.bincount(k[ok], minlength=s.size)
    dur = end_ns - ts_ns
    order = np.lexsort((-dur[ok], k[ok]))  # per segment, the longest first
    kk = k[ok][order]
    first = np.flatnonzero(np.r_[True, kk[1:] != kk[:-1]])
    top = np.full(s.size, "", dtype=object)
    top[kk[first]] = np.asarray(names, dtype=object)[ok][order][first]
    ss, ee = _us(s, origin_ns), _us(e, origin_ns)
    return [Segment(float(a), float(b), str(n), int(c)) for a, b, n, c in zip(ss, ee, top, counts)]


def coarsen(segs: list[Segment], max_n: int) -> list[Segment]:
    """At most ``max_n`` segments for drawing: the closest neighbours are merged (the smallest gaps
    first), so every covered instant stays covered; counts add up; the name is the first segment's.
    A figure with 100k bars per lane would be too slow to open."""
    if len(segs) <= max_n or max_n < 1:
        return segs
    gap = np.array([b.start_us - a.end_us for a, b in zip(segs[:-1], segs[1:])])
    cut = np.sort(gap)[len(segs) - max_n - 1]  # merging every gap <= cut leaves <= max_n segments
    out: list[Segment] = []
    cur = segs[0]
    for g, s in zip(gap, segs[1:]):
        if g <= cut:
            cur = Segment(cur.start_us, max(cur.end_us, s.end_us), cur.name, cur.count + s.count)
        else:
            out.append(cur)
            cur = s
    out.append(cur)
    return out


def longest(segs: list[Segment], max_n: int) -> list[Segment]:
    """The ``max_n`` longest segments, in time order (for the idle lane: merging idle gaps would
    claim idle time where the GPU was busy, so the shortest gaps are left out instead)."""
    if len(segs) <= max_n:
        return segs
    keep = np.sort(np.argsort([-s.dur_us for s in segs], kind="stable")[:max_n])
    return [segs[i] for i in keep]


# -- lanes -------------------------------------------------------------------------------------


def class_lanes(gpu: pd.DataFrame, cls: np.ndarray, origin_ns: int) -> dict[str, list[Segment]]:
    """``compute`` / ``comm`` / ``memory`` / ``idle`` lanes of one rank's step activity.

    ``gpu``: the GPU activity launched in the step (``ts_ns``, ``end_ns``, ``name``),
    ``cls``: its classes (:mod:`tracekit.analyses.classify`).
    """
    ts, end = gpu["ts_ns"].to_numpy(np.int64), gpu["end_ns"].to_numpy(np.int64)
    names = gpu["name"].astype(str).to_numpy()
    cls = np.asarray(cls, dtype=object)
    out = {c: merged_segments(ts[cls == c], end[cls == c], names[cls == c], origin_ns) for c in CLASS_LANES}
    if ts.size:
        gs, ge = gaps(ts, end, int(ts.min()), int(end.max()))
        out["idle"] = [Segment(float(a), float(b), "idle", 0) for a, b in zip(_us(gs, origin_ns), _us(ge, origin_ns))]
    else:
        out["idle"] = []
    return out


def bucket_spans(tl: pd.DataFrame, compute: tuple[np.ndarray, np.ndarray], origin_ns: int) -> list[BucketSpan]:
    """The buckets of one rank and step. ``tl``: its bucket-timeline rows
    (:data:`tracekit.analyses.timeline.TIMELINE_COLUMNS`); ``compute``: every compute kernel
    of the rank as ``(ts_ns, end_ns)``, the cover that defines ``exposed_us``."""
    out = []
    for r in tl.sort_values("bucket").itertuples(index=False):
        start, end = int(r.start_ns), int(r.end_ns)
        # both on the device's clock: the gradients' last kernel, else the host's ready marker mapped onto it
        ready = int(r.ready_gpu_ns) if r.ready_gpu_ns >= 0 else int(r.ready_device_ns) if r.ready_device_ns >= 0 \
            else start
        ready = min(ready, start)
        gs, ge = gaps(compute[0], compute[1], start, end)
        exposed = tuple((float(a), float(b)) for a, b in zip(_us(gs, origin_ns), _us(ge, origin_ns)))
        out.append(BucketSpan(bucket=int(r.bucket), bytes=float(r.bytes), ready_us=float(_us(ready, origin_ns)),
                              start_us=float(_us(start, origin_ns)), end_us=float(_us(end, origin_ns)),
                              exposed=exposed, exposed_us=float((ge - gs).sum()) / NS_PER_US))
    return out


def compiled_marks(ops: pd.DataFrame, boundaries: pd.DataFrame, origin_ns: int
                   ) -> tuple[list[Segment], list[Segment], list[Boundary]]:
    """``(subgraphs, regions, boundaries)`` of one rank and step.

    ``ops``: :func:`tracekit.analyses.graphbreaks.compiled_ops` rows of the step (``what``,
    ``name``, ``ts_ns``, ``end_ns``); ``boundaries``: its ``break_boundaries`` rows (``pass``,
    ``index``, ``kind``). Boundary ``i`` of a pass is the gap between its subgraphs ``i`` and
    ``i + 1`` in start order, as graphbreaks numbers them.
    """
    seg = lambda d, label: [Segment(float(_us(a, origin_ns)), float(_us(b, origin_ns)), label(n), 1)  # noqa: E731
                            for a, b, n in zip(d["ts_ns"], d["end_ns"], d["name"])]
    sub = ops[ops["what"].isin(("fwd", "bwd"))].sort_values("ts_ns", kind="stable")
    subgraphs = seg(sub, str)
    regions = seg(ops[ops["what"] == "region"].sort_values("ts_ns", kind="stable"), str)
    kinds = {(str(p), int(i)): str(k) for p, i, k in zip(boundaries["pass"], boundaries["index"], boundaries["kind"])}
    out: list[Boundary] = []
    for pass_, what in (("forward", "fwd"), ("backward", "bwd")):
        s = sub[sub["what"] == what]
        ends, starts = s["end_ns"].to_numpy()[:-1], s["ts_ns"].to_numpy()[1:]
        for i, (a, b) in enumerate(zip(ends, starts)):
            out.append(Boundary(float(_us(a, origin_ns)), float(_us(b, origin_ns)), kinds.get((pass_, i), "unknown"),
                                pass_, i))
    return subgraphs, regions, out


# -- bars --------------------------------------------------------------------------------------

BREAKDOWN_PARTS = ("compute_only_us", "overlap_us", "exposed_comm_us", "memory_only_us", "idle_us")


def breakdown_bars(steps: pd.DataFrame) -> pd.DataFrame:
    """Per rank, the mean over its steps (with GPU work) of the per-step breakdown, split into
    disjoint parts of ``span_us``: ``compute_only_us`` = compute − overlap (compute with no
    communication under it), ``overlap_us``, ``exposed_comm_us``, ``memory_only_us`` = busy −
    compute − exposed_comm (memcpy/memset under neither), ``idle_us``. The parts sum to ``span_us``."""
    cols = ["rank", "steps", *BREAKDOWN_PARTS, "span_us"]
    if steps is None or steps.empty or "busy_us" not in steps:
        return pd.DataFrame(columns=cols)
    s = steps[steps["kernels"] > 0] if "kernels" in steps else steps
    s = s.fillna({c: 0.0 for c in ("compute_us", "comm_us", "overlap_us", "exposed_comm_us", "memory_us",
                                   "idle_us")})
    g = s.groupby("rank")
    m = g[["compute_us", "overlap_us", "exposed_comm_us", "busy_us", "idle_us", "span_us"]].mean()
    out = pd.DataFrame({
        "steps": g.size(),
        "compute_only_us": m["compute_us"] - m["overlap_us"],
        "overlap_us": m["overlap_us"],
        "exposed_comm_us": m["exposed_comm_us"],
        "memory_only_us": (m["busy_us"] - m["compute_us"] - m["exposed_comm_us"]).clip(lower=0.0),
        "idle_us": m["idle_us"],
        "span_us": m["span_us"],
    })
    return out.reset_index()[cols]


# -- findings -> timeline ----------------------------------------------------------------------


def _span(segs: list[Any], start: str = "start_us", end: str = "end_us") -> tuple[float, float] | None:
    if not segs:
        return None
    return min(getattr(s, start) for s in segs), max(getattr(s, end) for s in segs)


def finding_target(finding: dict[str, Any], tl: Timeline) -> Target | None:
    """The part of the timeline a finding is about (None when the shown step has nothing of it).

    bucket findings -> that bucket's span; ``allreduce_after_backward`` / ``backward_comm_exposed``
    -> all bucket spans; ``rank_waiting`` -> the rank's comm lane; ``graph_break`` -> the
    graph-break gaps; ``compile_skipped`` -> the rank's whole step. A finding on every rank
    (``rank`` None) points at its costliest rank (``evidence.worst_rank``).
    """
    ev = finding.get("evidence") or {}
    rank = finding.get("rank")
    rank = ev.get("worst_rank", rank) if rank is None else rank
    lanes = tl.rank(int(rank)) if rank is not None else (tl.ranks[0] if tl.ranks else None)
    if lanes is None:
        return None
    code = finding.get("code")
    span: tuple[float, float] | None = None
    lane = "buckets"
    if code in ("exposed_first_bucket", "exposed_last_bucket") and lanes.buckets:
        b = min(lanes.buckets, key=lambda x: x.bucket) if code == "exposed_first_bucket" else \
            max(lanes.buckets, key=lambda x: x.bucket)
        span = (b.ready_us, b.end_us)
    elif code in ("allreduce_after_backward", "backward_comm_exposed"):
        span = _span(lanes.buckets, "ready_us")
    elif code == "rank_waiting":
        lane, span = "comm", _span(lanes.lanes.get("comm", []))
    elif code == "graph_break":
        lane, span = "compiled", _span([b for b in lanes.boundaries if b.kind == "graph_break"])
    elif code == "compile_skipped":
        lane = "compute"
        span = _span([s for c in CLASS_LANES for s in lanes.lanes.get(c, [])])
    if span is None:
        return None
    return Target(rank=int(lanes.rank), lane=lane, x0_us=float(span[0]), x1_us=float(span[1]))
