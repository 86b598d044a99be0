"""Graph-break impact, per rank and step, from the compiled regions and subgraphs in the trace.

What the trace shows of ``torch.compile``:

- ``Torch-Compiled Region: f/c``: one execution of a dynamo-compiled frame. A
  graph break ends a graph; dynamo resumes in a *new* frame (``resume_in_...``),
  which runs as its own, nested region.
- ``CompiledFunction`` (forward, main thread) / ``CompiledFunctionBackward``
  (autograd thread): one compiled subgraph.
- ``TorchDynamo Cache Lookup``: dynamo looked a frame up (compilation was requested).

Boundaries between consecutive forward subgraphs of a step are classified as
``ddp_split`` (both subgraphs in the same region instance: DDPOptimizer split one
dynamo graph at bucket boundaries, intended) or ``graph_break`` (different
regions: dynamo broke the graph). Backward boundaries take the kinds of the
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
  dynamo cache lookups / compiled regions; ``compile_skipped``: requested but no
  compiled subgraph ran in the step.
- ``break_reasons``: dynamo's reasons for model (non-DDP-wrapper) breaks, from ``run.json``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from tracekit.analyses import intervals as iv
from tracekit.analyses.registry import Column, RankContext, Table, View, ViewOptions
from tracekit.analyses.timeline import cpu_ops, rank_compile_facts
from tracekit.profile.manifest import CompileFacts, Manifest
from tracekit.traces.traceset import RankTrace, assign_steps

NS_PER_US = 1000.0
REGION_PREFIX = "Torch-Compiled Region: "
COMPILED_FWD = "CompiledFunction"
COMPILED_BWD = "CompiledFunctionBackward"
CACHE_LOOKUP = "TorchDynamo Cache Lookup"
FXGRAPH_PREFIX = "## Call CompiledFxGraph"

GB_COLUMNS = (
    "rank", "step", "regions", "graph_regions", "fwd_subgraphs", "bwd_subgraphs", "cache_lookups", "ddp_splits",
    "real_breaks", "compiled_cpu_us", "eager_between_us", "eager_at_breaks_us", "eager_at_splits_us",
    "idle_at_breaks_us", "idle_at_splits_us", "break_cost_us", "cost_per_break_us", "compile_requested",
    "compile_skipped", "break_reasons",
)
BOUNDARY_COLUMNS = ("rank", "step", "pass", "index", "kind", "gap_cpu_us", "idle_gpu_us")


def compiled_ops(rt: RankTrace) -> pd.DataFrame:
    """The CPU ops that describe compilation: ``what`` in region/fwd/bwd/lookup/fxgraph, with step."""
    ops = cpu_ops(rt)
    name = ops["name"]
    if isinstance(name.dtype, pd.CategoricalDtype):  # classify each distinct name once, broadcast by code
        names, codes = pd.Series(name.cat.categories).astype(str), name.cat.codes.to_numpy()
    else:
        names, codes = pd.Series(pd.unique(name.to_numpy())).astype(str), None
    what = np.select([names.str.startswith(REGION_PREFIX), names == COMPILED_FWD, names == COMPILED_BWD,
                      names == CACHE_LOOKUP, names.str.startswith(FXGRAPH_PREFIX)],
                     ["region", "fwd", "bwd", "lookup", "fxgraph"], default="")
    if codes is not None:
        w = np.append(what, "")[codes]  # code -1 (no name) -> ""
    else:
        w = pd.Series(what, index=names.to_numpy()).reindex(name.astype(str).to_numpy()).to_numpy()
    keep = w != ""
    out = ops.loc[keep, ["name", "ts_ns", "end_ns", "tid"]].assign(what=w[keep])
    out["name"] = out["name"].astype(str)
    out["step"] = assign_steps(rt.steps, out["ts_ns"].to_numpy())
    return out[out["step"] >= 0].sort_values("ts_ns", kind="stable").reset_index(drop=True)


def _innermost_region(sub: pd.DataFrame, regions: pd.DataFrame) -> np.ndarray:
    """Index (into ``regions``) of the innermost region containing each subgraph, -1 if none."""
    if sub.empty or regions.empty:
        return np.full(len(sub), -1, dtype=np.int64)
    s = sub[["ts_ns", "end_ns", "tid", "step"]].reset_index(drop=True).rename_axis("sid").reset_index()
    r = regions[["ts_ns", "end_ns", "tid", "step"]].reset_index(drop=True).rename_axis("rid").reset_index()
    m = s.merge(r, on=["tid", "step"], suffixes=("", "_r"))
    m = m[(m["ts_ns_r"] <= m["ts_ns"]) & (m["end_ns_r"] >= m["end_ns"])]
    best = m.sort_values("ts_ns_r").groupby("sid")["rid"].last()
    out = np.full(len(sub), -1, dtype=np.int64)
    out[best.index.to_numpy()] = best.to_numpy()
    return out


def _kernel_edges(rt: RankTrace, sub: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Per subgraph: first start and last end of the GPU activity it launched (-1 when none)."""
    if sub.empty or not rt.has_gpu_activity:
        return np.full(len(sub), -1, dtype=np.int64), np.full(len(sub), -1, dtype=np.int64)
    g = rt.gpu[rt.gpu["launch_ts_ns"] >= 0]
    order = np.argsort(sub["ts_ns"].to_numpy(), kind="stable")
    st, en, tid = (sub["ts_ns"].to_numpy()[order], sub["end_ns"].to_numpy()[order], sub["tid"].to_numpy()[order])
    lt = g["launch_ts_ns"].to_numpy()
    i = np.searchsorted(st, lt, side="right") - 1
    ic = np.clip(i, 0, None)
    ok = (i >= 0) & (en[ic] > lt) & (tid[ic] == g["launch_tid"].to_numpy())
    return iv.segment_bounds(g["ts_ns"].to_numpy()[ok], g["end_ns"].to_numpy()[ok], order[ic[ok]], len(sub))


