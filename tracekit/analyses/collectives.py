"""Per-rank collective table and the DDP bucket table.

One row per collective instance. On GPU traces an instance is a communication
kernel; its collective args (name, process group, dtype, element counts) come
from the kernel when kineto recorded them and otherwise from the CPU
``record_param_comms`` op that launched it (same External id) — compiled runs
record them only there. torch 2.0 recorded no message args at all: the size, dtype and collective then come
from the shapes of the ``c10d::*`` op and ``nccl:*`` range around the kernel's launch (the largest of their
tensors, :func:`_fill_from_enclosing_ops`; unknown without ``record_shapes``). On CPU-only traces (gloo) an
instance is a ``record_param_comms`` op and the device-side columns are NaN.

Columns (times in µs, bandwidth in GB/s = 1e9 bytes/s):

- ``step``: ProfilerStep of the launch (-1: pre-window or outside every step).
- ``seq``: ordinal within its process group among collectives launched in the
  window, in launch order (pre-window instances and point-to-point transfers get -1).
- ``peer``, ``p2p_seq``: for a send / recv, the other rank (torch's ``Dst Rank`` / ``Src Rank``)
  and its ordinal among this rank's sends to (recvs from) that peer: the sender-to-receiver match key.
- ``step_seq``: the same ordinal counted within the step.
- ``coll_name``, ``pg_name``, ``pg_desc``, ``dtype``, ``nelems``, ``group_size``.
- ``bytes`` = max(in, out) elements × dtype size: the full buffer, as nccl-tests count it.
- ``launch_ts_ns``: CPU time of the collective op (or its launch call).
- ``start_ns``, ``end_ns``, ``dur_us``: the kernel.
- ``algbw_incl_wait_gbps`` = bytes / dur; ``busbw_incl_wait_gbps`` = algbw × factor, the
  nccl-tests factor: allreduce 2(n−1)/n; allgather, reduce_scatter, all_to_all (n−1)/n; others 1.
  ``dur`` is this rank's kernel, which spins while a peer is late: waiting included, so an early
  rank shows a low figure (0.5 GB/s beside its peer's 209 GB/s). The bandwidth of the transfer
  itself is ``busbw_gbps`` of the matched instance (:mod:`tracekit.analyses.crossrank`: on the
  shortest kernel across ranks, the last arriver's), which the summaries report as ``busbw_gbps``.
- ``overlap_us``: the part of the kernel covered by compute kernels (any step);
  ``exposed_us`` = ``dur_us − overlap_us``.
- ``dur_once_us``: the part of ``[start, end)`` that no collective of the rank that started
  earlier covers (any stream, any gloo thread): each instant of communication counted once, for
  the first-started collective running then (:func:`tracekit.analyses.intervals.first_started_parts`),
  so summed over a rank's rows it is ``|∪ collectives|`` where several run at once (gloo's worker
  threads, several NCCL streams); ``exposed_once_us``: the part of it overlapped by no compute
  kernel (summed over a rank's rows: ``|∪ collectives − ∪ compute|``; NaN on CPU traces).
- ``launch_op``: the functional collective op that launched it (``_c10d_functional::all_reduce_``,
  ``all_reduce_coalesced_``, ``all_gather_into_tensor`` ...: compiled autograd, inductor's DDP
  fusion, DTensor), else None (the C++ DDP reducer, FSDP, eager ``torch.distributed`` calls).
- ``phase``: ``forward`` (launched inside a DDP/FSDP forward annotation),
  ``optimizer`` (inside ``Optimizer.step*``), ``backward`` (inside the step's
  autograd span: first to last ``autograd::engine::evaluate_function``), else ``other``.
"""

from __future__ import annotations

import functools
import re
from typing import Any, ClassVar

import numpy as np

from tracekit.analyses import functional
from tracekit.analyses import intervals as iv
from tracekit.analyses.classify import COMM, COMPUTE, class_codes, class_mask
from tracekit.analyses.findings import Finding, FindingContext, Quote, rank_step_us, rounded, step_means
from tracekit.analyses.registry import Column, RankContext, Table, View
from tracekit.traces import cols as C
from tracekit.traces.arrays import unique
from tracekit.traces.frames import NO_ROWS, Columnar
from tracekit.traces.manifest import Manifest
from tracekit.traces import schema
from tracekit.traces.traceset import RankTrace, assign_steps

NS_PER_US = 1000.0
ARG_COLUMNS = ("coll_name", "pg_name", "pg_desc", "dtype")
FORWARD_PATTERN = (r"^(?:DistributedDataParallel\.forward|FullyShardedDataParallel\.forward|FSDP::forward|## forward"
                   r"|tracekit\.forward$)")
OPTIMIZER_PATTERN = r"^(?:Optimizer\.step|tracekit\.optimizer$)"
#: ranges that are backward as a whole: tracekit's own annotation, compiled-autograd regions ("!" prefix)
#: and AOT-compiled backward subgraphs
BACKWARD_RANGE_PATTERN = r"^(?:tracekit\.backward$|Torch-Compiled Region: !|CompiledFunctionBackward$)"
BACKWARD_OP_PREFIX = "autograd::engine::evaluate_function"

_NCCL_KERNEL_COLL = {
    "allreduce": "allreduce", "allgather": "allgather", "reducescatter": "reduce_scatter",
    "broadcast": "broadcast", "reduce": "reduce", "sendrecv": "send_recv", "alltoall": "all_to_all",
}
COLLECTIVE_COLUMNS = (
    "rank", "step", "seq", "step_seq", "phase", "coll_name", "pg_name", "pg_desc", "dtype", "nelems", "bytes",
    "group_size", "launch_ts_ns", "start_ns", "end_ns", "dur_us", "algbw_incl_wait_gbps", "busbw_incl_wait_gbps", "overlap_us",
    "exposed_us", "dur_once_us", "exposed_once_us", "pre_window", "kernel", "launch_op", "peer", "p2p_seq",
)
#: normalised collective names (:func:`p2p_kind`) of point-to-point transfers, by direction
_P2P_SEND, _P2P_RECV, _P2P_BOTH = {"send", "isend"}, {"recv", "irecv"}, {"sendrecv", "p2p", "batchisendirecv"}


@functools.lru_cache(maxsize=1024)
def bus_factor(coll_name: str | None, n: int) -> float:
    """nccl-tests bus-bandwidth factor for a collective over ``n`` ranks."""
    if not isinstance(coll_name, str) or not coll_name or n <= 0:
        return 1.0
    # normalise spellings: all_gather_into_tensor_coalesced, _reduce_scatter_base, alltoall_base, ...
    c = re.sub(r"_|coalesced|base|intotensor|tensor", "", coll_name.lower())
    if c == "allreduce":
        return 2.0 * (n - 1) / n
    if c in ("allgather", "reducescatter", "alltoall", "alltoallv"):
        return (n - 1) / n
    return 1.0


@functools.lru_cache(maxsize=1 << 14)
def _coll_from_kernel_name(name: str) -> str | None:
    m = re.match(r"nccl(?:DevKernel|Kernel)_([A-Za-z]+)", name)
    return _NCCL_KERNEL_COLL.get(m.group(1).lower()) if m else None


