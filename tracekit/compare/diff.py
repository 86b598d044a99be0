"""Compare two analysed runs: ``tracekit diff RUN_A RUN_B``.

:func:`diff_runs` returns tables in long form with columns ``metric``, ``a``,
``b``, ``delta`` (= b − a) and ``delta_pct`` (= 100 · (b − a) / |a|; NaN when a is
0 or missing), plus the findings that appear or disappear:

- ``summary``: unprofiled step time p50/p95 in ms (``run.json`` timings, overall =
  slowest rank per step) and the profiled step (mean of ``steps.step_us``, the step on the device's clock).
- ``ranks`` (with a ``rank`` column): per step means of compute, comm, exposed
  comm, idle (``*_per_step_us``), overlap %, and ``wait_per_step_us``.
- ``buckets``: backward allreduces per step, mean and total bucket MB per step.
- ``compile``: compiled regions, forward/backward subgraphs, DDPOptimizer splits and
  real graph breaks per step (from the ``graph_breaks`` table),
  and from ``run.json``: dynamo graph breaks, graph count, compile time (s, max over ranks).
- ``findings_new`` / ``findings_gone``: findings (by code and rank) only in B / only in A.
- ``notes``: what makes the per-rank rows not pair up (no rank in common, different world sizes).
- with ``by="module"`` / ``by="op"``: ``by_module`` / ``by_op``, the two runs' ``modules`` / ``ops`` tables side
  by side (:mod:`tracekit.compare.breakdown`), and ``breakdown_findings``: ``compiled_slower_than_eager``
  (A eager, B compiled, ``--by module``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from tracekit.analyses.findings import as_dicts
from tracekit.compare.breakdown import compare_modules, compare_ops, slower_findings
from tracekit.compare.core import DIFF_COLUMNS, as_number, long_form
from tracekit.traces.manifest import Manifest

#: steps-table column -> its name here (a mean per step over the rank's steps)
RANK_METRICS = {"compute_us": "compute_per_step_us", "comm_us": "comm_per_step_us", "overlap_pct": "overlap_pct",
                "exposed_comm_us": "exposed_comm_per_step_us", "idle_us": "idle_per_step_us"}
GB_METRICS = ("regions", "fwd_subgraphs", "bwd_subgraphs", "ddp_splits", "real_breaks")


def _step_ms(manifest: Manifest | None, q: str) -> float:
    v = manifest.step_time_s(q) if manifest else None
    return as_number(v) * 1000.0 if v is not None else float("nan")


def _per_rank(res: Any) -> pd.DataFrame:
    """Per rank: the means over its steps of the steps table's figures, as the ranks table gives them (its
    ``*_per_step_us`` columns, the figures findings quote), and the wait per step."""
    s = res.steps
    cols = [c for c in RANK_METRICS if c in s]
    m = (s.groupby("rank")[cols].mean() if len(s) else pd.DataFrame(columns=cols)).rename(columns=RANK_METRICS)
    r = res.ranks.set_index("rank") if len(res.ranks) else pd.DataFrame()
    shared = [c for c in m.columns if c in r]
    if shared:  # one source for the figures both tables hold
        m[shared] = r.loc[m.index, shared]
    if len(r) and "wait_total_us" in r:
        m["wait_per_step_us"] = r["wait_total_us"] / r["steps"].where(r["steps"] > 0)
    return m


def _buckets(res: Any) -> dict[str, float]:
    b = res.buckets
    if b is None or len(b) == 0:
        return {"allreduces_per_step": 0.0, "bucket_mb_mean": float("nan"), "bucket_mb_per_step": 0.0}
    per = b.groupby(["rank", "step"])["bytes"].agg(["size", "sum"])
    return {"allreduces_per_step": float(per["size"].mean()), "bucket_mb_mean": float(b["bytes"].mean() / 1e6),
            "bucket_mb_per_step": float(per["sum"].mean() / 1e6)}


def _compile(res: Any, manifest: Manifest | None) -> dict[str, float]:
    gb = res.tables.get("graph_breaks")
    out = {f"{m}_per_step": (float(gb[m].mean()) if isinstance(gb, pd.DataFrame) and len(gb) else float("nan"))
           for m in GB_METRICS}
    per = manifest.compile.per_rank if manifest and manifest.compile else []

    def mx(vals: list[Any]) -> float:
        ok = [v for v in map(as_number, vals) if np.isfinite(v)]
        return max(ok) if ok else float("nan")

    out["dynamo_graph_breaks"] = mx([p.graph_breaks.total if p.graph_breaks else None for p in per])
    out["dynamo_graph_count"] = mx([p.graph_count for p in per])
    out["compile_time_s"] = mx([p.compile_time_s for p in per])
    return out


def _findings(res: Any) -> list[dict[str, Any]]:
    f = res.tables.get("findings")
    return as_dicts(f) if f is not None else []


def _fkey(f: dict[str, Any]) -> tuple[str, Any]:
    return (f.get("code"), f.get("rank"))


def diff_runs(a: Any, b: Any, manifest_a: Manifest | None = None,
              manifest_b: Manifest | None = None, by: str | None = None) -> dict[str, Any]:
    """Side-by-side tables of two :class:`~tracekit.analyses.registry.AnalysisResult` (see module doc);
    ``by``: also ``"module"`` or ``"op"``."""
    step_a = float(a.steps["step_us"].mean()) if len(a.steps) else float("nan")
    step_b = float(b.steps["step_us"].mean()) if len(b.steps) else float("nan")
    summary = long_form([("step_p50_ms (unprofiled)", _step_ms(manifest_a, "p50"), _step_ms(manifest_b, "p50")),
                     ("step_p95_ms (unprofiled)", _step_ms(manifest_a, "p95"), _step_ms(manifest_b, "p95")),
                     ("profiled_step_mean_us (steps.step_us)", step_a, step_b)])
    ra, rb = _per_rank(a), _per_rank(b)
    frames = []
    for rank in sorted(set(ra.index) | set(rb.index)):
        pairs = [(m, ra.loc[rank, m] if rank in ra.index and m in ra else np.nan,
                  rb.loc[rank, m] if rank in rb.index and m in rb else np.nan) for m in (*RANK_METRICS.values(), "wait_per_step_us")]
        frames.append(long_form(pairs).assign(rank=int(rank)))
    ranks = (pd.concat(frames, ignore_index=True)[["rank", *DIFF_COLUMNS]] if frames
             else pd.DataFrame(columns=["rank", *DIFF_COLUMNS]))
    ba, bb = _buckets(a), _buckets(b)
    ca, cb = _compile(a, manifest_a), _compile(b, manifest_b)
    fa = {_fkey(f): f for f in _findings(a)}
    fb = {_fkey(f): f for f in _findings(b)}
    out = {
        "notes": _rank_notes(a, b),
        "summary": summary,
        "ranks": ranks,
        "buckets": long_form([(k, ba[k], bb[k]) for k in ba]),
        "compile": long_form([(k, ca[k], cb[k]) for k in ca]),
        "findings_new": [fb[k] for k in fb if k not in fa],
        "findings_gone": [fa[k] for k in fa if k not in fb],
    }
    if by is not None:
        out.update(breakdown(a, b, manifest_a, manifest_b, by, step_b))
        out["notes"] += out.pop("breakdown_notes")
    return out


BREAKDOWNS = {"module": ("modules", compare_modules), "op": ("ops", compare_ops)}


def _dynamo(manifest: Manifest | None) -> str | None:
    cfg = getattr(manifest, "config", None) if manifest is not None else None
    return cfg.get("dynamo") if isinstance(cfg, dict) else getattr(cfg, "dynamo", None)


def breakdown(a: Any, b: Any, manifest_a: Manifest | None, manifest_b: Manifest | None, by: str,
              step_b_us: float | None = None) -> dict[str, Any]:
    """``{"by_<by>": table or None, "breakdown_findings": [...], "breakdown_notes": [...]}``: the runs'
    ``modules`` (``by="module"``) or ``ops`` (``by="op"``) tables side by side; a run without the table gives
    no rows and a note naming it."""
    table, fn = BREAKDOWNS[by]
    ta, tb = a.tables.get(table), b.tables.get(table)
    notes = [f"run {side} has no `{table}` table: no per-{by} comparison" for side, t in (("A", ta), ("B", tb))
             if t is None]
    if notes:
        return {f"by_{by}": None, "breakdown_findings": [], "breakdown_notes": notes}
    rows = fn(ta, tb)
    found: list[dict[str, Any]] = []
    da, db = _dynamo(manifest_a), _dynamo(manifest_b)
    if by == "module":
        if da == "none" and db not in (None, "none"):
            step = step_b_us if step_b_us is not None and np.isfinite(step_b_us) else None
            found = [f.row() for f in slower_findings(rows, step)]
        else:
            notes.append(f"compiled_slower_than_eager needs A eager and B compiled (run.json config.dynamo: "
                         f"A {da or 'unknown'}, B {db or 'unknown'}); b_slower still flags the rows")
    return {f"by_{by}": rows, "breakdown_findings": found, "breakdown_notes": notes}


def _rank_notes(a: Any, b: Any) -> list[str]:
    """What makes the per-rank rows not pair up: no rank in common, or runs of different world sizes."""
    ra, rb = list(a.meta.get("ranks") or []), list(b.meta.get("ranks") or [])
    wa, wb = a.meta.get("world_size"), b.meta.get("world_size")
    notes = []
    if ra and rb and not set(ra) & set(rb):
        notes.append(f"A and B have no rank in common (A: ranks {ra}, B: ranks {rb}): their per-rank rows do not "
                     "pair up, and the run-level figures compare different ranks")
    if wa and wb and wa != wb:
        notes.append(f"A ran on {wa} ranks, B on {wb}: a change of world size changes every per-rank figure")
    return notes


def diff_paths(run_a: str, run_b: str, by: str | None = None) -> dict[str, Any]:
    """Load and analyze two run folders (as ``tracekit analyze`` does, findings included) and diff them."""
    from tracekit.runner.pipeline import analyze_paths

    a, b = analyze_paths([run_a]), analyze_paths([run_b])
    return diff_runs(a, b, a.meta.get("manifest"), b.meta.get("manifest"), by=by)
