"""Cross-rank matching of collectives: waiting versus transfer.

Matching: the ``step_seq``-th collective of process group P in step S on one
rank is the same collective as on every other rank (only collectives launched
inside the window take part). A match is *consistent* when all ranks agree on
the collective name and byte count.

**Validation.** A match built by position can be wrong (a rank that skipped a
collective shifts every later one), so each is checked, in this order, and the
first failed check is its ``check``:

- ``op differs``: the ranks disagree on the collective name or on the dtype (a byte and a
  long all-to-all are two collectives, whatever their splits) -> rejected;
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
from typing import Any, ClassVar

import numpy as np

from msgspec import UNSET, UnsetType

from tracekit.analyses.collectives import bus_factor, p2p_kind
from tracekit.analyses.findings import Finding, FindingContext, Quote, rank_step_us, rounded, step_means
from tracekit.analyses.gpu_idle import GPU_IDLE_PCT, LAUNCH_BOUND_SHARE
from tracekit.analyses.registry import AnalysisWarning, Column, RunContext, Table, View, ViewOptions
from tracekit.traces import cols as C
from tracekit.traces.cols import Cols

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


def _per_value(values: np.ndarray, fn: Any) -> np.ndarray:
    """``fn`` of each element of ``values`` (an object column), called once per distinct value."""
    items = values.tolist()
    memo = {v: fn(v) for v in set(items)}
    return C.obj(list(map(memo.__getitem__, items)))


def _value_counts(values: np.ndarray) -> list[tuple[Any, int]]:
    """``(value, count)`` by count descending, ties in order of first appearance: ``Series.value_counts()``."""
    counts: dict[Any, int] = {}
    for v in values.tolist():
        counts[v] = counts.get(v, 0) + 1
    return sorted(counts.items(), key=lambda kv: -kv[1])  # sorted() is stable: ties keep first appearance


def _filled(text: np.ndarray, fill: str) -> np.ndarray:
    """An object column with its missing values replaced by ``fill``."""
    out = np.asarray(text).astype(object)
    miss = C.isna(out)
    if miss.any():
        out = out.copy()
        out[miss] = fill
    return out


class _Runs:
    """The rows of each group (``codes``: 0..n-1 per row, every group non-empty, -1 for none) as contiguous
    runs of one stable sort: reductions by ``reduceat`` in row order within a group, one sort for all (a
    :class:`~tracekit.traces.cols.Groups` reduction sorts once each)."""

    def __init__(self, codes: np.ndarray, n: int) -> None:
        o = np.argsort(codes, kind="stable")
        self.order = o[np.searchsorted(codes[o], 0):]  # -1 (no group) sorts first
        self.codes = codes[self.order]
        self.starts = (np.flatnonzero(np.r_[True, self.codes[1:] != self.codes[:-1]]) if len(self.order)
                       else np.zeros(0, dtype=np.int64))
        self.n = n

    def reduce(self, ufunc: np.ufunc, values: np.ndarray) -> np.ndarray:
        """``ufunc`` over each group's values (np.fmax / np.fmin skip NaN as pandas' max / min do)."""
        v = np.asarray(values)[self.order]
        return ufunc.reduceat(v, self.starts) if len(v) else v[:0]

    def first_row_of(self, mask_sorted: np.ndarray) -> np.ndarray:
        """Per group with one, the row (position in the table) of its first row in row order where
        ``mask_sorted`` (given in run order) holds, and that group's code."""
        pos = np.flatnonzero(mask_sorted)
        pos = pos[np.r_[True, self.codes[pos][1:] != self.codes[pos][:-1]]] if len(pos) else pos
        return self.order[pos], self.codes[pos]

    def first(self, values: np.ndarray) -> np.ndarray:
        """The first present value of each group in row order (``GroupBy.first()``; None / NaN for none)."""
        values = np.asarray(values)
        rows, codes = self.first_row_of(~C.isna(values[self.order]))
        if len(codes) == self.n:
            return values[rows]
        out = np.full(self.n, None, dtype=object) if values.dtype.kind == "O" else np.full(self.n, np.nan)
        out[codes] = values[rows]
        return out

    def several(self, values: np.ndarray, first: np.ndarray) -> np.ndarray:
        """Whether each group holds more than one distinct present value (``nunique() > 1``), given its
        :meth:`first` present value."""
        v = np.asarray(values)[self.order]
        differs = ~C.isna(v) & np.asarray(v != first[self.codes], dtype=bool)
        return np.bincount(self.codes[differs], minlength=self.n) > 0

    def nunique(self, values: np.ndarray) -> np.ndarray:
        """Distinct values per group of an integer column without missing values (int64)."""
        v = np.asarray(values)[self.order]
        codes = self.codes
        step = np.diff(v) if len(v) else v
        inside = codes[1:] == codes[:-1]
        if (step[inside] < 0).any():  # not ascending within each group (ranks stacked out of order): sort
            o = np.lexsort((v, codes))
            v, codes = v[o], codes[o]
            inside = codes[1:] == codes[:-1]
        new = np.r_[True, ~inside | (v[1:] != v[:-1])] if len(v) else np.zeros(0, dtype=bool)
        return np.bincount(codes[new], minlength=self.n).astype(np.int64)