def _boundaries(rt: RankTrace, sub: pd.DataFrame, kinds_of: pd.Series | None) -> pd.DataFrame:
    """Consecutive-subgraph boundaries of one pass; ``kinds_of`` gives forward kinds by (step, index)."""
    cols = ["step", "index", "kind", "gap_cpu_us", "idle_gpu_us"]
    if len(sub) < 2:
        return pd.DataFrame(columns=cols)
    sub = sub.sort_values(["step", "ts_ns"], kind="stable").reset_index(drop=True)
    first, last = _kernel_edges(rt, sub)
    nxt = sub.groupby("step").shift(-1)
    has = nxt["ts_ns"].notna().to_numpy()
    b = pd.DataFrame({"step": sub["step"].to_numpy()[has],
                      "gap_cpu_us": (nxt["ts_ns"].to_numpy()[has] - sub["end_ns"].to_numpy()[has]) / NS_PER_US})
    b["index"] = b.groupby("step").cumcount()
    e = last[has]
    s = np.roll(first, -1)[has]
    valid = (e >= 0) & (s > e)
    idle = np.zeros(len(b))
    if valid.any() and rt.has_gpu_activity:
        g = rt.gpu
        cov = iv.covered_per_interval(e[valid], s[valid], (g["ts_ns"].to_numpy(), g["end_ns"].to_numpy()))
        idle[valid] = (s[valid] - e[valid] - cov) / NS_PER_US
    b["idle_gpu_us"] = idle
    if "region" in sub:
        same = (sub["region"].to_numpy()[has] == nxt["region"].to_numpy()[has]) & (sub["region"].to_numpy()[has] >= 0)
        b["kind"] = np.where(same, "ddp_split", "graph_break")
    else:
        b["kind"] = "unknown"
        if kinds_of is not None and len(kinds_of):
            n = b.groupby("step")["index"].transform("size")
            key = pd.MultiIndex.from_arrays([b["step"], n - 1 - b["index"]])
            fwd_n = kinds_of.groupby(level=0).size()
            match = (b["step"].map(fwd_n) == n).to_numpy()
            kinds = kinds_of.reindex(key).to_numpy()
            has_break = b["step"].map(kinds_of.eq("graph_break").groupby(level=0).any()).fillna(False).to_numpy()
            b["kind"] = np.where(match, kinds, np.where(has_break, "unknown", "ddp_split"))
        else:
            b["kind"] = "ddp_split"
    return b[cols]


