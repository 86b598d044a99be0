"""Cross-rank matching of collectives: waiting versus transfer.

Matching: the ``step_seq``-th collective of process group P in step S on one
rank is the same collective as on every other rank (only collectives launched
inside the window take part). A match is *consistent* when all ranks agree on
the collective name and byte count.

**Validation.** A match built by position can be wrong (a rank that skipped a
collective shifts every later one), so each is checked, in this order, and the
first failed check is its ``check``:

- ``op differs``: the ranks disagree on the collective name -> rejected;
- ``size differs``: they disagree on the byte count -> rejected, except for the
  collectives whose buffers legitimately differ per rank (``all_to_all``,
  ``all_to_allv``, ``gather``, ``scatter``: uneven splits), which are kept and
  marked ``size differs (uneven split)``;
- ``kernels do not overlap``: for a collective that needs every rank at once
  (all-reduce, all-gather, reduce-scatter, all-to-all, barrier) the kernels of a
  true match all run at one instant: the latest start is at most the earliest
  end (+ :data:`OVERLAP_TOLERANCE_US` for clock noise). Otherwise -> rejected.
  Rooted and point-to-point collectives (broadcast, reduce, send/recv...) are not
  checked: a sender may finish before its peer starts (LL protocol).

Rejected matches stay in ``instances`` (``accepted`` false) and are left out of
``waits`` and every wait figure; ``meta["matching"]`` counts matched / accepted /
rejected by reason, and the text report says so under the wait table.

Per instance (one row per matched collective):

- ``skew_us`` = latest kernel start − earliest kernel start across ranks.
- ``straggler``: the rank whose kernel started last (the one the others waited for).
- ``transfer_us`` = the shortest kernel duration across ranks: the time the
  collective takes once every rank has arrived.
- ``end_spread_us`` = latest end − earliest end (a few µs for a correct match).

Per rank and accepted instance (table ``waits``):
``wait_us = max(0, min(own_end, latest_start) − own_start)``: the part of this
rank's kernel spent before the last peer's kernel started, i.e. waiting for a
peer rather than moving data. It is bounded by the kernel's own duration (a
sender that finishes before its peer starts waited its whole kernel, not
longer), so a rank's total wait never exceeds its communication kernel time.

Clock alignment: traces from several hosts have unrelated clocks. Then each
rank's offset is the median of (end − reference rank's end) over matched
instances (matched collectives end together), and it is subtracted before the
metrics above are computed.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping

import numpy as np
import pandas as pd

from tracekit.analyses.collectives import bus_factor
from tracekit.analyses.registry import AnalysisWarning, Column, RunContext, Table, View, ViewOptions

NS_PER_US = 1000.0
KEY = ["pg_name", "step", "step_seq"]
INSTANCE_COLUMNS = ("pg_name", "step", "step_seq", "coll_name", "bytes", "ranks", "consistent", "accepted", "check",
                    "skew_us", "straggler", "transfer_us", "end_spread_us", "busbw_gbps")
#: clock disagreement allowed between the kernels of one collective on one host (µs)
OVERLAP_TOLERANCE_US = 50.0
OK, OP_DIFFERS, SIZE_DIFFERS, UNEVEN, NO_OVERLAP = (
    "ok", "op differs", "size differs", "size differs (uneven split)", "kernels do not overlap")
#: normalised names (see :func:`_norm`) of collectives that need every rank at once
_SYMMETRIC = {"allreduce", "allgather", "reducescatter", "alltoall", "alltoallv", "barrier"}
#: ... and of those whose per-rank buffers may differ in size
_UNEVEN_OK = {"alltoall", "alltoallv", "gather", "scatter", "allgatherv", "reducescatterv"}


def _norm(coll_name: object) -> str:
    """``all_gather_into_tensor_coalesced`` -> ``allgather`` (the spellings c10d and NCCL use)."""
    if not isinstance(coll_name, str):
        return ""
    return re.sub(r"_|coalesced|base|intotensor|tensor|single", "", coll_name.lower())


def _check(inst: pd.DataFrame) -> pd.Series:
    """The first failed validation of each matched instance (module doc), or ``ok``."""
    kind = inst["coll_name"].map(_norm)
    no_overlap = kind.isin(_SYMMETRIC) & (inst["last_start"] - inst["first_end"] > OVERLAP_TOLERANCE_US * NS_PER_US)
    size = inst["n_bytes"] > 1
    out = np.select([inst["n_names"] > 1, size & ~kind.isin(_UNEVEN_OK), no_overlap, size],
                    [OP_DIFFERS, SIZE_DIFFERS, NO_OVERLAP, UNEVEN], default=OK)
    return pd.Series(out, index=inst.index)


def _matchable(coll: pd.DataFrame) -> pd.DataFrame:
    m = coll[(~coll["pre_window"].astype(bool)) & (coll["step_seq"] >= 0) & (coll["start_ns"] >= 0)].copy()
    m["pg_name"] = m["pg_name"].astype(object).fillna("?")
    return m


def clock_offsets(coll: pd.DataFrame, reference_rank: int | None = None) -> dict[int, float]:
    """Per-rank clock offset in ns (to subtract) so matched collectives end together."""
    m = _matchable(coll)
    if m.empty:
        return {}
    ranks = sorted(m["rank"].unique())
    ref = reference_rank if reference_rank in ranks else ranks[0]
    ends = m.pivot_table(index=KEY, columns="rank", values="end_ns", aggfunc="first")
    out = {}
    for r in ranks:
        d = (ends[r] - ends[ref]).dropna()
        out[int(r)] = float(d.median()) if len(d) else 0.0
    return out


def match(coll: pd.DataFrame, offsets: dict[int, float] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Match collectives across ranks and validate the matches; returns ``(instances, waits)``
    (see module doc; ``waits`` has the accepted instances only)."""
    m = _matchable(coll)
    nranks = m["rank"].nunique() if len(m) else 0
    if m.empty or nranks < 2:
        return (pd.DataFrame(columns=list(INSTANCE_COLUMNS)),
                pd.DataFrame(columns=["rank", *KEY, "wait_us", "is_straggler"]))
    if offsets:
        off = m["rank"].map(offsets).fillna(0.0).to_numpy()
        m["start_ns"] = m["start_ns"] - off
        m["end_ns"] = m["end_ns"] - off
    grp = m.groupby(KEY, sort=True)
    inst = grp.agg(
        coll_name=("coll_name", "first"), n_names=("coll_name", "nunique"), bytes=("bytes", "max"),
        n_bytes=("bytes", "nunique"), ranks=("rank", "nunique"), first_start=("start_ns", "min"),
        last_start=("start_ns", "max"), first_end=("end_ns", "min"), last_end=("end_ns", "max"),
        transfer_us=("dur_us", "min"), group_size=("group_size", "max"),
    )
    inst["consistent"] = (inst["n_names"] <= 1) & (inst["n_bytes"] <= 1)
    inst["check"] = _check(inst)
    inst["accepted"] = inst["check"].isin((OK, UNEVEN))
    inst["skew_us"] = (inst["last_start"] - inst["first_start"]) / NS_PER_US
    inst["end_spread_us"] = (inst["last_end"] - inst["first_end"]) / NS_PER_US
    idx_last = m.loc[grp["start_ns"].idxmax().to_numpy(), ["rank"]]
    inst["straggler"] = idx_last["rank"].to_numpy()
    factor = np.array([bus_factor(c, int(n)) for c, n in zip(inst["coll_name"], inst["group_size"])])
    inst["busbw_gbps"] = inst["bytes"] / 1e9 / (inst["transfer_us"] / 1e6).where(inst["transfer_us"] > 0) * factor
    inst = inst.reset_index()
    ok = inst[inst["accepted"]]
    waits = m[["rank", *KEY, "start_ns", "end_ns"]].merge(ok[[*KEY, "straggler", "last_start"]], on=KEY)
    # the wait ends when the last peer starts, or when this rank's own kernel ends, whichever is first
    waits["wait_us"] = (np.minimum(waits["end_ns"], waits["last_start"]) - waits["start_ns"]).clip(lower=0) / NS_PER_US
    waits["is_straggler"] = waits["rank"] == waits["straggler"]
    return inst[list(INSTANCE_COLUMNS)], waits[["rank", *KEY, "wait_us", "is_straggler"]]


