"""Ranked findings: plain-English verdicts with their evidence, most costly first.

Each finding is ``{"code", "severity", "rank", "message", "evidence"}``;
``evidence["cost_us"]`` is the estimated cost in µs per step (``None`` when it
cannot be estimated from the traces, e.g. a whole model that ran uncompiled).
Severity is the cost as a share of the mean step: ≥ :data:`SEVERITY_HIGH_PCT`
high, ≥ :data:`SEVERITY_MEDIUM_PCT` medium, else low; ``compile_skipped`` is
always high. A finding that fires on every rank is reported once with
``rank = None`` (evidence of the costliest rank, ``ranks`` listing them all).

Codes (stable): ``profiler_distortion``, ``allreduce_after_backward``, ``backward_comm_exposed``,
``rank_waiting``, ``gpu_idle``, ``graph_break``, ``compile_skipped``, ``exposed_first_bucket``,
``exposed_last_bucket``.

``profiler_distortion`` (the profiled step is more than
:data:`~tracekit.analyses.distortion.DISTORTED_RATIO` times the unprofiled one) always ranks
first; the timing findings of the same run (:data:`TIMING_CODES`) then carry
``evidence["distorted_window"] = True`` and say "measured under a distorted window".
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from tracekit.analyses.collectives import gradient_allreduces, manifest_tp
from tracekit.analyses.distortion import DISTORTED_RATIO
from tracekit.analyses.registry import Column, RunContext, Table, View
from tracekit.analyses.timeline import rank_compile_facts
from tracekit.traces.manifest import Manifest

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
#: a rank's GPU is "mostly idle" when nothing runs on it for this % of its step (mean over steps) ...
GPU_IDLE_PCT = 30.0
#: ... and the idle time is at least this many µs per step
GPU_IDLE_MIN_US = 100.0
#: idle time is "waiting for the CPU" (CPU-bound) when launch gaps make up this share of it
LAUNCH_BOUND_SHARE = 0.5
#: findings whose numbers are times measured in the profiled window (a distorted window may fake them)
TIMING_CODES = ("allreduce_after_backward", "backward_comm_exposed", "rank_waiting", "gpu_idle", "graph_break",
                "exposed_first_bucket", "exposed_last_bucket")
MIB = 1024 * 1024


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
                             manifest: Manifest | None) -> list[dict[str, Any]]:
    tl = timeline[timeline["bwd_compute_end_ns"] >= 0] if len(timeline) else timeline
    if not len(tl):
        return []
    agg = tl.groupby("rank").agg(steps=("step", "nunique"), n_after=("starts_after_backward", "sum"),
                                 n=("step", "size"), tail=("tail_exposed_us", "sum"), bytes=("bytes", "sum"))
    agg = agg[agg["n_after"] >= AFTER_BACKWARD_SHARE * agg["n"]]
    bwd_sub = gb.groupby("rank")["bwd_subgraphs"].median() if len(gb) else pd.Series(dtype=float)
    means = _step_means(result)
    out = []
    for rank, a in agg.iterrows():
        steps, n_after, n = int(a["steps"]), int(a["n_after"]), int(a["n"])
        per_step, after_per_step = n / steps, n_after / steps  # both per step: never "39 of 14"
        cost = float(a["tail"] / steps)
        sub = float(bwd_sub.get(rank, 0.0))
        facts = rank_compile_facts(manifest, int(rank))
        grad_mb = float(a["bytes"]) / steps / 1e6
        why = _after_backward_why(per_step, sub, facts.optimize_ddp, grad_mb, _bucket_cap_bytes(manifest))
        who = "all" if n_after == n else f"{_num(after_per_step)} of"
        msg = (f"{who} {_num(per_step)} allreduce{'s' if per_step != 1 else ''} per step start after backward "
               f"compute ends{why}; {cost:.0f} µs of communication per step is exposed at the tail")
        out.append(_finding("allreduce_after_backward", int(rank), msg, cost, _step_us(result, rank, means),
                            allreduces_per_step=round(per_step, 1), after_backward_per_step=round(after_per_step, 1),
                            after_backward=n_after, allreduces=n, steps=steps,
                            bwd_subgraphs_per_step=sub, tail_exposed_us=_r(cost)))
    return out


def _num(x: float) -> str:
    """A per-step count: an integer when it is one, else one decimal."""
    return f"{x:.0f}" if abs(x - round(x)) < 0.05 else f"{x:.1f}"


def _bucket_cap_bytes(manifest: Manifest | None) -> int | None:
    """DDP's bucket cap in bytes from run.json's ``buckets.reducer`` (``bucket_cap_mb`` is MiB: 25 ->
    26214400), or None."""
    reducer = manifest.reducer() if manifest is not None else None
    cap = reducer.bucket_cap_bytes if reducer is not None else None
    return int(cap) if cap is not None and cap > 0 else None


def _mib(nbytes: float) -> str:
    return f"{nbytes / MIB:.3g} MiB"


def _after_backward_why(per_step: float, bwd_sub: float, optimize_ddp: Any, grad_mb: float,
                        cap_bytes: int | None) -> str:
    """Why every allreduce waits for the end of backward: one bucket, or one compiled backward graph."""
    if round(per_step) == 1:
        cap = f", bucket cap {_mib(cap_bytes)}" if cap_bytes else ""
        split = " and DDPOptimizer has nothing to split" if optimize_ddp == "ddp_optimizer" else ""
        return (f": the whole model's gradients ({grad_mb:.1f} MB{cap}) fit one DDP bucket, so its allreduce can "
                f"only start when the last gradient is ready{split} (a smaller bucket_cap_mb makes several buckets)")
    if bwd_sub == 1:
        return (f": the backward ran as one compiled graph (optimize_ddp={optimize_ddp})" if optimize_ddp is not None
                else ": the backward ran as one compiled graph (DDPOptimizer off?)")
    return ""


def _clipped_waits(result: Any) -> pd.DataFrame:
    """``waits`` with ``wait_us`` clipped to the rank's own kernel time: a kernel cannot wait longer than it
    runs (a root's broadcast may finish before its peer's kernel starts; its "wait" is not time spent)."""
    w = result.waits
    c = result.collectives
    if len(c) == 0 or "dur_us" not in c:
        return w
    key = ["rank", "pg_name", "step", "step_seq"]
    durs = c[key + ["dur_us"]].assign(pg_name=c["pg_name"].astype(object).fillna("?"))
    m = w.assign(pg_name=w["pg_name"].astype(object)).merge(durs.drop_duplicates(key), on=key, how="left")
    # send/recv waits (step_seq -1) are bounded by their own kernel already, and the key does not name one row
    dur = m["dur_us"].where(m["step_seq"] >= 0).fillna(np.inf)
    return m.assign(wait_us=np.minimum(m["wait_us"], dur))


def _late_cause(rank: int, straggler: int | None, idle: pd.DataFrame, ranks: pd.DataFrame) -> tuple[str, dict]:
    """Why ``straggler`` arrives late, from its ``gpu_idle`` rows and the ranks' compute time (text, evidence)."""
    if straggler is None or idle is None or idle.empty or not (idle["rank"] == straggler).any():
        return "", {"late_cause": None}
    si = idle[idle["rank"] == straggler]
    idle_pct, launch_pct = float(si["gpu_idle_pct"].mean()), float(si["launch_idle_pct"].mean())
    kernels = float(si["kernels"].mean())
    ev = {"straggler_gpu_idle_pct": _r(idle_pct), "straggler_launch_idle_pct": _r(launch_pct),
          "straggler_kernels_per_step": _r(kernels)}
    if idle_pct >= GPU_IDLE_PCT and launch_pct >= LAUNCH_BOUND_SHARE * idle_pct:
        return (f"; rank {straggler} is CPU-bound: its GPU is idle {idle_pct:.0f}% of the step, {launch_pct:.0f}% "
                f"waiting for the CPU to launch the next kernel ({kernels:.0f} kernels per step)",
                {**ev, "late_cause": "cpu_launch_bound"})
    if idle_pct >= GPU_IDLE_PCT:
        return (f"; rank {straggler}'s GPU is idle {idle_pct:.0f}% of the step, mostly not waiting for launches "
                f"(synchronizes or waits on other streams)", {**ev, "late_cause": "gpu_idle"})
    comp = ranks.set_index("rank")["compute_us"] if len(ranks) and "compute_us" in ranks else pd.Series(dtype=float)
    mine, theirs = comp.get(rank, np.nan), comp.get(straggler, np.nan)
    if np.isfinite(mine) and np.isfinite(theirs) and theirs > 1.1 * mine:
        return (f"; rank {straggler} has more GPU compute ({theirs:.0f} µs vs {mine:.0f} µs in the window): "
                f"load imbalance", {**ev, "late_cause": "more_compute"})
    return (f"; the trace shows no cause on rank {straggler} (its GPU is idle only {idle_pct:.0f}% of the step, "
            f"compute similar): look at its CPU timeline", {**ev, "late_cause": "unknown"})