def boundary_table(rt: RankTrace) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(ops, boundaries)``: the compiled ops of the rank and its subgraph boundaries (both passes)."""
    ops = compiled_ops(rt)
    if ops.empty:  # an eager rank: nothing compiled, no boundaries (the common case, kept cheap)
        return ops.assign(region=pd.Series(dtype=np.int64)), pd.DataFrame(columns=list(BOUNDARY_COLUMNS))
    regions = ops[ops["what"] == "region"]
    fwd = ops[ops["what"] == "fwd"].copy()
    fwd["region"] = _innermost_region(fwd, regions)
    fb = _boundaries(rt, fwd, None)
    kinds = fb.set_index(["step", "index"])["kind"] if len(fb) else None
    bb = _boundaries(rt, ops[ops["what"] == "bwd"], kinds)
    both = pd.concat([fb.assign(**{"pass": "forward"}), bb.assign(**{"pass": "backward"})], ignore_index=True)
    both["rank"] = rt.rank
    ops = ops.assign(region=-1)
    ops.loc[ops["what"] == "fwd", "region"] = fwd["region"].to_numpy()
    return ops, both[list(BOUNDARY_COLUMNS)] if len(both) else pd.DataFrame(columns=list(BOUNDARY_COLUMNS))


def _reasons(facts: CompileFacts) -> str | None:
    reasons = facts.graph_breaks.reasons if facts.graph_breaks else []
    rs = [f"{r.reason} (x{r.count})" for r in reasons if (r.origin or "model") == "model"]
    skipped = [f"skipped {s.function}: {s.reason}" for s in facts.skipped_frames or []]
    out = "; ".join(rs + skipped)
    return out or None


def graph_break_table(rt: RankTrace, manifest: Manifest | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(per_step, boundaries)`` for one rank (see module doc)."""
    ops, bnd = boundary_table(rt)
    steps = rt.steps["step"].astype(np.int64)
    facts = rank_compile_facts(manifest, rt.rank)
    if steps.empty:
        return pd.DataFrame(columns=list(GB_COLUMNS)), bnd
    idx = pd.Index(steps, name="step")
    if ops.empty:
        return _eager_steps(rt.rank, idx, facts), bnd
    cnt = ops.groupby(["step", "what"]).size().unstack(fill_value=0).reindex(idx, fill_value=0)
    col = lambda w: cnt[w] if w in cnt else pd.Series(0, index=idx)  # noqa: E731
    fwd = ops[ops["what"] == "fwd"]
    graph_regions = fwd[fwd["region"] >= 0].groupby("step")["region"].nunique().reindex(idx, fill_value=0)
    sub = ops[ops["what"].isin(("fwd", "bwd"))]
    compiled_cpu = ((sub["end_ns"] - sub["ts_ns"]).groupby(sub["step"]).sum() / NS_PER_US).reindex(idx, fill_value=0.0)
    fb = bnd[bnd["pass"] == "forward"]

    def per(df: pd.DataFrame, kind: str | None, value: str, agg: str = "sum") -> pd.Series:
        d = df if kind is None else df[df["kind"] == kind]
        return d.groupby("step")[value].agg(agg).reindex(idx, fill_value=0).astype(float)

    out = pd.DataFrame(index=idx)
    out["rank"] = rt.rank
    out["regions"] = col("region")
    out["graph_regions"] = graph_regions
    out["fwd_subgraphs"] = col("fwd")
    out["bwd_subgraphs"] = col("bwd")
    out["cache_lookups"] = col("lookup")
    out["ddp_splits"] = per(fb, "ddp_split", "index", "size").astype(np.int64)
    out["real_breaks"] = per(fb, "graph_break", "index", "size").astype(np.int64)
    out["compiled_cpu_us"] = compiled_cpu
    out["eager_between_us"] = per(bnd, None, "gap_cpu_us")
    out["eager_at_breaks_us"] = per(bnd, "graph_break", "gap_cpu_us")
    out["eager_at_splits_us"] = per(bnd, "ddp_split", "gap_cpu_us")
    out["idle_at_breaks_us"] = per(bnd, "graph_break", "idle_gpu_us")
    out["idle_at_splits_us"] = per(bnd, "ddp_split", "idle_gpu_us")
    out["break_cost_us"] = out["idle_at_breaks_us"]
    out["cost_per_break_us"] = (out["break_cost_us"] / out["real_breaks"].where(out["real_breaks"] > 0))
    requested_trace = bool(len(ops[ops["what"].isin(("lookup", "region"))]))
    requested = facts.enabled or requested_trace
    out["compile_requested"] = requested
    compiled_any = col("fwd") + col("bwd") + col("fxgraph")
    out["compile_skipped"] = requested & (compiled_any == 0)
    out["break_reasons"] = _reasons(facts)
    return out.reset_index()[list(GB_COLUMNS)], bnd


