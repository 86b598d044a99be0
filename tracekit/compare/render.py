"""Render the dict of :func:`tracekit.compare.diff.diff_runs` as text (``tracekit diff``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from tracekit.report.explain_render import frame_text, heading


def render_diff(d: dict[str, Any], fmt: str = "table") -> str:
    """The tables of :func:`tracekit.compare.diff.diff_runs` plus findings that appear/disappear."""
    parts = []
    for key, title in (("summary", "Run summary"), ("ranks", "Per rank (mean per step)"),
                       ("buckets", "Buckets"), ("compile", "Compilation")):
        df = d.get(key)
        if isinstance(df, pd.DataFrame):
            parts += [heading(title, fmt), frame_text(df.replace({np.nan: None}), fmt)]
    for key, title in (("findings_new", "Findings only in B"), ("findings_gone", "Findings only in A")):
        fs = d.get(key) or []
        parts.append(heading(title, fmt))
        parts.append("\n".join(f"- {f['code']} ({'all ranks' if f.get('rank') is None else 'rank ' + str(f['rank'])})"
                               f": {f['message']}" for f in fs) or "(none)")
    return "\n\n".join(parts)
