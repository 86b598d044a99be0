"""One self-contained HTML report (``tracekit report``, ``tracekit analyze --html``).

The page works offline: plotly.js is inlined once (its lean basic bundle where it can draw the
figures, see :mod:`.plotlyjs`; ``plotly="cdn"`` links it instead), each figure is plotly JSON
(plotly escapes ``<``, ``>`` and ``/`` in it, so a ``</script>`` inside a kernel
name cannot end the script). Every name that comes from a trace goes through
:func:`display_name` (control characters such as ANSI escapes become visible
``\\x1b`` text) and is HTML-escaped: by jinja's autoescape in the page, and by
:func:`plot_text` for plotly labels (plotly renders a few tags in labels).
The figure data comes from :mod:`.chart_data` (pure) via :mod:`.collect`.
"""

from __future__ import annotations

import html
import math
import re
from dataclasses import dataclass, field
from typing import Any

import jinja2
import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
from plotly.subplots import make_subplots

from tracekit.version import version
from tracekit.analyses import collectives, registry
from tracekit.analyses.findings import as_dicts
from tracekit.runner.options import RunOptions
from tracekit.runner.pipeline import load_and_analyze
from tracekit.analyses.registry import AnalysisResult, ViewOptions
from tracekit.errors import ConfigError
from tracekit.report import chart_data, collect, compute_figures
from tracekit.report.graphs import graphs_context
from tracekit.report.whatif_section import whatif_context, whatif_figures
from tracekit.report.plotlyjs import plotly_script
from tracekit.report.render import SHOWN_RANKS_RULE, Renderer, report_sections, shown_ranks, summary_rows
from tracekit.replay.api import WhatifResult
from tracekit.traces import cache, loader
from tracekit.traces import cols as C
from tracekit.traces.cols import to_frame
from tracekit.traces.traceset import TraceSet

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
#: lane colours (colour-blind safe-ish: Okabe-Ito)
COLORS = {"compute": "#0072B2", "comm": "#009E73", "memory": "#CC79A7", "idle": "#BBBBBB",
          "fwd": "#56B4E9", "bwd": "#E69F00", "region": "#EEE8D5", "graph_break": "#D55E00",
          "ddp_split": "#999999", "unknown": "#999999", "wait": "#F0E442", "allreduce": "#009E73",
          "exposed": "#D55E00"}
LANES = ("compute", "comm", "memory", "idle", "compiled")
#: above this many buckets per step they share one lane (one lane each would make the page very tall)
MAX_BUCKET_LANES = 24
#: bars drawn per lane at most (a page with 100k SVG bars per lane opens too slowly)
MAX_BARS = 2000
PLOT_CONFIG = {"displaylogo": False, "responsive": True}


