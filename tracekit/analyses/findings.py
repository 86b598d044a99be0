"""Ranked findings: plain-English verdicts with their evidence, most costly first.

Each finding is ``{"code", "severity", "rank", "message", "evidence"}``;
``evidence["cost_us"]`` is the estimated cost in µs per step (``None`` when it
cannot be estimated from the traces, e.g. a whole model that ran uncompiled).
Severity is the cost as a share of the mean step: ≥ :data:`SEVERITY_HIGH_PCT`
high, ≥ :data:`SEVERITY_MEDIUM_PCT` medium, else low; ``compile_skipped`` is
always high. A finding that fires on every rank is reported once with
``rank = None`` (evidence of the costliest rank, ``ranks`` listing them all).

Codes (stable): ``allreduce_after_backward``, ``backward_comm_exposed``, ``rank_waiting``,
``graph_break``, ``compile_skipped``, ``exposed_first_bucket``, ``exposed_last_bucket``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from tracekit.analyses.collectives import gradient_allreduces, manifest_tp
from tracekit.analyses.registry import Column, RunContext, Table, View
from tracekit.analyses.timeline import rank_compile_facts

#: share of a rank's backward allreduces that must start after its last backward
#: compute kernel: "nearly all", so one late bucket in an overlapped run never fires
AFTER_BACKWARD_SHARE = 0.9
#: a rank "waits significantly" when this % of its communication kernel time is waiting for a peer
#: (NCCL kernels spin while peers arrive; below ~20% the skew is launch jitter)
WAIT_SHARE_PCT = 20.0
#: ...and the wait is at least this many µs per step (tiny runs have noisy shares)
WAIT_MIN_US_PER_STEP = 100.0
#: a bucket is "mostly exposed" when this share of its allreduce overlaps no compute
EXPOSED_BUCKET_SHARE = 0.5
#: ...and its exposed time is at least this % of the step (a 16 KB bucket costs nothing)
EXPOSED_BUCKET_MIN_STEP_PCT = 2.0
#: backward allreduces are "mostly exposed" when less than this % of their time overlaps compute
LOW_OVERLAP_PCT = 25.0
#: ...and the exposed time is at least this % of the step
LOW_OVERLAP_MIN_STEP_PCT = 5.0
#: severity thresholds: cost as % of the mean step time
SEVERITY_HIGH_PCT = 10.0
SEVERITY_MEDIUM_PCT = 3.0
_SEVERITY_ORDER = {"high": 0, "medium": 1, "low": 2}


def _severity(cost_us: float | None, step_us: float) -> str:
    if cost_us is None or not np.isfinite(step_us) or step_us <= 0:
        return "high"
    pct = 100.0 * cost_us / step_us
    return "high" if pct >= SEVERITY_HIGH_PCT else "medium" if pct >= SEVERITY_MEDIUM_PCT else "low"


def _r(x: Any, nd: int = 1) -> Any:
    return None if x is None or (isinstance(x, float) and not np.isfinite(x)) else round(float(x), nd)


def _finding(code: str, rank: int | None, message: str, cost_us: float | None, step_us: float,
             **evidence: Any) -> dict[str, Any]:
    ev = {"cost_us": _r(cost_us), "step_us": _r(step_us), **evidence}
    return {"code": code, "severity": _severity(cost_us, step_us), "rank": rank, "message": message, "evidence": ev}


def _step_means(result: Any) -> dict[int, float]:
    """Mean CPU step time per rank (µs), from the ``steps`` table: one groupby for all ranks."""
    s = result.steps
    if s is None or not len(s) or "rank" not in s:
        return {}
    return {int(r): float(v) for r, v in s.groupby("rank")["step_us"].mean().items()}


def _step_us(result: Any, rank: int, means: dict[int, float] | None = None) -> float:
    means = _step_means(result) if means is None else means
    return means.get(int(rank), float("nan"))


# Each finding below aggregates its table per rank with one groupby over all ranks, then
# builds a message only for the ranks where it fires: its cost is one pass over the rows,
# not a few pandas calls per rank (which dominated runs of thousands of ranks).


def allreduce_after_backward(result: Any, timeline: pd.DataFrame, gb: pd.DataFrame,
                             manifest: dict[str, Any] | None) -> list[dict[str, Any]]:
    tl = timeline[timeline["bwd_compute_end_ns"] >= 0] if len(timeline) else timeline
    if not len(tl):
        return []
    agg = tl.groupby("rank").agg(steps=("step", "nunique"), n_after=("starts_after_backward", "sum"),
                                 n=("step", "size"), tail=("tail_exposed_us", "sum"))
    agg = agg[agg["n_after"] >= AFTER_BACKWARD_SHARE * agg["n"]]
    bwd_sub = gb.groupby("rank")["bwd_subgraphs"].median() if len(gb) else pd.Series(dtype=float)
    means = _step_means(result)
    out = []
    for rank, a in agg.iterrows():
        steps, n_after, n = int(a["steps"]), int(a["n_after"]), int(a["n"])
        per_step = n / steps
        cost = float(a["tail"] / steps)
        sub = float(bwd_sub.get(rank, 0.0))
        facts = rank_compile_facts(manifest, int(rank))
        why = ""
        if sub == 1:
            od = facts.get("optimize_ddp")
            why = (f": the backward ran as one compiled graph (optimize_ddp={od})" if od is not None
                   else ": the backward ran as one compiled graph (DDPOptimizer off?)")
        who = "all" if n_after == n else f"{n_after} of"
        msg = (f"{who} {per_step:.0f} allreduces per step start after backward compute ends{why}; "
               f"{cost:.0f} µs of communication per step is exposed at the tail")
        out.append(_finding("allreduce_after_backward", int(rank), msg, cost, _step_us(result, rank, means),
                            allreduces_per_step=round(per_step, 1), after_backward=n_after, allreduces=n,
                            bwd_subgraphs_per_step=sub, tail_exposed_us=_r(cost)))
    return out


def rank_waiting(result: Any, *_: Any) -> list[dict[str, Any]]:
    w, r = result.waits, result.ranks
    if w is None or len(w) == 0 or len(r) == 0:
        return []
    agg = w.groupby("rank").agg(steps=("step", "nunique"), wait=("wait_us", "sum"))
    comm = r.drop_duplicates("rank").set_index("rank")["comm_us"].reindex(agg.index).astype(float)
    steps = agg["steps"].clip(lower=1)
    share = (100.0 * agg["wait"] / comm).where(comm.notna() & np.isfinite(comm) & (comm != 0))
    fire = agg[(share >= WAIT_SHARE_PCT) & (agg["wait"] / steps >= WAIT_MIN_US_PER_STEP)].index
    if not len(fire):
        return []
    # who each firing rank waited for: the straggler with the most of its wait
    waited = w[w["rank"].isin(fire) & ~w["is_straggler"].astype(bool)]
    inst = result.instances
    strag = waited.merge(inst[["pg_name", "step", "step_seq", "straggler"]], on=["pg_name", "step", "step_seq"],
                         how="left", suffixes=("", "_i")) if len(inst) else waited.assign(straggler=np.nan)
    by = strag.groupby(["rank", "straggler"])["wait_us"].sum().reset_index()
    by = by.sort_values("wait_us", ascending=False, kind="stable").drop_duplicates("rank")
    top = dict(zip(by["rank"], by["straggler"]))
    means = _step_means(result)
    out = []
    for rank in fire:
        straggler = int(top[rank]) if rank in top else None
        cost = float(agg.at[rank, "wait"] / steps[rank])
        sh, cm = float(share[rank]), float(comm[rank])
        msg = (f"rank {int(rank)} spends {sh:.0f}% of its communication time ({cost:.0f} µs per step) "
               f"waiting for rank {straggler}, which arrives later at the collectives")
        out.append(_finding("rank_waiting", int(rank), msg, cost, _step_us(result, rank, means),
                            wait_share_pct=_r(sh), wait_us_per_step=_r(cost), straggler=straggler,
                            comm_us=_r(cm)))
    return out


def _first_reason(g: pd.DataFrame) -> pd.Series:
    """Per rank, the first non-null ``break_reasons`` (index: the ranks that have one)."""
    r = g[["rank", "break_reasons"]].dropna()
    return r.drop_duplicates("rank").set_index("rank")["break_reasons"]


def graph_break(result: Any, timeline: pd.DataFrame, gb: pd.DataFrame, manifest: Any) -> list[dict[str, Any]]:
    if not len(gb):
        return []
    g = gb[~gb["compile_skipped"].astype(bool)]
    agg = g.groupby("rank").agg(breaks=("real_breaks", "mean"), cost=("break_cost_us", "mean"),
                                regions=("graph_regions", "mean"), splits=("ddp_splits", "mean"),
                                eager=("eager_at_breaks_us", "mean"))
    agg = agg[agg["breaks"] > 0]
    reasons = _first_reason(g)
    means = _step_means(result)
    out = []
    for rank, a in agg.iterrows():
        breaks, cost = float(a["breaks"]), float(a["cost"])
        why = reasons.get(rank)
        reason = f"; dynamo's reasons: {why}" if why is not None else ""
        msg = (f"{breaks:.0f} graph break(s) per step split the model into {a['regions']:.0f} compiled "
               f"regions (DDPOptimizer splits, {a['splits']:.0f} per step, not counted); estimated "
               f"cost {cost / max(breaks, 1):.0f} µs of idle GPU per break, {cost / 1000:.2f} ms per step{reason}")
        out.append(_finding("graph_break", int(rank), msg, cost, _step_us(result, rank, means),
                            breaks_per_step=_r(breaks), ddp_splits_per_step=_r(float(a["splits"])),
                            cost_per_break_us=_r(cost / breaks), eager_at_breaks_us=_r(float(a["eager"])),
                            reasons=why))
    return out


def compile_skipped(result: Any, timeline: pd.DataFrame, gb: pd.DataFrame, manifest: Any) -> list[dict[str, Any]]:
    if not len(gb):
        return []
    agg = gb.assign(sk=gb["compile_skipped"].astype(bool)).groupby("rank").agg(
        skipped=("sk", "sum"), steps=("sk", "size"), lookups=("cache_lookups", "mean"), regions=("regions", "mean"))
    agg = agg[agg["skipped"] > 0]
    means = _step_means(result)
    out = []
    for rank, a in agg.iterrows():
        facts = rank_compile_facts(manifest, int(rank))
        why = [f"{s.get('function')}: {s.get('reason')}" for s in facts.get("skipped_frames") or [] if isinstance(s, dict)]
        src = "run.json asked for torch.compile" if facts.get("enabled") else "the trace shows dynamo cache lookups"
        n_sk, n = int(a["skipped"]), int(a["steps"])
        msg = (f"compilation was requested ({src}) but no compiled graph ran in {n_sk} of {n} steps: "
               f"the model ran eagerly" + (f" (dynamo skipped {'; '.join(why)})" if why else
                                           " (dynamo skipped the frame; a graph break inside a loop does this)"))
        out.append(_finding("compile_skipped", int(rank), msg, None, _step_us(result, rank, means),
                            steps_skipped=n_sk, steps=n, cache_lookups_per_step=_r(float(a["lookups"])),
                            regions_per_step=_r(float(a["regions"])), compiled_subgraphs=0,
                            skipped_frames=why or None))
    return out


def backward_comm_exposed(result: Any, skip_ranks: set[Any]) -> list[dict[str, Any]]:
    """``backward_comm_exposed``: the backward allreduces barely overlap compute, although they do not
    all start after backward (that case is ``allreduce_after_backward``). Typical of a python_reducer /
    compiled-autograd backward that serialises communication between its compute."""
    c = result.collectives
    if c is None or len(c) == 0 or not result.meta.get("device_metrics") or None in skip_ranks:
        return []
    # gradient buckets only: tensor-parallel allreduces in backward are not DDP's (see collectives)
    b = c[gradient_allreduces(c, manifest_tp(result.meta.get("manifest")), result.meta.get("world_size"))]
    if not len(b):
        return []
    agg = b.groupby("rank").agg(dur=("dur_us", "sum"), exposed=("exposed_us", "sum"), steps=("step", "nunique"),
                                n=("step", "size"))
    means = _step_means(result)
    out = []
    for rank, a in agg.iterrows():
        if int(rank) in skip_ranks:
            continue
        dur, exposed = float(a["dur"]), float(a["exposed"])
        steps = max(int(a["steps"]), 1)
        step_us = _step_us(result, rank, means)
        overlap_pct = 100.0 * (dur - exposed) / dur if dur > 0 else float("nan")
        cost = exposed / steps
        if not (overlap_pct < LOW_OVERLAP_PCT and np.isfinite(step_us)
                and cost >= LOW_OVERLAP_MIN_STEP_PCT / 100.0 * step_us):
            continue
        per = int(a["n"]) / steps
        msg = (f"only {overlap_pct:.0f}% of the backward allreduce time overlaps compute: {cost:.0f} µs per step "
               f"of {per:.0f} allreduces is exposed although they start during backward")
        out.append(_finding("backward_comm_exposed", int(rank), msg, cost, step_us,
                            overlap_pct=_r(overlap_pct), exposed_us_per_step=_r(cost),
                            allreduces_per_step=_r(per)))
    return out


def _exposed_bucket(code: str, which: str, result: Any, timeline: pd.DataFrame, manifest: Any,
                    skip_ranks: set[int]) -> list[dict[str, Any]]:
    if not len(timeline):
        return []
    pick = timeline.groupby(["rank", "step"])["bucket"].transform("max" if which == "last" else "min")
    b = timeline[timeline["bucket"] == pick]
    agg = b.groupby("rank").agg(exposed=("exposed_us", "mean"), dur=("dur_us", "mean"), bytes=("bytes", "mean"),
                                ready=("ready_us", "mean"))
    cap = ((manifest or {}).get("buckets") or {}).get("reducer") or {}
    cap_mb = (cap.get("bucket_cap_bytes") or 0) / 1e6 or None
    means = _step_means(result)
    out = []
    for rank, a in agg.iterrows():
        if int(rank) in skip_ranks:
            continue
        exposed, dur = float(a["exposed"]), float(a["dur"])
        step_us = _step_us(result, rank, means)
        if not (dur > 0 and exposed >= EXPOSED_BUCKET_SHARE * dur
                and 100.0 * exposed / step_us >= EXPOSED_BUCKET_MIN_STEP_PCT):
            continue
        mb = float(a["bytes"]) / 1e6
        if which == "last":
            hint = (f"a smaller bucket_cap_mb (now {cap_mb:.0f} MB) shrinks the last bucket" if cap_mb and mb <= cap_mb * 1.05
                    else "the bucket is larger than bucket_cap_mb: it holds one large parameter, which no bucket "
                         "size can split" if cap_mb else "a smaller bucket_cap_mb shrinks the last bucket, unless it "
                         "is one parameter larger than the cap")
            msg = (f"the last bucket's allreduce ({mb:.1f} MB) is {100 * exposed / dur:.0f}% exposed: {exposed:.0f} µs "
                   f"per step with no compute to hide behind; {hint}")
        else:
            hint = ("a smaller first bucket lets communication start earlier in the backward "
                    "(DDP caps it at 1 MB by default; bucket_cap_mb sizes the rest)")
            msg = (f"the first bucket's allreduce ({mb:.1f} MB, ready {float(a['ready']):.0f} µs into the "
                   f"backward) is {100 * exposed / dur:.0f}% exposed: {exposed:.0f} µs per step; {hint}")
        out.append(_finding(code, int(rank), msg, exposed, step_us, bucket_mb=_r(mb, 2), exposed_us=_r(exposed),
                            dur_us=_r(dur), bucket_cap_mb=_r(cap_mb) if cap_mb else None))
    return out


def _collapse(found: list[dict[str, Any]], ranks: list[int]) -> list[dict[str, Any]]:
    """One finding with rank None for codes that fired on every rank (keep the costliest's text)."""
    out: list[dict[str, Any]] = []
    by_code: dict[str, list[dict[str, Any]]] = {}
    for f in found:
        by_code.setdefault(f["code"], []).append(f)
    for code, fs in by_code.items():
        if code != "rank_waiting" and len(ranks) > 1 and sorted(f["rank"] for f in fs) == sorted(ranks):
            top = max(fs, key=lambda f: f["evidence"].get("cost_us") or 0.0)
            out.append({**top, "rank": None, "evidence": {**top["evidence"], "ranks": sorted(ranks),
                                                          "worst_rank": top["rank"]}})
        else:
            out.extend(fs)
    return out


def _sort_key(f: dict[str, Any]) -> tuple[int, float]:
    c = f["evidence"].get("cost_us")
    return (_SEVERITY_ORDER.get(f["severity"], 3), -(c if c is not None else float("inf")))


def findings(result: Any, timeline: pd.DataFrame, gb: pd.DataFrame, manifest: dict[str, Any] | None) -> list[dict[str, Any]]:
    """All findings, most costly first (see module doc)."""
    found = allreduce_after_backward(result, timeline, gb, manifest)
    after = {f["rank"] for f in found}
    found += backward_comm_exposed(result, after)
    found += rank_waiting(result)
    found += graph_break(result, timeline, gb, manifest)
    found += compile_skipped(result, timeline, gb, manifest)
    found += _exposed_bucket("exposed_first_bucket", "first", result, timeline, manifest, after)
    found += _exposed_bucket("exposed_last_bucket", "last", result, timeline, manifest, after)
    ranks = sorted(int(r) for r in result.meta.get("ranks", [])) if isinstance(result.meta, dict) else []
    return sorted(_collapse(found, ranks), key=_sort_key)


# -- registered table (see tracekit.analyses.registry) -------------------------------------------

FINDING_COLUMNS = ("code", "severity", "rank", "message", "evidence")


def as_table(found: list[dict[str, Any]]) -> pd.DataFrame:
    """Findings (dicts, see module doc) as the ``findings`` table; ``rank`` is null for all-rank findings."""
    df = pd.DataFrame({c: pd.Series([f[c] for f in found], dtype=object) for c in FINDING_COLUMNS})
    df["rank"] = df["rank"].astype("Int64")
    return df


def as_dicts(df: pd.DataFrame) -> list[dict[str, Any]]:
    """The ``findings`` table back as the list of dicts of :func:`findings` (``rank`` None for all ranks)."""
    return [{"code": r.code, "severity": r.severity, "rank": None if pd.isna(r.rank) else int(r.rank),
             "message": r.message, "evidence": r.evidence} for r in df.itertuples(index=False)]


def finding_lines(found: list[dict[str, Any]], markdown: bool = False) -> list[str]:
    """One numbered entry per finding (what the text report prints under "Findings")."""
    if not found:
        return ["No findings: nothing costly detected."]
    lines = []
    for i, f in enumerate(found, 1):
        who = "all ranks" if f.get("rank") is None else f"rank {f['rank']}"
        cost = f["evidence"].get("cost_us")
        cost_s = f"{cost:.0f} µs/step" if cost is not None else "cost unknown"
        if markdown:
            lines.append(f"{i}. **{f['severity']}** `{f['code']}` ({who}, {cost_s}): {f['message']}")
        else:
            lines.append(f"{i}. [{f['severity']}] {f['code']} ({who}, {cost_s})\n   {f['message']}")
    return lines


def _findings_table(ctx: RunContext) -> pd.DataFrame:
    t = ctx.tables
    return as_table(findings(ctx.result(), t["bucket_timeline"], t["graph_breaks"], ctx.manifest))


TABLES = [
    Table(
        name="findings", scope="run", title="Findings (plain-English verdicts, most costly first)",
        doc="Severity: estimated cost (µs per step) as a share of the mean step: ≥10% high, ≥3% medium, else low. "
            "Findings fire per rank; one that fires on every rank is reported once with rank null.",
        columns=(
            Column("code", "name", "stable identifier of the finding (see Findings below)"),
            Column("severity", "name", "high / medium / low"),
            Column("rank", "rank", "the rank it fired on; null when it fired on every rank"),
            Column("message", "text", "the verdict in plain English"),
            Column("evidence", "json", "the numbers behind it; cost_us is the estimated cost in µs per step "
                                       "(null when not estimable)"),
        ),
        compute=_findings_table,
        needs=("ranks", "steps", "collectives", "instances", "waits", "bucket_timeline", "graph_breaks"),
        view=lambda t, o: View("Findings", finding_lines(as_dicts(t["findings"]), o.fmt == "markdown")), order=5,
    ),
]