def rank_waiting(result: Any, *_: Any) -> list[dict[str, Any]]:
    """``rank_waiting``: a rank's communication kernels spend a large share waiting for a peer to arrive; the
    message names the late rank and, from its ``gpu_idle`` rows, why it is late."""
    w, r = result.waits, result.ranks
    if w is None or len(w) == 0 or len(r) == 0:
        return []
    w = _clipped_waits(result)
    idle = result.tables.get("gpu_idle") if hasattr(result, "tables") else None
    agg = w.groupby("rank").agg(steps=("step", "nunique"), wait=("wait_us", "sum"))
    comm = r.drop_duplicates("rank").set_index("rank")["comm_total_us"].reindex(agg.index).astype(float)
    steps = agg["steps"].clip(lower=1)
    share = (100.0 * agg["wait"] / comm).where(comm.notna() & np.isfinite(comm) & (comm != 0))
    fire = agg[(share >= WAIT_SHARE_PCT) & (agg["wait"] / steps >= WAIT_MIN_US_PER_STEP)].index
    if not len(fire):
        return []
    # who each firing rank waited for: the straggler with the most of its wait
    waited = w[w["rank"].isin(fire) & ~w["is_straggler"].astype(bool)]
    inst = result.instances
    if "straggler" in waited:  # recorded per wait row (send/recv rows share their key)
        strag = waited
    else:
        strag = waited.merge(inst[["pg_name", "step", "step_seq", "straggler"]], on=["pg_name", "step", "step_seq"],
                             how="left", suffixes=("", "_i")) if len(inst) else waited.assign(straggler=np.nan)
    by = strag.groupby(["rank", "straggler"])["wait_us"].sum().reset_index()
    by = by.sort_values("wait_us", ascending=False, kind="stable").drop_duplicates("rank")
    top = dict(zip(by["rank"], by["straggler"]))
    means = _step_means(result)
    out = []
    partial = _partial_wait_share(w)
    sub = result.meta.get("partial") if isinstance(result.meta, dict) else None
    for rank in fire:
        straggler = int(top[rank]) if rank in top else None
        cost = float(agg.at[rank, "wait"] / steps[rank])
        sh, cm = float(share[rank]), float(comm[rank])
        if partial.get(rank, 0.0) >= 0.5 and sub:  # mostly waits on groups whose ranks are not all loaded
            msg = (f"rank {int(rank)} spends at least {sh:.0f}% of its communication time ({cost:.0f} µs per step) "
                   f"waiting at collectives; of the loaded ranks rank {straggler} arrives last, but only "
                   f"{sub['ranks']} of {sub['world_size']} ranks are in the trace set, so the rank it waited for "
                   f"may be a missing one (load every rank to name it)")
            cause_ev = {"late_cause": None, "last_loaded_arrival": straggler}
            straggler = None  # not blamed: the one waited for may be missing
        else:
            cause, cause_ev = _late_cause(int(rank), straggler, idle, r)
            msg = (f"rank {int(rank)} spends {sh:.0f}% of its communication time ({cost:.0f} µs per step) "
                   f"waiting for rank {straggler}, which arrives later at the collectives{cause}")
        out.append(_finding("rank_waiting", int(rank), msg, cost, _step_us(result, rank, means),
                            wait_share_pct=_r(sh), wait_us_per_step=_r(cost), straggler=straggler,
                            comm_us=_r(cm), partial_wait_share=_r(100.0 * partial.get(rank, 0.0)), **cause_ev))
    return out


