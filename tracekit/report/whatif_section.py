"""The what-if section of the HTML report (``tracekit analyze --whatif --html``).

With ``--whatif`` analyze replays the traces (:func:`tracekit.replay.api.advise`); the page then shows,
per run, what ``tracekit whatif`` prints for it: the baseline (window, replay, predicted and measured step,
with the prediction's error and how far to trust it), the profiler cost taken out, one bar per scenario the
findings advise (its predicted change of the step) and one step of the window next to the prediction. The
figures are :mod:`tracekit.report.whatif_html`'s; the rows and lines are :mod:`tracekit.report.whatif_render`'s,
so the page and the text report say the same.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import plotly.graph_objects as go

from tracekit.replay.api import WhatifResult
from tracekit.report import whatif_html, whatif_render


def whatif_figures(r: WhatifResult | None) -> dict[str, go.Figure | None]:
    """The section's figures: ``scenarios`` (bars) and ``timeline`` (window vs predicted), None where empty."""
    if r is None:
        return {"scenarios": None, "timeline": None}
    return {"scenarios": whatif_html.scenario_figure(r), "timeline": whatif_html.timeline_figure(r)}


def whatif_context(r: WhatifResult | None, meta: dict[str, Any], idx: int,
                   figures: dict[str, go.Figure | None], figure_html: Callable[[go.Figure | None, str], str],
                   display_name: Callable[[Any], str]) -> dict[str, Any] | None:
    """The template's ``run.whatif``: None when analyze did not replay (no ``--whatif``); ``error`` alone when
    the traces could not be replayed (``meta["whatif"]["error"]``)."""
    if r is None:
        err = (meta.get("whatif") or {}).get("error")
        return {"error": display_name(err)} if err else None
    return {
        "error": None,
        "headers": whatif_render.BASELINE_HEADERS,
        "rows": whatif_render.baseline_rows(r.baseline),
        "lines": [line for line in [*whatif_render.trust_lines(r.baseline),
                                    whatif_render.cost_line(r.profiler_cost)] if line],
        "notes": [display_name(n) for n in r.notes],
        "scenarios": figure_html(figures["scenarios"], f"whatif-scenarios-{idx}"),
        "timeline": figure_html(figures["timeline"], f"whatif-timeline-{idx}"),
    }