def match_summary(instances: pd.DataFrame) -> dict[str, object]:
    """``{"matched", "accepted", "rejected", "rejected_by": {check: n}, "flagged": {check: n}}``."""
    if instances.empty:
        return {"matched": 0, "accepted": 0, "rejected": 0, "rejected_by": {}, "flagged": {}}
    acc = instances["accepted"].astype(bool)
    counts = instances["check"].value_counts()
    return {"matched": int(len(instances)), "accepted": int(acc.sum()), "rejected": int((~acc).sum()),
            "rejected_by": {str(k): int(v) for k, v in counts.items() if k not in (OK, UNEVEN)},
            "flagged": {str(k): int(v) for k, v in counts.items() if k == UNEVEN}}


def match_note(summary: Mapping[str, object]) -> str | None:
    """One line on how far the matches can be trusted, or None when every match passed."""
    rejected, flagged = summary.get("rejected_by") or {}, summary.get("flagged") or {}
    if not rejected and not flagged:
        return None
    parts = [f"{summary['matched']} collectives matched across ranks, {summary['accepted']} accepted"]
    if rejected:
        why = ", ".join(f"{n} {k}" for k, n in rejected.items())  # type: ignore[union-attr]
        parts.append(f"{summary['rejected']} rejected ({why}) and left out of the wait figures")
    if flagged:
        parts.append(", ".join(f"{n} kept with {k}" for k, n in flagged.items()))  # type: ignore[union-attr]
    return "; ".join(parts)