def _partial_wait_share(w: pd.DataFrame) -> dict[int, float]:
    """Per rank, the share (0-1) of its wait spent in matches with ranks missing from the trace set."""
    if "partial" not in w or w.empty:
        return {}
    tot = w.groupby("rank")["wait_us"].sum()
    part = w[w["partial"].astype(bool)].groupby("rank")["wait_us"].sum().reindex(tot.index, fill_value=0.0)
    return {int(k): float(v) for k, v in (part / tot.where(tot > 0)).fillna(0.0).items()}


def gpu_idle(result: Any, waiting: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``gpu_idle``: nothing runs on a rank's GPU for at least :data:`GPU_IDLE_PCT` % of its step (mean over
    steps, table ``gpu_idle``); says whether it waited for CPU launches and which ranks wait for it."""
    idle = result.tables.get("gpu_idle") if hasattr(result, "tables") else None
    if idle is None or idle.empty:
        return []
    agg = idle.groupby("rank").agg(idle_us=("gpu_idle_us", "mean"), step_us=("step_us", "mean"),
                                   idle_pct=("gpu_idle_pct", "mean"), launch_pct=("launch_idle_pct", "mean"),
                                   kernels=("kernels", "mean"))
    agg = agg[(agg["idle_pct"] >= GPU_IDLE_PCT) & (agg["idle_us"] >= GPU_IDLE_MIN_US)]
    out = []
    for rank, a in agg.iterrows():
        idle_us, step_us, idle_pct, launch_pct = (float(a[k]) for k in ("idle_us", "step_us", "idle_pct", "launch_pct"))
        kernels = float(a["kernels"])
        bound = launch_pct >= LAUNCH_BOUND_SHARE * idle_pct
        what = (f"{launch_pct:.0f}% of the step waiting for the CPU to launch the next kernel ({kernels:.0f} "
                f"kernels per step): the rank is CPU-bound" if bound else
                f"only {launch_pct:.0f}% of the step in launch gaps: the rest waits on synchronizes, other streams "
                f"or the step's end")
        victims = sorted(f["rank"] for f in waiting if f["evidence"].get("straggler") == int(rank))
        hurts = (f"; rank{'s' if len(victims) > 1 else ''} {', '.join(map(str, victims))} wait{'' if len(victims) > 1 else 's'} "
                 f"for it at the collectives (rank_waiting)") if victims else ""
        msg = (f"rank {int(rank)}'s GPU is idle {idle_pct:.0f}% of each step ({idle_us:.0f} of {step_us:.0f} µs), "
               f"{what}{hurts}")
        out.append(_finding("gpu_idle", int(rank), msg, idle_us, step_us, gpu_idle_pct=_r(idle_pct),
                            launch_idle_pct=_r(launch_pct), gpu_idle_us_per_step=_r(idle_us),
                            kernels_per_step=_r(kernels), cpu_bound=bound, makes_wait=victims or None))
    return out


def _first_reason(g: pd.DataFrame) -> pd.Series:
    """Per rank, the first non-null ``break_reasons`` (index: the ranks that have one)."""
    r = g[["rank", "break_reasons"]].dropna()
    return r.drop_duplicates("rank").set_index("rank")["break_reasons"]


def graph_break(result: Any, timeline: pd.DataFrame, gb: pd.DataFrame, manifest: Any) -> list[dict[str, Any]]:
    if not len(gb) or not (gb["real_breaks"] > 0).any():  # the common case: nothing to group
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
    if not len(gb) or not gb["compile_skipped"].astype(bool).any():
        return []
    agg = gb.assign(sk=gb["compile_skipped"].astype(bool)).groupby("rank").agg(
        skipped=("sk", "sum"), steps=("sk", "size"), lookups=("cache_lookups", "mean"), regions=("regions", "mean"))
    agg = agg[agg["skipped"] > 0]
    means = _step_means(result)
    out = []
    for rank, a in agg.iterrows():
        facts = rank_compile_facts(manifest, int(rank))
        why = [f"{s.function}: {s.reason}" for s in facts.skipped_frames or []]
        src = "run.json asked for torch.compile" if facts.enabled else "the trace shows dynamo cache lookups"
        n_sk, n = int(a["skipped"]), int(a["steps"])
        msg = (f"compilation was requested ({src}) but no compiled graph ran in {n_sk} of {n} steps: "
               f"the model ran eagerly" + (f" (dynamo skipped {'; '.join(why)})" if why else _skip_reason(facts)))
        out.append(_finding("compile_skipped", int(rank), msg, None, _step_us(result, rank, means),
                            steps_skipped=n_sk, steps=n, cache_lookups_per_step=_r(float(a["lookups"])),
                            regions_per_step=_r(float(a["regions"])), compiled_subgraphs=0,
                            skipped_frames=why or None, dynamo_skips=_skip_list(facts) or None))
    return out


def _skip_list(facts: Any) -> list[str]:
    return [f"{s.function} ({s.file}): {s.reason}" for s in getattr(facts, "dynamo_skips", None) or []]


def _skip_reason(facts: Any) -> str:
    """Dynamo's own reason for running the model eagerly (run.json ``dynamo_skips``), quoted with its fix;
    without one, say that it was not recorded (never a guess)."""
    skips = getattr(facts, "dynamo_skips", None) or []
    if not skips:
        why = ("dynamo's reason was not recorded: tracekit profile records it in run.json dynamo_skips; with "
               "another profiler, run with TORCH_LOGS=+dynamo and look for 'skipping:' or WON'T CONVERT")
        return f" ({why})"
    first = skips[0]
    where = str(first.file or "?").replace("\\", "/").split("site-packages/")[-1]
    more = f"; {len(skips) - 1} more in run.json dynamo_skips" if len(skips) > 1 else ""
    fix = next((s.fix for s in skips if s.fix), None)
    return (f": dynamo says \"skipping: {first.function} (reason: {first.reason}, file: {where})\"{more}"
            + (f". Fix: {fix}" if fix else ""))


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
    # a rank's mean exposure can reach EXPOSED_BUCKET_SHARE of its mean duration only if some row does
    if not len(timeline) or not (timeline["exposed_us"] >= EXPOSED_BUCKET_SHARE * timeline["dur_us"]).any():
        return []
    pick = timeline.groupby(["rank", "step"])["bucket"].transform("max" if which == "last" else "min")
    b = timeline[timeline["bucket"] == pick]
    agg = b.groupby("rank").agg(exposed=("exposed_us", "mean"), dur=("dur_us", "mean"), bytes=("bytes", "mean"),
                                ready=("ready_us", "mean"))
    cap_bytes = _bucket_cap_bytes(manifest)
    cap_mb = cap_bytes / 1e6 if cap_bytes else None
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
        nbytes = float(a["bytes"])
        mb = nbytes / 1e6
        if which == "last":
            hint = (f"a smaller bucket_cap_mb (now {cap_bytes / MIB:g}, i.e. {_mib(cap_bytes)}) shrinks the last bucket"
                    if cap_bytes and nbytes <= cap_bytes * 1.05
                    else f"the bucket is larger than the cap ({_mib(cap_bytes)}): it holds one large parameter, which "
                         f"no bucket size can split" if cap_bytes else "a smaller bucket_cap_mb shrinks the last bucket, "
                         "unless it is one parameter larger than the cap")
            msg = (f"the last bucket's allreduce ({mb:.1f} MB) is {100 * exposed / dur:.0f}% exposed: {exposed:.0f} µs "
                   f"per step with no compute to hide behind; {hint}")
        else:
            hint = ("a smaller first bucket lets communication start earlier in the backward "
                    "(DDP caps it at 1 MB by default; bucket_cap_mb sizes the rest)")
            msg = (f"the first bucket's allreduce ({mb:.1f} MB, ready {float(a['ready']):.0f} µs into the "
                   f"backward) is {100 * exposed / dur:.0f}% exposed: {exposed:.0f} µs per step; {hint}")
        out.append(_finding(code, int(rank), msg, exposed, step_us, bucket_mb=_r(mb, 2), exposed_us=_r(exposed),
                            dur_us=_r(dur), bucket_cap_mb=_r(cap_mb) if cap_mb else None,
                            bucket_cap_mib=_r(cap_bytes / MIB, 2) if cap_bytes else None))
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


def _sort_key(f: dict[str, Any]) -> tuple[int, int, float]:
    c = f["evidence"].get("cost_us")
    first = 0 if f["code"] == "profiler_distortion" else 1  # it qualifies every other finding: always first
    return (first, _SEVERITY_ORDER.get(f["severity"], 3), -(c if c is not None else float("inf")))


def profiler_distortion(result: Any, others: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``profiler_distortion``: the profiled step is more than :data:`DISTORTED_RATIO` × the unprofiled one.

    Names the likely cause from the profiled window (GPU idle share, launch gaps, kernels per step;
    table ``profiler_distortion``), the timing findings it may invalidate, and the ranks where the
    unprofiled bucket timing disagrees with the trace (table ``bucket_events``). Cost: profiled −
    unprofiled step, per step.
    """
    d = result.meta.get("profiler_distortion") if isinstance(result.meta, dict) else None
    if not d or not d.get("distorted"):
        return []
    ratio, u, p = d["ratio"], d["unprofiled_step_us"], d["profiled_step_us"]
    rows = result.tables.get("profiler_distortion", pd.DataFrame())
    rows = rows.dropna(subset=["gpu_idle_pct"]) if len(rows) else rows
    if len(rows):
        worst = rows.loc[rows["gpu_idle_pct"].idxmax()]
        idle, launch, kern = float(worst["gpu_idle_pct"]), float(worst["launch_idle_pct"]), float(worst["kernels_per_step"])
        cpu_bound = launch >= LAUNCH_BOUND_SHARE * idle and idle >= GPU_IDLE_PCT
        cause = (f"likely cause: the ranks are CPU-bound under the profiler (rank {int(worst['rank'])}'s GPU is idle "
                 f"{idle:.0f}% of the profiled step, {launch:.0f}% waiting for kernel launches; {kern:.0f} kernels per "
                 f"step, each paying the profiler's per-launch cost)" if cpu_bound else
                 f"likely cause: per-kernel profiler cost ({kern:.0f} kernels per step; GPU idle up to {idle:.0f}% "
                 f"of the profiled step)")
    else:
        cause, idle, launch, kern, cpu_bound = _no_idle_cause(result), None, None, None, None
    hit = sorted({f["code"] for f in others if f["code"] in TIMING_CODES})
    ev_rows = result.tables.get("bucket_events", pd.DataFrame())
    disagree = sorted(int(x) for x in ev_rows.loc[ev_rows["agree"] == False, "rank"]) if len(ev_rows) else []  # noqa: E712
    msg = (f"the profiled window runs {ratio:.2f}× the unprofiled step ({p / 1000:.1f} ms vs {u / 1000:.1f} ms per "
           f"step): {cause}. Timings from this window over-state idle, waiting and exposed communication"
           + (f"; findings that may be artefacts of it: {', '.join(hit)}" if hit else "")
           + (f"; the bucket timing of the unprofiled steps disagrees with the trace on rank(s) "
              f"{', '.join(map(str, disagree))} (table bucket_events)" if disagree else "")
           + " (profile fewer kernels per step: a larger batch, or compare with the bucket_events table; "
             "`tracekit whatif` replays this trace without the profiler's cost and predicts the undisturbed step, "
             "with its measured error: docs/whatif.md)")
    return [_finding("profiler_distortion", None, msg, p - u, u, ratio=ratio, unprofiled_step_us=u,
                     profiled_step_us=p, source=d.get("source"), threshold=DISTORTED_RATIO,
                     worst_gpu_idle_pct=_r(idle), worst_launch_idle_pct=_r(launch), kernels_per_step=_r(kern),
                     cpu_bound=cpu_bound, may_invalidate=hit, bucket_events_disagree=disagree or None)]