def _check(inst: Mapping[str, np.ndarray]) -> np.ndarray:
    """The first failed validation of each matched instance (module doc), or ``ok`` (object column)."""
    kind = _per_value(np.asarray(inst["coll_name"], dtype=object), _norm)
    symmetric = _per_value(kind, lambda k: k in _SYMMETRIC).astype(bool)
    uneven_ok = _per_value(kind, lambda k: k in _UNEVEN_OK).astype(bool)
    no_overlap = symmetric & (inst["last_start"] - inst["first_end"] > OVERLAP_TOLERANCE_US * NS_PER_US)
    size = inst["n_bytes"] > 1
    out = np.select([inst["n_names"] > 1, size & ~uneven_ok, no_overlap, size],
                    [OP_DIFFERS, SIZE_DIFFERS, NO_OVERLAP, UNEVEN], default=OK)
    return out.astype(object)


#: the columns of ``collectives`` the group match reads
_MATCH_COLUMNS = ["rank", *KEY, "coll_name", "dtype", "bytes", "group_size", "start_ns", "end_ns", "dur_us"]


def _matchable(coll: Any, columns: list[str] | None = None) -> Cols:
    """The collectives launched in the window with a place in their group's sequence, ``pg_name`` filled
    (``?``) so that an unnamed group still matches; every column, or just ``columns``."""
    coll = C.as_cols(coll)
    if not C.nrows(coll):
        return coll
    keep = (~np.asarray(coll["pre_window"]).astype(bool)) & (coll["step_seq"] >= 0) & (coll["start_ns"] >= 0)
    m = C.take(coll if columns is None else C.select(coll, columns), np.asarray(keep, dtype=bool))
    m["pg_name"] = _filled(m["pg_name"], "?")
    return m


def clock_offsets(coll: Any, reference_rank: int | None = None) -> dict[int, float]:
    """Per-rank clock offset in ns (to subtract) so matched collectives end together: the median over the
    matches of (its end − the reference rank's end)."""
    m = _matchable(coll, ["rank", *KEY, "end_ns"])
    if not C.nrows(m):
        return {}
    ranks, rcode = np.unique(m["rank"], return_inverse=True)
    ref = reference_rank if reference_rank in ranks else ranks[0]
    g = C.Groups(m, KEY)
    end = np.asarray(m["end_ns"])
    # the first present end per (match, rank): pandas' pivot_table(aggfunc="first")
    cell = np.where(g.codes >= 0, g.codes * len(ranks) + rcode, -1)
    cell[C.isna(end)] = -1
    cells, first = np.unique(cell, return_index=True)
    first, cells = first[cells >= 0], cells[cells >= 0]
    vals = end[first]
    key, rk = cells // len(ranks), cells % len(ranks)
    if len(cells) < g.n * len(ranks) or vals.dtype.kind not in "iu":
        vals = vals.astype(np.float64)  # the pivot has holes: its columns are float, subtracted as floats
    ref_code = int(np.searchsorted(ranks, ref))
    ref_of_key = np.full(g.n, -1, dtype=np.int64)
    ref_of_key[key[rk == ref_code]] = np.flatnonzero(rk == ref_code)
    has = ref_of_key[key] >= 0
    diff = (vals[has] - vals[ref_of_key[key[has]]]).astype(np.float64)
    med = np.nan_to_num(C.group_median(diff, rk[has], len(ranks)), nan=0.0)  # (0 where a rank has none)
    return {int(r): float(med[i]) for i, r in enumerate(ranks)}


def match(coll: Any, offsets: dict[int, float] | None = None) -> tuple[Cols, Cols]:
    """Match collectives across ranks and validate the matches; returns ``(instances, waits)`` as columns
    (see module doc; ``waits`` has the accepted instances only). Group collectives match by
    ``(pg, step, step_seq)``, send/recv sender-to-receiver by ``(src, dst, p2p_seq)``. ``coll``: the
    ``collectives`` table (columns or a frame)."""
    coll = C.as_cols(coll)
    m = _shifted(_matchable(coll, _MATCH_COLUMNS), offsets)
    p = _shifted(_p2p_matchable(coll), offsets)
    gi, gw = _match_groups(m)
    pi, pw = _match_p2p(p)
    inst = C.concat([gi, pi]) if C.nrows(gi) or C.nrows(pi) else gi
    waits = C.concat([gw, pw]) if C.nrows(gw) or C.nrows(pw) else gw
    return C.select(inst, INSTANCE_COLUMNS), C.select(waits, WAIT_COLUMNS)