def wait_summary(waits: pd.DataFrame, instances: pd.DataFrame) -> pd.DataFrame:
    """Per rank: ``wait_us`` (total), ``matched`` instances, ``last_count`` (times it was the straggler)."""
    if waits.empty:
        return pd.DataFrame(columns=["rank", "wait_us", "matched", "last_count"])
    s = waits.groupby("rank").agg(wait_us=("wait_us", "sum"), matched=("wait_us", "size"),
                                  last_count=("is_straggler", "sum"))
    return s.reset_index()


# -- registered tables (see tracekit.analyses.registry) ------------------------------------------


def _matched(ctx: RunContext) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(instances, waits)`` once per run; aligns clocks first when asked (recorded in ``ctx.meta``)."""
    def run() -> tuple[pd.DataFrame, pd.DataFrame]:
        coll = ctx.tables["collectives"]
        align = ctx.options.align
        hosts = ctx.meta.get("hosts") or {}
        do_align = align == "on" or (align == "auto" and len(set(hosts.values())) > 1)
        offsets = clock_offsets(coll) if do_align and ctx.traces.has_gpu_activity else {}
        ctx.meta["clock_aligned"] = do_align
        ctx.meta["clock_offsets_us"] = {r: v / NS_PER_US for r, v in offsets.items()}
        inst, waits = match(coll, offsets)
        summary = ctx.meta["matching"] = match_summary(inst)
        if summary["rejected"]:
            bad = inst[~inst["accepted"].astype(bool)]
            warnings.warn(f"{match_note(summary)} (first rejected: pg {bad.iloc[0]['pg_name']}, step "
                          f"{bad.iloc[0]['step']}, #{bad.iloc[0]['step_seq']}, {bad.iloc[0]['check']}); the ranks "
                          f"may not run the same program, or their clocks disagree (see --align)",
                          AnalysisWarning, stacklevel=2)
        return inst, waits

    return ctx.memo("crossrank.match", run)


def wait_view(t: Mapping[str, pd.DataFrame], opts: ViewOptions) -> View:
    """Per rank: total wait, its share of the rank's comm time, and how often the rank arrived last."""
    r = t["ranks"]
    if r.empty or r["wait_total_us"].isna().all():
        return View("Cross-rank wait", pd.DataFrame())
    out = r[["rank", "comm_total_us", "wait_total_us", "last_count"]].copy()
    out["wait_pct_of_comm"] = 100.0 * out["wait_total_us"] / out["comm_total_us"].where(out["comm_total_us"] > 0)
    # instances this rank took part in (with several process groups, not every instance)
    w = t["waits"] if "waits" in t else pd.DataFrame()
    n = w.groupby("rank").size() if len(w) else pd.Series(dtype=float)
    out["matched"] = out["rank"].map(n).fillna(0).astype(int)
    out["last_pct"] = 100.0 * out["last_count"] / out["matched"].where(out["matched"] > 0)
    note = match_note(match_summary(t["instances"])) if "instances" in t else None
    return View("Cross-rank wait (totals over the trace window)",
                out[["rank", "matched", "wait_total_us", "wait_pct_of_comm", "last_count", "last_pct"]], note=note)