def _no_idle_cause(result: Any) -> str:
    """What is known and what is not when no rank has per-step GPU idle figures to name a cause."""
    meta = result.meta if isinstance(result.meta, dict) else {}
    if not meta.get("device_metrics"):
        return "the trace has no GPU activity (CPU-only), so the GPU idle share that would say why is unknown"
    man = meta.get("manifest")
    cuda_only = getattr(man, "config", {}).get("profile_activities") == "cuda" if man is not None else False
    what = ("the trace holds GPU activity only (captured with --profile-activities cuda: no CPU ops, no "
            "ProfilerStep ranges)" if cuda_only else "the trace holds GPU activity but no ProfilerStep ranges")
    return (f"cause unknown: {what}, so the GPU idle per step and the launch gaps that would say why cannot be "
            "measured; the ratio itself comes from run.json's timings")


def _mark_distorted(found: list[dict[str, Any]], ratio: float) -> list[dict[str, Any]]:
    """The timing findings, flagged as measured under a distorted window (text and evidence)."""
    out = []
    for f in found:
        if f["code"] in TIMING_CODES:
            f = {**f, "message": f"{f['message']} [measured under a distorted window: the profiled step is "
                                 f"{ratio:.2f}× the unprofiled one]",
                 "evidence": {**f["evidence"], "distorted_window": True}}
        out.append(f)
    return out