@functools.lru_cache(maxsize=1024)
def p2p_kind(coll_name: object) -> str | None:
    """``send``, ``recv`` or ``sendrecv`` (a send/recv whose direction is not recorded: NCCL's
    ``SendRecv`` kernel named without its op) for a point-to-point collective name, else None."""
    if not isinstance(coll_name, str):
        return None
    c = re.sub(r"_|coalesced|base", "", coll_name.lower())
    return "send" if c in _P2P_SEND else "recv" if c in _P2P_RECV else "sendrecv" if c in _P2P_BOTH else None


def phase_windows(rt: RankTrace) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """CPU time ranges of forward, backward and optimizer phases (see module doc); computed once per rank."""
    return rt.memo("phase_windows", lambda: _phase_windows(rt))


def _phase_windows(rt: RankTrace) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    kind, ts, end = rt.column("kind"), rt.column("ts_ns"), rt.column("end_ns")
    ann = (kind == schema.ANNOTATION) | (kind == schema.CPU_OP)
    fwd = (ann & rt.name_hits(FORWARD_PATTERN)).nonzero()[0]
    opt = (ann & rt.name_hits(OPTIMIZER_PATTERN)).nonzero()[0]
    bw = ((kind == schema.CPU_OP) & rt.name_hits(BACKWARD_OP_PREFIX, prefix=True)).nonzero()[0]
    bws, bwe = _step_spans(rt.step_arrays(), ts[bw], end[bw])
    ranges = (ann & rt.name_hits(BACKWARD_RANGE_PATTERN)).nonzero()[0]
    bws, bwe = iv.union(np.concatenate([bws, ts[ranges]]), np.concatenate([bwe, end[ranges]]))
    return {"forward": (ts[fwd], end[fwd]), "optimizer": (ts[opt], end[opt]), "backward": (bws, bwe)}


