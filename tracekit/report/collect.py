"""Gather, from loaded traces and their analysis, the tables the figures of :mod:`.chart_data` take.

The only report module that reads :class:`~tracekit.traces.traceset.RankTrace` directly:
the timeline draws raw kernel intervals and CPU ranges that the analysis tables summarise.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from tracekit.analyses import graphbreaks
from tracekit.analyses.classify import COMPUTE, classify_gpu
from tracekit.analyses.registry import AnalysisResult
from tracekit.errors import ConfigError
from tracekit.report import chart_data
from tracekit.traces import loader
from tracekit.traces.traceset import RankTrace, TraceSet


def _rows(df: Any, rank: int, step: int) -> pd.DataFrame:
    if not isinstance(df, pd.DataFrame) or df.empty:
        return pd.DataFrame(columns=list(df.columns) if isinstance(df, pd.DataFrame) else [])
    return df[(df["rank"] == rank) & (df["step"] == step)]


def _origin(traces: list[RankTrace], step: int, offsets_ns: dict[int, int]) -> int:
    starts = []
    for rt in traces:
        st = rt.steps[rt.steps["step"] == step]
        if len(st):
            starts.append(int(st["ts_ns"].iloc[0]) - offsets_ns.get(rt.rank, 0))
    return min(starts) if starts else 0


def rank_lanes(rt: RankTrace, res: AnalysisResult, step: int, origin_ns: int) -> chart_data.RankLanes:
    """Every timeline lane of one rank in ``step`` (times relative to ``origin_ns`` on the aligned clock)."""
    out = chart_data.RankLanes(rank=rt.rank)
    org = origin_ns + int(round(1000.0 * (res.meta.get("clock_offsets_us") or {}).get(rt.rank, 0.0)))
    if rt.has_gpu_activity:
        g = rt.gpu
        cls = classify_gpu(rt, res.meta.get("comm_pattern")).to_numpy().astype(object)
        in_step = (g["step"] == step).to_numpy()
        out.lanes = chart_data.class_lanes(g[in_step], cls[in_step], org)
        comp = cls == COMPUTE
        cover = (g["ts_ns"].to_numpy()[comp], g["end_ns"].to_numpy()[comp])
        out.buckets = chart_data.bucket_spans(_rows(res.tables.get("bucket_timeline"), rt.rank, step), cover, org)
    ops = graphbreaks.compiled_ops(rt)
    ops = ops[ops["step"] == step]
    bnd = _rows(res.tables.get("break_boundaries"), rt.rank, step)
    if len(ops):
        out.subgraphs, out.regions, out.boundaries = chart_data.compiled_marks(ops, bnd, org)
    return out


def with_events(traces: TraceSet, ranks: list[int]) -> TraceSet:
    """``traces`` with the events of ``ranks`` loaded: ranks that arrive as headers only (the engine
    path of :func:`tracekit.runner.pipeline.load_and_analyze` keeps the events on its workers) are
    decoded here, from their files; the other ranks are left as they are."""
    out = dict(traces.ranks)
    for r in ranks:
        rt = out.get(r)
        if rt is None or rt.n_events or not rt.has_gpu_activity:
            continue
        full = loader.read_rank(rt.path)
        full.rank = r
        out[r] = full
    return replace(traces, ranks=out)


def timeline(traces: TraceSet, res: AnalysisResult, step: int | None = None,
             ranks: list[int] | None = None) -> chart_data.Timeline | None:
    """The per-rank timeline of ``step`` (default: :func:`chart_data.pick_step`) for ``ranks`` (default:
    every rank of ``traces``); None without steps."""
    if step is None:
        step = chart_data.pick_step(res.steps)
    elif step not in available_steps(res):
        raise ConfigError(f"--step {step}: no such profiled step (the traces have "
                          f"{', '.join(map(str, available_steps(res))) or 'none'})")
    if step is None:
        return None
    offsets = {int(r): int(round(v * 1000.0)) for r, v in (res.meta.get("clock_offsets_us") or {}).items()}
    drawn = [rt for rt in sorted(traces, key=lambda r: r.rank) if ranks is None or rt.rank in ranks]
    origin = _origin(drawn, step, offsets)
    return chart_data.Timeline(step=int(step), origin_ns=origin, ranks=[rank_lanes(rt, res, step, origin) for rt in drawn])


def available_steps(res: AnalysisResult) -> list[int]:
    """Profiled steps that can be shown."""
    s = res.steps
    return sorted(int(x) for x in np.unique(s["step"])) if s is not None and len(s) else []
