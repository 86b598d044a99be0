"""Graph-break impact, per rank and step, from the compiled regions and subgraphs in the trace.

What the trace shows of ``torch.compile``:

- ``Torch-Compiled Region: f/c``: one execution of a dynamo-compiled frame (torch 2.1-2.3 wrote
  ``Torch-Compiled Region`` without the compile id; torch 2.0 wrote none). A graph break ends a
  graph; dynamo resumes in a *new* frame (``resume_in_...``), which runs as its own, nested region.
- ``CompiledFunction`` (forward, main thread) / ``CompiledFunctionBackward``
  (autograd thread): one compiled subgraph.
- ``TorchDynamo Cache Lookup``: dynamo looked a frame up (compilation was requested).
- ``## Call CompiledFxGraph <key> ##``: one call of an inductor graph (torch 2.4 and later).
- GPU kernels named ``triton_*`` (``triton_poi_fused_...``; torch 2.0: ``triton__0d1d2d``): kernels
  inductor generated, so compiled code ran even where no subgraph range was recorded (inference
  under ``torch.no_grad`` records no ``CompiledFunction``).

Boundaries between consecutive forward subgraphs of a step are classified as
``ddp_split`` (both subgraphs in the same region instance: DDPOptimizer split one
dynamo graph at bucket boundaries, intended) or ``graph_break`` (different
regions: dynamo broke the graph) or ``unknown`` (a subgraph outside any recorded region: torch 2.0
records none, so splits and breaks cannot be told apart). Backward boundaries take the kinds of the
forward ones in reverse order when the counts agree, else ``ddp_split`` when the
forward had no break and ``unknown`` otherwise.

Columns of :func:`graph_break_table` (one row per rank and step):

- ``regions``: region instances executed; ``graph_regions``: those that directly
  contain ≥1 forward subgraph; ``fwd_subgraphs``, ``bwd_subgraphs``, ``cache_lookups``.
- ``ddp_splits`` / ``real_breaks``: forward boundaries of each kind.
- ``compiled_cpu_us``: CPU time inside compiled subgraphs (forward + backward).
- ``eager_between_us``: CPU time between consecutive subgraphs (eager code
  between them), split into ``eager_at_breaks_us`` / ``eager_at_splits_us``.
- ``idle_at_breaks_us`` / ``idle_at_splits_us``: GPU idle time (no GPU activity at
  all) between the last kernel launched by a subgraph and the first kernel
  launched by the next one: the launch gap the boundary caused.
- ``break_cost_us`` = ``idle_at_breaks_us`` (estimated cost of the real breaks per
  step); ``cost_per_break_us`` = ``break_cost_us / real_breaks``.
- ``compile_requested``: the manifest asked for compilation or the trace shows
  dynamo cache lookups / compiled regions / Triton kernels; ``triton_kernels``: GPU kernels named
  ``triton_*`` in the step; ``compile_skipped``: requested but neither a compiled subgraph nor a
  Triton kernel ran in the step.
- ``break_reasons``: dynamo's reasons for model (non-DDP-wrapper) breaks, from ``run.json``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, NamedTuple

import numpy as np

from tracekit.analyses import intervals as iv
from tracekit.analyses.findings import Finding, FindingContext, Quote, rank_step_us, rounded, step_means
from tracekit.analyses.manifest_check import rank_compile_facts
from tracekit.analyses.registry import Column, RankContext, Table, View, ViewOptions
from tracekit.analyses.timeline import cpu_ops, rows_by_rank
from tracekit.traces import cols as C, schema
from tracekit.traces.cols import Cols
from tracekit.traces.frames import NO_ROWS, Columnar
from tracekit.traces.manifest import CompileFacts, Manifest
from tracekit.traces.traceset import RankTrace, assign_steps

NS_PER_US = 1000.0
REGION_PREFIX = "Torch-Compiled Region: "
#: torch 2.1-2.3 name every compiled region this, without the compile id
REGION_NAME = "Torch-Compiled Region"
COMPILED_FWD = "CompiledFunction"
COMPILED_BWD = "CompiledFunctionBackward"
CACHE_LOOKUP = "TorchDynamo Cache Lookup"
FXGRAPH_PREFIX = "## Call CompiledFxGraph"
#: kernels inductor generated (``triton_poi_fused_add_0``; torch 2.0's ``triton__0d1d2d``)
TRITON_KERNEL_PREFIX = "triton_"

GB_COLUMNS = (
    "rank", "step", "regions", "graph_regions", "fwd_subgraphs", "bwd_subgraphs", "cache_lookups", "ddp_splits",
    "real_breaks", "sync_breaks", "graph_launches", "graph_kernels", "compiled_cpu_us", "eager_between_us",
    "eager_at_breaks_us", "eager_at_splits_us",
    "idle_at_breaks_us", "idle_at_splits_us", "break_cost_us", "cost_per_break_us", "compile_requested",
    "compile_skipped", "triton_kernels", "break_reasons",
)
BOUNDARY_COLUMNS = ("rank", "step", "pass", "index", "kind", "gap_cpu_us", "idle_gpu_us", "host_sync_us")
#: runtime calls that block the host until the GPU is done: what a data-dependent ``.item()`` / ``.tolist()`` /
#: ``nonzero`` between two graphs runs (a device-to-host copy, then a stream synchronize)
HOST_SYNC_PATTERN = (r"(?:Device|Stream|Event|Ctx)Synchronize|^cudaMemcpy$|^cuMemcpyDtoH|^hipMemcpy$"
                     r"|^cudaMemcpy2D$|^cudaMemcpyFromSymbol$")


#: the kinds of compiled op, in :func:`compiled_ops`' ``what`` (a name takes the first that matches)
WHATS = ("region", "fwd", "bwd", "lookup", "fxgraph")
_REGION, _FWD, _BWD, _LOOKUP, _FXGRAPH = range(len(WHATS))


def _what_of(name: str) -> int:
    """Index in :data:`WHATS` of a CPU op name, -1 for an op that is not about compilation."""
    tests = (name == REGION_NAME or name.startswith(REGION_PREFIX), name == COMPILED_FWD, name == COMPILED_BWD, name == CACHE_LOOKUP,
             name.startswith(FXGRAPH_PREFIX))
    return next((i for i, hit in enumerate(tests) if hit), -1)


class Compiled(NamedTuple):
    """The compiled ops of a rank inside steps, sorted by start (arrays; shared, do not mutate)."""

    what: np.ndarray  # index in WHATS
    name: np.ndarray  # the op's name code in cpu_ops(rt).names
    ts_ns: np.ndarray
    end_ns: np.ndarray
    tid: np.ndarray
    step: np.ndarray


def compiled_arrays(rt: RankTrace) -> Compiled:
    """The rank's compiled-code CPU ops as :class:`Compiled` arrays (once per rank, shared by every table)."""
    def build() -> Compiled:
        ops = cpu_ops(rt)
        w = ops.per_name(lambda names: np.array([_what_of(n) for n in names] + [-1], dtype=np.int64),
                         "compiled_what")[ops.code]  # code -1: no name
        keep = (w >= 0).nonzero()[0]
        step = assign_steps(rt.step_arrays(), ops.ts_ns[keep])
        keep, step = keep[step >= 0], step[step >= 0]
        order = np.argsort(ops.ts_ns[keep], kind="stable")
        keep = keep[order]
        return Compiled(w[keep], ops.code[keep], ops.ts_ns[keep], ops.end_ns[keep], ops.tid[keep], step[order])

    return rt.memo("compiled_ops", build)


