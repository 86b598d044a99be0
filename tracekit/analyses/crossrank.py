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

import numpy as np
import pandas as pd

from tracekit.analyses.collectives import bus_factor

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
