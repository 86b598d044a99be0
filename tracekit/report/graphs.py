"""The report's "Compiled graphs" section: split points, buckets and graph breaks, drawn and tabled.

Input: the ``graph_regions`` table (:mod:`tracekit.analyses.graph_regions`) and ``run.json``'s
``graphs`` section (via ``res.meta["manifest"]``). Output: a context dict for the page
template (``report.html.j2``): the table rows of the lowest rank, links to each graph's FX
code and to the autograd drawing, and two plotly figures:

* **layout**: the model's parameters in model order (DDP's order) on x. Row ``graphs``: each
  forward graph spans the parameters it reads; its end is marked grey-dashed at a DDPOptimizer
  split and red at a graph break. Row ``buckets``: the DDP reducer bucket each parameter's
  gradient goes to (the ids of the bucket timeline).
* **time**: each forward graph's forward and backward CPU time (mean per matched step).
"""

from __future__ import annotations

import os
from typing import Any

import pandas as pd
import plotly.graph_objects as go

#: colours (Okabe-Ito): alternating graphs, graph breaks, DDPOptimizer splits
GRAPH_COLORS = ("#56B4E9", "#0072B2")
BUCKET_COLORS = ("#E69F00", "#F0E442", "#CC79A7", "#009E73", "#999933", "#88CCEE")
BREAK_COLOR, SPLIT_COLOR = "#D55E00", "#999999"


def _run_dir(meta: dict[str, Any]) -> str | None:
    files = meta.get("files") or {}
    first = files.get(min(files, key=lambda k: int(k))) if files else None
    return os.path.dirname(str(first)) if first else None


def _runs(values: list[int | None]) -> list[tuple[int, int, int | None]]:
    """``(start, end, value)`` of each run of equal consecutive values."""
    out: list[tuple[int, int, int | None]] = []
    for i, v in enumerate(values):
        if out and out[-1][2] == v and out[-1][1] == i:
            out[-1] = (out[-1][0], i + 1, v)
        else:
            out.append((i, i + 1, v))
    return out


def layout_figure(section: Any, rows: pd.DataFrame, esc: Any) -> go.Figure | None:
    """The parameter-order picture (see the module doc); None without reducer parameter names."""
    params = list(section.reducer_params or [])
    fwd = [g for g in section.graphs if g.kind == "forward"]
    if not params or not fwd:
        return None
    pos = {p: i for i, p in enumerate(params)}
    by_graph = rows.set_index("graph") if len(rows) else None
    fig = go.Figure()
    shapes = []
    for k, g in enumerate(fwd):
        idx = [pos[p] for p in g.params if p in pos]
        if not idx:
            continue
        x0, x1 = min(idx), max(idx) + 1
        r = by_graph.loc[g.index] if by_graph is not None and g.index in by_graph.index else None
        hover = (f"graph {g.index} ({g.compile_id})<br>{len(g.params)} params, {(g.param_bytes or 0) / 1e6:.2f} MB"
                 f"<br>buckets {', '.join(map(str, g.buckets or [])) or 'n/a'}<br>ends: "
                 f"{esc(g.cut.kind if g.cut else None)} {esc(g.cut.reason if g.cut else '')}")
        if r is not None and pd.notna(r["fwd_cpu_us"]):
            hover += f"<br>fwd {r['fwd_cpu_us']:.0f} µs, bwd {r['bwd_cpu_us']:.0f} µs CPU per step"
        fig.add_trace(go.Bar(x=[x1 - x0], base=[x0], y=["graphs"], orientation="h", width=0.7,
                             marker_color=GRAPH_COLORS[k % 2], text=[f"g{g.index}"], textposition="inside",
                             hovertext=[hover], hoverinfo="text", showlegend=False))
        kind = g.cut.kind if g.cut else None
        if kind in ("graph_break", "ddp_split"):
            shapes.append(dict(type="line", x0=x1, x1=x1, y0=0, y1=1, yref="paper",
                               line=dict(color=BREAK_COLOR if kind == "graph_break" else SPLIT_COLOR, width=2,
                                         dash="solid" if kind == "graph_break" else "dash")))
    bucket_of: dict[int, int] = {}
    for b, idx in enumerate(section.reducer_buckets or []):
        for i in idx:
            bucket_of[i] = b
    for x0, x1, b in _runs([bucket_of.get(i) for i in range(len(params))]):
        names = "<br>".join(esc(p) for p in params[x0:x1][:12]) + ("<br>..." if x1 - x0 > 12 else "")
        fig.add_trace(go.Bar(x=[x1 - x0], base=[x0], y=["buckets"], orientation="h", width=0.7,
                             marker_color=BUCKET_COLORS[(b or 0) % len(BUCKET_COLORS)] if b is not None else "#DDDDDD",
                             text=[f"b{b}" if b is not None else "?"], textposition="inside",
                             hovertext=[f"bucket {b if b is not None else 'unknown'}<br>{names}"],
                             hoverinfo="text", showlegend=False))
    fig.update_layout(barmode="overlay", shapes=shapes, height=220, margin=dict(l=70, r=20, t=30, b=40),
                      title=dict(text="Graphs and DDP buckets over the parameters (model order; red: graph break, "
                                      "grey dashed: DDPOptimizer split)", font=dict(size=12)),
                      xaxis=dict(title="parameter (DDP order, one column each)", range=[0, len(params)]),
                      yaxis=dict(categoryorder="array", categoryarray=["buckets", "graphs"]))
    return fig