def display_name(name: Any) -> str:
    """A trace name as safe *text*: control characters (ANSI escapes, NUL, ...) become ``\\xNN``."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", str(name))


def plot_text(name: Any) -> str:
    """A trace name for a plotly label: :func:`display_name`, then HTML-escaped (plotly parses tags)."""
    return html.escape(display_name(name), quote=False)


@dataclass
class RunView:
    """One analysed run as the page shows it."""

    label: str
    res: AnalysisResult
    timeline: chart_data.Timeline | None
    targets: list[chart_data.Target | None] = field(default_factory=list)
    #: False when the view was built from the tables alone (no timeline can be drawn)
    traces_loaded: bool = True
    #: the ranks the timeline and charts show (None: every rank)
    shown_ranks: list[int] | None = None
    #: the replay of ``analyze --whatif`` (None without it): the page's what-if section
    whatif: WhatifResult | None = None


def run_view(label: str, traces: TraceSet, res: AnalysisResult, step: int | None = None) -> RunView:
    """Build the view of one run (``step``: the profiled step the timeline shows; default the median one).

    Above :data:`~tracekit.report.render.TEXT_MAX_RANKS` ranks the timeline and the charts show the
    ranks of :func:`~tracekit.report.render.shown_ranks` (their events are decoded here when the
    traces arrived as headers only); the tables keep every rank.
    """
    shown = shown_ranks(res)
    # CPU-only (gloo) traces have no device lanes to draw
    tl = (collect.timeline(collect.with_events(traces, shown if shown is not None else list(traces.ranks)), res,
                           step, shown) if traces.has_gpu_activity else None)
    finds = as_dicts(res.findings)
    return RunView(label=label, res=res, timeline=tl, shown_ranks=shown,
                   targets=[chart_data.finding_target(f, tl) if tl else None for f in finds])


# -- timeline ----------------------------------------------------------------------------------


def _bar(x0: list[float], x1: list[float], y: float, color: str, name: str, text: list[str], *, width: float = 0.8,
         show: bool = False, opacity: float = 1.0) -> go.Bar:
    return go.Bar(base=x0, x=[b - a for a, b in zip(x0, x1)], y=[y] * len(x0), orientation="h", width=width,
                  marker={"color": color, "line": {"width": 0}}, opacity=opacity, name=name, legendgroup=name,
                  showlegend=show, hovertext=text, hovertemplate="%{hovertext}<extra>" + name + "</extra>")


def _seg_text(lane: str, s: chart_data.Segment) -> str:
    what = "" if lane == "idle" else f"<br>{s.count} kernel(s); longest: {plot_text(s.name)}"
    return f"{lane} {s.start_us:.1f} → {s.end_us:.1f} µs ({s.dur_us:.1f} µs){what}"


def _drawn(lane: str, segs: list[chart_data.Segment]) -> list[chart_data.Segment]:
    return chart_data.longest(segs, MAX_BARS) if lane == "idle" else chart_data.coarsen(segs, MAX_BARS)


def simplified_lanes(tl: chart_data.Timeline) -> list[str]:
    """One note per lane drawn with fewer bars than it has segments (see :data:`MAX_BARS`)."""
    out = []
    for r in tl.ranks:
        for lane in LANES[:4]:
            n = len(r.lanes.get(lane, []))
            if n > MAX_BARS:
                how = ("the shortest idle gaps are not drawn" if lane == "idle"
                       else "the closest bars are merged; hover counts are summed")
                out.append(f"rank {r.rank}, {lane}: {n} bars drawn as {MAX_BARS} ({how})")
    return out


def _rank_traces(r: chart_data.RankLanes, bucket_lanes: bool, first: bool) -> list[go.Bar]:
    out = []
    for y, lane in enumerate(LANES[:4]):
        segs = _drawn(lane, r.lanes.get(lane, []))
        out.append(_bar([s.start_us for s in segs], [s.end_us for s in segs], y, COLORS[lane], lane,
                        [_seg_text(lane, s) for s in segs], show=first))
    y = LANES.index("compiled")
    out.append(_bar([s.start_us for s in r.regions], [s.end_us for s in r.regions], y, COLORS["region"],
                    "compiled region (CPU)", [plot_text(s.name) for s in r.regions], show=first and bool(r.regions)))
    for what, color in (("CompiledFunction", "fwd"), ("CompiledFunctionBackward", "bwd")):
        segs = [s for s in r.subgraphs if s.name == what]
        out.append(_bar([s.start_us for s in segs], [s.end_us for s in segs], y, COLORS[color],
                        f"{color} subgraph (CPU)", [f"{what} {s.dur_us:.1f} µs" for s in segs], width=0.5,
                        show=first and bool(segs)))
    for kind in ("graph_break", "ddp_split", "unknown"):
        bs = [b for b in r.boundaries if b.kind == kind]
        out.append(_bar([b.start_us for b in bs], [b.end_us for b in bs], y, COLORS[kind], f"{kind} (gap)",
                        [f"{kind}: {b.pass_} boundary {b.index}, {b.end_us - b.start_us:.1f} µs of eager CPU"
                         for b in bs], show=first and bool(bs)))
    out += _bucket_traces(r, bucket_lanes, first)
    return out


def _bucket_traces(r: chart_data.RankLanes, own_lanes: bool, first: bool) -> list[go.Bar]:
    base = len(LANES)
    ys = [base + (b.bucket if own_lanes else 0) for b in r.buckets]
    out = []
    for i, (b, y) in enumerate(zip(r.buckets, ys)):
        head = f"bucket {b.bucket}, {b.bytes / 1e6:.2f} MB"
        out.append(_bar([b.ready_us], [b.start_us], y, COLORS["wait"], "bucket: ready → start",
                        [f"{head}: gradient ready {b.ready_us:.1f} µs, allreduce starts {b.start_us:.1f} µs"],
                        show=first and i == 0, opacity=0.7))
        out.append(_bar([b.start_us], [b.end_us], y, COLORS["allreduce"], "bucket allreduce",
                        [f"{head}: allreduce {b.end_us - b.start_us:.1f} µs, exposed {b.exposed_us:.1f} µs"],
                        show=first and i == 0))
        out.append(_bar([a for a, _ in b.exposed], [e for _, e in b.exposed], y, COLORS["exposed"],
                        "bucket exposed", [f"{head}: exposed {e - a:.1f} µs" for a, e in b.exposed], width=0.5,
                        show=first and i == 0))
    return out


def timeline_figure(tl: chart_data.Timeline) -> go.Figure:
    """One subplot (lane group) per rank, sharing the time axis."""
    nb = max((len(r.buckets) for r in tl.ranks), default=0)
    own = nb <= MAX_BUCKET_LANES
    labels = [*LANES, *([f"bucket {i}" for i in range(nb)] if own else (["buckets"] if nb else []))]
    fig = make_subplots(rows=len(tl.ranks), cols=1, shared_xaxes=True, vertical_spacing=0.02 if len(tl.ranks) > 1
                        else 0.0)
    for i, r in enumerate(tl.ranks, start=1):
        for t in _rank_traces(r, own, i == 1):
            fig.add_trace(t, row=i, col=1)
        fig.update_yaxes(title_text=f"rank {r.rank}", tickvals=list(range(len(labels))), ticktext=labels,
                         range=[len(labels) - 0.5, -0.5], row=i, col=1, fixedrange=True)
        for b in r.boundaries:
            if b.kind == "graph_break":
                fig.add_vline(x=b.start_us, line={"color": COLORS["graph_break"], "dash": "dash", "width": 1},
                              row=i, col=1)
    fig.update_xaxes(title_text=f"µs from the start of ProfilerStep#{tl.step}", row=len(tl.ranks), col=1)
    fig.update_layout(barmode="overlay", height=80 + len(tl.ranks) * (16 * len(labels) + 30),
                      margin={"l": 90, "r": 20, "t": 30, "b": 40}, legend={"orientation": "h", "y": 1.0,
                                                                           "yanchor": "bottom"},
                      hoverlabel={"align": "left"})
    return fig


# -- bars --------------------------------------------------------------------------------------


def breakdown_figure(steps: pd.DataFrame) -> go.Figure | None:
    """Stacked per-rank bars of :func:`chart_data.breakdown_bars` (µs per step)."""
    d = chart_data.breakdown_bars(steps)
    if d.empty:
        return None
    fig = go.Figure()
    names = {"compute_only_us": ("compute, no comm under it", "compute"), "overlap_us": ("comm hidden by compute",
                                                                                         "allreduce"),
             "exposed_comm_us": ("comm exposed", "exposed"), "memory_only_us": ("memcpy/memset only", "memory"),
             "idle_us": ("idle", "idle")}
    y = [f"rank {r}" for r in d["rank"]]
    for col, (label, color) in names.items():
        fig.add_trace(go.Bar(y=y, x=d[col], orientation="h", name=label, marker_color=COLORS[color],
                             hovertemplate="%{y}: %{x:.1f} µs per step<extra>" + label + "</extra>"))
    fig.update_layout(barmode="stack", height=120 + 40 * len(d), margin={"l": 70, "r": 20, "t": 30, "b": 40},
                      xaxis_title="µs per step (mean over steps; the parts add up to the GPU span)",
                      yaxis={"autorange": "reversed"},
                      legend={"orientation": "h", "y": 1.02, "yanchor": "bottom", "traceorder": "normal"})
    return fig


def bucket_figure(summary: pd.DataFrame) -> go.Figure | None:
    """Per-bucket bars (mean per step): duration with its exposed part, and bus bandwidth; one colour per rank.

    A part no rank has a value for (a CPU-only run: no exposed time, no sizes so no bandwidth) is left
    out -- no empty chart, no legend entry without bars -- and the title says so."""
    if summary is None or summary.empty:
        return None
    has_exposed, has_bw = bool(summary["exposed_us"].notna().any()), bool(summary["busbw_gbps"].notna().any())
    title = ("allreduce duration and exposed part (µs, mean per step)" if has_exposed
             else "allreduce duration (µs, mean per step; exposed part unknown: no GPU activity in the trace)")
    fig = make_subplots(rows=2 if has_bw else 1, cols=1, shared_xaxes=True, vertical_spacing=0.08,
                        subplot_titles=(title, "busbw on the transfer time (GB/s)") if has_bw else (title,))
    palette = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"]
    for i, (rank, g) in enumerate(summary.groupby("rank")):
        c = palette[i % len(palette)]
        fig.add_trace(go.Bar(x=g["bucket"], y=g["dur_us"], name=f"rank {rank} duration", marker_color=c,
                             offsetgroup=str(rank), legendgroup=str(rank),
                             hovertemplate="bucket %{x}: %{y:.1f} µs<extra>rank " + str(rank) + "</extra>"),
                      row=1, col=1)
        if has_exposed:
            fig.add_trace(go.Bar(x=g["bucket"], y=g["exposed_us"], name=f"rank {rank} exposed", marker_color=c,
                                 marker_pattern_shape="/", marker_line_color="#D55E00", offsetgroup=str(rank),
                                 legendgroup=str(rank), opacity=0.9,
                                 hovertemplate="bucket %{x}: exposed %{y:.1f} µs<extra>rank " + str(rank) + "</extra>"),
                          row=1, col=1)
        if has_bw:
            fig.add_trace(go.Bar(x=g["bucket"], y=g["busbw_gbps"], name=f"rank {rank} busbw", marker_color=c,
                                 offsetgroup=str(rank), legendgroup=str(rank), showlegend=False,
                                 hovertemplate="bucket %{x}: %{y:.1f} GB/s<extra>rank " + str(rank) + "</extra>"),
                          row=2, col=1)
    fig.update_layout(barmode="overlay", height=460 if has_bw else 300, margin={"l": 60, "r": 20, "t": 40, "b": 40},
                      legend={"orientation": "h", "y": -0.15 if has_bw else -0.3})
    fig.update_xaxes(title_text="bucket (launch order; 0 = first launched = last layers)", row=2 if has_bw else 1, col=1)
    return fig


def figure_html(fig: go.Figure | None, div_id: str) -> str:
    """A plotly figure as a ``<div>`` + ``<script>`` (no plotly.js: the page inlines it once)."""
    if fig is None:
        return ""
    return pio.to_html(fig, full_html=False, include_plotlyjs=False, div_id=div_id, config=PLOT_CONFIG)


# -- tables ------------------------------------------------------------------------------------


def _cell(v: Any) -> tuple[str, str]:
    """(shown text, sort key) of one table cell."""
    if v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA:
        return "-", ""
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v)).lower(), str(int(bool(v)))
    if isinstance(v, (int, np.integer)):
        return str(int(v)), str(int(v))
    if isinstance(v, (float, np.floating)):
        return f"{float(v):.1f}", repr(float(v))
    return display_name(v), display_name(v)


def table_data(df: Any, docs: dict[str, str] | None = None,
               max_rows: int | None = None) -> dict[str, Any] | None:
    """Columns (name, definition for the header tooltip) and rows of cells (text, sort key) for the
    template, at most ``max_rows`` rows (``total`` says how many there are); None when empty or not a table.
    ``df``: a DataFrame or :data:`~tracekit.traces.cols.Cols` (the analyze path's tables, the views' bodies)."""
    if isinstance(df, dict):
        df = C.to_frame(df)
    if df is None or not isinstance(df, pd.DataFrame) or df.empty:
        return None
    shown = df if max_rows is None else df.head(max_rows)
    obj = shown.astype(object).where(shown.notna(), None)
    docs = docs or {}
    return {"columns": [(display_name(c), docs.get(str(c), "")) for c in df.columns],
            "rows": [[_cell(v) for v in row] for row in obj.itertuples(index=False, name=None)],
            "total": len(df)}


#: rows of a full table embedded in the page (``--format csv --table NAME`` has them all)
MAX_FULL_ROWS = 1000


def run_tables(res: AnalysisResult, only: str | None = None) -> list[dict[str, Any]]:
    """Every table of the result, in report order, through the registry: its text section's table and note
    (the same summary the text report prints, :func:`~tracekit.report.render.report_sections`: above 32 ranks
    the rows of the ranks it shows, with the spread over every rank) and, collapsed, the full table (at most
    :data:`MAX_FULL_ROWS` rows). Header tooltips carry the registry's column definitions.
    ``only``: just that table. Findings have their own section and are left out here."""
    out = []
    specs = registry.tables()
    for sec in report_sections(res, ViewOptions(meta=res.meta)):
        name, view = sec.name, sec.view
        if (only and name != only) or name == "findings" or name not in specs:
            continue
        t = specs[name]
        docs = {c.name: f"{c.doc} [{registry.UNITS[c.unit]}]" for c in t.columns}
        summary = view.body if view is not None and not isinstance(view.body, list) else None
        spread = sec.spread
        block = {"name": name, "title": display_name(view.title if summary is not None else t.title),
                 "summary": table_data(summary, docs, MAX_FULL_ROWS),
                 "note": display_name(view.note) if summary is not None and view.note else None,
                 "spread": table_data(spread.body, None) if spread is not None else None,
                 "spread_title": display_name(spread.title) if spread is not None else None,
                 "full": table_data(res.tables[name], docs, MAX_FULL_ROWS), "full_title": display_name(t.title)}
        if block["summary"] is not None or block["full"] is not None:
            out.append(block)
    return out


# -- page --------------------------------------------------------------------------------------


def _findings(view: RunView, fig_id: str) -> list[dict[str, Any]]:
    out = []
    for f, t in zip(as_dicts(view.res.findings), view.targets):
        cost = (f.get("evidence") or {}).get("cost_us")
        item = {"code": display_name(f.get("code")), "severity": f.get("severity"), "message": display_name(
            f.get("message")), "who": "all ranks" if f.get("rank") is None else f"rank {f['rank']}",
            "cost": f"{cost:.0f} µs/step" if cost is not None else "cost unknown", "target": None}
        if t is not None and view.timeline is not None:
            row = [r.rank for r in view.timeline.ranks].index(t.rank) + 1
            item["target"] = {"fig": fig_id, "x0": round(t.x0_us, 1), "x1": round(t.x1_us, 1),
                              "xref": "x" if row == 1 else f"x{row}",
                              "yref": "y domain" if row == 1 else f"y{row} domain", "rank": t.rank, "lane": t.lane}
        out.append(item)
    return out


def _of_ranks(df: pd.DataFrame | None, ranks: list[int] | None) -> pd.DataFrame | None:
    return df if df is None or ranks is None or "rank" not in df else df[df["rank"].isin(ranks)]


def _shown_note(view: RunView) -> list[str]:
    if view.shown_ranks is None:
        return []
    n = len(view.res.meta.get("ranks") or [])
    return [f"the timeline and the charts show {len(view.shown_ranks)} of {n} ranks ({SHOWN_RANKS_RULE}: "
            f"{', '.join(map(str, view.shown_ranks))}); so do the tables' summaries, each with the spread over "
            "every rank, and the full tables hold every rank"]


def _failed_note(meta: dict[str, Any]) -> list[str]:
    """A failed run (``meta["failure"]``, tracekit.profile.diagnose): who stopped first, as the first note."""
    f = meta.get("failure")
    return [f"this run FAILED: {f.get('summary')} (the traces are the surviving ranks')"] if f else []



def _figures(view: RunView) -> dict[str, go.Figure | None]:
    """The run's plotly figures (None: no timeline to draw)."""
    buckets = to_frame(collectives.bucket_summary(view.res.buckets, view.res.instances))  # columns -> the frame
    return {
        "timeline": timeline_figure(view.timeline) if view.timeline and view.timeline.ranks else None,
        "breakdown": breakdown_figure(_of_ranks(view.res.steps, view.shown_ranks)),
        "buckets": bucket_figure(_of_ranks(buckets, view.shown_ranks)),
        **{f"whatif_{k}": v for k, v in whatif_figures(view.whatif).items()},
        "roofline": compute_figures.roofline_figure(view.res.tables.get("ops"), _compute_rank(view), plot_text,
                                                    view.res.meta.get("peaks")),
        "modules": compute_figures.module_tree_figure(view.res.tables.get("modules"), _compute_rank(view), plot_text),
    }


