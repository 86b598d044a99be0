"""The dict of :func:`tracekit.compare.diff.diff_runs` for the output path (``tracekit diff``): text, JSON, CSV."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from tracekit.analyses.findings import finding_lines
from tracekit.jsonable import jsonable
from tracekit.report.explain_render import frame_text, heading
from tracekit.report.output import Output

#: the long-form tables of a diff, in report order, with their titles
DIFF_TABLES = (("summary", "Run summary"), ("ranks", "Per rank (mean per step)"), ("buckets", "Buckets"),
               ("compile", "Compilation"))


#: the per-module / per-op tables of ``diff --by``, with their titles
BREAKDOWN_TABLES = (("by_module", "Per module, A next to B (µs, kernels, bytes per step; saving = A − B)"),
                    ("by_op", "Per op, A next to B (µs, calls, bytes per step; saving = A − B)"))


def render_diff(d: dict[str, Any], fmt: str = "table") -> str:
    """The tables of :func:`tracekit.compare.diff.diff_runs` plus findings that appear/disappear; with
    ``--by``, the per-module or per-op table and its findings after them."""
    parts = []
    for key, title in DIFF_TABLES:
        df = d.get(key)
        if isinstance(df, pd.DataFrame):
            parts += [heading(title, fmt), frame_text(df.replace({np.nan: None}), fmt)]
    parts += _breakdown_parts(d, fmt)
    for key, title in (("findings_new", "Findings only in B"), ("findings_gone", "Findings only in A")):
        fs = d.get(key) or []
        parts.append(heading(title, fmt))
        parts.append("\n".join(f"- {f['code']} ({'all ranks' if f.get('rank') is None else 'rank ' + str(f['rank'])})"
                               f": {f['message']}" for f in fs) or "(none)")
    notes = [f"note: {n}" for n in d.get("notes") or []]
    return "\n\n".join(parts + (["\n".join(notes)] if notes else []))


def _breakdown_parts(d: dict[str, Any], fmt: str) -> list[str]:
    parts = []
    for key, title in BREAKDOWN_TABLES:
        if key not in d:
            continue
        df = d.get(key)
        parts.append(heading(title, fmt))
        if not isinstance(df, pd.DataFrame):
            parts.append("(not available: see the notes)")
            continue
        slower = int(df["b_slower"].sum())
        both = df[df["presence"] == "both"]
        shown = df.assign(module=df["module"].replace({"": "(root)"})) if "module" in df else df
        parts.append(frame_text(shown.replace({np.nan: None}), fmt))
        parts.append(f"{slower} of {len(both)} {key[3:]}s present in both runs are slower in B; "
                     f"{int((df['presence'] == 'a only').sum())} only in A, {int((df['presence'] == 'b only').sum())} "
                     f"only in B")
    if any(k in d for k, _ in BREAKDOWN_TABLES):
        parts.append(heading("Compiled against eager", fmt))
        parts.append("\n".join(finding_lines(d.get("breakdown_findings") or [], markdown=fmt == "markdown")))
    return parts


def diff_frame(d: dict[str, Any]) -> pd.DataFrame:
    """Every long-form table of the diff stacked, with a ``table`` column naming it (``--format csv``); with
    ``--by``, the per-module or per-op table alone (its columns differ)."""
    for key, _ in BREAKDOWN_TABLES:
        if isinstance(df := d.get(key), pd.DataFrame):
            return df.assign(table=key)[["table", *df.columns]]
    parts = [df.assign(table=key) for key, _ in DIFF_TABLES if isinstance(df := d.get(key), pd.DataFrame)]
    if not parts:
        return pd.DataFrame(columns=["table"])
    out = pd.concat(parts, ignore_index=True)
    if "rank" in out:  # only the per-rank rows have one
        out["rank"] = out["rank"].astype("Int64")
    return out[["table", *[c for c in out.columns if c != "table"]]]


def diff_output(run_a: str, run_b: str, d: dict[str, Any]) -> Output:
    """``tracekit diff``'s result for every format: text (with the two runs named), the JSON document
    (``run_a``, ``run_b`` and every key of ``d``), the stacked tables as CSV."""
    return Output(text=lambda fmt: f"A: {run_a}\nB: {run_b}\n\n" + render_diff(d, fmt),
                  document=lambda: jsonable({"run_a": run_a, "run_b": run_b, **d}), frame=lambda: diff_frame(d))