def _shifted(m: Cols, offsets: dict[int, float] | None) -> Cols:
    if offsets and C.nrows(m):
        ranks, inv = np.unique(m["rank"], return_inverse=True)
        off = np.array([float(offsets.get(int(r), np.nan)) for r in ranks], dtype=np.float64)[inv]
        off[np.isnan(off)] = 0.0
        m = {**m, "start_ns": m["start_ns"] - off, "end_ns": m["end_ns"] - off}
    return m


def _p2p_matchable(coll: Cols) -> Cols:
    """Sends and recvs launched in the window whose peer is recorded (``p2p_seq`` >= 0), with their ``kind``."""
    if "p2p_seq" not in coll or not C.nrows(coll):
        return {k: v[:0] for k, v in coll.items()}
    keep = (coll["p2p_seq"] >= 0) & (coll["start_ns"] >= 0) & ~np.asarray(coll["pre_window"]).astype(bool)
    m = C.take(coll, np.asarray(keep, dtype=bool))
    return {**m, "pg_name": _filled(m["pg_name"], "?"), "kind": _per_value(np.asarray(m["coll_name"]), p2p_kind)}


_P2P_SIDE = ["rank", "peer", "p2p_seq", "pg_name", "step", "bytes", "start_ns", "end_ns", "dur_us"]


def _no_match() -> tuple[Cols, Cols]:
    return C.empty(INSTANCE_COLUMNS), C.empty(WAIT_COLUMNS)


def _match_p2p(p: Cols) -> tuple[Cols, Cols]:
    """The k-th send from rank s to rank d is the k-th recv on d from s (see module doc)."""
    if not C.nrows(p):
        return _no_match()
    kind = p["kind"]
    snd = {{"rank": "src", "peer": "dst"}.get(c, c): p[c][kind == "send"] for c in _P2P_SIDE}
    rcv = {{"rank": "dst", "peer": "src"}.get(c, c if c == "p2p_seq" else c + "_r"): p[c][kind == "recv"]
           for c in _P2P_SIDE}
    pair = C.merge(snd, rcv, on=["src", "dst", "p2p_seq"], how="inner")
    n = C.nrows(pair)
    if not n:
        return _no_match()
    start, start_r, end, end_r = pair["start_ns"], pair["start_ns_r"], pair["end_ns"], pair["end_ns_r"]
    b, b_r = pair["bytes"], pair["bytes_r"]
    same = np.asarray((b == b_r) | (C.isna(b) & C.isna(b_r)), dtype=bool)
    transfer = np.minimum(pair["dur_us"], pair["dur_us_r"])
    straggler = np.where(start_r >= start, pair["dst"], pair["src"])
    with np.errstate(invalid="ignore", divide="ignore"):
        busbw = np.fmax(b, b_r) / 1e9 / np.where(transfer > 0, transfer / 1e6, np.nan)
    inst = {
        "pg_name": pair["pg_name"], "step": pair["step"], "step_seq": np.full(n, -1, dtype=np.int64),
        "coll_name": C.obj(["send/recv"] * n), "bytes": np.fmax(b, b_r), "ranks": np.full(n, 2, dtype=np.int64),
        "consistent": same, "accepted": same.copy(), "check": np.where(same, OK, SIZE_DIFFERS).astype(object),
        "skew_us": np.abs(start - start_r) / NS_PER_US, "straggler": straggler, "transfer_us": transfer,
        "end_spread_us": np.abs(end - end_r) / NS_PER_US, "busbw_gbps": busbw,
        "matched_by": C.obj(["peer"] * n), "src": pair["src"], "dst": pair["dst"], "p2p_seq": pair["p2p_seq"],
        "partial": np.zeros(n, dtype=bool),
    }
    ok = C.take(pair, same)
    last = np.maximum(start, start_r)[same]
    strag = straggler[same]
    k = len(strag)
    sides = [{"rank": ok[who], "pg_name": ok["pg_name" + sfx], "step": ok["step" + sfx],
              "step_seq": np.full(k, -1, dtype=np.int64),
              "wait_us": np.maximum(np.minimum(ok["end_ns" + sfx], last) - ok["start_ns" + sfx], 0) / NS_PER_US,
              "is_straggler": ok[who] == strag, "straggler": strag, "partial": np.zeros(k, dtype=bool)}
             for who, sfx in (("src", ""), ("dst", "_r"))]
    return inst, C.concat(sides, WAIT_COLUMNS)