def compiled_ops(rt: RankTrace) -> Any:
    """The CPU ops that describe compilation: ``what`` in region/fwd/bwd/lookup/fxgraph, with step (a
    DataFrame: the HTML report's timeline reads it, never ``tracekit analyze``)."""
    import pandas as pd  # the report's path only (analyze reads compiled_arrays)

    c = compiled_arrays(rt)
    names = np.array(cpu_ops(rt).names + [""], dtype=object)
    return pd.DataFrame({"name": pd.Series(names[c.name], dtype=str), "ts_ns": c.ts_ns, "end_ns": c.end_ns,
                         "tid": c.tid, "what": pd.Series(np.array(WHATS, dtype=object)[c.what], dtype=str),
                         "step": c.step})


def innermost_region(c: Compiled, sub: np.ndarray, regions: np.ndarray) -> np.ndarray:
    """Index (into ``regions``) of the innermost region (latest start) on the same thread and step
    containing each subgraph of ``sub`` (rows of ``c``), -1 if none. Any two kinds of compiled ops pair so: a
    region and its subgraphs, a subgraph and the inductor call inside it."""
    out = np.full(sub.size, -1, dtype=np.int64)
    if not sub.size or not regions.size:
        return out
    # one key per (tid, step): pair each subgraph with the regions of its key, as a merge would
    both = np.r_[sub, regions]
    _, tid_code = np.unique(c.tid[both], return_inverse=True)
    key = tid_code * (int(c.step[both].max()) + 1) + c.step[both]
    ks, kr = key[:sub.size], key[sub.size:]
    r_order = np.argsort(kr, kind="stable")
    lo, hi = np.searchsorted(kr[r_order], ks, "left"), np.searchsorted(kr[r_order], ks, "right")
    n = hi - lo
    sid = np.repeat(np.arange(sub.size), n)
    rid = r_order[np.arange(n.sum()) - np.repeat(np.cumsum(n) - n, n) + np.repeat(lo, n)]
    s, r = sub[sid], regions[rid]
    ok = (c.ts_ns[r] <= c.ts_ns[s]) & (c.end_ns[r] >= c.end_ns[s])
    sid, rid = sid[ok], rid[ok]
    best = np.lexsort((rid, c.ts_ns[regions[rid]], sid))  # the last per subgraph: latest start
    last = np.r_[sid[best][1:] != sid[best][:-1], True] if best.size else np.empty(0, bool)
    out[sid[best][last]] = rid[best][last]
    return out