def _eager_steps(rank: int, idx: pd.Index, facts: CompileFacts) -> pd.DataFrame:
    """:func:`graph_break_table`'s rows for a rank without any compiled op: nothing compiled,
    no boundaries, so every count and time is zero (built directly: per-rank cost matters
    on runs of thousands of ranks)."""
    n = len(idx)
    zero_i, zero_f = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.float64)
    requested = facts.enabled
    out = pd.DataFrame({"step": idx.to_numpy(), "rank": rank})
    for c in ("regions", "graph_regions", "fwd_subgraphs", "bwd_subgraphs", "cache_lookups", "ddp_splits",
              "real_breaks"):
        out[c] = zero_i
    for c in ("compiled_cpu_us", "eager_between_us", "eager_at_breaks_us", "eager_at_splits_us",
              "idle_at_breaks_us", "idle_at_splits_us", "break_cost_us"):
        out[c] = zero_f
    out["cost_per_break_us"] = np.full(n, np.nan)
    out["compile_requested"] = requested
    out["compile_skipped"] = requested
    out["break_reasons"] = _reasons(facts)
    return out[list(GB_COLUMNS)]


# -- registered tables (see tracekit.analyses.registry) ------------------------------------------

_GB_SHOWN = ("rank", "step", "regions", "fwd_subgraphs", "bwd_subgraphs", "ddp_splits", "real_breaks",
             "compiled_cpu_us", "eager_between_us", "idle_at_breaks_us", "cost_per_break_us", "compile_skipped")


def _tables(ctx: RankContext) -> tuple[pd.DataFrame, pd.DataFrame]:
    return ctx.memo("graph_break_table", lambda: graph_break_table(ctx.trace, ctx.manifest))


def graph_break_summary(gb: pd.DataFrame) -> pd.DataFrame:
    """Per rank: the graph-break table averaged over its steps (``steps`` counted,
    ``compile_skipped_steps``: steps where compilation was requested but nothing compiled ran)."""
    num = [c for c in _GB_SHOWN if c not in ("rank", "step", "compile_skipped")]
    g = gb.groupby("rank", sort=True)
    out = g[num].mean()  # cost_per_break_us: mean over the steps that had breaks (NaN elsewhere)
    out.insert(0, "steps", g["step"].size())
    out["compile_skipped_steps"] = g["compile_skipped"].sum().astype(int)
    return out.reset_index()


def _view(t: Mapping[str, pd.DataFrame], opts: ViewOptions) -> View | None:
    gb = t["graph_breaks"]
    if not len(gb) or not gb["compile_requested"].any():
        return None
    if opts.per_step:
        return View("Compiled regions and graph breaks (per rank and step)", gb[list(_GB_SHOWN)])
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
            Column("regions", "count", "Torch-Compiled Region instances executed"),
            Column("graph_regions", "count", "regions directly holding ≥1 forward subgraph"),
            Column("fwd_subgraphs", "count", "CompiledFunction (forward subgraph) executions"),
            Column("bwd_subgraphs", "count", "CompiledFunctionBackward (backward subgraph) executions"),
            Column("cache_lookups", "count", "TorchDynamo Cache Lookup ops"),
            Column("ddp_splits", "count", "forward boundaries that are DDPOptimizer splits"),
            Column("real_breaks", "count", "forward boundaries that are real graph breaks"),
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
                                                "lookups / regions"),
            Column("compile_skipped", "bool", "compile requested but no compiled subgraph ran in the step"),
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
        ),
        compute=lambda ctx: _tables(ctx)[1], order=75,
    ),
]
