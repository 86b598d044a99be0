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

**Point-to-point.** Send and recv involve two ranks, not the group: they take no place
in the group sequence (``step_seq`` -1) and are matched sender-to-receiver instead: the
``p2p_seq``-th send from rank s to rank d (peer from torch's ``Dst Rank``) is the
``p2p_seq``-th recv on d from s (``Src Rank``); ``matched_by`` is ``peer``, ``src`` / ``dst``
name the two, and the match is rejected when their byte counts differ. Transfers without a
recorded peer, or whose peer's trace is not loaded, are not matched; ``meta["p2p_matching"]``
counts them by reason (:func:`p2p_summary`).

**A subset of the world.** With fewer ranks loaded than a group has, a match holds only the
loaded ranks (``partial``): its skew and straggler are among them, and each wait is a lower
bound (the last loaded rank may itself have waited for a missing one). ``meta["partial"]``
gives the counts and the text report notes it beside the wait and skew tables.

Clock alignment: traces from several hosts have unrelated clocks. Then each
rank's offset is the median of (end − reference rank's end) over matched
instances (matched collectives end together), and it is subtracted before the
metrics above are computed.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping
from typing import ClassVar

import numpy as np
import pandas as pd

from msgspec import UNSET, UnsetType

from tracekit.analyses.collectives import bus_factor, p2p_kind
from tracekit.analyses.findings import Finding, FindingContext, rank_step_us, rounded, step_means
from tracekit.analyses.gpu_idle import GPU_IDLE_PCT, LAUNCH_BOUND_SHARE
from tracekit.analyses.registry import AnalysisWarning, Column, RunContext, Table, View, ViewOptions

NS_PER_US = 1000.0
KEY = ["pg_name", "step", "step_seq"]
INSTANCE_COLUMNS = ("pg_name", "step", "step_seq", "coll_name", "bytes", "ranks", "consistent", "accepted", "check",
                    "skew_us", "straggler", "transfer_us", "end_spread_us", "busbw_gbps", "matched_by", "src", "dst",
                    "p2p_seq", "partial")
WAIT_COLUMNS = ["rank", *KEY, "wait_us", "is_straggler", "straggler", "partial"]
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
    (see module doc; ``waits`` has the accepted instances only). Group collectives match by
    ``(pg, step, step_seq)``, send/recv sender-to-receiver by ``(src, dst, p2p_seq)``."""
    m = _shifted(_matchable(coll), offsets)
    p = _shifted(_p2p_matchable(coll), offsets)
    gi, gw = _match_groups(m)
    pi, pw = _match_p2p(p)
    inst = pd.concat([x for x in (gi, pi) if len(x)], ignore_index=True) if len(gi) or len(pi) else gi
    waits = pd.concat([x for x in (gw, pw) if len(x)], ignore_index=True) if len(gw) or len(pw) else gw
    return inst[list(INSTANCE_COLUMNS)], waits[WAIT_COLUMNS]


def _shifted(m: pd.DataFrame, offsets: dict[int, float] | None) -> pd.DataFrame:
    if offsets and len(m):
        off = m["rank"].map(offsets).fillna(0.0).to_numpy()
        m = m.assign(start_ns=m["start_ns"] - off, end_ns=m["end_ns"] - off)
    return m


def _p2p_matchable(coll: pd.DataFrame) -> pd.DataFrame:
    """Sends and recvs launched in the window whose peer is recorded (``p2p_seq`` >= 0)."""
    if "p2p_seq" not in coll or coll.empty:
        return coll.iloc[0:0]
    m = coll[(coll["p2p_seq"] >= 0) & (coll["start_ns"] >= 0) & ~coll["pre_window"].astype(bool)]
    return m.assign(pg_name=m["pg_name"].astype(object).fillna("?"),
                    kind=[p2p_kind(c) for c in m["coll_name"]])


def _match_p2p(p: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The k-th send from rank s to rank d is the k-th recv on d from s (see module doc)."""
    if p.empty:
        return pd.DataFrame(columns=list(INSTANCE_COLUMNS)), pd.DataFrame(columns=WAIT_COLUMNS)
    cols = ["rank", "peer", "p2p_seq", "pg_name", "step", "bytes", "start_ns", "end_ns", "dur_us"]
    snd = p[p["kind"] == "send"][cols].rename(columns={"rank": "src", "peer": "dst"})
    rcv = p[p["kind"] == "recv"][cols].rename(columns={"rank": "dst", "peer": "src"})
    pair = snd.merge(rcv, on=["src", "dst", "p2p_seq"], suffixes=("", "_r"))
    if pair.empty:
        return pd.DataFrame(columns=list(INSTANCE_COLUMNS)), pd.DataFrame(columns=WAIT_COLUMNS)
    last = np.maximum(pair["start_ns"], pair["start_ns_r"])
    same = (pair["bytes"] == pair["bytes_r"]) | (pair["bytes"].isna() & pair["bytes_r"].isna())
    transfer = np.minimum(pair["dur_us"], pair["dur_us_r"])
    inst = pd.DataFrame({
        "pg_name": pair["pg_name"], "step": pair["step"], "step_seq": -1, "coll_name": "send/recv",
        "bytes": np.fmax(pair["bytes"], pair["bytes_r"]), "ranks": 2, "consistent": same,
        "accepted": same, "check": np.where(same, OK, SIZE_DIFFERS),
        "skew_us": (pair["start_ns"] - pair["start_ns_r"]).abs() / NS_PER_US,
        "straggler": np.where(pair["start_ns_r"] >= pair["start_ns"], pair["dst"], pair["src"]),
        "transfer_us": transfer,
        "end_spread_us": (pair["end_ns"] - pair["end_ns_r"]).abs() / NS_PER_US,
        "busbw_gbps": np.fmax(pair["bytes"], pair["bytes_r"]) / 1e9 / (transfer / 1e6).where(transfer > 0),
        "matched_by": "peer", "src": pair["src"], "dst": pair["dst"], "p2p_seq": pair["p2p_seq"], "partial": False,
    })
    ok = pair[same.to_numpy()]
    lst = last[same.to_numpy()]
    strag = inst["straggler"][same.to_numpy()].to_numpy()
    side = []
    for who, sfx in (("src", ""), ("dst", "_r")):
        side.append(pd.DataFrame({
            "rank": ok[who].to_numpy(), "pg_name": ok["pg_name" + sfx].to_numpy(), "step": ok["step" + sfx].to_numpy(),
            "step_seq": -1, "wait_us": (np.minimum(ok["end_ns" + sfx], lst) - ok["start_ns" + sfx]).clip(lower=0)
            .to_numpy() / NS_PER_US, "is_straggler": ok[who].to_numpy() == strag, "straggler": strag,
            "partial": False}))
    return inst, pd.concat(side, ignore_index=True)


