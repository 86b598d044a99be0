"""Render an AnalysisResult as text tables, markdown, JSON or CSV."""

from __future__ import annotations

import io
import math
from typing import Any

import msgspec
import numpy as np
import pandas as pd
from tabulate import tabulate

from tracekit.analyses.run import AnalysisResult
from tracekit.report import tables
from tracekit.report.fmt import table
from tracekit.report.explain_render import render_details, render_findings

CSV_TABLES = ("ranks", "steps", "collectives", "buckets", "instances", "waits")


def _fmt_df(df: pd.DataFrame, fmt: str) -> str:
    return table(df, fmt)


def _section(title: str, body: str, fmt: str) -> str:
    if fmt == "markdown":
        return f"## {title}\n\n{body}\n"
    return f"{title}\n{'=' * len(title)}\n{body}\n"


def _kv(rows: list[tuple[str, Any]], fmt: str) -> str:
    rows = [(k, v) for k, v in rows if v not in (None, "", [], {})]
    tf = "github" if fmt == "markdown" else "plain"
    return tabulate(rows, headers=["", ""] if fmt == "markdown" else (), tablefmt=tf)


def step_ranges(steps: list[int]) -> str:
    """``[2, 3, 4, 7, 9, 10]`` -> ``"2-4, 7, 9-10 (6 steps)"``: long runs stay one line."""
    if not steps:
        return ""
    steps = sorted(set(steps))
    runs: list[str] = []
    lo = prev = steps[0]
    for s in [*steps[1:], None]:
        if s is not None and s == prev + 1:
            prev = s
            continue
        runs.append(str(lo) if lo == prev else f"{lo}-{prev}")
        if s is not None:
            lo = prev = s
    return f"{', '.join(runs)} ({len(steps)} step{'s' if len(steps) != 1 else ''})"


def summary_rows(res: AnalysisResult) -> list[tuple[str, Any]]:
    """Key facts of the run for the summary section."""
    m = res.meta
    rows: list[tuple[str, Any]] = [
        ("ranks", f"{len(m['ranks'])} of world size {m['world_size']}"
         + (f" (missing {m['missing_ranks']})" if m.get("missing_ranks") else "")),
        ("backend", m.get("backend")),
        ("nccl", m.get("nccl_version")),
        ("gpus", ", ".join(m.get("gpus") or [])),
        ("profiled steps", step_ranges(m.get("steps") or []) or "none found"),
        ("pre-window kernels", m.get("pre_window_kernels") if m.get("device_metrics") else None),
        ("clock offsets (us)", {k: round(v, 1) for k, v in m["clock_offsets_us"].items()} if m.get("clock_aligned")
         else None),
        ("skipped files", "; ".join(f"{s['path']}: {s['problem']}" for s in m.get("skipped_files") or [])),
    ]
    rows += manifest_rows(m.get("manifest") or {})
    return rows


def manifest_rows(man: dict[str, Any]) -> list[tuple[str, Any]]:
    """Config, unprofiled step-time percentiles and compile facts from a ``run.json``."""
    if not man:
        return []
    rows: list[tuple[str, Any]] = []
    cfg = man.get("config") or {}
    if cfg:
        keys = ("model", "parallel", "dynamo", "optimize_ddp_resolved", "amp", "batch_size", "bucket_cap_mb",
                "device", "width", "depth")
        rows.append(("config", ", ".join(f"{k}={cfg[k]}" for k in keys
                                          if cfg.get(k) not in (None, "", "none", False))))
    overall = (man.get("timings") or {}).get("overall") or {}
    spi = overall.get("sec_per_iter") or {}
    if spi:
        rows.append(("unprofiled step (all ranks)", ", ".join(f"{k} {v * 1000:.2f} ms" for k, v in spi.items()
                                                           if isinstance(v, (int, float)))))
    eps = (overall.get("examples_per_sec") or {}).get("p50")
    if isinstance(eps, (int, float)):
        rows.append(("examples/s (p50)", f"{eps:,.0f}"))
    per_rank = (man.get("compile") or {}).get("per_rank") or []
    for c in per_rank[:1] if isinstance(per_rank, list) else []:
        if not isinstance(c, dict) or not c.get("enabled"):
            continue
        gb = c.get("graph_breaks") or {}
        facts = [f"graphs={c.get('graph_count')}", f"graph breaks={gb.get('total')} (model {gb.get('model')})",
                 f"DDPOptimizer splits={(c.get('ddp_optimizer') or {}).get('intended_splits')}",
                 f"recompiles={(c.get('recompiles') or {}).get('count')}",
                 f"skipped frames={len(c.get('skipped_frames') or [])}",
                 f"compile time={c.get('compile_time_s')} s"]
        rows.append((f"compile (rank {c.get('rank', 0)})", ", ".join(facts)))
    return rows