def skew_view(t: Mapping[str, pd.DataFrame], opts: ViewOptions, n: int = 5) -> View | None:
    """The ``n`` matched collectives with the largest arrival skew."""
    i = t["instances"]
    if i.empty:
        return None
    cols = ["pg_name", "step", "step_seq", "coll_name", "bytes", "skew_us", "straggler", "transfer_us", "busbw_gbps"]
    return View("Largest arrival skew", i.sort_values("skew_us", ascending=False).head(n)[cols])


TABLES = [
    Table(
        name="instances", scope="run", title="Matched collectives across ranks",
        doc="The step_seq-th collective of process group P in step S is the same collective on every rank (only "
            "collectives launched in the window take part). With clock alignment (more than one host in run.json, "
            "or --align) each rank's offset, the median of its matched collectives' end minus the reference "
            "rank's, is subtracted first. The text report lists the largest skews.",
        columns=(
            Column("pg_name", "name", "process group"),
            Column("step", "step", "ProfilerStep of the launches"),
            Column("step_seq", "index", "ordinal of the collective in its process group within the step"),
            Column("coll_name", "name", "collective"),
            Column("bytes", "bytes", "largest buffer over the ranks"),
            Column("ranks", "count", "ranks that took part"),
            Column("consistent", "bool", "all ranks agree on name and bytes"),
            Column("accepted", "bool", "the match passed validation (check ok, or sizes differ where uneven splits "
                                       "are legal); only accepted matches count in waits"),
            Column("check", "text", "first failed validation: ok | op differs | size differs | size differs "
                                    "(uneven split) | kernels do not overlap (latest start > earliest end + 50 µs "
                                    "for all-reduce/all-gather/reduce-scatter/all-to-all/barrier)"),
            Column("skew_us", "us", "latest − earliest kernel start across ranks"),
            Column("straggler", "rank", "the rank whose kernel started last"),
            Column("transfer_us", "us", "shortest kernel duration across ranks: the collective once everyone arrived"),
            Column("end_spread_us", "us", "latest − earliest kernel end (a few µs for a correct match)"),
            Column("busbw_gbps", "GB/s", "bus bandwidth computed on transfer_us"),
        ),
        compute=lambda ctx: _matched(ctx)[0], needs=("collectives",), view=skew_view, order=60,
    ),
    Table(
        name="waits", scope="run", title="Cross-rank wait (one row per rank and matched collective)",
        doc="Accepted matches only (see instances.check). The text report shows the per-rank totals (from ranks) "
            "and, under them, how many matches were rejected and why.",
        columns=(
            Column("rank", "rank", "the rank"),
            Column("pg_name", "name", "process group"),
            Column("step", "step", "ProfilerStep"),
            Column("step_seq", "index", "ordinal within the step (see instances)"),
            Column("wait_us", "us", "max(0, min(own kernel end, latest kernel start over the ranks) − own kernel "
                                    "start): the part of this rank's kernel before the last peer arrived; at most "
                                    "the kernel's duration"),
            Column("is_straggler", "bool", "this rank started last"),
        ),
        compute=lambda ctx: _matched(ctx)[1], needs=("instances",), view=wait_view, order=50,
    ),
]