def _match_groups(m: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Group collectives (every member rank takes part) matched by ``(pg, step, step_seq)``."""
    if m.empty or m["rank"].nunique() < 2:
        return pd.DataFrame(columns=list(INSTANCE_COLUMNS)), pd.DataFrame(columns=WAIT_COLUMNS)
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
    inst = inst.reset_index().assign(matched_by="group", src=-1, dst=-1, p2p_seq=-1,
                                     partial=inst["ranks"].to_numpy() < inst["group_size"].to_numpy())
    ok = inst[inst["accepted"]]
    waits = m[["rank", *KEY, "start_ns", "end_ns"]].merge(ok[[*KEY, "straggler", "last_start", "partial"]], on=KEY)
    # the wait ends when the last peer starts, or when this rank's own kernel ends, whichever is first
    waits["wait_us"] = (np.minimum(waits["end_ns"], waits["last_start"]) - waits["start_ns"]).clip(lower=0) / NS_PER_US
    waits["is_straggler"] = waits["rank"] == waits["straggler"]
    return inst[list(INSTANCE_COLUMNS)], waits[WAIT_COLUMNS]


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


P2P_NO_PEER, P2P_PEER_MISSING, P2P_NO_COUNTERPART = (
    "peer not recorded", "peer's trace not loaded", "no counterpart in the peer's trace")


def p2p_summary(coll: pd.DataFrame, instances: pd.DataFrame, ranks: list[int]) -> dict[str, object]:
    """Send/recv transfers launched in the window (one per rank and kernel or op): how many were matched
    sender-to-receiver and why the others were not (:data:`P2P_NO_PEER`: no ``Dst Rank``/``Src Rank``
    in the trace, e.g. a bare NCCL ``SendRecv`` kernel; :data:`P2P_PEER_MISSING`; :data:`P2P_NO_COUNTERPART`)."""
    if coll.empty or "peer" not in coll:
        return {"transfers": 0, "matched": 0, "unmatched": {}}
    kinds = np.array([p2p_kind(c) for c in coll["coll_name"]], dtype=object)
    sel = (kinds != None) & ~coll["pre_window"].astype(bool).to_numpy()  # noqa: E711 - elementwise
    if not sel.any():
        return {"transfers": 0, "matched": 0, "unmatched": {}}
    c = coll[sel].assign(kind=kinds[sel])
    peer = instances[instances["matched_by"] == "peer"] if len(instances) else instances
    done = set()
    for s_, d_, k in zip(peer.get("src", []), peer.get("dst", []), peer.get("p2p_seq", [])):
        done |= {(int(s_), int(d_), "send", int(k)), (int(d_), int(s_), "recv", int(k))}
    key = zip(c["rank"].astype(int), c["peer"].astype(int), c["kind"], c["p2p_seq"].astype(int))
    matched = np.array([t in done for t in key], dtype=bool)
    known = (c["peer"].to_numpy() >= 0) & np.isin(c["kind"].to_numpy(dtype=object), ["send", "recv"])
    loaded = np.isin(c["peer"].to_numpy(), ranks)
    why = np.select([~known, ~loaded], [P2P_NO_PEER, P2P_PEER_MISSING], default=P2P_NO_COUNTERPART)[~matched]
    reasons = pd.Series(why).value_counts()
    return {"transfers": int(len(c)), "matched": int(matched.sum()),
            "unmatched": {str(k): int(v) for k, v in reasons.items()}}


def p2p_note(p2p: Mapping[str, object] | None) -> str | None:
    """One line on the send/recv transfers left out of the wait figures, or None."""
    if not p2p or not p2p.get("unmatched"):
        return None
    why = ", ".join(f"{n} {k}" for k, n in p2p["unmatched"].items())  # type: ignore[union-attr]
    return (f"send/recv: {p2p['matched']} of {p2p['transfers']} transfers matched sender-to-receiver; the others "
            f"({why}) are not matched and have no wait figure (point-to-point is never matched as a group "
            f"collective)")


def subset_facts(ranks: list[int], world_size: int) -> dict[str, object] | None:
    """``meta["partial"]``: the loaded ranks when fewer than ``world_size`` (None when all are there)."""
    if len(ranks) >= world_size:
        return None
    return {"ranks": len(ranks), "world_size": int(world_size), "missing": int(world_size - len(ranks))}


def subset_note(partial: Mapping[str, object] | None) -> str | None:
    """The note beside every cross-rank figure when ranks are missing from the trace set, or None."""
    if not partial:
        return None
    return (f"partial: {partial['ranks']} of {partial['world_size']} ranks are in the trace set; waits, skews, "
            f"stragglers and matches are among the loaded ranks only: each wait is a lower bound, and the last "
            f"loaded rank to arrive may itself have waited for a missing one")


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
        ctx.meta["p2p_matching"] = p2p_summary(coll, inst, sorted(ctx.traces.ranks))
        ctx.meta["partial"] = subset_facts(sorted(ctx.traces.ranks), ctx.traces.world_size)
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
        return View("Cross-rank wait", pd.DataFrame(), note=_notes(t, opts))
    out = r[["rank", "comm_total_us", "wait_total_us", "last_count"]].copy()
    out["wait_pct_of_comm"] = 100.0 * out["wait_total_us"] / out["comm_total_us"].where(out["comm_total_us"] > 0)
    # instances this rank took part in (with several process groups, not every instance)
    w = t["waits"] if "waits" in t else pd.DataFrame()
    n = w.groupby("rank").size() if len(w) else pd.Series(dtype=float)
    out["matched"] = out["rank"].map(n).fillna(0).astype(int)
    out["last_pct"] = 100.0 * out["last_count"] / out["matched"].where(out["matched"] > 0)
    return View("Cross-rank wait (totals over the trace window)",
                out[["rank", "matched", "wait_total_us", "wait_pct_of_comm", "last_count", "last_pct"]],
                note=_notes(t, opts, match_note(match_summary(t["instances"])) if "instances" in t else None))


def _notes(t: Mapping[str, pd.DataFrame], opts: ViewOptions, *first: str | None) -> str | None:
    """The notes that qualify the cross-rank figures (match validation, send/recv, missing ranks), one line."""
    meta = getattr(opts, "meta", None) or {}
    p2p = meta.get("p2p_matching")
    parts = [n for n in (*first, p2p_note(p2p), subset_note(meta.get("partial"))) if n]
    return "; ".join(parts) or None


def skew_view(t: Mapping[str, pd.DataFrame], opts: ViewOptions, n: int = 5) -> View | None:
    """The ``n`` matched collectives with the largest arrival skew."""
    i = t["instances"]
    if i.empty:
        return None
    cols = ["pg_name", "step", "step_seq", "coll_name", "bytes", "skew_us", "straggler", "transfer_us", "busbw_gbps"]
    return View("Largest arrival skew", i.sort_values("skew_us", ascending=False).head(n)[cols],
                note=subset_note((getattr(opts, "meta", None) or {}).get("partial")))


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
            Column("matched_by", "name", "group: the step_seq-th collective of the group on every rank; peer: a send "
                                         "matched to its recv by (src, dst, p2p_seq)"),
            Column("src", "rank", "peer matches: the sending rank (-1 for group matches)"),
            Column("dst", "rank", "peer matches: the receiving rank (-1 for group matches)"),
            Column("p2p_seq", "index", "peer matches: the send's ordinal among src's sends to dst (-1 for group "
                                       "matches)"),
            Column("partial", "bool", "fewer ranks took part than the group has (ranks missing from the trace set): "
                                      "skew, straggler and waits are among the loaded ranks only"),
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
            Column("straggler", "rank", "the rank that started last (of the ranks in the trace set)"),
            Column("partial", "bool", "ranks of the group are missing from the trace set: wait_us is a lower bound "
                                      "and the straggler is only the last of the loaded ranks"),
        ),
        compute=lambda ctx: _matched(ctx)[1], needs=("instances",), view=wait_view, order=50,
    ),
]


# -- findings read from the cross-rank waits (see tracekit.analyses.findings) -----------------------

#: a rank "waits significantly" when this % of its communication kernel time is waiting for a peer
#: (NCCL kernels spin while peers arrive; below ~20% the skew is launch jitter)
WAIT_SHARE_PCT = 20.0
#: ...and the wait is at least this many µs per step (tiny runs have noisy shares)
WAIT_MIN_US_PER_STEP = 100.0


class RankWaiting(Finding, tag="rank_waiting"):
    """``rank_waiting``: a rank's communication kernels spend at least :data:`WAIT_SHARE_PCT` % of their time
    (and :data:`WAIT_MIN_US_PER_STEP` µs per step) waiting for a peer to arrive; the message names the late
    rank and, from its ``gpu_idle`` rows, why it is late. Cost: the wait per step. Never collapsed: each
    rank names its own straggler."""

    wait_share_pct: float | None
    wait_us_per_step: float | None
    straggler: int | None
    comm_us: float | None
    partial_wait_share: float | None
    #: the straggler's GPU idle figures, when it has ``gpu_idle`` rows
    straggler_gpu_idle_pct: float | None | UnsetType = UNSET
    straggler_launch_idle_pct: float | None | UnsetType = UNSET
    straggler_kernels_per_step: float | None | UnsetType = UNSET
    #: cpu_launch_bound / gpu_idle / more_compute / unknown; None when the straggler cannot be examined
    late_cause: str | None = None
    #: with ranks missing from the trace set: the loaded rank that arrived last (not blamed)
    last_loaded_arrival: int | None | UnsetType = UNSET

    ORDER: ClassVar[int] = 30
    TIMING: ClassVar[bool] = True
    PER_RANK: ClassVar[bool] = True

    @classmethod
    def detect(cls, ctx: FindingContext) -> list[RankWaiting]:
        return rank_waiting(ctx.result)


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
    ev = {"straggler_gpu_idle_pct": rounded(idle_pct), "straggler_launch_idle_pct": rounded(launch_pct),
          "straggler_kernels_per_step": rounded(kernels)}
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


def rank_waiting(result: Any) -> list[RankWaiting]:
    """The :class:`RankWaiting` findings of ``result`` (``waits``, ``ranks``, ``instances``, ``gpu_idle``)."""
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
    means = step_means(result)
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
        out.append(RankWaiting(rank=int(rank), message=msg, cost_us=cost, step_us=rank_step_us(result, rank, means),
                               wait_share_pct=rounded(sh), wait_us_per_step=rounded(cost), straggler=straggler,
                               comm_us=rounded(cm), partial_wait_share=rounded(100.0 * partial.get(rank, 0.0)),
                               **cause_ev))
    return out


def _partial_wait_share(w: pd.DataFrame) -> dict[int, float]:
    """Per rank, the share (0-1) of its wait spent in matches with ranks missing from the trace set."""
    if "partial" not in w or w.empty:
        return {}
    tot = w.groupby("rank")["wait_us"].sum()
    part = w[w["partial"].astype(bool)].groupby("rank")["wait_us"].sum().reindex(tot.index, fill_value=0.0)
    return {int(k): float(v) for k, v in (part / tot.where(tot > 0)).fillna(0.0).items()}


FINDINGS = [RankWaiting]