def render_text(res: AnalysisResult, fmt: str = "table", per_step: bool = False) -> str:
    """The default report: summary, breakdown, collectives, buckets, waits (+ steps, findings, extras)."""
    out = []
    if fmt == "markdown":
        out.append("# tracekit analysis\n")
    out.append(_section("Run summary", _kv(summary_rows(res), fmt), fmt))
    for note in res.meta.get("notes") or []:
        out.append(f"note: {note}\n")
    findings = res.extra.get("findings")
    if findings is not None:
        out.append(render_findings(findings, fmt) + "\n")
    cols = ["rank", "steps", "step_us", "compute_us", "comm_us", "overlap_us", "exposed_comm_us", "overlap_pct",
            "memory_us", "idle_us", "wait_us", "pre_window_kernels"]
    ranks = res.ranks[[c for c in cols if c in res.ranks.columns]]
    hta = res.extra.get("hta")
    if isinstance(hta, pd.DataFrame) and not hta.empty:
        # the compact comparison; --format json carries every HTA column
        keep = [c for c in ("rank", "hta_overlap_pct", "hta_compute_pct", "hta_idle_pct", "hta_error") if c in hta]
        ranks = ranks.merge(hta[keep], on="rank", how="left")
    out.append(_section("Per-rank breakdown (GPU time over the whole trace window, us)", _fmt_df(ranks, fmt), fmt))
    if per_step:
        out.append(_section("Per-step breakdown (work launched in each ProfilerStep, us)", _fmt_df(res.steps, fmt), fmt))
    out.append(_section("Collectives (launched in the window)", _fmt_df(tables.collective_summary(res), fmt), fmt))
    out.append(_section("DDP buckets (backward allreduces, mean over steps)", _fmt_df(tables.bucket_summary(res), fmt),
                        fmt))
    out.append(_section("Cross-rank wait", _fmt_df(tables.wait_summary(res), fmt), fmt))
    skew = tables.top_skew(res)
    if not skew.empty:
        out.append(_section("Largest arrival skew", _fmt_df(skew, fmt), fmt))
    if res.extra:
        details = render_details(res.extra, fmt, per_step)
        if details:
            out.append(details + "\n")
    for title, text in (res.extra.get("sections") or {}).items():
        out.append(_section(title, text, fmt))
    return "\n".join(out).rstrip() + "\n"


def _clean(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating,)):
        f = float(v)
        return f if math.isfinite(f) else None
    if isinstance(v, np.bool_):
        return bool(v)
    if isinstance(v, pd.DataFrame):
        return records(v)
    if isinstance(v, dict):
        return {str(k): _clean(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_clean(x) for x in v]
    if v is pd.NA or v is pd.NaT:
        return None
    return v


def jsonable(v: Any) -> Any:
    """Any mix of dicts, lists, DataFrames and numpy scalars -> JSON-safe Python (NaN -> null)."""
    return _clean(v)


def records(df: pd.DataFrame) -> list[dict[str, Any]]:
    """DataFrame -> list of JSON-safe dicts (NaN -> null, numpy scalars -> Python)."""
    if df is None or df.empty:
        return []
    obj = df.astype(object).where(df.notna(), None)
    return [{k: _clean(v) for k, v in row.items()} for row in obj.to_dict(orient="records")]


def to_json_dict(res: AnalysisResult) -> dict[str, Any]:
    """The JSON contract: ``meta``, ``ranks``, ``steps``, ``collectives``, ``buckets`` (+ extras)."""
    doc: dict[str, Any] = {
        "meta": _clean(res.meta),
        "ranks": records(res.ranks),
        "steps": records(res.steps),
        "collectives": records(res.collectives),
        "buckets": records(res.buckets),
        "instances": records(res.instances),
    }
    for k, v in res.extra.items():
        if k != "sections":
            doc[k] = _clean(v)
    return doc


def render(res: AnalysisResult, fmt: str = "table", per_step: bool = False, table: str = "ranks") -> str:
    """Render in ``fmt``: table | markdown | json | csv (``table`` picks the CSV table)."""
    if fmt == "json":
        return msgspec.json.format(msgspec.json.encode(to_json_dict(res)).decode(), indent=2)
    if fmt == "csv":
        df = getattr(res, table) if table in CSV_TABLES else res.ranks
        buf = io.StringIO()
        df.to_csv(buf, index=False)
        return buf.getvalue()
    return render_text(res, fmt, per_step)
