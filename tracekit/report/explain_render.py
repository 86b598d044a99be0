"""Render the dict of :func:`tracekit.analyses.explain.explain` (and of :func:`tracekit.diff.diff_runs`) as text."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from tracekit.report.fmt import table

_TIMELINE_SHOWN = ("rank", "step", "bucket", "bytes", "ready_us", "launch_us", "start_us", "end_us", "dur_us",
                   "exposed_us", "tail_exposed_us")
_GB_SHOWN = ("rank", "step", "regions", "fwd_subgraphs", "bwd_subgraphs", "ddp_splits", "real_breaks",
             "compiled_cpu_us", "eager_between_us", "idle_at_breaks_us", "cost_per_break_us", "compile_skipped")


def _title(text: str, fmt: str) -> str:
    return f"## {text}" if fmt == "markdown" else f"{text}\n{'=' * len(text)}"


def _table(df: pd.DataFrame, fmt: str, cols: tuple[str, ...] | None = None) -> str:
    if df is None or len(df) == 0:
        return "(none)"
    d = df[[c for c in cols if c in df]] if cols else df
    return table(d, fmt)


def render_findings(findings: list[dict[str, Any]], fmt: str) -> str:
    """The ranked "Findings" section."""
    lines = [_title("Findings", fmt), ""]
    if not findings:
        lines.append("No findings: nothing costly detected.")
    for i, f in enumerate(findings, 1):
        who = "all ranks" if f.get("rank") is None else f"rank {f['rank']}"
        cost = f["evidence"].get("cost_us")
        cost_s = f"{cost:.0f} µs/step" if cost is not None else "cost unknown"
        if fmt == "markdown":
            lines.append(f"{i}. **{f['severity']}** `{f['code']}` ({who}, {cost_s}): {f['message']}")
        else:
            lines.append(f"{i}. [{f['severity']}] {f['code']} ({who}, {cost_s})\n   {f['message']}")
    return "\n".join(lines)


def render_explain(out: dict[str, Any], fmt: str = "table", per_step: bool = False) -> str:
    """Findings, graph-break impact, bucket timeline (last step) and manifest check."""
    return "\n\n".join([render_findings(out.get("findings") or [], fmt), render_details(out, fmt, per_step)])


def graph_break_summary(gb: pd.DataFrame) -> pd.DataFrame:
    """Per rank: the graph-break table averaged over its steps (``steps`` counted,
    ``compile_skipped_steps``: steps where compilation was requested but nothing compiled ran)."""
    num = [c for c in _GB_SHOWN if c not in ("rank", "step", "compile_skipped")]
    g = gb.groupby("rank", sort=True)
    out = g[num].mean()  # cost_per_break_us: mean over the steps that had breaks (NaN elsewhere)
    out.insert(0, "steps", g["step"].size())
    out["compile_skipped_steps"] = g["compile_skipped"].sum().astype(int)
    return out.reset_index()


def render_details(out: dict[str, Any], fmt: str = "table", per_step: bool = False) -> str:
    """Graph-break impact, bucket timeline (last step) and manifest check (no findings).

    Graph breaks are shown per rank (mean per step) unless ``per_step``, which lists every step.
    """
    parts: list[str] = []
    gb = out.get("graph_breaks")
    if gb is not None and len(gb) and (gb["compile_requested"].any()):
        if per_step:
            parts += [_title("Compiled regions and graph breaks (per rank and step)", fmt), _table(gb, fmt, _GB_SHOWN)]
        else:
            parts += [_title("Compiled regions and graph breaks (per rank, mean per step; --per-step lists steps)",
                             fmt), _table(graph_break_summary(gb), fmt)]
    tl = out.get("bucket_timeline")
    if tl is not None and len(tl):
        last = tl[tl["step"] == tl["step"].max()].assign(bytes=lambda d: d["bytes"] / 1e6).rename(
            columns={"bytes": "MB"})
        cols = tuple("MB" if c == "bytes" else c for c in _TIMELINE_SHOWN)
        parts += [_title(f"Bucket timeline, step {int(tl['step'].max())} (µs from backward start)", fmt),
                  _table(last, fmt, cols)]
    chk = out.get("manifest_check")
    if isinstance(chk, pd.DataFrame) and len(chk):
        parts += [_title("run.json check", fmt), _table(chk, fmt)]
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