def _match_groups(m: Cols) -> tuple[Cols, Cols]:
    """Group collectives (every member rank takes part) matched by ``(pg, step, step_seq)``."""
    if not C.nrows(m) or len(np.unique(m["rank"])) < 2:
        return _no_match()
    g = C.Groups(m, KEY)
    runs = _Runs(g.codes, g.n)
    start, end = np.asarray(m["start_ns"]), np.asarray(m["end_ns"])
    inst: Cols = dict(g.keys)
    names, nbytes = runs.first(m["coll_name"]), runs.reduce(np.fmax, m["bytes"])
    # n_names / n_bytes: only "more than one" matters (the nunique of the module doc's checks)
    dtypes = np.asarray(m["dtype"], dtype=object) if "dtype" in m else np.full(C.nrows(m), None, dtype=object)
    differs = runs.several(m["coll_name"], names) | runs.several(dtypes, runs.first(dtypes))
    inst.update(coll_name=names, n_names=differs.astype(np.int64) + 1,
                bytes=nbytes, n_bytes=(runs.reduce(np.fmin, m["bytes"]) < nbytes).astype(np.int64) + 1,
                ranks=runs.nunique(m["rank"]),
                first_start=runs.reduce(np.fmin, start), last_start=runs.reduce(np.fmax, start),
                first_end=runs.reduce(np.fmin, end), last_end=runs.reduce(np.fmax, end),
                transfer_us=runs.reduce(np.fmin, m["dur_us"]), group_size=runs.reduce(np.fmax, m["group_size"]))
    inst["consistent"] = (inst["n_names"] <= 1) & (inst["n_bytes"] <= 1)
    inst["check"] = _check(inst)
    inst["accepted"] = np.isin(inst["check"], [OK, UNEVEN])
    inst["skew_us"] = (inst["last_start"] - inst["first_start"]) / NS_PER_US
    inst["end_spread_us"] = (inst["last_end"] - inst["first_end"]) / NS_PER_US
    # the rank whose kernel started last: the first row (in row order) at its group's latest start
    is_last = start[runs.order] == inst["last_start"][runs.codes]
    inst["straggler"] = np.asarray(m["rank"])[runs.first_row_of(is_last)[0]]
    factor = _bus_factors(inst["coll_name"], inst["group_size"])
    transfer = inst["transfer_us"]
    with np.errstate(invalid="ignore", divide="ignore"):
        inst["busbw_gbps"] = inst["bytes"] / 1e9 / np.where(transfer > 0, transfer / 1e6, np.nan) * factor
    n = g.n
    inst.update(matched_by=C.obj(["group"] * n), src=np.full(n, -1, dtype=np.int64),
                dst=np.full(n, -1, dtype=np.int64), p2p_seq=np.full(n, -1, dtype=np.int64),
                partial=inst["ranks"] < inst["group_size"])
    # one wait row per row of an accepted match, in row order
    code = g.codes
    rows = np.flatnonzero((code >= 0) & inst["accepted"][np.maximum(code, 0)]) if n else np.zeros(0, np.int64)
    c = code[rows]
    last_start = inst["last_start"][c]
    waits = {"rank": m["rank"][rows], "pg_name": m["pg_name"][rows], "step": m["step"][rows],
             "step_seq": m["step_seq"][rows],
             # the wait ends when the last peer starts, or when this rank's own kernel ends, whichever is first
             "wait_us": np.maximum(np.minimum(end[rows], last_start) - start[rows], 0) / NS_PER_US,
             "straggler": inst["straggler"][c], "partial": inst["partial"][c]}
    waits["is_straggler"] = waits["rank"] == waits["straggler"]
    return C.select(inst, INSTANCE_COLUMNS), C.select(waits, WAIT_COLUMNS)


def _bus_factors(coll_name: np.ndarray, group_size: np.ndarray) -> np.ndarray:
    """:func:`bus_factor` of each instance, computed once per distinct (collective, group size)."""
    pairs = list(zip(np.asarray(coll_name, dtype=object).tolist(), np.asarray(group_size).tolist()))
    memo = {pr: bus_factor(pr[0], int(pr[1])) for pr in set(pairs)}
    return np.array([memo[pr] for pr in pairs], dtype=np.float64)


def match_summary(instances: Any) -> dict[str, object]:
    """``{"matched", "accepted", "rejected", "rejected_by": {check: n}, "flagged": {check: n}}``."""
    instances = C.as_cols(instances)
    if not C.nrows(instances):
        return {"matched": 0, "accepted": 0, "rejected": 0, "rejected_by": {}, "flagged": {}}
    acc = np.asarray(instances["accepted"]).astype(bool)
    counts = _value_counts(np.asarray(instances["check"], dtype=object))
    return {"matched": int(len(acc)), "accepted": int(acc.sum()), "rejected": int((~acc).sum()),
            "rejected_by": {str(k): int(v) for k, v in counts if k not in (OK, UNEVEN)},
            "flagged": {str(k): int(v) for k, v in counts if k == UNEVEN}}


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