def _step_spans(steps: Columnar, ts: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per step, the first start and last end of the ranges ``[ts, end)`` that begin in it (in no order)."""
    step = assign_steps(steps, ts)
    keep = step >= 0  # autograd ops outside every step must not widen a span over all steps
    if not keep.any():
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    order = np.argsort(step[keep], kind="stable")
    st = step[keep][order]
    first = np.concatenate([[True], st[1:] != st[:-1]]).nonzero()[0]
    return np.minimum.reduceat(ts[keep][order], first), np.maximum.reduceat(end[keep][order], first)


def _in_any(ts: np.ndarray, window: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    s, e = iv.union(*window)
    if s.size == 0:
        return np.zeros(ts.size, dtype=bool)
    i = np.searchsorted(s, ts, side="right") - 1
    return (i >= 0) & (e[np.maximum(i, 0)] > ts)


def label_phases(rt: RankTrace, launch_ts: np.ndarray) -> np.ndarray:
    """Phase of each CPU launch time: forward, optimizer, backward or other.

    Where windows nest, the most specific wins: forward over optimizer over backward.
    """
    w = phase_windows(rt)
    out = np.full(launch_ts.size, "other", dtype=object)
    for name in ("backward", "optimizer", "forward"):  # later assignments win: forward > optimizer > backward
        out[_in_any(launch_ts, w[name])] = name
    out[launch_ts < 0] = "other"
    return out


#: exactly this name (``$`` would also match before a trailing newline)
RECORD_PARAM_COMMS = r"^record_param_comms\Z"


def _collective_op_rows(rt: RankTrace) -> np.ndarray:
    """Event rows of the ``record_param_comms`` CPU ops, in event order."""
    return ((rt.column("kind") == schema.CPU_OP) & rt.name_hits(RECORD_PARAM_COMMS)).nonzero()[0]


def _category_table(rt: RankTrace, col: str) -> tuple[np.ndarray, np.ndarray]:
    """The categories of the Categorical event column ``col`` as objects with NaN appended (code -1), and
    which of them are missing (``pd.isna``); built once per rank."""
    def build() -> tuple[np.ndarray, np.ndarray]:
        cats = rt.categories(col)
        values = np.empty(len(cats) + 1, dtype=object)
        values[:-1] = cats
        values[-1] = np.nan
        return values, C.isna(values)

    return rt.memo(("category_table", col), build)


def _category_values(rt: RankTrace, col: str, codes: np.ndarray) -> np.ndarray:
    """The values (objects, NaN where missing) of the Categorical event column ``col`` at ``codes``
    (codes of the event table or of ``rt.gpu``, which share its categories)."""
    return _category_table(rt, col)[0][codes]


def _cumcount(keys: np.ndarray) -> np.ndarray:
    """Per element, how many earlier elements have its key (a groupby's ``cumcount``)."""
    order = np.argsort(keys, kind="stable")
    k = keys[order]
    pos = np.arange(k.size)
    run_start = np.maximum.accumulate(np.where(np.concatenate([[True], k[1:] != k[:-1]]), pos, 0))
    out = np.empty(k.size, dtype=np.int64)
    out[order] = pos - run_start
    return out


def collective_table(rt: RankTrace, cls: np.ndarray, world_size: int,
                     gloo_threads: dict[str, str] | None = None) -> Columnar:
    """The per-rank collective table described in the module docstring, as its columns (an empty
    frame when the rank has no collective)."""
    if rt.has_gpu_activity:
        d = _gpu_instances(rt, cls, _collective_op_rows(rt))
    else:
        d = _cpu_instances(rt, gloo_threads)
    n_rows = d["step"].size
    if n_rows == 0:
        return NO_ROWS
    d["rank"] = np.full(n_rows, rt.rank, dtype=np.int64)
    n = np.where(d["group_size"] > 0, d["group_size"], world_size).astype(np.int64)
    d["group_size"] = n
    dcodes, dtypes = C.factorize(d["dtype"])
    dbytes = np.append(np.array([float(schema.DTYPE_BYTES.get(t, np.nan)) for t in dtypes]), np.nan)[dcodes]
    nel = np.maximum(d["in_nelems"], d["out_nelems"]).astype(float)
    nel[nel < 0] = np.nan
    d["nelems"] = nel
    d["bytes"] = nel * dbytes
    dur_s = d["dur_us"] / 1e6
    d["algbw_incl_wait_gbps"] = (d["bytes"] / 1e9) / np.where(dur_s > 0, dur_s, np.nan)
    d["busbw_incl_wait_gbps"] = d["algbw_incl_wait_gbps"] * _bus_factors(d["coll_name"], n)
    launch = d["launch_ts_ns"]
    d["phase"] = label_phases(rt, launch)
    d["launch_op"] = functional.launch_ops(rt, launch)
    kinds = np.array([p2p_kind(c) for c in d["coll_name"]], dtype=object)
    p2p = kinds != None  # noqa: E711 - elementwise
    d["peer"] = _two_rank_peers(rt, kinds, d["pg_name"], d["peer"], world_size)
    # point-to-point transfers involve two ranks, not the group: they take no place in the group's sequence
    d["seq"], d["step_seq"] = _sequence_numbers(d["pg_name"], d["step"], launch, d["pre_window"].astype(bool) | p2p)
    d["p2p_seq"] = _p2p_sequence(kinds, d["peer"], launch, d["pre_window"].astype(bool))
    order = np.lexsort((d["start_ns"], launch))  # stable: by launch, then kernel start
    return {c: np.asarray(d[c])[order] for c in COLLECTIVE_COLUMNS}


def _bus_factors(coll: np.ndarray, n: np.ndarray) -> np.ndarray:
    """:func:`bus_factor` per row, computed once per distinct (collective, group size)."""
    codes, names = C.factorize(coll)
    key = (codes.astype(np.int64) + 1) * (int(n.max()) + 1) + n
    _, first, inv = unique(key, return_index=True, return_inverse=True)
    f = [bus_factor(names[codes[i]] if codes[i] >= 0 and isinstance(names[codes[i]], str) else None, int(n[i]))
         for i in first]
    return np.asarray(f, dtype=float)[inv.reshape(-1)]


def _sequence_numbers(pg_name: np.ndarray, step: np.ndarray, launch: np.ndarray,
                      pre_window: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(seq, step_seq)``: ordinals per process group (and step) in launch order; -1 for pre-window rows."""
    seq, step_seq = np.full(step.size, -1, dtype=np.int64), np.full(step.size, -1, dtype=np.int64)
    win = (~pre_window).nonzero()[0]
    win = win[np.argsort(launch[win], kind="stable")]
    if win.size == 0:
        return seq, step_seq
    pg_code, groups = C.factorize(pg_name[win])  # a missing group (code -1) counts as the group "?"
    if (pg_code < 0).any():
        q = (groups == "?").nonzero()[0]
        pg_code = np.where(pg_code < 0, q[0] if q.size else groups.size, pg_code)
    pg_code = pg_code.astype(np.int64)
    seq[win] = _cumcount(pg_code)
    st = step[win] - step[win].min()
    step_seq[win] = _cumcount(pg_code * (int(st.max()) + 1) + st)
    return seq, step_seq


def _two_rank_peers(rt: RankTrace, kinds: np.ndarray, pg_name: np.ndarray, peer: np.ndarray,
                    world_size: int) -> np.ndarray:
    """``peer`` with the sends/recvs that record none filled in where the group has exactly two ranks
    (then the peer can only be the other one): the group's ranks from ``distributedInfo.pg_config``,
    or the world when the group is unknown and ``world_size`` is 2. gloo records no peer at all."""
    miss = ((kinds == "send") | (kinds == "recv")) & (peer < 0)
    if not miss.any():
        return peer
    groups = {str(g.get("pg_name")): g.get("ranks") for g in rt.distributed_info.get("pg_config") or []
              if isinstance(g, dict) and isinstance(g.get("ranks"), list)}
    out = peer.copy()
    for i in miss.nonzero()[0]:
        name = pg_name[i]
        ranks = groups.get(str(name)) if isinstance(name, str) else None
        if ranks is None and world_size == 2:
            ranks = [0, 1]
        if ranks is not None and len(ranks) == 2 and rt.rank in ranks:
            out[i] = ranks[1] if ranks[0] == rt.rank else ranks[0]
    return out


def _p2p_sequence(kinds: np.ndarray, peer: np.ndarray, launch: np.ndarray, pre_window: np.ndarray) -> np.ndarray:
    """Per send (recv) with a known peer launched in the window: its ordinal among this rank's sends to
    (recvs from) that peer, in launch order; -1 for every other row."""
    out = np.full(kinds.size, -1, dtype=np.int64)
    ok = (((kinds == "send") | (kinds == "recv")) & (peer >= 0) & ~pre_window).nonzero()[0]
    if ok.size:
        ok = ok[np.argsort(launch[ok], kind="stable")]
        key = peer[ok].astype(np.int64) * 2 + (kinds[ok] == "recv")
        out[ok] = _cumcount(key)
    return out


def _gpu_instances(rt: RankTrace, cls: np.ndarray, op_rows: np.ndarray) -> dict[str, np.ndarray]:
    """Columns of the communication kernels (``cls``) of ``rt.gpu``, args filled from ``op_rows``."""
    k = class_mask(cls, COMM).nonzero()[0]
    comp = class_mask(cls, COMPUTE)
    gts, gend = rt.gpu_column("ts_ns"), rt.gpu_column("end_ns")
    ts, end, dur = gts[k], gend[k], rt.gpu_column("dur_ns")[k]
    covered = iv.covered_per_interval(ts, end, (gts[comp], gend[comp]))
    # each instant of communication once, for the first-started collective running then (any stream)
    once_s, once_e = iv.first_started_parts(ts, end)
    once_covered = iv.covered_per_interval(once_s, once_e, (gts[comp], gend[comp]))
    # the launching record_param_comms op: the first one with the kernel's External id
    ext = rt.gpu_column("external_id")[k]
    op_ext = rt.column("external_id")[op_rows]
    uniq, first = unique(op_ext, return_index=True)
    pos = np.minimum(np.searchsorted(uniq, ext), max(uniq.size - 1, 0))
    found = uniq[pos] == ext if uniq.size else np.zeros(k.size, dtype=bool)
    src = op_rows[first[pos]] if uniq.size else np.zeros(k.size, dtype=np.int64)
    d = _kernel_args(rt, k, found, src)
    lts, pre = rt.gpu_column("launch_ts_ns")[k], rt.gpu_column("pre_window")[k]
    launch = np.where(found, rt.column("ts_ns")[src], np.where(lts >= 0, lts, -1))
    launch = np.where(pre, -1, launch)
    if not (op_rows.size and found.all()) or pre.any():
        # where the pandas version of this went through float64 (NaN gaps): identical output above 2**53 ns
        launch = np.where(launch >= 0, launch.astype(np.float64).astype(np.int64), -1)
    cats = np.array([*rt.name_categories(), "nan"], dtype=object)  # code -1 -> "nan", as astype(str)
    d.update({
        "step": rt.gpu_column("step")[k], "launch_ts_ns": launch, "start_ns": ts, "end_ns": end,
        "dur_us": dur / NS_PER_US, "overlap_us": covered / NS_PER_US, "exposed_us": (dur - covered) / NS_PER_US,
        "dur_once_us": (once_e - once_s) / NS_PER_US, "exposed_once_us": (once_e - once_s - once_covered) / NS_PER_US,
        "pre_window": pre, "kernel": cats[rt.gpu_column("name")[k]],
    })
    return d


def _kernel_args(rt: RankTrace, k: np.ndarray, found: np.ndarray, src: np.ndarray) -> dict[str, np.ndarray]:
    """Collective args of the gpu rows ``k``: the kernel's own, else those of its launching op (event row
    ``src`` where ``found``); a collective name missing from both is guessed from the kernel name.

    Missing values are NaN, a missing guess NaN or None (what pandas' ``map`` left there): a column
    with no value at all keeps them.
    """
    d: dict[str, np.ndarray] = {}
    missed: dict[str, np.ndarray] = {}
    for col in ARG_COLUMNS:
        values, missing = _category_table(rt, col)
        codes = rt.gpu_column(col)[k]
        own, miss = values[codes], missing[codes]
        if miss.any():
            fill = np.where(found, rt.column(col)[src], -1)
            own[miss] = values[fill][miss]
            miss = miss & missing[fill]
        d[col], missed[col] = own, miss
    for col in ("in_nelems", "out_nelems", "group_size", "peer"):
        own = rt.gpu_column(col)[k]
        d[col] = np.where(own >= 0, own, np.where(found, rt.column(col)[src], -1)).astype(np.int64)
    coll, miss = d["coll_name"], missed["coll_name"]
    _fill_from_enclosing_ops(rt, k, d, missed)
    if miss.any():
        names = rt.name_categories()
        guess = np.array([_coll_from_kernel_name(names[c]) for c in rt.gpu_column("name")[k[miss]]], dtype=object)
        # pandas mapped every name of the trace: with any collective among them the gaps became NaN, else None
        if any(v is None for v in guess) and any(_coll_from_kernel_name(n) for n in names):
            guess[np.array([v is None for v in guess], dtype=bool)] = np.nan
        coll[miss] = guess
    return d


#: the ops around a collective's launch that carry its message (torch 2.0: shapes, filled in by the decoder)
ENCLOSING_OP_PATTERN = r"^(?:c10d::|nccl:)"
#: how many of the latest-starting enclosing ops on the launch thread are looked at (c10d op, backend range)
_ENCLOSING_DEPTH = 3


#: a c10d op's or backend range's collective, its name without prefix, underscores and ``_base``
_OP_COLL = {"allreduce": "allreduce", "allgather": "allgather", "allgatherintotensor": "allgather",
            "reducescatter": "reduce_scatter", "reducescattertensor": "reduce_scatter", "alltoall": "all_to_all",
            "broadcast": "broadcast", "reduce": "reduce", "barrier": "barrier", "send": "send", "recv": "recv",
            "gather": "gather", "scatter": "scatter"}


def _op_coll(name: str) -> str | None:
    """The collective of a c10d op or backend range name (``c10d::_allgather_base_``, ``nccl:all_reduce`` ->
    ``allgather``, ``allreduce``), None for another name."""
    bare = re.sub(r"^(?:c10d::|nccl:)", "", name)
    if bare == name:
        return None
    bare = bare.strip("_").removesuffix("_base").replace("_", "")
    return _OP_COLL.get(bare)


def _fill_from_enclosing_ops(rt: RankTrace, k: np.ndarray, d: dict[str, np.ndarray],
                             missed: dict[str, np.ndarray]) -> None:
    """For the comm kernels ``k`` whose args give no message size (torch 2.0: ``record_param_comms`` records
    none): the size and dtype of the c10d op and backend range (``nccl:all_reduce``) enclosing the launch on
    its thread, the largest of them (their input shapes, read by the decoder: :func:`shape_message`), and
    their collective name where the kernel's was only guessed from its name. ``d`` is filled in place."""
    need = (d["in_nelems"] < 0) & (d["out_nelems"] < 0)
    if not need.any():
        return
    lts, ltid = rt.gpu_column("launch_ts_ns")[k], rt.gpu_column("launch_tid")[k]
    ops = (rt.name_hits(ENCLOSING_OP_PATTERN) & (rt.column("kind") != schema.LAUNCH)).nonzero()[0]
    if not ops.size:
        return
    ops = ops[np.lexsort((rt.column("ts_ns")[ops], rt.column("tid")[ops]))]
    o_tid, o_ts, o_end = rt.column("tid")[ops], rt.column("ts_ns")[ops], rt.column("end_ns")[ops]
    o_nel = rt.column("in_nelems")[ops]
    names = rt.name_categories()
    dvals, _ = _category_table(rt, "dtype")
    for i in np.flatnonzero(need & (lts >= 0)).tolist():
        hi = int(np.searchsorted(o_tid, ltid[i], "right"))
        lo = int(np.searchsorted(o_tid, ltid[i], "left"))
        pos = lo + int(np.searchsorted(o_ts[lo:hi], lts[i], "right"))  # ops of the thread starting <= launch
        best = -1
        for j in range(pos - 1, max(lo, pos - _ENCLOSING_DEPTH) - 1, -1):
            if o_end[j] < lts[i]:
                continue
            row = ops[j]
            if missed["coll_name"][i]:
                coll = _op_coll(names[rt.column("name")[row]])
                if coll is not None:
                    d["coll_name"][i], missed["coll_name"][i] = coll, False
            if o_nel[j] > d["in_nelems"][i]:
                d["in_nelems"][i] = o_nel[j]
                best = row
        if best >= 0 and missed["dtype"][i]:
            d["dtype"][i] = dvals[rt.column("dtype")[best]]


#: CPU-side collective work ranges: the backend's annotation on its worker thread ("gloo:all_reduce")
BACKEND_RANGE_PATTERN = r"^(?:gloo|nccl|mpi|ucc):"
_BACKEND_COLL = {"all_reduce": "allreduce", "all_gather": "allgather", "reduce_scatter": "reduce_scatter",
                 "all_to_all": "all_to_all", "alltoall": "all_to_all", "broadcast": "broadcast",
                 "reduce": "reduce", "barrier": "barrier", "send": "send", "recv": "recv", "gather": "gather",
                 "scatter": "scatter"}


def _cpu_instances(rt: RankTrace, gloo_threads: dict[str, str] | None = None) -> dict[str, np.ndarray]:
    """Collectives of a trace without GPU activity (gloo).

    An instance is the backend's CPU range (``gloo:all_reduce`` on the gloo worker
    thread): ``start_ns``/``end_ns``/``dur_us`` are that range, i.e. CPU time
    spent in the collective, waiting included. The launch is the k-th
    ``record_param_comms`` op (else ``c10d::*`` op) of the rank, paired in order
    when the counts agree (gloo runs a process group's collectives in order);
    its args give sizes. Without backend ranges the ops themselves are the
    instances. gloo records no process-group args: the group comes from the
    range's worker thread (:func:`tracekit.analyses.functional.gloo_thread_groups`).
    Overlap with compute is not defined on CPU (NaN).
    """
    kind, ts, end = rt.column("kind"), rt.column("ts_ns"), rt.column("end_ns")
    rng = _by_start(rt, ((kind == schema.ANNOTATION) & rt.name_hits(BACKEND_RANGE_PATTERN)).nonzero()[0])
    ops = _collective_op_rows(rt)
    by_op = ops.size > 0  # record_param_comms carries the args; else the c10d ops, which carry no name
    if not by_op:
        ops = ((kind == schema.CPU_OP) & rt.name_hits(r"^c10d::")).nonzero()[0]
    ops = _by_start(rt, ops)
    n = rng.size if rng.size else ops.size
    paired = rng.size == 0 or rng.size == ops.size
    src = ops if paired and ops.size else None
    if rng.size:
        start, stop = ts[rng], end[rng]
        names = rt.name_categories()
        kind_name = np.array([_backend_coll(names[c]) for c in rt.column("name")[rng]], dtype=object)
        launch = ts[src] if src is not None else start
    else:
        start, stop = ts[ops], end[ops]
        kind_name = np.full(n, None, dtype=object)
        launch = start

    def arg(col: str, default: Any) -> np.ndarray:
        if src is None or (col == "coll_name" and not by_op):
            return np.full(n, default if default is not None or src is None else np.nan,
                           dtype=object if default is None else np.int64)
        if default is None:
            return _category_values(rt, col, rt.column(col)[src])
        return rt.column(col)[src]

    coll = arg("coll_name", None)
    coll = np.where(C.isna(coll), kind_name, coll)
    pg_name, pg_desc = arg("pg_name", None), arg("pg_desc", None)
    if rng.size and C.isna(pg_name).all():  # gloo records no group args: infer from its worker threads
        pg_name, pg_desc = functional.gloo_thread_groups(rt, rt.column("tid")[rng], gloo_threads)
    return {
        "step": assign_steps(rt.step_arrays(), launch), "coll_name": coll, "pg_name": pg_name,
        "pg_desc": pg_desc, "dtype": arg("dtype", None), "in_nelems": arg("in_nelems", -1),
        "out_nelems": arg("out_nelems", -1), "group_size": arg("group_size", -1), "peer": arg("peer", -1),
        "launch_ts_ns": launch, "start_ns": start, "end_ns": stop, "dur_us": (stop - start) / NS_PER_US,
        "overlap_us": np.full(n, np.nan), "exposed_us": np.full(n, np.nan),
        "dur_once_us": np.subtract(*iv.first_started_parts(start, stop)[::-1]) / NS_PER_US,
        "exposed_once_us": np.full(n, np.nan), "pre_window": np.zeros(n, dtype=bool), "kernel": np.full(n, None, dtype=object),
    }


def _by_start(rt: RankTrace, rows: np.ndarray) -> np.ndarray:
    """Event rows ``rows`` ordered by start (stable: ties keep event order)."""
    return rows[np.argsort(rt.column("ts_ns")[rows], kind="stable")]


def _backend_coll(name: str) -> str:
    """The collective of a backend range (``gloo:all_reduce`` -> ``allreduce``; unknown ones as written)."""
    op = name.split(":", 1)[1]
    return _BACKEND_COLL.get(op, op)


BUCKET_COLUMNS = ("rank", "step", "bucket", "pg_name", "step_seq", "launch_op", "bytes", "launch_offset_us",
                  "start_offset_us", "dur_us", "exposed_us", "dur_once_us", "exposed_once_us", "busbw_incl_wait_gbps",
                  "wait_offset_us", "wait_cpu_us")
#: collective names of a data-parallel gradient allreduce (the C++ reducer, the python reducer, inductor's fusion)
ALLREDUCE_NAMES = ("allreduce", "allreduce_coalesced", "all_reduce", "all_reduce_coalesced")


def data_parallel_groups(coll: Any, tp: int = 1, world_size: int | None = None) -> Any:
    """Rows on the data-parallel process group: with a device mesh (``pg_desc`` ``mesh_*``) the
    ``mesh_dp`` group only (tensor-parallel allreduces in backward are not gradient buckets);
    otherwise, with ``tp`` > 1 (from the manifest), only groups of ``world_size / tp`` ranks (a mesh
    dimension over every rank reuses the default group); otherwise every row. A bool Series on the index
    of the collective frame ``coll`` (for pandas callers; the analyses use the numpy mask)."""
    import pandas as pd  # only for callers holding a frame: tracekit analyze uses _data_parallel_mask

    return pd.Series(_data_parallel_mask(coll, tp, world_size), index=coll.index)


def _data_parallel_mask(coll: Columnar, tp: int, world_size: int | None) -> np.ndarray:
    codes, descs = C.factorize(np.asarray(coll["pg_desc"], dtype=object))
    if any(str(v).startswith("mesh_") for v in descs):
        return np.append(descs == "mesh_dp", False).astype(bool)[codes]
    if tp > 1 and world_size:  # groups not named after mesh dimensions: go by their size
        return np.asarray(coll["group_size"]) == world_size // tp
    return np.ones(C.nrows(coll), dtype=bool)


def gradient_allreduces(coll: Any, tp: int = 1, world_size: int | None = None) -> Any:
    """Mask of the gradient-bucket rows of a collective frame: allreduces (plain or coalesced) launched
    in a step's backward on the data-parallel group (:func:`data_parallel_groups`), as a bool Series on
    its index (for pandas callers; the analyses use :func:`gradient_allreduce_mask`)."""
    import pandas as pd  # only for callers holding a frame: tracekit analyze uses gradient_allreduce_mask

    return pd.Series(gradient_allreduce_mask(coll, tp, world_size), index=coll.index)


def gradient_allreduce_mask(coll: Columnar, tp: int = 1, world_size: int | None = None) -> np.ndarray:
    """:func:`gradient_allreduces` as a numpy mask (of a collective table given as a frame or its columns)."""
    codes, names = C.factorize(np.asarray(coll["coll_name"], dtype=object))
    # a missing name is "nan" (astype(str)), never an allreduce
    allreduce = np.array([str(v).lower() in ALLREDUCE_NAMES for v in names] + [False], dtype=bool)[codes]
    keep = (np.asarray(coll["phase"], dtype=object) == "backward") & allreduce & (np.asarray(coll["step"]) >= 0)
    return keep & _data_parallel_mask(coll, tp, world_size)


def bucket_table(rt: RankTrace, coll: Columnar, tp: int = 1, world_size: int | None = None) -> Columnar:
    """DDP gradient buckets: the allreduces (plain or coalesced) launched during backward on the
    data-parallel group, per step.

    ``bucket`` is the launch order within the step (0 = first bucket launched,
    which holds the last layers' gradients). ``launch_offset_us`` and
    ``start_offset_us`` are the launch and the kernel start relative to the
    start of the step's backward (first ``autograd::engine::evaluate_function``,
    or the compiled-autograd region), on the device's clock: the host's launch and backward start
    put on it through the launches (:meth:`RankTrace.to_device_clock`; a CPU run has one clock). ``launch_op`` names the functional op of a
    compiled-autograd bucket (``_c10d_functional::all_reduce_`` with inductor's concat
    fusion, ``all_reduce_coalesced_`` with the coalesced one), None for the C++ reducer.
    ``wait_offset_us`` / ``wait_cpu_us``: where ``wait_tensor`` waits on it (see
    :func:`tracekit.analyses.functional.wait_columns`; NaN without ``wait_tensor`` ops).
    """
    rows = gradient_allreduce_mask(coll, tp, world_size).nonzero()[0] if C.nrows(coll) else np.empty(0, np.int64)
    if rows.size == 0:
        return NO_ROWS
    step, launch = np.asarray(coll["step"])[rows], np.asarray(coll["launch_ts_ns"])[rows]
    order = np.lexsort((launch, step))  # stable: by step, then launch
    rows, step, launch = rows[order], step[order], launch[order]
    bws, _ = phase_windows(rt)["backward"]
    i = np.searchsorted(bws, launch, side="right") - 1  # the backward span the launch falls in
    start = np.where(i >= 0, bws[np.maximum(i, 0)] if bws.size else launch, launch)
    kstart, kend = np.asarray(coll["start_ns"])[rows], np.asarray(coll["end_ns"])[rows]
    out = {c: np.asarray(coll[c])[rows] for c in BUCKET_COLUMNS if c in coll}
    out["bucket"] = _cumcount(step)
    # offsets on the device's clock (a CPU run's is the host's): host instants mapped through the launches
    base, launch_dev = rt.to_device_clock(start), rt.to_device_clock(launch)
    base_f = np.where(base >= 0, base.astype(float), np.nan)
    out["launch_offset_us"] = (np.where(launch_dev >= 0, launch_dev, np.nan) - base_f) / NS_PER_US
    out["start_offset_us"] = np.where(kstart >= 0, (kstart - base_f) / NS_PER_US, np.nan)
    out["wait_offset_us"], out["wait_cpu_us"] = functional.wait_columns(rt, launch, kend, base_f,
                                                                         to_clock=rt.to_device_clock)
    return {c: out[c] for c in BUCKET_COLUMNS}


# -- registered tables (see tracekit.analyses.registry) ------------------------------------------


def collectives_table(ctx: RankContext) -> Columnar:
    rt = ctx.trace
    cls = class_codes(rt, ctx.options.comm_pattern) if rt.has_gpu_activity else np.empty(0, dtype=np.int8)
    return collective_table(rt, cls, ctx.world_size, functional.manifest_gloo_threads(ctx.manifest, rt.rank))


def process_group_label(c: Columnar) -> np.ndarray:
    """``pg_name`` with its description where known (``3:mesh_tp``), else ``?``, per row of a collective
    table (a frame or its columns), as an object array; built once per distinct (name, description)."""
    ncodes, names = C.factorize(np.asarray(c["pg_name"], dtype=object))
    dcodes, descs = C.factorize(np.asarray(c["pg_desc"], dtype=object))
    if not ncodes.size:
        return np.empty(0, dtype=object)
    key = (ncodes.astype(np.int64) + 1) * (descs.size + 1) + (dcodes + 1)
    pairs, inv = np.unique(key, return_inverse=True)
    labels = []
    for k in pairs.tolist():
        n, d = divmod(k, descs.size + 1)
        name = str(names[n - 1]) if n else "?"
        labels.append(f"{name}:{descs[d - 1]}" if d else name)
    return C.obj(labels)[inv.reshape(-1)]


_KEY = ["pg_name", "step", "step_seq"]


def with_transfer_busbw(rows: Columnar, instances: Columnar | None) -> C.Cols:
    """``rows`` (collectives or buckets, a frame or columns) as columns with ``busbw_gbps`` added: the
    matched instance's bus bandwidth on its transfer time (the last arriver's kernel, see
    :mod:`tracekit.analyses.crossrank`); NaN when unmatched."""
    rows = C.as_cols(rows)
    inst = C.as_cols(instances)
    n = C.nrows(rows)
    if not C.nrows(inst) or not n:
        return {**rows, "busbw_gbps": np.full(n, np.nan)}
    key = {**C.select(rows, _KEY), "pg_name": _text_or(rows["pg_name"], "?")}
    # the first instance of each key (drop_duplicates); a missing group name matches no row ("?" is present)
    first = C.Groups(inst, _KEY).first(np.arange(C.nrows(inst)))
    right = C.take(C.select(inst, [*_KEY, "busbw_gbps"]), first)
    right["pg_name"] = np.asarray([str(v) for v in right["pg_name"].tolist()], dtype=object)
    bw = C.merge(key, right, on=_KEY, how="left")["busbw_gbps"]
    return {**rows, "busbw_gbps": np.asarray(bw, dtype=np.float64)}


def _text_or(values: np.ndarray, missing: str) -> np.ndarray:
    """An object column as text (``str`` of each value), ``missing`` where a value is missing
    (``astype(object).fillna(missing).astype(str)``)."""
    codes, uniques = C.factorize(np.asarray(values, dtype=object))
    return C.obj([*(str(v) for v in uniques.tolist()), missing])[codes]


def _sorted_codes(values: np.ndarray) -> tuple[np.ndarray, int]:
    """``(code per row, codes used)``: the row's rank among the column's sorted distinct values, a missing
    value after every present one (pandas' ``groupby(dropna=False)`` order)."""
    values = np.asarray(values)
    if values.dtype.kind != "O":
        uniq, inv = np.unique(values, return_inverse=True)  # numbers: NaN sorts last in np.unique
        return inv.reshape(-1).astype(np.int64), len(uniq)
    codes, uniques = C.factorize(values)
    try:
        order = sorted(range(len(uniques)), key=uniques.__getitem__)
    except TypeError:  # mixed types do not sort: first-seen order (as cols.Groups)
        order = list(range(len(uniques)))
    rank = np.empty(len(uniques) + 1, dtype=np.int64)
    rank[order] = np.arange(len(uniques))
    rank[-1] = len(uniques)  # code -1 (missing) -> last
    return rank[codes], len(uniques) + 1


def _groups_with_missing(t: C.Cols, by: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """``(group per row, first row of each group)`` of ``t`` grouped by ``by`` as ``groupby(by, dropna=False)``:
    groups in sorted key order, missing keys last and kept."""
    combined = np.zeros(C.nrows(t), dtype=np.int64)
    for name in by:
        codes, size = _sorted_codes(t[name])
        combined = combined * max(size, 1) + codes
    _, first, inv = unique(combined, return_index=True, return_inverse=True)
    return inv.reshape(-1).astype(np.int64), first


def collective_summary(c: Columnar, instances: Columnar | None = None) -> C.Cols:
    """Per rank, process group, collective and phase: count, total bytes, total/mean duration, ``comm_total_us``
    and ``exposed_total_us`` (the sums of ``dur_once_us`` and ``exposed_once_us``: each instant counted once per
    rank, so the rows of a rank add up to its union where collectives overlap each other), mean ``busbw_gbps`` (on the transfer time, from ``instances``) and mean ``busbw_incl_wait_gbps``
    (on this rank's kernel time, waiting included), as columns (none for a table without rows).

    Only collectives launched inside the window (pre-window kernels are counted in the run summary).
    """
    c = C.as_cols(c)
    if not C.nrows(c):
        return {}
    c = C.take(c, ~c["pre_window"].astype(bool))
    c = with_transfer_busbw(c, instances)
    c["pg"] = process_group_label(c)
    by = ["rank", "pg", "coll_name", "phase"]
    groups, first = _groups_with_missing(c, by)
    n = first.size

    def total(col: str) -> np.ndarray:  # NaN when nothing is known (CPU traces), not 0
        return _group_series_sums(c[col].astype(float), groups, n)

    out = {k: _key_values(c[k], first) for k in by}
    out.update(count=np.bincount(groups, minlength=n).astype(np.int64), mb_total=total("bytes") / 1e6,
               dur_total_us=total("dur_us"), comm_total_us=total("dur_once_us"),
               dur_mean_us=C.group_mean(c["dur_us"], groups, n),
               exposed_total_us=total("exposed_once_us"), busbw_mean_gbps=C.group_mean(c["busbw_gbps"], groups, n),
               busbw_incl_wait_mean_gbps=C.group_mean(c["busbw_incl_wait_gbps"], groups, n))
    return out


#: a rank's collectives "overlap each other" when their summed durations exceed the time any of them runs by this
OVERLAP_NOTE_SHARE = 0.01


def collective_overlap_note(c: Columnar) -> str | None:
    """The run's note when one rank's collectives overlap each other (gloo's worker threads, several NCCL
    streams) by more than :data:`OVERLAP_NOTE_SHARE` of the time any of them runs: communication is then their
    union (``dur_once_us`` summed), below the sum of their durations. None otherwise. Every collective of the
    table counts, pre-window ones included."""
    c = C.as_cols(c)
    if not C.nrows(c) or "dur_once_us" not in c:
        return None
    g = C.Groups(c, ["rank"])
    ok = g.codes >= 0

    def sums(col: str) -> np.ndarray:  # plain sums: a threshold and whole µs need no compensation
        return np.bincount(g.codes[ok], weights=np.nan_to_num(np.asarray(c[col], dtype=float)[ok]), minlength=g.n)

    total, once = sums("dur_us"), sums("dur_once_us")
    over = np.flatnonzero(total > (1.0 + OVERLAP_NOTE_SHARE) * once)
    if not over.size:
        return None
    ranks = g.keys["rank"][over]
    first = over[0]
    return (f"collectives overlap each other on rank(s) {', '.join(str(int(r)) for r in ranks)} (several at once: "
            f"gloo's worker threads or several streams): communication is the time any of them runs, |∪ intervals| "
            f"(rank {int(ranks[0])}: {once[first]:.0f} µs over the window), not the sum of their durations "
            f"({total[first]:.0f} µs); the collectives summary's comm_total_us and exposed_total_us count each "
            f"instant once")


def _key_values(values: np.ndarray, first: np.ndarray) -> np.ndarray:
    """A group key column: each group's value (from its first row), missing text as None."""
    out = np.asarray(values)[first]
    if out.dtype.kind == "O":
        miss = C.isna(out)
        if miss.any():
            out = out.copy()
            out[miss] = None
    return out


def _group_series_sums(values: np.ndarray, groups: np.ndarray, n: int, *, mean: bool = False) -> np.ndarray:
    """Per group ``0..n-1`` of ``groups``: ``Series.sum(min_count=1)`` (or ``Series.mean()``) of its ``values``,
    exactly as pandas computes it for each group alone (NaN skipped; NaN when the group has none):
    what a ``groupby.agg`` with a Python function gave, without a Python call per group into pandas."""
    out = np.full(n, np.nan)
    if not n:
        return out
    order = np.argsort(groups, kind="stable")  # the rows of each group in their order, as groupby hands them
    v, k = values[order], groups[order]
    bounds = np.concatenate(([True], k[1:] != k[:-1], [True])).nonzero()[0]
    valid = ~np.isnan(v)
    filled = np.where(valid, v, 0.0)
    for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        count = int(valid[lo:hi].sum())
        if count:  # pandas' nansum: the NaN-filled values summed by numpy (its pairwise sum); nanmean divides it
            out[k[lo]] = filled[lo:hi].sum() / count if mean else filled[lo:hi].sum()
    return out


def bucket_summary(b: Columnar, instances: Columnar | None = None) -> C.Cols:
    """Per rank and bucket index: mean over steps of bytes, launch offset, duration, exposed time,
    ``busbw_gbps`` (transfer time, from ``instances``) and ``busbw_incl_wait_gbps`` (own kernel time), as
    columns (none for a table without rows)."""
    b = C.as_cols(b)
    if not C.nrows(b):
        return {}
    b = with_transfer_busbw(b, instances)
    g = C.Groups(b, ["rank", "bucket"])
    if (g.codes < 0).any():  # a row without rank or bucket is in no group (groupby's dropna)
        b = C.take(b, g.codes >= 0)
        g = C.Groups(b, ["rank", "bucket"])
    groups, n = g.codes, g.n

    def mean(col: str) -> np.ndarray:
        return C.group_mean(b[col], groups, n)

    out = {**g.keys, "steps": g.nunique(b["step"])}
    ops = _bucket_ops(b.get("launch_op"), g)
    if ops is not None:  # compiled-autograd buckets: op and where it is waited on
        out["op"] = ops
    out["mb"] = _group_series_sums(np.asarray(b["bytes"], dtype=float), groups, n, mean=True) / 1e6
    out.update({c: mean(c) for c in ("launch_offset_us", "start_offset_us", "dur_us", "exposed_us", "busbw_gbps",
                                     "busbw_incl_wait_gbps")})
    if ops is not None:
        out["wait_offset_us"], out["wait_cpu_us"] = mean("wait_offset_us"), mean("wait_cpu_us")
    return out


def _bucket_ops(launch_op: np.ndarray | None, g: C.Groups) -> np.ndarray | None:
    """Per bucket group, its launch ops' short names (``all_reduce_``, sorted, comma-joined; ``-`` for none);
    None when no row has a launch op."""
    if launch_op is None:
        return None
    present = ~C.isna(launch_op)
    if not present.any():
        return None
    names: list[set[str]] = [set() for _ in range(g.n)]
    for code, v in zip(g.codes[present].tolist(), launch_op[present].tolist()):
        names[code].add(str(v).split("::")[-1])
    return C.obj([",".join(sorted(s)) or "-" for s in names])


def manifest_tp(manifest: Manifest | None) -> int:
    """``config.tp`` of a tracekit profile manifest (1 when absent)."""
    tp = manifest.config.get("tp") if manifest is not None else None
    return tp if isinstance(tp, int) and tp > 0 else 1


TABLES = [
    Table(
        name="collectives", scope="rank", title="Collectives (one row per collective instance and rank)",
        doc="On GPU traces an instance is a communication kernel, its args from the kernel or from the "
            "record_param_comms op with the same External id; on CPU-only (gloo) traces it is the backend's "
            "CPU range and the overlap columns are null. The text report sums them per rank, collective and phase: "
            "dur_total_us sums the durations, comm_total_us and exposed_total_us the _once_ columns (each instant "
            "counted once per rank: collectives that run at once, on gloo's worker threads or several NCCL streams, "
            "are their union; a note names the ranks where they overlap).",
        columns=(
            Column("rank", "rank", "the rank"),
            Column("step", "step", "ProfilerStep of the launch (-1: pre-window or outside every step)"),
            Column("seq", "index", "ordinal within its process group among collectives launched in the window "
                                   "(-1 for pre-window ones)"),
            Column("step_seq", "index", "the same ordinal counted within the step"),
            Column("phase", "name", "forward (inside a DDP/FSDP forward), optimizer (inside Optimizer.step*), "
                                    "backward (inside the step's autograd span), else other"),
            Column("coll_name", "name", "collective (allreduce, allgather, ...)"),
            Column("pg_name", "name", "process group name"),
            Column("pg_desc", "name", "process group description"),
            Column("dtype", "name", "element type"),
            Column("nelems", "count", "max(in, out) elements"),
            Column("bytes", "bytes", "nelems × dtype size: the full buffer, as nccl-tests count it"),
            Column("group_size", "count", "ranks in the process group"),
            Column("launch_ts_ns", "ns", "CPU time of the collective op (or its launch call)"),
            Column("start_ns", "ns", "kernel (CPU: backend range) start"),
            Column("end_ns", "ns", "kernel (CPU: backend range) end"),
            Column("dur_us", "us", "end − start"),
            Column("algbw_incl_wait_gbps", "GB/s", "bytes / dur: this rank's kernel time, waiting for late peers "
                                                   "included (the transfer's bandwidth is instances.busbw_gbps)"),
            Column("busbw_incl_wait_gbps", "GB/s", "algbw_incl_wait × nccl-tests factor: allreduce 2(n−1)/n; "
                                                   "allgather, reduce_scatter, all_to_all (n−1)/n; others 1"),
            Column("overlap_us", "us", "part of the kernel covered by compute kernels (any step)"),
            Column("exposed_us", "us", "dur_us − overlap_us"),
            Column("dur_once_us", "us", "the part of [start, end) no collective of the rank that started earlier "
                                        "covers (any stream or gloo thread): each instant of communication counted "
                                        "once, so a rank's rows sum to |∪ collectives|"),
            Column("exposed_once_us", "us", "the part of dur_once_us overlapped by no compute kernel: a rank's rows "
                                            "sum to |∪ collectives − ∪ compute| (null on CPU traces)"),
            Column("pre_window", "bool", "launched before the profiler window (no launch event)"),
            Column("kernel", "name", "kernel name (GPU traces)"),
            Column("launch_op", "name", "the functional op that launched it (_c10d_functional::all_reduce_, "
                                        "all_reduce_coalesced_, ...: compiled autograd, inductor's DDP fusion, "
                                        "DTensor); null for the C++ reducer, FSDP and eager calls"),
            Column("peer", "rank", "point-to-point only: the other rank (global), the Dst Rank of a send or the "
                                   "Src Rank of a recv as torch records them, else the other member of a 2-rank "
                                   "group; -1 when unknown"),
            Column("p2p_seq", "index", "a send's (recv's) ordinal among this rank's sends to (recvs from) that "
                                       "peer, in launch order: the sender-receiver match key (instances); -1 for "
                                       "other rows. Send/recv rows take no place in seq / step_seq (-1)"),
        ),
        compute=collectives_table, order=30,
        view=lambda t, o: View("Collectives (launched in the window; busbw_gbps on the transfer time, "
                               "busbw_incl_wait_gbps on the own kernel)",
                               collective_summary(t["collectives"], t.get("instances"))),
    ),
    Table(
        name="buckets", scope="rank", title="DDP buckets (backward allreduces per rank and step)",
        doc="The allreduces launched during backward are DDP's gradient buckets; offsets are from the start of "
            "the step's backward (first autograd::engine::evaluate_function), on the device's clock (the host's "
            "launch, backward start and wait put on it through the launches, as bucket_timeline's; a CPU run has "
            "one clock). The text report shows the mean over steps.",
        columns=(
            Column("rank", "rank", "the rank"),
            Column("step", "step", "the ProfilerStep"),
            Column("bucket", "index", "launch order within the step (0 = first launched = last layers)"),
            Column("pg_name", "name", "the data-parallel process group (with a device mesh: mesh_dp only)"),
            Column("step_seq", "index", "the collective's ordinal in its group within the step (the cross-rank "
                                        "match key, see instances)"),
            Column("launch_op", "name", "functional op of a compiled-autograd bucket (all_reduce_ with inductor's "
                                        "concat fusion, all_reduce_coalesced_ with the coalesced one); null for "
                                        "the C++ reducer"),
            Column("bytes", "bytes", "the allreduce's buffer"),
            Column("launch_offset_us", "us", "launch − backward start, both on the device's clock"),
            Column("start_offset_us", "us", "kernel start − backward start (on the device's clock)"),
            Column("dur_us", "us", "kernel duration"),
            Column("exposed_us", "us", "part of the kernel overlapped by no compute kernel"),
            Column("dur_once_us", "us", "collectives.dur_once_us: the part of the kernel no collective of the rank "
                                        "that started earlier covers (each instant once)"),
            Column("exposed_once_us", "us", "collectives.exposed_once_us: the part of dur_once_us overlapped by no "
                                            "compute kernel"),
            Column("busbw_incl_wait_gbps", "GB/s", "bus bandwidth on this rank's kernel time, waiting included "
                                                   "(see collectives; the text report adds busbw_gbps on the "
                                                   "transfer time)"),
            Column("wait_offset_us", "us", "first _c10d_functional::wait_tensor on the launching thread after the "
                                           "launch − backward start, both on the device's clock (null without "
                                           "wait_tensor ops)"),
            Column("wait_cpu_us", "us", "time inside wait_tensor between the launch and the collective's end: "
                                        "blocking on gloo, ~0 on NCCL (there the device-side cost is exposed_us)"),
        ),
        compute=lambda ctx: bucket_table(ctx.trace, ctx.tables["collectives"], manifest_tp(ctx.manifest),
                                         ctx.world_size),
        needs=("collectives",), order=40,
        view=lambda t, o: View("DDP buckets (backward allreduces, mean over steps)",
                               bucket_summary(t["buckets"], t.get("instances"))),
    ),
]


# -- findings read from the collectives table (see tracekit.analyses.findings) ---------------------

#: backward allreduces are "mostly exposed" when less than this % of their time overlaps compute
LOW_OVERLAP_PCT = 25.0
#: ...and the exposed time is at least this % of the step
LOW_OVERLAP_MIN_STEP_PCT = 5.0


class BackwardCommExposed(Finding, tag="backward_comm_exposed"):
    """``backward_comm_exposed``: the backward allreduces barely overlap compute, although they do not
    all start after backward (that case is ``allreduce_after_backward``). Typical of a python_reducer /
    compiled-autograd backward that serialises communication between its compute. Figures from the
    ``buckets`` rows' ``_once_`` columns (each instant of communication once: allreduces running at once on
    several streams count as their union)."""

    overlap_pct: float | None
    exposed_us_per_step: float | None
    allreduces_per_step: float | None

    QUOTES: ClassVar[dict[str, Quote]] = {
        "step_us": Quote("steps", "step_us", "mean"), "cost_us": Quote("buckets", "exposed_once_us", "per_step"),
        "exposed_us_per_step": Quote("buckets", "exposed_once_us", "per_step"),
        "overlap_pct": Quote("buckets", "dur_once_us-exposed_once_us/dur_once_us", "pct"),
        "allreduces_per_step": Quote("buckets", "bucket", "rows_per_step")}
    ORDER: ClassVar[int] = 20
    TIMING: ClassVar[bool] = True

    @classmethod
    def detect(cls, ctx: FindingContext) -> list[BackwardCommExposed]:
        return backward_comm_exposed(ctx.result, {f.rank for f in ctx.earlier("allreduce_after_backward")})


def backward_comm_exposed(result: Any, skip_ranks: set[Any]) -> list[BackwardCommExposed]:
    """The :class:`BackwardCommExposed` findings of ``result``, except on ``skip_ranks``."""
    c = result_table(result, "collectives")
    if not C.nrows(c) or not result.meta.get("device_metrics") or None in skip_ranks:
        return []
    # gradient buckets only: tensor-parallel allreduces in backward are not DDP's (see collectives)
    b = C.take(c, gradient_allreduce_mask(c, manifest_tp(result.meta.get("manifest")), result.meta.get("world_size")))
    if not C.nrows(b):
        return []
    g = C.Groups(b, ["rank"])
    means = step_means(result)
    out = []
    # each instant once (the _once_ columns): allreduces that run at once on several streams are their union
    dur, exposed = (C.kahan_sums(b[c], g.codes, g.n)[0] for c in ("dur_once_us", "exposed_once_us"))  # pandas' sums
    per_rank = zip(g.keys["rank"].tolist(), dur.tolist(), exposed.tolist(), g.nunique(b["step"]).tolist(),
                   g.size().tolist())
    for rank, dur, exposed, n_steps, n in per_rank:
        if int(rank) in skip_ranks:
            continue
        dur, exposed = float(dur), float(exposed)
        steps = max(int(n_steps), 1)
        step_us = rank_step_us(result, rank, means)
        overlap_pct = 100.0 * (dur - exposed) / dur if dur > 0 else float("nan")
        cost = exposed / steps
        if not (overlap_pct < LOW_OVERLAP_PCT and np.isfinite(step_us)
                and cost >= LOW_OVERLAP_MIN_STEP_PCT / 100.0 * step_us):
            continue
        per = int(n) / steps
        msg = (f"only {overlap_pct:.0f}% of the backward allreduce time overlaps compute: {cost:.0f} µs per step "
               f"of {per:.0f} allreduces is exposed although they start during backward")
        out.append(BackwardCommExposed(rank=int(rank), message=msg, cost_us=cost, step_us=step_us,
                                       overlap_pct=rounded(overlap_pct), exposed_us_per_step=rounded(cost),
                                       allreduces_per_step=rounded(per)))
    return out


def result_table(result: Any, name: str) -> C.Cols:
    """Table ``name`` of an analysis result as columns (none when absent): its ``columns`` where it has them,
    else its ``tables`` (DataFrames, converted)."""
    tables = getattr(result, "columns", None)
    if tables is None:
        tables = result.tables
    return C.as_cols(tables.get(name))


FINDINGS = [BackwardCommExposed]