def _compute_rank(view: RunView) -> int:
    """The rank the roofline and the module tree show: the first shown rank (0 when none is known)."""
    ranks = view.shown_ranks or sorted(int(r) for r in view.res.meta.get("ranks") or [])
    return ranks[0] if ranks else 0


def _run_context(view: RunView, idx: int, table: str | None = None,
                 figs: dict[str, go.Figure | None] | None = None) -> dict[str, Any]:
    tl_id = f"timeline-{idx}"
    m = view.res.meta
    figs = figs if figs is not None else _figures(view)
    return {
        "label": display_name(view.label), "idx": idx,
        "summary": [(k, display_name(v)) for k, v in summary_rows(view.res) if v not in (None, "", [], {})],
        "notes": [display_name(n) for n in [*_failed_note(m), *(m.get("notes") or []), *_shown_note(view)]],
        "findings": _findings(view, tl_id), "has_findings": "findings" in view.res.tables,
        "timeline_id": tl_id, "step": view.timeline.step if view.timeline else None,
        "timeline": figure_html(figs["timeline"], tl_id) if figs["timeline"] is not None else "",
        "lanes": len(view.timeline.ranks) if view.timeline else 0,
        "simplified": simplified_lanes(view.timeline) if view.timeline else [],
        "breakdown": figure_html(figs["breakdown"], f"breakdown-{idx}"),
        "buckets": figure_html(figs["buckets"], f"buckets-{idx}"),
        "roofline": figure_html(figs["roofline"], f"roofline-{idx}"),
        "module_tree": figure_html(figs["modules"], f"modules-{idx}"),
        "compute_rank": _compute_rank(view),
        "compute_notes": compute_figures.compute_notes(view.res.tables, _compute_rank(view),
                                                       view.res.meta.get("peaks")),
        "tables": run_tables(view.res, table), "aligned": m.get("clock_aligned"),
        "device_metrics": m.get("device_metrics"), "traces_loaded": view.traces_loaded,
        "unread_categories": ", ".join(m.get("unread_categories") or {}),
        "lost_device_launches": m.get("lost_device_launches") or 0,
        "graphs": graphs_context(view.res, idx, figure_html, display_name, plot_text),
        "whatif": whatif_context(view.whatif, m, idx, {"scenarios": figs["whatif_scenarios"],
                                                       "timeline": figs["whatif_timeline"]},
                                 figure_html, display_name),
    }