def p2p_summary(coll: Any, instances: Any, ranks: list[int]) -> dict[str, object]:
    """Send/recv transfers launched in the window (one per rank and kernel or op): how many were matched
    sender-to-receiver and why the others were not (:data:`P2P_NO_PEER`: no ``Dst Rank``/``Src Rank``
    in the trace, e.g. a bare NCCL ``SendRecv`` kernel; :data:`P2P_PEER_MISSING`; :data:`P2P_NO_COUNTERPART`)."""
    coll, instances = C.as_cols(coll), C.as_cols(instances)
    if not C.nrows(coll) or "peer" not in coll:
        return {"transfers": 0, "matched": 0, "unmatched": {}}
    kinds = _per_value(np.asarray(coll["coll_name"], dtype=object), p2p_kind)
    sel = ~C.isna(kinds) & ~np.asarray(coll["pre_window"]).astype(bool)
    if not sel.any():
        return {"transfers": 0, "matched": 0, "unmatched": {}}
    c = {**C.take(coll, sel), "kind": kinds[sel]}
    peer = C.take(instances, instances["matched_by"] == "peer") if C.nrows(instances) else instances
    done = set()
    for s_, d_, k in zip(peer.get("src", []), peer.get("dst", []), peer.get("p2p_seq", [])):
        done |= {(int(s_), int(d_), "send", int(k)), (int(d_), int(s_), "recv", int(k))}
    key = zip(c["rank"].astype(int).tolist(), c["peer"].astype(int).tolist(), c["kind"].tolist(),
              c["p2p_seq"].astype(int).tolist())
    matched = np.array([t in done for t in key], dtype=bool)
    known = (c["peer"] >= 0) & np.isin(c["kind"], ["send", "recv"])
    loaded = np.isin(c["peer"], ranks)
    why = np.select([~known, ~loaded], [P2P_NO_PEER, P2P_PEER_MISSING], default=P2P_NO_COUNTERPART)[~matched]
    return {"transfers": int(C.nrows(c)), "matched": int(matched.sum()),
            "unmatched": {str(k): int(v) for k, v in _value_counts(why.astype(object))}}


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


def wait_summary(waits: Any, instances: Any) -> Cols:
    """Per rank (columns): ``wait_us`` (total), ``matched`` instances, ``last_count`` (times it was the
    straggler)."""
    waits = C.as_cols(waits)
    if not C.nrows(waits):
        return C.empty(["rank", "wait_us", "matched", "last_count"])
    g = C.Groups(waits, ["rank"])
    return {"rank": g.keys["rank"], "wait_us": g.sum(waits["wait_us"]), "matched": g.size(),
            "last_count": g.sum(np.asarray(waits["is_straggler"]))}


# -- registered tables (see tracekit.analyses.registry) ------------------------------------------


def _matched(ctx: RunContext) -> tuple[Cols, Cols]:
    """``(instances, waits)`` once per run; aligns clocks first when asked (recorded in ``ctx.meta``)."""
    def run() -> tuple[Cols, Cols]:
        coll = C.as_cols(ctx.tables["collectives"])
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
            i = int(np.flatnonzero(~np.asarray(inst["accepted"]).astype(bool))[0])
            warnings.warn(f"{match_note(summary)} (first rejected: pg {inst['pg_name'][i]}, step "
                          f"{inst['step'][i]}, #{inst['step_seq'][i]}, {inst['check'][i]}); the ranks "
                          f"may not run the same program, or their clocks disagree (see --align)",
                          AnalysisWarning, stacklevel=2)
        return inst, waits

    return ctx.memo("crossrank.match", run)


def wait_view(t: Mapping[str, Any], opts: ViewOptions) -> View:
    """Per rank: total wait, its share of the rank's comm time, and how often the rank arrived last."""
    r = C.as_cols(t["ranks"])
    if not C.nrows(r) or C.isna(r["wait_total_us"]).all():
        return View("Cross-rank wait", {}, note=_notes(t, opts))
    comm, last = r["comm_total_us"], r["last_count"]
    with np.errstate(invalid="ignore", divide="ignore"):
        wait_pct = 100.0 * r["wait_total_us"] / np.where(comm > 0, comm, np.nan)
    # instances this rank took part in (with several process groups, not every instance)
    w = C.as_cols(t["waits"]) if "waits" in t else {}
    matched = np.zeros(C.nrows(r), dtype=np.int64)
    if C.nrows(w):
        g = C.Groups(w, ["rank"])
        keys = g.keys["rank"]
        pos = np.clip(np.searchsorted(keys, r["rank"]), 0, max(len(keys) - 1, 0))
        found = keys[pos] == r["rank"]
        matched[found] = g.size()[pos[found]]
    with np.errstate(invalid="ignore", divide="ignore"):
        last_pct = 100.0 * last / np.where(matched > 0, matched, np.nan)
    body = {"rank": r["rank"], "matched": matched, "wait_total_us": r["wait_total_us"],
            "wait_pct_of_comm": wait_pct, "last_count": last, "last_pct": last_pct}
    return View("Cross-rank wait (totals over the trace window)", body,
                note=_notes(t, opts, match_note(match_summary(t["instances"])) if "instances" in t else None))