def _kernel_edges(rt: RankTrace, ts: np.ndarray, end: np.ndarray, tid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per subgraph: first start and last end of the GPU activity it launched (-1 when none)."""
    if not ts.size or not rt.has_gpu_activity:
        return np.full(ts.size, -1, dtype=np.int64), np.full(ts.size, -1, dtype=np.int64)
    lt_all = rt.gpu_column("launch_ts_ns")
    launched = lt_all >= 0
    order = np.argsort(ts, kind="stable")
    st, en, td = ts[order], end[order], tid[order]
    lt = lt_all[launched]
    i = np.searchsorted(st, lt, side="right") - 1
    ic = np.clip(i, 0, None)
    ok = (i >= 0) & (en[ic] > lt) & (td[ic] == rt.gpu_column("launch_tid")[launched])
    return iv.segment_bounds(rt.gpu_column("ts_ns")[launched][ok], rt.gpu_column("end_ns")[launched][ok],
                             order[ic[ok]], ts.size)


def _group_starts(step: np.ndarray) -> np.ndarray:
    """Positions where a run of equal ``step`` values begins (``step`` grouped, e.g. sorted)."""
    return np.r_[True, step[1:] != step[:-1]].nonzero()[0] if step.size else np.empty(0, np.int64)


def rank_in_group(step: np.ndarray) -> np.ndarray:
    """0, 1, 2... within each run of equal ``step`` values (a groupby cumcount on grouped rows)."""
    first = _group_starts(step)
    return np.arange(step.size) - np.repeat(first, np.diff(np.r_[first, step.size]))


def _boundaries(rt: RankTrace, c: Compiled, rows: np.ndarray, region: np.ndarray | None,
                fwd_kinds: Cols | None) -> Cols:
    """Consecutive-subgraph boundaries of one pass (``rows`` of ``c``, with their forward ``region`` or
    None for the backward, whose kinds come from the forward boundaries ``fwd_kinds``)."""
    if rows.size < 2:
        return C.empty(("step", "index", "kind", "gap_cpu_us", "idle_gpu_us", "host_sync_us"))
    order = np.lexsort((c.ts_ns[rows], c.step[rows]))
    rows = rows[order]
    step, ts, end = c.step[rows], c.ts_ns[rows], c.end_ns[rows]
    first, last = _kernel_edges(rt, ts, end, c.tid[rows])
    has = np.r_[step[1:] == step[:-1], False]  # the next subgraph is in the same step
    nxt = has.nonzero()[0] + 1
    b_step = step[has]
    # the next start as float, as the groupby shift that introduced NaN made it
    gap = (ts[nxt].astype(float) - end[has]) / NS_PER_US
    index = rank_in_group(b_step)
    e, s = last[has], first[nxt]
    valid = (e >= 0) & (s > e)
    idle = np.zeros(b_step.size)
    if valid.any() and rt.has_gpu_activity:
        cov = iv.covered_per_interval(e[valid], s[valid], (rt.gpu_column("ts_ns"), rt.gpu_column("end_ns")))
        idle[valid] = (s[valid] - e[valid] - cov) / NS_PER_US
    if region is not None:
        reg = region[order]
        a, b = reg[has], reg[nxt]
        # a subgraph outside any recorded region (torch 2.0 records none): split or break is unknown
        kind = np.where((a < 0) | (b < 0), "unknown", np.where(a == b, "ddp_split", "graph_break")).astype(object)
    else:
        kind = _backward_kinds(b_step, index, fwd_kinds)
    sync = _host_sync_us(rt, c.tid[rows][has], end[has], ts[nxt])
    return {"step": b_step, "index": index, "kind": kind, "gap_cpu_us": gap, "idle_gpu_us": idle,
            "host_sync_us": sync}


def _host_sync_us(rt: RankTrace, tid: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Per gap ``[lo, hi]`` on thread ``tid``: µs the host spent in blocking calls (:data:`HOST_SYNC_PATTERN`)
    inside it; 0 where none (the break holds no host sync)."""
    out = np.zeros(lo.size)
    hits = rt.name_hits(HOST_SYNC_PATTERN)
    if not hits.any() or not lo.size:
        return out
    sel = np.flatnonzero(hits)
    ts, end, t = rt.column("ts_ns")[sel], rt.column("end_ns")[sel], rt.column("tid")[sel]
    for th in np.unique(tid).tolist():
        mine = np.flatnonzero(t == th)
        gaps = np.flatnonzero(tid == th)
        if not mine.size:
            continue
        mine = mine[np.argsort(ts[mine], kind="stable")]
        a, b = ts[mine], end[mine]
        if (np.diff(b) < 0).any():  # calls nested on the thread (never seen): each gap scanned on its own
            for i in gaps.tolist():
                inside = (a >= lo[i]) & (b <= hi[i])
                out[i] = float((b[inside] - a[inside]).sum()) / NS_PER_US
            continue
        # one thread's calls in order, ends in order too: those inside [lo, hi] are one run of them
        csum = np.r_[0, np.cumsum(b - a)]
        first = np.searchsorted(a, lo[gaps], "left")
        last = np.searchsorted(b, hi[gaps], "right")
        out[gaps] = np.where(last > first, csum[np.maximum(last, first)] - csum[first], 0) / NS_PER_US
    return out


def _backward_kinds(step: np.ndarray, index: np.ndarray, fwd: Cols | None) -> np.ndarray:
    """Backward boundary kinds (an object array): the forward ones in reverse order when the step's counts
    agree, else ddp_split when the step's forward had no graph break and unknown otherwise."""
    if fwd is None or not C.nrows(fwd):
        return np.full(step.size, "ddp_split", dtype=object)
    f_step, f_kind = fwd["step"], fwd["kind"]
    starts = _group_starts(step)
    n = np.repeat(np.diff(np.r_[starts, step.size]), np.diff(np.r_[starts, step.size]))  # boundaries in the step
    f_steps, f_first, f_n = np.unique(f_step, return_index=True, return_counts=True)
    pos = np.clip(np.searchsorted(f_steps, step), 0, f_steps.size - 1)
    known = f_steps[pos] == step
    match = known & (f_n[pos] == n)
    # forward boundaries are grouped by step in index order: the (n-1-index)-th of the step's run
    kinds = f_kind[np.where(match, f_first[pos] + n - 1 - index, 0)]
    breaks = np.unique(f_step[f_kind == "graph_break"])
    has_break = np.isin(step, breaks)
    return np.where(match, kinds, np.where(has_break, "unknown", "ddp_split")).astype(object)


def boundary_table(rt: RankTrace) -> tuple[np.ndarray, Columnar]:
    """``(region, boundaries)``: per op of :func:`compiled_ops`, the index (among the region ops) of the
    innermost region of a forward subgraph (-1 for other ops), and the subgraph boundaries of both passes
    (:data:`BOUNDARY_COLUMNS`, as :data:`~tracekit.traces.cols.Cols`; ``NO_ROWS`` on an eager rank)."""
    c = compiled_arrays(rt)
    region = np.full(c.what.size, -1, dtype=np.int64)
    if not c.what.size:  # an eager rank: nothing compiled, no boundaries (the common case, kept cheap)
        return region, NO_ROWS
    fwd = (c.what == _FWD).nonzero()[0]
    region[fwd] = innermost_region(c, fwd, (c.what == _REGION).nonzero()[0])
    fb = _boundaries(rt, c, fwd, region[fwd], None)
    bb = _boundaries(rt, c, (c.what == _BWD).nonzero()[0], None, fb)
    nf, nb = C.nrows(fb), C.nrows(bb)
    if not nf + nb:
        return region, C.empty(BOUNDARY_COLUMNS)
    both = C.concat([fb, bb])  # (an empty part is skipped)
    return region, {"rank": np.full(nf + nb, rt.rank, dtype=np.int64), "step": both["step"],
                    "pass": C.obj(["forward"] * nf + ["backward"] * nb), "index": both["index"],
                    "kind": both["kind"], "gap_cpu_us": both["gap_cpu_us"], "idle_gpu_us": both["idle_gpu_us"],
                    "host_sync_us": both["host_sync_us"]}


def _reasons(facts: CompileFacts) -> str | None:
    reasons = facts.graph_breaks.reasons if facts.graph_breaks else []
    rs = [f"{r.reason} (x{r.count})" for r in reasons if (r.origin or "model") == "model"]
    skipped = [f"skipped {s.function}: {s.reason}" for s in facts.skipped_frames or []]
    out = "; ".join(rs + skipped)
    return out or None


def _step_sums(bnd: Cols, steps: np.ndarray) -> dict[str, np.ndarray]:
    """Per step of ``steps`` (distinct): the boundary time sums of :data:`GB_COLUMNS` (0 where none; a
    boundary of a step not in ``steps`` counts nowhere)."""
    kind = bnd["kind"]
    gap, idle = bnd["gap_cpu_us"].astype(float), bnd["idle_gpu_us"].astype(float)
    brk, split = kind == "graph_break", kind == "ddp_split"
    by = np.argsort(steps, kind="stable")
    b_step = bnd["step"]
    pos = np.clip(np.searchsorted(steps[by], b_step), 0, steps.size - 1)
    at = np.where(steps[by][pos] == b_step, by[pos], steps.size)  # steps.size: no step of ``steps``

    def per_step(values: np.ndarray, keep: np.ndarray | None = None) -> np.ndarray:
        groups = at if keep is None else np.where(keep, at, -1)  # (NaN skipped, as pandas' sum skips it)
        return C.kahan_sums(values, groups, steps.size + 1)[0][:steps.size]  # compensated, as the other sums

    return {"eager_between_us": per_step(gap), "eager_at_breaks_us": per_step(gap, brk),
            "eager_at_splits_us": per_step(gap, split), "idle_at_breaks_us": per_step(idle, brk),
            "idle_at_splits_us": per_step(idle, split)}


def _count_per_step(keys: np.ndarray, steps: np.ndarray) -> np.ndarray:
    """How many of ``keys`` equal each of ``steps`` (int64)."""
    u, n = np.unique(keys, return_counts=True)
    pos = np.clip(np.searchsorted(u, steps), 0, max(u.size - 1, 0))
    return np.where(u[pos] == steps, n[pos], 0).astype(np.int64) if u.size else np.zeros(steps.size, np.int64)


def graph_break_table(rt: RankTrace, manifest: Manifest | None = None) -> tuple[Columnar, Columnar]:
    """``(per_step, boundaries)`` for one rank as :data:`~tracekit.traces.cols.Cols` (see module doc;
    ``NO_ROWS`` for a table without rows)."""
    region, bnd = boundary_table(rt)
    steps = rt.step_arrays()["step"].astype(np.int64)
    facts = rank_compile_facts(manifest, rt.rank)
    if not steps.size:
        return NO_ROWS, bnd
    c = compiled_arrays(rt)
    triton = triton_kernels_per_step(rt, steps)
    if not c.what.size and not triton.any():
        return _eager_steps(rt.rank, steps, facts), bnd
    count = {w: _count_per_step(c.step[c.what == i], steps) for i, w in enumerate(WHATS)}
    in_region = (c.what == _FWD) & (region >= 0)
    pairs = np.unique(np.stack([c.step[in_region], region[in_region]]), axis=1)
    sub = (c.what == _FWD) | (c.what == _BWD)
    s_step, dur = iv.group_reduce(c.step[sub], (c.end_ns - c.ts_ns)[sub], np.add)
    forward = bnd["pass"] == "forward" if C.nrows(bnd) else np.zeros(0, dtype=bool)
    fwd_kind, fwd_step = (bnd["kind"][forward], bnd["step"][forward]) if C.nrows(bnd) else (forward, forward)
    real_breaks = _count_per_step(fwd_step[fwd_kind == "graph_break"].astype(np.int64), steps)
    sums = _step_sums(bnd, steps) if C.nrows(bnd) else dict.fromkeys(
        ("eager_between_us", "eager_at_breaks_us", "eager_at_splits_us", "idle_at_breaks_us",
         "idle_at_splits_us"), np.zeros(steps.size))
    requested = bool(facts.enabled or (c.what == _LOOKUP).any() or (c.what == _REGION).any() or triton.any())
    return {
        "rank": np.full(steps.size, rt.rank, dtype=np.int64), "step": steps, "regions": count["region"],
        "graph_regions": _count_per_step(pairs[0], steps), "fwd_subgraphs": count["fwd"],
        "bwd_subgraphs": count["bwd"], "cache_lookups": count["lookup"],
        "ddp_splits": _count_per_step(fwd_step[fwd_kind == "ddp_split"].astype(np.int64), steps),
        "real_breaks": real_breaks,
        "sync_breaks": _count_per_step(
            fwd_step[(fwd_kind == "graph_break") & (bnd["host_sync_us"][forward] > 0)].astype(np.int64), steps)
        if C.nrows(bnd) else np.zeros(steps.size, dtype=np.int64),
        **_graph_launches(rt, steps),
        "compiled_cpu_us": _per_step_sum(s_step, dur, steps) / NS_PER_US, **sums,
        "break_cost_us": sums["idle_at_breaks_us"],
        "cost_per_break_us": sums["idle_at_breaks_us"] / np.where(real_breaks > 0, real_breaks, np.nan),
        "compile_requested": np.full(steps.size, requested),
        "compile_skipped": requested & ((count["fwd"] + count["bwd"] + count["fxgraph"] + triton) == 0),
        "triton_kernels": triton,
        "break_reasons": np.full(steps.size, _reasons(facts), dtype=object),
    }, bnd


#: the runtime call that replays a captured CUDA graph: every kernel of the graph carries its correlation id
GRAPH_LAUNCH = "cudaGraphLaunch"


def _graph_launches(rt: RankTrace, steps: np.ndarray) -> dict[str, np.ndarray]:
    """Per step: ``graph_launches`` (cudaGraphLaunch calls: replays of captured CUDA graphs, as
    ``torch.compile(mode="reduce-overhead")`` makes) and ``graph_kernels`` (the GPU operations they launched)."""
    zero = np.zeros(steps.size, dtype=np.int64)
    calls = rt.name_hits(GRAPH_LAUNCH) & (rt.column("kind") == schema.LAUNCH)
    if not calls.any():
        return {"graph_launches": zero, "graph_kernels": zero}
    step = assign_steps(rt.step_arrays(), rt.column("ts_ns")[calls])
    corr = rt.column("correlation")[calls]
    gpu_step = rt.gpu_column("step")
    mine = np.isin(rt.gpu_column("correlation"), corr[corr >= 0]) & (gpu_step >= 0)
    return {"graph_launches": _count_per_step(step[step >= 0].astype(np.int64), steps),
            "graph_kernels": _count_per_step(gpu_step[mine].astype(np.int64), steps)}


def triton_kernels_per_step(rt: RankTrace, steps: np.ndarray) -> np.ndarray:
    """Per step of ``steps``: the GPU kernels named ``triton_*`` (inductor's) that ran in it (int64)."""
    if not rt.has_gpu_activity:
        return np.zeros(steps.size, dtype=np.int64)
    names = rt.name_categories()
    hit = rt.memo("triton_names", lambda: np.array([n.startswith(TRITON_KERNEL_PREFIX) for n in names] + [False]))
    code = rt.gpu_column("name")
    mask = (rt.gpu_column("kind") == schema.KERNEL) & hit[code]
    return _count_per_step(rt.gpu_column("step")[mask].astype(np.int64), steps)


def _per_step_sum(keys: np.ndarray, sums: np.ndarray, steps: np.ndarray) -> np.ndarray:
    """``sums`` (keyed by sorted distinct ``keys``) at each of ``steps``, 0 where absent."""
    if not keys.size:
        return np.zeros(steps.size, dtype=np.int64)
    pos = np.clip(np.searchsorted(keys, steps), 0, keys.size - 1)
    return np.where(keys[pos] == steps, sums[pos], 0)


def _eager_steps(rank: int, steps: np.ndarray, facts: CompileFacts) -> dict[str, np.ndarray]:
    """:func:`graph_break_table`'s rows for a rank without any compiled op: nothing compiled,
    no boundaries, so every count and time is zero (built directly: per-rank cost matters
    on runs of thousands of ranks)."""
    n = steps.size
    zero_i, zero_f = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.float64)
    requested = facts.enabled
    data: dict[str, Any] = {"rank": np.full(n, rank, dtype=np.int64), "step": steps}
    data |= dict.fromkeys(("regions", "graph_regions", "fwd_subgraphs", "bwd_subgraphs", "cache_lookups",
                           "ddp_splits", "real_breaks", "sync_breaks", "graph_launches", "graph_kernels"), zero_i)
    data |= dict.fromkeys(("compiled_cpu_us", "eager_between_us", "eager_at_breaks_us", "eager_at_splits_us",
                           "idle_at_breaks_us", "idle_at_splits_us", "break_cost_us"), zero_f)
    data |= {"cost_per_break_us": np.full(n, np.nan), "compile_requested": np.full(n, requested),
             "compile_skipped": np.full(n, requested), "triton_kernels": zero_i, "break_reasons": np.full(n, _reasons(facts), dtype=object)}
    return data