def render_html(views: list[RunView], *, table: str | None = None, plotly: str = "inline") -> str:
    """The whole page for one or two runs (two: every section side by side); ``table``: only that
    table in the tables section; ``plotly``: how the page gets plotly.js (:mod:`tracekit.report.plotlyjs`:
    ``inline``, the lean bundle when it can draw these figures, or ``cdn``)."""
    env = jinja2.Environment(loader=jinja2.PackageLoader("tracekit.report", "templates"),
                             autoescape=True, undefined=jinja2.StrictUndefined)
    page = env.get_template("report.html.j2")
    figs = [_figures(v) for v in views]
    types = {t.type for f in figs for fig in f.values() if fig is not None for t in fig.data}
    return page.render(runs=[_run_context(v, i, table, figs[i]) for i, v in enumerate(views)],
                       plotly_script=plotly_script(plotly, types), version=version(),
                       title=" vs ".join(display_name(v.label) for v in views))


class HTMLRenderer(Renderer):
    """The HTML report as one of the renderers (:mod:`tracekit.report.render`): ``render(res)`` is the
    page of one run. The timeline draws raw kernel intervals, so it needs the loaded ``traces``
    (without them the page has everything but the timeline); ``compare(res_a, other, res_b)``
    puts two runs side by side. ``whatif``: the replay of ``analyze --whatif``, shown in its own section
    (:mod:`tracekit.report.whatif_section`)."""

    extension = "html"

    def __init__(self, traces: TraceSet | None = None, *, label: str = "run", step: int | None = None,
                 table: str | None = None, plotly: str = "inline", whatif: WhatifResult | None = None) -> None:
        super().__init__(table)
        self.traces, self.label, self.step, self.plotly = traces, label, step, plotly
        self.whatif = whatif

    def view(self, res: AnalysisResult) -> RunView:
        if self.table:
            self._pick(res)  # an unknown --table is a one-line error, as in every renderer
        if self.traces is None:
            return RunView(label=self.label, res=res, timeline=None, targets=[None] * len(as_dicts(res.findings)),
                           traces_loaded=False, whatif=self.whatif)
        view = run_view(self.label, self.traces, res, self.step)
        view.whatif = self.whatif
        return view

    def render(self, res: AnalysisResult) -> str:
        return render_html([self.view(res)], table=self.table, plotly=self.plotly)

    def compare(self, res: AnalysisResult, other: HTMLRenderer, other_res: AnalysisResult) -> str:
        return render_html([self.view(res), other.view(other_res)], table=self.table, plotly=self.plotly)


