"""Summaries derived from an AnalysisResult for display (pure DataFrame -> DataFrame)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tracekit.analyses.run import AnalysisResult


def collective_summary(res: AnalysisResult) -> pd.DataFrame:
    """Per rank, collective and phase: count, total bytes, total/mean duration, exposed, mean busbw.

    Only collectives launched inside the window (pre-window kernels are counted in the run summary).
    """
    c = res.collectives
    if c.empty:
        return pd.DataFrame()
    c = c[~c["pre_window"].astype(bool)]
    g = c.groupby(["rank", "coll_name", "phase"], dropna=False, observed=True)
    def total(x: pd.Series) -> float:  # NaN when nothing is known (CPU traces), not 0
        return x.sum(min_count=1)

    out = g.agg(count=("dur_us", "size"), total_mb=("bytes", lambda x: total(x) / 1e6),
                total_us=("dur_us", total), mean_us=("dur_us", "mean"),
                exposed_us=("exposed_us", total), busbw_gbps=("busbw_gbps", "mean"))
    return out.reset_index()


def bucket_summary(res: AnalysisResult) -> pd.DataFrame:
    """Per rank and bucket index: mean over steps of bytes, launch offset, duration, exposed time, busbw."""
    b = res.buckets
    if b.empty:
        return pd.DataFrame()
    g = b.groupby(["rank", "bucket"])
    out = g.agg(steps=("step", "nunique"), mb=("bytes", lambda x: x.mean() / 1e6),
                launch_offset_us=("launch_offset_us", "mean"), start_offset_us=("start_offset_us", "mean"),
                dur_us=("dur_us", "mean"), exposed_us=("exposed_us", "mean"), busbw_gbps=("busbw_gbps", "mean"))
    return out.reset_index()


def wait_summary(res: AnalysisResult) -> pd.DataFrame:
    """Per rank: total wait, its share of the rank's comm time, and how often the rank arrived last."""
    r = res.ranks
    if r.empty or r["wait_us"].isna().all():
        return pd.DataFrame()
    out = r[["rank", "comm_us", "wait_us", "last_count"]].copy()
    out["wait_pct_of_comm"] = 100.0 * out["wait_us"] / out["comm_us"].where(out["comm_us"] > 0)
    n = len(res.instances)
    out["matched"] = n
    out["last_pct"] = 100.0 * out["last_count"] / n if n else np.nan
    return out[["rank", "matched", "wait_us", "wait_pct_of_comm", "last_count", "last_pct"]]


def top_skew(res: AnalysisResult, n: int = 5) -> pd.DataFrame:
    """The ``n`` matched collectives with the largest arrival skew."""
    i = res.instances
    if i.empty:
        return pd.DataFrame()
    cols = ["pg_name", "step", "step_seq", "coll_name", "bytes", "skew_us", "straggler", "transfer_us", "busbw_gbps"]
    return i.sort_values("skew_us", ascending=False).head(n)[cols]
