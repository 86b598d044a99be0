"""Render the dict of :func:`tracekit.analyses.explain.explain` (and of :func:`tracekit.diff.diff_runs`) as text."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from tracekit.analyses import registry
from tracekit.analyses.findings import as_table, finding_lines
from tracekit.analyses.registry import ViewOptions
from tracekit.report.fmt import table


def _title(text: str, fmt: str) -> str:
    return f"## {text}" if fmt == "markdown" else f"{text}\n{'=' * len(text)}"


def _table(df: pd.DataFrame, fmt: str) -> str:
    if df is None or len(df) == 0:
        return "(none)"
    return table(df, fmt)


def render_findings(findings: list[dict[str, Any]], fmt: str) -> str:
    """The ranked "Findings" section."""
    return "\n".join([_title("Findings", fmt), "", *finding_lines(findings, fmt == "markdown")])


def render_explain(out: dict[str, Any], fmt: str = "table", per_step: bool = False) -> str:
    """Findings, graph-break impact, bucket timeline (last step) and manifest check: the
    registered text sections of those tables."""
    tables = {k: v for k, v in out.items() if isinstance(v, pd.DataFrame)}
    tables["findings"] = as_table(out.get("findings") or [])
    opts = ViewOptions(fmt=fmt, per_step=per_step)
    parts: list[str] = []
    for name in ("findings", "graph_breaks", "bucket_timeline", "manifest_check"):
        view = registry.tables()[name].view(tables, opts) if name in tables else None
        if view is not None:
            body = "\n".join(view.body) if isinstance(view.body, list) else _table(view.body, fmt)
            parts += [_title(view.title, fmt), body]
    return "\n\n".join(parts)


def render_diff(d: dict[str, Any], fmt: str = "table") -> str:
    """The tables of :func:`tracekit.diff.diff_runs` plus findings that appear/disappear."""
    parts = []
    for key, title in (("summary", "Run summary"), ("ranks", "Per rank (mean per step)"),
                       ("buckets", "Buckets"), ("compile", "Compilation")):
        df = d.get(key)
        if isinstance(df, pd.DataFrame):
            parts += [_title(title, fmt), _table(df.replace({np.nan: None}), fmt)]
    for key, title in (("findings_new", "Findings only in B"), ("findings_gone", "Findings only in A")):
        fs = d.get(key) or []
        parts.append(_title(title, fmt))
        parts.append("\n".join(f"- {f['code']} ({'all ranks' if f.get('rank') is None else 'rank ' + str(f['rank'])})"
                               f": {f['message']}" for f in fs) or "(none)")
    return "\n\n".join(parts)
