"""Render the dict of :func:`tracekit.analyses.explain.explain` as text (and the section helpers the
run comparison, :mod:`tracekit.compare.render`, uses)."""

from __future__ import annotations

from typing import Any

from tracekit.analyses import registry
from tracekit.analyses.findings import as_table, finding_lines
from tracekit.analyses.registry import ViewOptions
from tracekit.report.fmt import table
from tracekit.traces import cols as C


def heading(text: str, fmt: str) -> str:
    """A section title: ``## text`` in markdown, else the text underlined with ``=``."""
    return f"## {text}" if fmt == "markdown" else f"{text}\n{'=' * len(text)}"


def frame_text(t: Any, fmt: str) -> str:
    """A table (:data:`~tracekit.traces.cols.Cols` or a DataFrame) in ``fmt``, or ``(none)`` when it is missing
    or has no rows."""
    if t is None or C.nrows(t) == 0:
        return "(none)"
    return table(t, fmt)


def render_findings(findings: list[dict[str, Any]], fmt: str) -> str:
    """The ranked "Findings" section."""
    return "\n".join([heading("Findings", fmt), "", *finding_lines(findings, fmt == "markdown")])


def render_explain(out: dict[str, Any], fmt: str = "table", per_step: bool = False) -> str:
    """Findings, graph-break impact, bucket timeline (last step) and manifest check: the
    registered text sections of those tables."""
    tables = {k: v for k, v in out.items() if C.is_frame(v) or isinstance(v, dict)}  # the tables (Cols or frames)
    tables["findings"] = as_table(out.get("findings") or [])
    opts = ViewOptions(fmt=fmt, per_step=per_step)
    parts: list[str] = []
    for name in ("findings", "graph_breaks", "bucket_timeline", "manifest_check"):
        view = registry.tables()[name].view(tables, opts) if name in tables else None
        if view is not None:
            body = "\n".join(view.body) if isinstance(view.body, list) else frame_text(view.body, fmt)
            parts += [heading(view.title, fmt), body]
    return "\n\n".join(parts)
