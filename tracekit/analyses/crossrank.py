"""Cross-rank matching of collectives: waiting versus transfer.

Matching: the ``step_seq``-th collective of process group P in step S on one
rank is the same collective as on every other rank (only collectives launched
inside the window take part). A match is *consistent* when all ranks agree on
the collective name and byte count.

Per instance (one row per matched collective):

- ``skew_us`` = latest kernel start − earliest kernel start across ranks.
- ``straggler``: the rank whose kernel started last (the one the others waited for).
- ``transfer_us`` = the shortest kernel duration across ranks: the time the
  collective takes once every rank has arrived.
- ``end_spread_us`` = latest end − earliest end (a few µs for a correct match).

Per rank and instance (table ``waits``): ``wait_us`` = latest start − this
rank's start: time the rank's kernel spent waiting for a peer, not moving data.

Clock alignment: traces from several hosts have unrelated clocks. Then each
rank's offset is the median of (end − reference rank's end) over matched
instances (matched collectives end together), and it is subtracted before the
metrics above are computed.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping

import numpy as np
import pandas as pd

from tracekit.analyses.collectives import bus_factor
from tracekit.analyses.registry import AnalysisWarning, Column, RunContext, Table, View, ViewOptions

NS_PER_US = 1000.0
KEY = ["pg_name", "step", "step_seq"]
INSTANCE_COLUMNS = ("pg_name", "step", "step_seq", "coll_name", "bytes", "ranks", "consistent", "skew_us",
                    "straggler", "transfer_us", "end_spread_us", "busbw_gbps")


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
    """Match collectives across ranks; returns ``(instances, waits)`` (see module doc)."""
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
    inst["skew_us"] = (inst["last_start"] - inst["first_start"]) / NS_PER_US
    inst["end_spread_us"] = (inst["last_end"] - inst["first_end"]) / NS_PER_US
    idx_last = m.loc[grp["start_ns"].idxmax().to_numpy(), ["rank"]]
    inst["straggler"] = idx_last["rank"].to_numpy()
    factor = np.array([bus_factor(c, int(n)) for c, n in zip(inst["coll_name"], inst["group_size"])])
    inst["busbw_gbps"] = inst["bytes"] / 1e9 / (inst["transfer_us"] / 1e6).where(inst["transfer_us"] > 0) * factor
    inst = inst.reset_index()
    waits = m[["rank", *KEY, "start_ns"]].merge(inst[[*KEY, "straggler"]].assign(
        last_start=grp["start_ns"].max().to_numpy()), on=KEY)
    waits["wait_us"] = (waits["last_start"] - waits["start_ns"]) / NS_PER_US
    waits["is_straggler"] = waits["rank"] == waits["straggler"]
    return inst[list(INSTANCE_COLUMNS)], waits[["rank", *KEY, "wait_us", "is_straggler"]]


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
        if len(inst) and not inst["consistent"].all():
            bad = inst[~inst["consistent"]]
            warnings.warn(f"{len(bad)} matched collective(s) differ in name or size across ranks "
                          f"(first: pg {bad.iloc[0]['pg_name']}, step {bad.iloc[0]['step']}, "
                          f"#{bad.iloc[0]['step_seq']}); the ranks may not run the same program",
                          AnalysisWarning, stacklevel=2)
        return inst, waits

    return ctx.memo("crossrank.match", run)


def wait_view(t: Mapping[str, pd.DataFrame], opts: ViewOptions) -> View:
    """Per rank: total wait, its share of the rank's comm time, and how often the rank arrived last."""
    r = t["ranks"]
    if r.empty or r["wait_us"].isna().all():
        return View("Cross-rank wait", pd.DataFrame())
    out = r[["rank", "comm_us", "wait_us", "last_count"]].copy()
    out["wait_pct_of_comm"] = 100.0 * out["wait_us"] / out["comm_us"].where(out["comm_us"] > 0)
    # instances this rank took part in (with several process groups, not every instance)
    w = t["waits"] if "waits" in t else pd.DataFrame()
    n = w.groupby("rank").size() if len(w) else pd.Series(dtype=float)
    out["matched"] = out["rank"].map(n).fillna(0).astype(int)
    out["last_pct"] = 100.0 * out["last_count"] / out["matched"].where(out["matched"] > 0)
    return View("Cross-rank wait", out[["rank", "matched", "wait_us", "wait_pct_of_comm", "last_count", "last_pct"]])


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
        doc="The text report shows the per-rank totals (from ranks).",
        columns=(
            Column("rank", "rank", "the rank"),
            Column("pg_name", "name", "process group"),
            Column("step", "step", "ProfilerStep"),
            Column("step_seq", "index", "ordinal within the step (see instances)"),
            Column("wait_us", "us", "latest kernel start over the ranks − this rank's start: time this rank's "
                                    "kernel waited for a peer"),
            Column("is_straggler", "bool", "this rank started last"),
        ),
        compute=lambda ctx: _matched(ctx)[1], needs=("instances",), view=wait_view, order=50,
    ),
]