def findings(result: Any, timeline: pd.DataFrame, gb: pd.DataFrame, manifest: Manifest | None) -> list[dict[str, Any]]:
    """All findings, most costly first, ``profiler_distortion`` always first (see module doc)."""
    found = allreduce_after_backward(result, timeline, gb, manifest)
    after = {f["rank"] for f in found}
    found += backward_comm_exposed(result, after)
    waiting = rank_waiting(result)
    found += waiting
    found += gpu_idle(result, waiting)
    found += graph_break(result, timeline, gb, manifest)
    found += compile_skipped(result, timeline, gb, manifest)
    found += _exposed_bucket("exposed_first_bucket", "first", result, timeline, manifest, after)
    found += _exposed_bucket("exposed_last_bucket", "last", result, timeline, manifest, after)
    ranks = sorted(int(r) for r in result.meta.get("ranks", [])) if isinstance(result.meta, dict) else []
    found = _collapse(found, ranks)
    distortion = profiler_distortion(result, found)
    if distortion:
        found = _mark_distorted(found, distortion[0]["evidence"]["ratio"]) + distortion
    return sorted(found, key=_sort_key)


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
        needs=("ranks", "steps", "collectives", "instances", "waits", "bucket_timeline", "graph_breaks", "gpu_idle",
               "profiler_distortion", "bucket_events"),
        view=lambda t, o: View("Findings", finding_lines(as_dicts(t["findings"]), o.fmt == "markdown")), order=5,
    ),
]
