"""``tracekit whatif --html FILE``: the what-if page (plotly, as the HTML report draws its figures).

Two figures and the text report: one step of the window next to the same step as predicted
(per rank, lanes ``GPU compute`` / ``GPU comm`` on GPU runs, ``collectives`` on CPU runs, and the
step; µs from each timeline's own step start: :mod:`tracekit.replay.timeline`), and one bar per
scenario with its predicted change of the step (negative: faster).
"""

from __future__ import annotations

import html

import plotly.graph_objects as go
import plotly.io as pio

from tracekit.replay.api import WhatifResult

_COLORS = {"step": "#b0b0b0", "GPU compute": "#4c78a8", "GPU comm": "#f58518", "collectives": "#f58518"}


def timeline_figure(r: WhatifResult) -> go.Figure | None:
    """Window vs predicted, one step (module doc)."""
    tl = r.timeline
    if tl is None or not len(tl):
        return None
    fig = go.Figure()
    labels = []
    for (rank, source, lane), rows in tl.groupby(["rank", "source", "lane"], sort=False):
        label = f"rank {rank} {lane} ({source})"
        labels.append(label)
        fig.add_trace(go.Bar(base=rows["start_us"], x=rows["end_us"] - rows["start_us"], y=[label] * len(rows),
                             orientation="h", marker={"color": _COLORS.get(lane, "#54a24b"), "line": {"width": 0}},
                             opacity=0.6 if source == "window" else 1.0, name=f"{lane} ({source})",
                             hovertemplate="%{base:.0f} to %{x:.0f} µs<extra>" + html.escape(label) + "</extra>"))
    step = int(tl["step"].iat[0])
    fig.update_layout(title=f"Step {step}: the profiled window and the prediction (µs from the step start)",
                      barmode="overlay", height=120 + 28 * len(labels), showlegend=False,
                      yaxis={"autorange": "reversed"}, xaxis={"title": "µs"})
    return fig


def scenario_figure(r: WhatifResult) -> go.Figure | None:
    """One bar per scenario: predicted change of the step, ms."""
    if not r.scenarios:
        return None
    names = [s["name"] for s in r.scenarios]
    delta = [s["delta_us"] / 1000 for s in r.scenarios]
    fig = go.Figure(go.Bar(x=delta, y=names, orientation="h",
                           marker={"color": ["#54a24b" if d < 0 else "#e45756" for d in delta]},
                           hovertemplate="%{y}: %{x:+.2f} ms per step<extra></extra>"))
    base = r.baseline.get("predicted_step_us") or 0
    # plotly's default margins (100 px over the plot, 80 under) would leave a one-bar plot no height at all
    fig.update_layout(title=f"Scenarios: predicted change of the step (baseline prediction {base / 1000:.2f} ms)",
                      height=130 + 36 * len(names), margin={"t": 50, "b": 50},
                      xaxis={"title": "ms per step"}, yaxis={"autorange": "reversed", "automargin": True})
    return fig


def render_html(r: WhatifResult, text: str) -> str:
    """The page: the figures, then ``text`` (the table report) as preformatted text."""
    figs = [f for f in (scenario_figure(r), timeline_figure(r)) if f is not None]
    parts = [pio.to_html(f, full_html=False, include_plotlyjs=(i == 0), div_id=f"whatif-{i}")
             for i, f in enumerate(figs)]
    return ("<!DOCTYPE html><html><head><meta charset='utf-8'><title>tracekit whatif</title></head><body>"
            "<h1>tracekit whatif</h1>" + "".join(parts) + f"<pre>{html.escape(text)}</pre></body></html>")