# -- registered tables (see tracekit.analyses.registry) ------------------------------------------

_GB_SHOWN = ("rank", "step", "regions", "fwd_subgraphs", "bwd_subgraphs", "triton_kernels", "ddp_splits",
             "real_breaks", "compiled_cpu_us", "eager_between_us", "idle_at_breaks_us", "cost_per_break_us",
             "compile_skipped")


def _tables(ctx: RankContext) -> tuple[Columnar, Columnar]:
    return ctx.memo("graph_break_table", lambda: graph_break_table(ctx.trace, ctx.manifest))


def graph_break_summary(gb: Any) -> Cols:
    """Per rank: the graph-break table ``gb`` (Cols or a DataFrame) averaged over its steps (``steps``
    counted, ``compile_skipped_steps``: steps where compilation was requested but nothing compiled ran)."""
    gb = C.as_cols(gb)
    num = [c for c in _GB_SHOWN if c not in ("rank", "step", "compile_skipped")]
    g = C.Groups(gb, ["rank"])
    # cost_per_break_us: mean over the steps that had breaks (NaN elsewhere)
    return {"rank": g.keys["rank"], "steps": g.size(), **{c: g.mean(gb[c]) for c in num},
            "compile_skipped_steps": g.sum(gb["compile_skipped"].astype(bool))}