def time_figure(rows: pd.DataFrame) -> go.Figure | None:
    """Forward and backward CPU time per forward graph (mean per matched step); None when untimed."""
    fwd = rows[(rows["kind"] == "forward") & rows["fwd_cpu_us"].notna()] if len(rows) else rows
    if not len(fwd):
        return None
    x = [f"g{g}" for g in fwd["graph"]]
    fig = go.Figure([go.Bar(x=x, y=fwd["fwd_cpu_us"], name="forward", marker_color="#56B4E9"),
                     go.Bar(x=x, y=fwd["bwd_cpu_us"], name="backward", marker_color="#E69F00")])
    fig.update_layout(barmode="stack", height=260, margin=dict(l=60, r=20, t=30, b=40),
                      title=dict(text="CPU time per graph (µs, mean per matched step)", font=dict(size=12)),
                      yaxis_title="µs")
    return fig


def graphs_context(res: Any, idx: int, figure_html: Any, esc: Any, plot: Any) -> dict[str, Any] | None:
    """The template context of the section for one run, or None when ``run.json`` has no graphs.

    ``esc``: names as page text (the template escapes HTML); ``plot``: names as plotly labels."""
    manifest = res.meta.get("manifest")
    section = getattr(manifest, "graphs", None) if manifest is not None else None
    if section is None:
        return None
    table = res.tables.get("graph_regions")
    rows = table[table["rank"] == table["rank"].min()] if table is not None and len(table) else pd.DataFrame(
        columns=["graph", "kind", "fwd_cpu_us", "bwd_cpu_us"])
    run_dir = _run_dir(res.meta)

    def link(f: str | None) -> dict[str, str] | None:
        return {"href": os.path.join(run_dir, f) if run_dir else f, "text": esc(f)} if f else None

    items = []
    for g in section.graphs:
        r = rows[rows["graph"] == g.index]
        t = r.iloc[0] if len(r) else None
        items.append({
            "graph": g.index, "kind": esc(g.kind), "compile_id": esc(g.compile_id), "params": len(g.params),
            "param_mb": f"{(g.param_bytes or 0) / 1e6:.2f}", "buckets": ", ".join(map(str, g.buckets or [])),
            "cut": esc(g.cut.kind if g.cut else ""), "reason": esc(g.cut.reason if g.cut and g.cut.reason else ""),
            "where": esc(g.cut.where if g.cut and g.cut.where else ""),
            "fwd": "n/a" if t is None or pd.isna(t["fwd_cpu_us"]) else f"{t['fwd_cpu_us']:.0f}",
            "bwd": "n/a" if t is None or pd.isna(t["bwd_cpu_us"]) else f"{t['bwd_cpu_us']:.0f}",
            "allreduces": g.allreduces, "file": link(g.file),
            "allreduce_params": esc("; ".join(f"{i}: {p}" for i, p in enumerate(g.allreduce_params or []))),
        })
    ag = section.autograd
    return {
        "rows": items, "optimize_ddp": esc(section.optimize_ddp),
        "layout": figure_html(layout_figure(section, rows, plot), f"graphs-layout-{idx}"),
        "time": figure_html(time_figure(rows), f"graphs-time-{idx}"),
        "autograd": None if ag is None else {"dot": link(ag.dot), "svg": link(ag.svg), "note": esc(ag.note or "")},
        "unavailable": [f"{esc(k)}: {esc(v)}" for k, v in (section.unavailable or {}).items()],
    }