def report_paths(runs: list[list[str]], *, labels: list[str] | None = None, step: int | None = None,
                 skip_bad: bool = False, comm_pattern: str | None = None, align: str = "auto",
                 workers: int | None = None, plotly: str = "inline") -> str:
    """Load and analyse each run (one or two lists of paths) and return the HTML page.

    ``labels`` name the runs (default: the first path of each); ``step``: the ProfilerStep
    the timelines show (default: the median one, see :func:`chart_data.pick_step`); ``plotly``:
    ``inline`` or ``cdn`` (:mod:`tracekit.report.plotlyjs`).
    """
    if not 1 <= len(runs) <= 2:
        raise ConfigError(f"the report takes one or two runs, got {len(runs)}")
    # the page is cached whole, keyed by the inputs' identities, the options and the code (tracekit.traces.cache)
    return cache.result(REPORT_CACHE, [loader.inputs_key(paths) for paths in runs],
                        (labels, step, skip_bad, comm_pattern, align, plotly, version()),
                        lambda: _report_page(runs, labels=labels, step=step, skip_bad=skip_bad,
                                             comm_pattern=comm_pattern, align=align, workers=workers, plotly=plotly),
                        packages=("pandas", "plotly", "jinja2"))


#: the cache kind of :func:`report_paths`' pages
REPORT_CACHE = "report"


def _report_page(runs: list[list[str]], *, labels: list[str] | None, step: int | None, skip_bad: bool,
                 comm_pattern: str | None, align: str, workers: int | None, plotly: str) -> str:
    """:func:`report_paths`, computed."""
    views = []
    for i, paths in enumerate(runs):
        opts = RunOptions.of(skip_bad=skip_bad, comm_pattern=comm_pattern, align=align, workers=workers,
                             keep_events=False)  # run_view decodes what it draws
        traces, res = load_and_analyze(paths, opts)
        views.append(HTMLRenderer(traces, label=labels[i] if labels else paths[0], step=step).view(res))
    return render_html(views, plotly=plotly)