def _view(t: Mapping[str, Any], opts: ViewOptions) -> View | None:
    gb = C.as_cols(t["graph_breaks"])
    if not C.nrows(gb) or not gb["compile_requested"].astype(bool).any():
        return None
    if opts.per_step:
        return View("Compiled regions and graph breaks (per rank and step)", C.select(gb, _GB_SHOWN))
    return View("Compiled regions and graph breaks (per rank, mean per step; --per-step lists steps)",
                graph_break_summary(gb))


TABLES = [
    Table(
        name="graph_breaks", scope="rank", title="Graph-break impact (per rank and step)",
        doc="Boundaries between consecutive forward subgraphs are ddp_split (same region instance: DDPOptimizer "
            "split one dynamo graph, intended) or graph_break (different regions: dynamo broke the graph); "
            "backward boundaries take the forward kinds in reverse order. The text report shows the mean per step "
            "per rank (--per-step: every step).",
        columns=(
            Column("rank", "rank", "the rank"),
            Column("step", "step", "the ProfilerStep"),
            Column("regions", "count", "Torch-Compiled Region instances executed (any naming: with or without "
                                       "the compile id)"),
            Column("graph_regions", "count", "regions directly holding ≥1 forward subgraph"),
            Column("fwd_subgraphs", "count", "CompiledFunction (forward subgraph) executions"),
            Column("bwd_subgraphs", "count", "CompiledFunctionBackward (backward subgraph) executions"),
            Column("cache_lookups", "count", "TorchDynamo Cache Lookup ops"),
            Column("ddp_splits", "count", "forward boundaries that are DDPOptimizer splits"),
            Column("real_breaks", "count", "forward boundaries that are real graph breaks"),
            Column("sync_breaks", "count", "real breaks whose eager code between the graphs blocks the host on the "
                                           "GPU (a data-dependent .item() / .tolist() / nonzero: break_boundaries' "
                                           "host_sync_us)"),
            Column("graph_launches", "count", "cudaGraphLaunch calls: replays of captured CUDA graphs (torch.compile "
                                              "mode reduce-overhead / max-autotune)"),
            Column("graph_kernels", "count", "GPU operations those replays launched (one launch call for all of them)"),
            Column("compiled_cpu_us", "us", "CPU time inside compiled subgraphs (forward + backward)"),
            Column("eager_between_us", "us", "CPU time between consecutive subgraphs (eager code between them)"),
            Column("eager_at_breaks_us", "us", "eager_between_us at real breaks"),
            Column("eager_at_splits_us", "us", "eager_between_us at DDPOptimizer splits"),
            Column("idle_at_breaks_us", "us", "GPU idle time between the last kernel of a subgraph and the first of "
                                              "the next, at real breaks: the launch gap the break caused"),
            Column("idle_at_splits_us", "us", "the same at DDPOptimizer splits"),
            Column("break_cost_us", "us", "idle_at_breaks_us: estimated cost of the real breaks in the step (lost "
                                          "fusion is not measurable from a trace)"),
            Column("cost_per_break_us", "us", "break_cost_us / real_breaks"),
            Column("compile_requested", "bool", "run.json asked for compile, or the trace shows dynamo cache "
                                                "lookups / regions / Triton kernels"),
            Column("compile_skipped", "bool", "compile requested but neither a compiled subgraph nor a Triton "
                                              "kernel ran in the step"),
            Column("triton_kernels", "count", "GPU kernels named triton_* (generated by inductor) in the step"),
            Column("break_reasons", "text", "dynamo's reasons for model breaks and skipped frames (run.json)"),
        ),
        compute=lambda ctx: _tables(ctx)[0], view=_view, order=70,
    ),
    Table(
        name="break_boundaries", scope="rank", title="Boundaries between consecutive compiled subgraphs",
        columns=(
            Column("rank", "rank", "the rank"),
            Column("step", "step", "the ProfilerStep"),
            Column("pass", "name", "forward or backward"),
            Column("index", "index", "boundary number within the step and pass"),
            Column("kind", "name", "ddp_split, graph_break or unknown"),
            Column("gap_cpu_us", "us", "CPU time between the two subgraphs"),
            Column("idle_gpu_us", "us", "GPU idle time between the last kernel of one and the first of the next"),
            Column("host_sync_us", "us", "CPU time between the two subgraphs spent in calls that block on the GPU "
                                         "(stream/device synchronize, a blocking copy): > 0 where the break holds a "
                                         "host sync (.item(), .tolist(), nonzero); whatif --no-graph-breaks removes it "
                                         "with the break"),
        ),
        compute=lambda ctx: _tables(ctx)[1], order=75,
    ),
]


