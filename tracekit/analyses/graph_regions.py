"""The compiled graphs of a run (``run.json`` ``graphs``) with each one's time in the trace.

``tracekit profile --dynamo ...`` records every graph the backend compiled on rank 0, in compile
order (:mod:`tracekit.profile.graph_capture`): for each forward graph its parameters, the DDP
reducer buckets their gradients go to, and how it ends (``ddp_split``: a DDPOptimizer bucket
boundary; ``graph_break``: dynamo broke the graph, with dynamo's reason; ``end``: the frame
returned). This table joins that list with the trace of each rank:

- the forward graphs run in compile order, each as one ``CompiledFunction`` op; in every
  profiled step whose count of those ops (outside compiled-autograd regions) equals the count
  of forward graphs, the k-th op is graph k. Their backward (``CompiledFunctionBackward``)
  runs in the reverse order; matched the same way when the counts agree (with the python
  reducer the backward is one compiled-autograd graph instead: the ``backward`` graph's row
  carries the CPU time of its ``Torch-Compiled Region: !<id>`` per step).
- steps whose counts do not agree (a recompile, a graph that runs twice, the ``eager`` backend,
  which makes no ``CompiledFunction``) are not used: ``steps`` says how many were.

The graph list is rank 0's; every rank compiled the same model, so every rank's trace is matched
against it (a rank that compiled different graphs shows no matched steps).

Columns: ``graph`` (index in compile order), ``kind``, ``compile_id``, ``params`` and
``param_mb`` (the parameters the graph reads: their gradients come out of its backward),
``buckets`` (reducer bucket ids, as in the bucket timeline), ``cut``, ``cut_reason``,
``fwd_cpu_us`` / ``bwd_cpu_us`` (mean CPU time of the graph's forward / backward op per
matched step; NaN for a pass whose op count did not match), ``fwd_gpu_span_us`` / ``bwd_gpu_span_us`` (mean time from the first start to
the last end of the GPU work those ops launched, per matched step; NaN without GPU activity),
``steps`` (matched steps) and ``file`` (the graph's FX code, relative to the run folder).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from tracekit.analyses.graphbreaks import REGION_PREFIX, WHATS, compiled_arrays, innermost_region, _kernel_edges
from tracekit.analyses.registry import Column, Table, View, ViewOptions
from tracekit.analyses.timeline import cpu_ops
from tracekit.traces import cols as C
from tracekit.traces.frames import NO_ROWS, Columnar

COLUMNS = ("rank", "graph", "kind", "compile_id", "params", "param_mb", "buckets", "cut", "cut_reason",
           "fwd_cpu_us", "bwd_cpu_us", "fwd_gpu_span_us", "bwd_gpu_span_us", "steps", "file")
#: compiled-autograd compile ids start with "!" (``Torch-Compiled Region: !0/0/0``)
_CA_MARK = REGION_PREFIX + "!"


def _op_rows(rt: Any) -> tuple[Any, np.ndarray, np.ndarray]:
    """``(compiled, fwd_rows, bwd_rows)``: forward subgraph ops outside compiled-autograd regions and
    backward subgraph ops, rows of :func:`graphbreaks.compiled_arrays` (sorted by start)."""
    c = compiled_arrays(rt)
    fwd = np.flatnonzero(c.what == WHATS.index("fwd"))
    bwd = np.flatnonzero(c.what == WHATS.index("bwd"))
    regions = np.flatnonzero(c.what == WHATS.index("region"))
    if fwd.size and regions.size:
        names = cpu_ops(rt).names
        inner = innermost_region(c, fwd, regions)
        in_ca = np.array([i >= 0 and names[c.name[regions[i]]].startswith(_CA_MARK) for i in inner], dtype=bool)
        fwd = fwd[~in_ca]
    return c, fwd, bwd


def _per_graph(rt: Any, c: Any, rows: np.ndarray, n: int, reverse: bool) -> tuple[np.ndarray, np.ndarray, int]:
    """Mean CPU time and mean GPU span (µs) per graph over the steps whose op count is ``n``."""
    cpu, gpu, used = np.zeros(n), np.zeros(n), 0
    gpu_seen = np.zeros(n, dtype=np.int64)
    first, last = _kernel_edges(rt, c.ts_ns[rows], c.end_ns[rows], c.tid[rows])
    for step in np.unique(c.step[rows]):
        sel = np.flatnonzero(c.step[rows] == step)
        if sel.size != n:
            continue
        sel = sel[::-1] if reverse else sel
        cpu += (c.end_ns[rows[sel]] - c.ts_ns[rows[sel]]) / 1e3
        has = first[sel] >= 0
        gpu[has] += (last[sel][has] - first[sel][has]) / 1e3
        gpu_seen += has
        used += 1
    if not used:
        return np.full(n, np.nan), np.full(n, np.nan), 0
    return cpu / used, np.where(gpu_seen > 0, gpu / np.maximum(gpu_seen, 1), np.nan), used


def _region_us(rt: Any, c: Any, compile_id: str | None) -> tuple[float, int]:
    """Mean CPU time per step of the ``Torch-Compiled Region: <compile_id>`` ops (a compiled-autograd
    backward runs as one region), and the steps that had one."""
    if not compile_id:
        return np.nan, 0
    names = cpu_ops(rt).names
    want = REGION_PREFIX + compile_id
    rows = np.array([i for i in np.flatnonzero(c.what == WHATS.index("region")) if names[c.name[i]] == want],
                    dtype=np.int64)
    if not rows.size:
        return np.nan, 0
    steps = np.unique(c.step[rows])
    return float((c.end_ns[rows] - c.ts_ns[rows]).sum() / 1e3 / steps.size), int(steps.size)


def _graphs(manifest: Any) -> list[Any]:
    """The graphs of ``run.json`` ``graphs`` (none without a manifest or the section)."""
    section = getattr(manifest, "graphs", None) if manifest is not None else None
    return list(section.graphs) if section is not None else []


def _table(ctx: Any) -> Any:
    """The registered table: no rows (and no frame built) for a run without a graphs section."""
    return graph_regions(ctx.trace, ctx.manifest) if _graphs(ctx.manifest) else NO_ROWS


def graph_regions(rt: Any, manifest: Any) -> C.Cols:
    """One row per graph of ``run.json`` ``graphs`` for the rank of ``rt`` (see the module doc), as columns
    (:data:`COLUMNS`; no rows without graphs)."""
    graphs = _graphs(manifest)
    if not graphs:
        return C.empty(COLUMNS)
    fwd_graphs = [g for g in graphs if g.kind == "forward"]
    c, fwd_rows, bwd_rows = _op_rows(rt)
    n = len(fwd_graphs)
    fwd_cpu, fwd_gpu, fwd_steps = _per_graph(rt, c, fwd_rows, n, reverse=False)
    bwd_cpu, bwd_gpu, _ = _per_graph(rt, c, bwd_rows, n, reverse=True)
    pos = {id(g): i for i, g in enumerate(fwd_graphs)}
    rows = []
    for g in graphs:
        i = pos.get(id(g))
        cut = g.cut
        region_us, region_steps = _region_us(rt, c, g.compile_id) if g.kind == "backward" else (np.nan, 0)
        rows.append({
            "rank": rt.rank, "graph": g.index, "kind": g.kind, "compile_id": g.compile_id,
            "params": len(g.params), "param_mb": (g.param_bytes or 0) / 1e6,
            "buckets": ",".join(map(str, g.buckets)) if g.buckets else "",
            "cut": cut.kind if cut else None, "cut_reason": cut.reason if cut else None,
            "fwd_cpu_us": fwd_cpu[i] if i is not None else np.nan,
            "bwd_cpu_us": bwd_cpu[i] if i is not None else region_us,
            "fwd_gpu_span_us": fwd_gpu[i] if i is not None else np.nan,
            "bwd_gpu_span_us": bwd_gpu[i] if i is not None else np.nan,
            "steps": fwd_steps if i is not None else region_steps, "file": g.file,
        })
    return {c: C.column([r[c] for r in rows]) for c in COLUMNS}  # the dtypes pd.DataFrame(rows) gives


_SHOWN = ("graph", "kind", "params", "param_mb", "buckets", "cut", "fwd_cpu_us", "bwd_cpu_us", "steps", "cut_reason")


def _view(t: Mapping[str, Columnar], opts: ViewOptions) -> View | None:
    df = C.as_cols(t["graph_regions"])
    if not C.nrows(df):
        return None
    first = C.take(df, df["rank"] == df["rank"].min())
    fwd = first["kind"] == "forward"
    unmatched = fwd.any() and (first["steps"][fwd] == 0).all()
    note = ("no profiled step ran one compiled op per recorded forward graph (a recompile, or the eager backend, "
            "which leaves no CompiledFunction op): times are n/a") if unmatched else None
    return View(f"Compiled graphs (rank {int(first['rank'][0])}; times: mean per matched step; "
                "files: run folder)", C.select(first, _SHOWN), note=note)


TABLES = [
    Table(
        name="graph_regions", scope="rank", title="Compiled graphs, their buckets and cuts, timed (per rank)",
        doc="One row per graph torch.compile compiled on rank 0 (run.json graphs, written by tracekit profile "
            "--dynamo): DDPOptimizer's split submodules in model order, each with its parameters, the DDP reducer "
            "buckets their gradients go to and how the graph ends; timed from each rank's trace (see "
            "docs/graphs.md).",
        columns=(
            Column("rank", "rank", "the rank whose trace timed the graph"),
            Column("graph", "index", "the graph's index in rank 0's compile order"),
            Column("kind", "name", "forward (a dynamo graph of the model, or a DDPOptimizer submodule of one), "
                                   "compiled_autograd (the captured backward) or backward (dynamo's graph of it)"),
            Column("compile_id", "name", "dynamo's compile id (frame/attempt)"),
            Column("params", "count", "parameters the graph reads (their gradients come out of its backward)"),
            Column("param_mb", "MB", "bytes of those parameters"),
            Column("buckets", "text", "DDP reducer bucket ids the gradients go to (as in the bucket timeline)"),
            Column("cut", "name", "how the graph ends: ddp_split (DDPOptimizer bucket boundary), graph_break, end"),
            Column("cut_reason", "text", "dynamo's reason for the cut"),
            Column("fwd_cpu_us", "us", "mean CPU time of the graph's CompiledFunction op per matched step"),
            Column("bwd_cpu_us", "us", "mean CPU time of its CompiledFunctionBackward op per matched step (a "
                                       "compiled-autograd backward graph: of its Torch-Compiled Region per step)"),
            Column("fwd_gpu_span_us", "us", "mean first-start to last-end of the GPU work its forward launched"),
            Column("bwd_gpu_span_us", "us", "the same for its backward"),
            Column("steps", "count", "profiled steps matched (forward op count equals the forward graph count; a "
                                     "compiled-autograd backward: steps with its region)"),
            Column("file", "name", "the graph's FX code, relative to the run folder"),
        ),
        compute=_table, view=_view, order=72,
    ),
]