def _notes(t: Mapping[str, Any], opts: ViewOptions, *first: str | None) -> str | None:
    """The notes that qualify the cross-rank figures (match validation, send/recv, missing ranks), one line."""
    meta = getattr(opts, "meta", None) or {}
    p2p = meta.get("p2p_matching")
    parts = [n for n in (*first, p2p_note(p2p), subset_note(meta.get("partial"))) if n]
    return "; ".join(parts) or None


def _largest_first(values: np.ndarray) -> np.ndarray:
    """Row positions by ``values`` descending, NaN last, ties as ``sort_values(ascending=False)`` (its
    default quicksort) orders them: the order pandas' ``nargsort`` gives."""
    values = np.asarray(values, dtype=np.float64)
    miss = np.isnan(values)
    idx = np.flatnonzero(~miss)[::-1]
    indexer = idx[values[~miss][::-1].argsort(kind="quicksort")][::-1]
    return np.concatenate([indexer, np.flatnonzero(miss)])


def skew_view(t: Mapping[str, Any], opts: ViewOptions, n: int = 5) -> View | None:
    """The ``n`` matched collectives with the largest arrival skew."""
    i = C.as_cols(t["instances"])
    if not C.nrows(i):
        return None
    cols = ["pg_name", "step", "step_seq", "coll_name", "bytes", "skew_us", "straggler", "transfer_us", "busbw_gbps"]
    return View("Largest arrival skew", C.take(C.select(i, cols), _largest_first(i["skew_us"])[:n]),
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
    #: the GPU compute per step of this rank and of the straggler (``ranks.compute_per_step_us``), when the
    #: message compares them (late cause ``more_compute``)
    compute_us_per_step: float | None | UnsetType = UNSET
    straggler_compute_us_per_step: float | None | UnsetType = UNSET
    #: cpu_launch_bound / gpu_idle / more_compute / unknown; None when the straggler cannot be examined
    late_cause: str | None = None
    #: with ranks missing from the trace set: the loaded rank that arrived last (not blamed)
    last_loaded_arrival: int | None | UnsetType = UNSET

    QUOTES: ClassVar[dict[str, Quote]] = {
        "step_us": Quote("steps", "step_us", "mean"), "cost_us": Quote("waits", "wait_us", "per_step"),
        "wait_us_per_step": Quote("waits", "wait_us", "per_step"),
        "comm_us": Quote("ranks", "comm_total_us", "mean"),
        "wait_share_pct": Quote("ranks", "wait_total_us/comm_total_us", "pct"),
        "partial_wait_share": Quote("waits", "wait_us", "share_pct", where="partial"),
        "straggler_gpu_idle_pct": Quote("gpu_idle", "gpu_idle_pct", "mean", rank="straggler"),
        "straggler_launch_idle_pct": Quote("gpu_idle", "launch_idle_pct", "mean", rank="straggler"),
        "straggler_kernels_per_step": Quote("gpu_idle", "kernels", "mean", rank="straggler"),
        "compute_us_per_step": Quote("ranks", "compute_per_step_us", "mean"),
        "straggler_compute_us_per_step": Quote("ranks", "compute_per_step_us", "mean", rank="straggler")}
    ORDER: ClassVar[int] = 30
    TIMING: ClassVar[bool] = True
    PER_RANK: ClassVar[bool] = True

    @classmethod
    def detect(cls, ctx: FindingContext) -> list[RankWaiting]:
        return rank_waiting(ctx.result)


def _clipped_waits(result: Any) -> Cols:
    """``waits`` with ``wait_us`` clipped to the rank's own kernel time: a kernel cannot wait longer than it
    runs (a root's broadcast may finish before its peer's kernel starts; its "wait" is not time spent)."""
    w = C.as_cols(result.waits)
    c = C.as_cols(result.collectives)
    if not C.nrows(c) or "dur_us" not in c:
        return w
    # send/recv waits (step_seq -1) are bounded by their own kernel already, and the key does not name one row
    group = np.flatnonzero(np.asarray(w["step_seq"]) >= 0)
    key = ["rank", "pg_name", "step", "step_seq"]
    pg = _text_codes([_filled(c["pg_name"], "?"), np.asarray(w["pg_name"], dtype=object)[group]])
    ckey, wkey = _int_keys([{**C.select(c, key), "pg_name": pg[0]},
                            {**C.select(C.take(w, group), key), "pg_name": pg[1]}], key)
    # each wait's first collectives row of its key (the merge with drop_duplicates(key) of the collectives)
    o = np.argsort(ckey, kind="stable")
    sk = ckey[o]
    pos = np.clip(np.searchsorted(sk, wkey), 0, max(len(sk) - 1, 0))
    hit = sk[pos] == wkey if len(sk) else np.zeros(len(wkey), dtype=bool)
    dur = np.full(C.nrows(w), np.inf)
    got = np.asarray(c["dur_us"], dtype=np.float64)[o[pos[hit]]]
    dur[group[hit]] = np.where(np.isnan(got), np.inf, got)
    return {**w, "wait_us": np.minimum(w["wait_us"], dur)}


def _text_codes(columns: list[np.ndarray]) -> list[np.ndarray]:
    """One integer code per distinct text value over all ``columns`` (equal values, equal codes; first-seen
    order), each column's codes (int64)."""
    values = np.concatenate([np.asarray(c, dtype=object) for c in columns]).tolist()
    pos = {v: i for i, v in enumerate(dict.fromkeys(values))}  # hashed in C: a few distinct names
    codes = np.fromiter(map(pos.__getitem__, values), dtype=np.int64, count=len(values))
    bounds = np.cumsum([0] + [len(c) for c in columns])
    return [codes[a:b] for a, b in zip(bounds[:-1], bounds[1:])]


def _int_keys(tables: list[Cols], key: list[str]) -> list[np.ndarray]:
    """One int64 per row for the integer columns ``key`` (equal tuples, equal numbers) over the ``tables``:
    the columns' offsets from their minimum in mixed radix, or, when that would overflow, the tuples' ranks."""
    cols = [np.concatenate([np.asarray(t[k]).astype(np.int64) for t in tables]) for k in key]
    out = np.zeros(len(cols[0]), dtype=np.int64)
    span = 1
    for col in cols:
        lo = int(col.min()) if len(col) else 0
        size = int(col.max()) - lo + 1 if len(col) else 1
        if span * size >= 2 ** 62:  # too wide for one int64: rank the tuples instead
            out = np.unique(np.stack(cols, axis=1), axis=0, return_inverse=True)[1].reshape(-1).astype(np.int64)
            break
        out = out * size + (col - lo)
        span *= size
    bounds = np.cumsum([0] + [C.nrows(t) for t in tables])
    return [out[a:b] for a, b in zip(bounds[:-1], bounds[1:])]


def _late_cause(rank: int, straggler: int | None, idle: Any, ranks: Any) -> tuple[str, dict]:
    """Why ``straggler`` arrives late, from its ``gpu_idle`` rows and the ranks' compute time (text, evidence)."""
    idle = C.as_cols(idle)
    if straggler is None or not C.nrows(idle) or not (idle["rank"] == straggler).any():
        return "", {"late_cause": None}
    si = C.take(idle, idle["rank"] == straggler)
    idle_pct, launch_pct = _mean(si["gpu_idle_pct"]), _mean(si["launch_idle_pct"])
    kernels = _mean(si["kernels"])
    ev = {"straggler_gpu_idle_pct": rounded(idle_pct), "straggler_launch_idle_pct": rounded(launch_pct),
          "straggler_kernels_per_step": rounded(kernels)}
    if idle_pct >= GPU_IDLE_PCT and launch_pct >= LAUNCH_BOUND_SHARE * idle_pct:
        return (f"; rank {straggler} is CPU-bound: its GPU is idle {idle_pct:.0f}% of the step, {launch_pct:.0f}% "
                f"waiting for the CPU to launch the next kernel ({kernels:.0f} kernels per step)",
                {**ev, "late_cause": "cpu_launch_bound"})
    if idle_pct >= GPU_IDLE_PCT:
        return (f"; rank {straggler}'s GPU is idle {idle_pct:.0f}% of the step, mostly not waiting for launches "
                f"(synchronizes or waits on other streams)", {**ev, "late_cause": "gpu_idle"})
    ranks = C.as_cols(ranks)
    mine, theirs = _compute_us(ranks, rank), _compute_us(ranks, straggler)
    if np.isfinite(mine) and np.isfinite(theirs) and theirs > 1.1 * mine:
        return (f"; rank {straggler} has more GPU compute ({theirs:.0f} µs vs {mine:.0f} µs per step): "
                f"load imbalance", {**ev, "late_cause": "more_compute", "compute_us_per_step": rounded(mine),
                                    "straggler_compute_us_per_step": rounded(theirs)})
    return (f"; the trace shows no cause on rank {straggler} (its GPU is idle only {idle_pct:.0f}% of the step, "
            f"compute similar): look at its CPU timeline", {**ev, "late_cause": "unknown"})


def _mean(values: np.ndarray) -> float:
    """Mean of the present values (NaN for none), as ``Series.mean()``."""
    v = np.asarray(values, dtype=np.float64)
    v = v[~np.isnan(v)]
    return float(v.mean()) if len(v) else float("nan")


def _compute_us(ranks: Cols, rank: int) -> float:
    """``rank``'s GPU compute time per step (µs): ``compute_per_step_us`` of the ranks table, the mean over its
    steps of ``steps.compute_us`` (NaN without the rank or its compute). Per step, so that ranks with different
    step counts compare."""
    if not C.nrows(ranks) or "compute_per_step_us" not in ranks:
        return float("nan")
    hit = np.flatnonzero(ranks["rank"] == rank)
    return float(ranks["compute_per_step_us"][hit[0]]) if len(hit) else float("nan")


def _rank_wait_totals(w: Cols, r: Cols) -> dict[str, np.ndarray]:
    """Per rank of ``waits`` (sorted): ``rank``, ``code`` (each wait row's index into them), ``steps`` (at
    least 1), ``wait`` (total), ``partial`` (total in partial matches), ``comm`` (the first ``ranks`` row's
    ``comm_total_us``, NaN for a rank not there) and ``share`` (wait % of comm)."""
    ranks, code = np.unique(np.asarray(w["rank"]), return_inverse=True)
    code = code.reshape(-1)
    n = len(ranks)
    wait_us = np.asarray(w["wait_us"], dtype=np.float64)
    present = ~np.isnan(wait_us)  # sums skip missing values, as pandas' do
    wait = np.bincount(code[present], weights=wait_us[present], minlength=n)
    part = (np.asarray(w["partial"]).astype(bool) & present) if "partial" in w else np.zeros(len(code), bool)
    partial = np.bincount(code[part], weights=wait_us[part], minlength=n)
    steps = np.maximum(_Runs(code, n).nunique(np.asarray(w["step"])), 1)
    rr = np.asarray(r["rank"])
    first_rank, first_row = np.unique(rr, return_index=True)
    pos = np.clip(np.searchsorted(first_rank, ranks), 0, max(len(first_rank) - 1, 0))
    found = (first_rank[pos] == ranks) if len(first_rank) else np.zeros(n, dtype=bool)
    comm = np.full(n, np.nan)
    comm[found] = np.asarray(r["comm_total_us"], dtype=np.float64)[first_row[pos[found]]]
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(np.isfinite(comm) & (comm != 0), 100.0 * wait / comm, np.nan)
    return {"rank": ranks, "code": code, "steps": steps, "wait": wait, "partial": partial, "comm": comm,
            "share": share}


def _top_stragglers(waited: Cols, inst: Cols) -> dict[int, Any]:
    """Per rank, the straggler it waited for the longest in total (ties: the lowest rank)."""
    if "straggler" in waited:  # recorded per wait row (send/recv rows share their key)
        strag = waited
    elif C.nrows(inst):
        strag = C.merge(waited, C.select(inst, ["pg_name", "step", "step_seq", "straggler"]),
                        on=["pg_name", "step", "step_seq"], how="left")
    else:
        strag = {**waited, "straggler": np.full(C.nrows(waited), np.nan)}
    g = C.Groups(strag, ["rank", "straggler"])
    sums = g.sum(strag["wait_us"])
    top: dict[int, Any] = {}
    for i in C.order({"w": sums}, ["w"], ascending=False):
        top.setdefault(g.keys["rank"][i], g.keys["straggler"][i])
    return top


def rank_waiting(result: Any) -> list[RankWaiting]:
    """The :class:`RankWaiting` findings of ``result`` (``waits``, ``ranks``, ``instances``, ``gpu_idle``)."""
    w, r = result.waits, result.ranks
    if w is None or not C.nrows(w) or not C.nrows(r):
        return []
    w, r = _clipped_waits(result), C.as_cols(r)
    tot = _rank_wait_totals(w, r)
    ranks, steps, wait, comm, share = tot["rank"], tot["steps"], tot["wait"], tot["comm"], tot["share"]
    with np.errstate(invalid="ignore"):
        fire = np.flatnonzero((share >= WAIT_SHARE_PCT) & (wait / steps >= WAIT_MIN_US_PER_STEP))
    if not len(fire):
        return []
    # who each firing rank waited for: the straggler with the most of its wait
    firing = np.zeros(len(ranks), dtype=bool)
    firing[fire] = True
    waited = C.take(w, firing[tot["code"]] & ~np.asarray(w["is_straggler"]).astype(bool))
    top = _top_stragglers(waited, C.as_cols(result.instances))
    means = step_means(result)
    idle = C.as_cols(result.tables.get("gpu_idle") if hasattr(result, "tables") else None)
    partial = _partial_wait_share(tot) if "partial" in w else {}
    sub = result.meta.get("partial") if isinstance(result.meta, dict) else None
    out = []
    for i in fire:
        rank = ranks[i]
        straggler = int(top[rank]) if rank in top else None
        cost = float(wait[i] / steps[i])
        sh, cm = float(share[i]), float(comm[i])
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


def _partial_wait_share(tot: Mapping[str, np.ndarray]) -> dict[int, float]:
    """Per rank, the share (0-1) of its wait spent in matches with ranks missing from the trace set (from
    :func:`_rank_wait_totals`)."""
    wait, part = tot["wait"], tot["partial"]
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(wait > 0, part / np.where(wait > 0, wait, 1.0), 0.0)
    return {int(k): float(v) for k, v in zip(tot["rank"], share)}


FINDINGS = [RankWaiting]