# -- findings read from the graph-break table (see tracekit.analyses.findings) ----------------------


class GraphBreak(Finding, tag="graph_break"):
    """``graph_break``: real graph breaks (not DDPOptimizer's splits) in the compiled model, per step;
    cost: the idle GPU time the table attributes to the breaks, per step."""

    breaks_per_step: float | None
    ddp_splits_per_step: float | None
    cost_per_break_us: float | None
    eager_at_breaks_us: float | None
    reasons: str | None
    regions_per_step: float | None = None

    #: means over the rank's graph_breaks rows of the steps that ran compiled (not compile_skipped)
    QUOTES: ClassVar[dict[str, Quote]] = {
        "step_us": Quote("steps", "step_us", "mean"),
        **{f: Quote("graph_breaks", c, "mean", where="!compile_skipped") for f, c in (
            ("cost_us", "break_cost_us"), ("breaks_per_step", "real_breaks"), ("ddp_splits_per_step", "ddp_splits"),
            ("eager_at_breaks_us", "eager_at_breaks_us"), ("regions_per_step", "graph_regions"))},
        "cost_per_break_us": Quote("graph_breaks", "break_cost_us/real_breaks", "ratio", where="!compile_skipped")}
    ORDER: ClassVar[int] = 50
    TIMING: ClassVar[bool] = True

    @classmethod
    def detect(cls, ctx: FindingContext) -> list[GraphBreak]:
        return graph_break(ctx.result, ctx.result.tables["graph_breaks"])


class CompileSkipped(Finding, tag="compile_skipped"):
    """``compile_skipped``: compilation was requested (run.json, or dynamo cache lookups in the trace) but no
    compiled graph ran: the model ran eagerly. The cost cannot be estimated from the traces (always high);
    the message quotes dynamo's own reason when run.json recorded it."""

    steps_skipped: int
    steps: int
    cache_lookups_per_step: float | None
    regions_per_step: float | None
    compiled_subgraphs: int
    skipped_frames: list[str] | None
    dynamo_skips: list[str] | None

    QUOTES: ClassVar[dict[str, Quote]] = {
        "step_us": Quote("steps", "step_us", "mean"),
        "steps_skipped": Quote("graph_breaks", "compile_skipped", "sum"),
        "steps": Quote("graph_breaks", "step", "rows"),
        "cache_lookups_per_step": Quote("graph_breaks", "cache_lookups", "mean"),
        "regions_per_step": Quote("graph_breaks", "regions", "mean")}
    #: compiled_subgraphs: 0 by what fires it (no compiled graph ran in a skipped step)
    FACTS: ClassVar[tuple[str, ...]] = ("compiled_subgraphs",)
    ORDER: ClassVar[int] = 60

    @classmethod
    def detect(cls, ctx: FindingContext) -> list[CompileSkipped]:
        return compile_skipped(ctx.result, ctx.result.tables["graph_breaks"], ctx.manifest)


def _text_or_none(v: Any) -> str | None:
    """A text cell as str, None for a missing one (None or NaN)."""
    return None if v is None or (isinstance(v, float) and v != v) else v


def graph_break(result: Any, gb: Any) -> list[GraphBreak]:
    """The :class:`GraphBreak` findings of ``gb`` (``graph_breaks``, Cols or a DataFrame); ``result`` gives the
    mean step per rank."""
    gb = C.as_cols(gb)
    if not C.nrows(gb) or not (gb["real_breaks"] > 0).any():  # the common case: nothing to group
        return []
    g = C.take(gb, ~gb["compile_skipped"].astype(bool))
    groups = C.Groups(g, ["rank"])
    agg = {"breaks": groups.mean(g["real_breaks"]), "cost": groups.mean(g["break_cost_us"]),
           "regions": groups.mean(g["graph_regions"]), "splits": groups.mean(g["ddp_splits"]),
           "eager": groups.mean(g["eager_at_breaks_us"]), "why": groups.first(g["break_reasons"])}
    fire = agg["breaks"] > 0
    means = step_means(result)
    out = []
    for rank, a in rows_by_rank(groups.keys["rank"], agg, fire):
        breaks, cost = float(a["breaks"]), float(a["cost"])
        why = _text_or_none(a["why"])  # the rank's first break_reasons present
        reason = f"; dynamo's reasons: {why}" if why is not None else ""
        msg = (f"{breaks:.0f} graph break(s) per step split the model into {a['regions']:.0f} compiled "
               f"regions (DDPOptimizer splits, {a['splits']:.0f} per step, not counted); estimated "
               f"cost {cost / breaks:.0f} µs of idle GPU per break, {cost / 1000:.2f} ms per step{reason}")
        out.append(GraphBreak(rank=int(rank), message=msg, cost_us=cost, step_us=rank_step_us(result, rank, means),
                              breaks_per_step=rounded(breaks), ddp_splits_per_step=rounded(float(a["splits"])),
                              cost_per_break_us=rounded(cost / breaks), eager_at_breaks_us=rounded(float(a["eager"])),
                              reasons=why, regions_per_step=rounded(float(a["regions"]))))
    return out


def compile_skipped(result: Any, gb: Any, manifest: Any) -> list[CompileSkipped]:
    """The :class:`CompileSkipped` findings of ``gb`` (``graph_breaks``, Cols or a DataFrame) and the manifest's
    compile facts."""
    gb = C.as_cols(gb)
    if not C.nrows(gb) or not gb["compile_skipped"].astype(bool).any():
        return []
    groups = C.Groups(gb, ["rank"])
    agg = {"skipped": groups.sum(gb["compile_skipped"].astype(bool)), "steps": groups.size(),
           "lookups": groups.mean(gb["cache_lookups"]), "regions": groups.mean(gb["regions"])}
    fire = agg["skipped"] > 0
    means = step_means(result)
    out = []
    for rank, a in rows_by_rank(groups.keys["rank"], agg, fire):
        facts = rank_compile_facts(manifest, int(rank))
        why = [f"{s.function}: {s.reason}" for s in facts.skipped_frames or []]
        src = "run.json asked for torch.compile" if facts.enabled else "the trace shows dynamo cache lookups"
        n_sk, n = int(a["skipped"]), int(a["steps"])
        msg = (f"compilation was requested ({src}) but no compiled graph ran in {n_sk} of {n} steps: "
               f"the model ran eagerly" + (f" (dynamo skipped {'; '.join(why)})" if why else _skip_reason(facts)))
        out.append(CompileSkipped(rank=int(rank), message=msg, cost_us=None, step_us=rank_step_us(result, rank, means),
                                  steps_skipped=n_sk, steps=n, cache_lookups_per_step=rounded(float(a["lookups"])),
                                  regions_per_step=rounded(float(a["regions"])), compiled_subgraphs=0,
                                  skipped_frames=why or None, dynamo_skips=_skip_list(facts) or None))
    return out


def _skip_list(facts: Any) -> list[str]:
    return [f"{s.function} ({s.file}): {s.reason}" for s in getattr(facts, "dynamo_skips", None) or []]


def _skip_reason(facts: Any) -> str:
    """Dynamo's own reason for running the model eagerly (run.json ``dynamo_skips``), quoted with its fix;
    without one, say that it was not recorded (never a guess)."""
    skips = getattr(facts, "dynamo_skips", None) or []
    if not skips:
        why = ("dynamo's reason was not recorded: tracekit profile records it in run.json dynamo_skips; with "
               "another profiler, run with TORCH_LOGS=+dynamo and look for 'skipping:' or WON'T CONVERT")
        return f" ({why})"
    first = skips[0]
    where = str(first.file or "?").replace("\\", "/").split("site-packages/")[-1]
    more = f"; {len(skips) - 1} more in run.json dynamo_skips" if len(skips) > 1 else ""
    fix = next((s.fix for s in skips if s.fix), None)
    return (f": dynamo says \"skipping: {first.function} (reason: {first.reason}, file: {where})\"{more}"
            + (f". Fix: {fix}" if fix else ""))


FINDINGS = [GraphBreak, CompileSkipped]
