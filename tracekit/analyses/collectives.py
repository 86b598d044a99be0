"""Per-rank collective table and the DDP bucket table.

One row per collective instance. On GPU traces an instance is a communication
kernel; its collective args (name, process group, dtype, element counts) come
from the kernel when kineto recorded them and otherwise from the CPU
``record_param_comms`` op that launched it (same External id) — compiled runs
record them only there. On CPU-only traces (gloo) an instance is a
``record_param_comms`` op and the device-side columns are NaN.

Columns (times in µs, bandwidth in GB/s = 1e9 bytes/s):

- ``step``: ProfilerStep of the launch (-1: pre-window or outside every step).
- ``seq``: ordinal within its process group among collectives launched in the
  window, in launch order (pre-window instances get -1).
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
from typing import Any

import numpy as np
import pandas as pd

from tracekit.analyses import functional
from tracekit.analyses import intervals as iv
from tracekit.analyses.classify import COMM, COMPUTE, classify_gpu
from tracekit.analyses.registry import Column, RankContext, Table, View
from tracekit.profile.manifest import Manifest
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
    "exposed_us", "pre_window", "kernel", "launch_op",
)


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


def _coll_from_kernel_name(name: str) -> str | None:
    m = re.match(r"nccl(?:DevKernel|Kernel)_([A-Za-z]+)", name)
    return _NCCL_KERNEL_COLL.get(m.group(1).lower()) if m else None


def phase_windows(rt: RankTrace) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """CPU time ranges of forward, backward and optimizer phases (see module doc); computed once per rank."""
    return rt.memo("phase_windows", lambda: _phase_windows(rt))


def _phase_windows(rt: RankTrace) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    ev = rt.events
    ann = ev["kind"].isin((schema.ANNOTATION, schema.CPU_OP)).to_numpy()
    fwd = ev[ann & schema.name_mask(ev["name"], FORWARD_PATTERN)]
    opt = ev[ann & schema.name_mask(ev["name"], OPTIMIZER_PATTERN)]
    bw = ev[(ev["kind"] == schema.CPU_OP).to_numpy() & schema.name_mask(ev["name"], BACKWARD_OP_PREFIX, prefix=True)]
    step = assign_steps(rt.steps, bw["ts_ns"].to_numpy())
    in_step = step >= 0  # autograd ops outside every step must not widen a span over all steps
    if in_step.any():
        g = pd.DataFrame({"step": step[in_step], "ts": bw["ts_ns"].to_numpy()[in_step],
                          "end": bw["end_ns"].to_numpy()[in_step]})
        spans = g.groupby("step").agg(ts=("ts", "min"), end=("end", "max")).sort_values("ts")
        bws, bwe = spans["ts"].to_numpy(), spans["end"].to_numpy()
    else:
        bws = bwe = np.empty(0, dtype=np.int64)
    ranges = ev[ann & schema.name_mask(ev["name"], BACKWARD_RANGE_PATTERN)]
    bws, bwe = iv.union(np.concatenate([bws, ranges["ts_ns"].to_numpy()]),
                        np.concatenate([bwe, ranges["end_ns"].to_numpy()]))
    return {
        "forward": (fwd["ts_ns"].to_numpy(), fwd["end_ns"].to_numpy()),
        "optimizer": (opt["ts_ns"].to_numpy(), opt["end_ns"].to_numpy()),
        "backward": (bws, bwe),
    }


def _in_any(ts: np.ndarray, window: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    s, e = iv.union(*window)
    if s.size == 0:
        return np.zeros(ts.size, dtype=bool)
    i = np.searchsorted(s, ts, side="right") - 1
    return (i >= 0) & (e[np.clip(i, 0, None)] > ts)


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


def _cpu_collective_ops(rt: RankTrace) -> pd.DataFrame:
    ev = rt.events
    ops = ev[(ev["kind"] == schema.CPU_OP) & (ev["name"] == "record_param_comms")]
    return ops[["ts_ns", "end_ns", "dur_ns", "external_id", "in_nelems", "out_nelems", "group_size", *ARG_COLUMNS]]


def collective_table(rt: RankTrace, cls: pd.Series, world_size: int,
                     gloo_threads: dict[str, str] | None = None) -> pd.DataFrame:
    """The per-rank collective table described in the module docstring."""
    ops = _cpu_collective_ops(rt)
    if rt.has_gpu_activity:
        df = _gpu_instances(rt, cls, ops)
    else:
        df = _cpu_instances(rt, ops, gloo_threads)
    if df.empty:
        return pd.DataFrame(columns=list(COLLECTIVE_COLUMNS))
    df["rank"] = rt.rank
    n = df["group_size"].where(df["group_size"] > 0, world_size).astype(np.int64)
    df["group_size"] = n
    dbytes = df["dtype"].astype(object).map(schema.DTYPE_BYTES).astype(float)
    nel = df[["in_nelems", "out_nelems"]].max(axis=1).astype(float).where(lambda x: x >= 0)
    df["nelems"] = nel
    df["bytes"] = nel * dbytes
    dur_s = df["dur_us"] / 1e6
    df["algbw_incl_wait_gbps"] = (df["bytes"] / 1e9) / dur_s.where(dur_s > 0)
    factors = np.array([bus_factor(c if isinstance(c, str) else None, int(k))
                        for c, k in zip(df["coll_name"].astype(object), n)])
    df["busbw_incl_wait_gbps"] = df["algbw_incl_wait_gbps"] * factors
    df["phase"] = label_phases(rt, df["launch_ts_ns"].to_numpy())
    df["launch_op"] = functional.launch_ops(rt, df["launch_ts_ns"].to_numpy())
    df["seq"] = -1
    df["step_seq"] = -1
    in_win = df[~df["pre_window"].astype(bool)].sort_values("launch_ts_ns", kind="stable")
    pg = in_win["pg_name"].astype(object).fillna("?")
    df.loc[in_win.index, "seq"] = in_win.groupby(pg).cumcount()
    df.loc[in_win.index, "step_seq"] = in_win.groupby([pg, in_win["step"]]).cumcount()
    df = df.sort_values(["launch_ts_ns", "start_ns"], kind="stable").reset_index(drop=True)
    return df[list(COLLECTIVE_COLUMNS)]


def _gpu_instances(rt: RankTrace, cls: pd.Series, ops: pd.DataFrame) -> pd.DataFrame:
    g = rt.gpu
    is_comm = (cls == COMM).to_numpy()
    k = g.loc[is_comm].copy()
    comp = (g["ts_ns"].to_numpy()[(cls == COMPUTE).to_numpy()], g["end_ns"].to_numpy()[(cls == COMPUTE).to_numpy()])
    covered = iv.covered_per_interval(k["ts_ns"].to_numpy(), k["end_ns"].to_numpy(), comp)
    # fill missing collective args from the launching record_param_comms op
    op = ops.drop_duplicates("external_id").set_index("external_id")
    ext = k["external_id"]
    for col in (*ARG_COLUMNS,):
        own = k[col].astype(object)
        from_op = ext.map(op[col].astype(object)) if len(op) else pd.Series(None, index=k.index, dtype=object)
        k[col] = own.where(own.notna(), from_op)
    for col in ("in_nelems", "out_nelems", "group_size"):
        from_op = ext.map(op[col]) if len(op) else pd.Series(np.nan, index=k.index)
        k[col] = k[col].where(k[col] >= 0, from_op.fillna(-1)).astype(np.int64)
    guess = k["name"].map(_coll_from_kernel_name).astype(object)  # categorical: once per distinct name
    k["coll_name"] = k["coll_name"].where(k["coll_name"].notna(), guess)
    op_ts = ext.map(op["ts_ns"]) if len(op) else pd.Series(np.nan, index=k.index)
    launch = op_ts.where(op_ts.notna(), k["launch_ts_ns"].where(k["launch_ts_ns"] >= 0))
    k["launch_ts_ns"] = launch.where(~k["pre_window"]).fillna(-1).astype(np.int64)
    return pd.DataFrame({
        "step": k["step"].to_numpy(), "coll_name": k["coll_name"].to_numpy(), "pg_name": k["pg_name"].to_numpy(),
        "pg_desc": k["pg_desc"].to_numpy(), "dtype": k["dtype"].to_numpy(), "in_nelems": k["in_nelems"].to_numpy(),
        "out_nelems": k["out_nelems"].to_numpy(), "group_size": k["group_size"].to_numpy(),
        "launch_ts_ns": k["launch_ts_ns"].to_numpy(), "start_ns": k["ts_ns"].to_numpy(),
        "end_ns": k["end_ns"].to_numpy(), "dur_us": k["dur_ns"].to_numpy() / NS_PER_US,
        "overlap_us": covered / NS_PER_US, "exposed_us": (k["dur_ns"].to_numpy() - covered) / NS_PER_US,
        "pre_window": k["pre_window"].to_numpy(), "kernel": k["name"].astype(str).to_numpy(),
    })


#: CPU-side collective work ranges: the backend's annotation on its worker thread ("gloo:all_reduce")
BACKEND_RANGE_PATTERN = r"^(?:gloo|nccl|mpi|ucc):"
_BACKEND_COLL = {"all_reduce": "allreduce", "all_gather": "allgather", "reduce_scatter": "reduce_scatter",
                 "all_to_all": "all_to_all", "alltoall": "all_to_all", "broadcast": "broadcast",
                 "reduce": "reduce", "barrier": "barrier", "send": "send", "recv": "recv", "gather": "gather",
                 "scatter": "scatter"}


def _cpu_instances(rt: RankTrace, ops: pd.DataFrame, gloo_threads: dict[str, str] | None = None) -> pd.DataFrame:
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
    ev = rt.events
    rng = ev[(ev["kind"] == schema.ANNOTATION).to_numpy() & schema.name_mask(ev["name"], BACKEND_RANGE_PATTERN)]
    launch_ops = ops
    if launch_ops.empty:
        c10d = ev[(ev["kind"] == schema.CPU_OP).to_numpy() & schema.name_mask(ev["name"], r"^c10d::")]
        launch_ops = c10d.assign(coll_name=pd.Series(dtype=object))
    launch_ops = launch_ops.sort_values("ts_ns", kind="stable")
    rng = rng.sort_values("ts_ns", kind="stable")
    n = len(rng) if len(rng) else len(launch_ops)
    paired = len(rng) == 0 or len(rng) == len(launch_ops)
    src = launch_ops if paired and len(launch_ops) else None
    if len(rng):
        start, end = rng["ts_ns"].to_numpy(), rng["end_ns"].to_numpy()
        kind_name = rng["name"].astype(str).str.split(":", n=1).str[1].map(lambda x: _BACKEND_COLL.get(x, x))
        launch = src["ts_ns"].to_numpy() if src is not None else start
    else:
        start, end = launch_ops["ts_ns"].to_numpy(), launch_ops["end_ns"].to_numpy()
        kind_name = pd.Series([None] * n, dtype=object)
        launch = start

    def arg(col: str, default: Any) -> np.ndarray:
        if src is None or col not in src:
            return np.full(n, default, dtype=object if default is None else np.int64)
        v = src[col]
        return v.astype(object).to_numpy() if default is None else v.to_numpy()

    coll = arg("coll_name", None)
    coll = np.where(pd.isna(coll), kind_name.to_numpy(dtype=object), coll)
    pg_name, pg_desc = arg("pg_name", None), arg("pg_desc", None)
    if len(rng) and pd.isna(pg_name).all():  # gloo records no group args: infer from its worker threads
        pg_name, pg_desc = functional.gloo_thread_groups(rt, rng["tid"].to_numpy(), gloo_threads)
    return pd.DataFrame({
        "step": assign_steps(rt.steps, launch), "coll_name": coll, "pg_name": pg_name,
        "pg_desc": pg_desc, "dtype": arg("dtype", None), "in_nelems": arg("in_nelems", -1),
        "out_nelems": arg("out_nelems", -1), "group_size": arg("group_size", -1),
        "launch_ts_ns": launch, "start_ns": start, "end_ns": end, "dur_us": (end - start) / NS_PER_US,
        "overlap_us": np.full(n, np.nan), "exposed_us": np.full(n, np.nan),
        "pre_window": np.zeros(n, dtype=bool), "kernel": np.full(n, None, dtype=object),
    })


BUCKET_COLUMNS = ("rank", "step", "bucket", "pg_name", "step_seq", "launch_op", "bytes", "launch_offset_us",
                  "start_offset_us", "dur_us", "exposed_us", "busbw_incl_wait_gbps", "wait_offset_us", "wait_cpu_us")
#: collective names of a data-parallel gradient allreduce (the C++ reducer, the python reducer, inductor's fusion)
ALLREDUCE_NAMES = ("allreduce", "allreduce_coalesced", "all_reduce", "all_reduce_coalesced")


def data_parallel_groups(coll: pd.DataFrame, tp: int = 1, world_size: int | None = None) -> pd.Series:
    """Rows on the data-parallel process group: with a device mesh (``pg_desc`` ``mesh_*``) the
    ``mesh_dp`` group only (tensor-parallel allreduces in backward are not gradient buckets);
    otherwise, with ``tp`` > 1 (from the manifest), only groups of ``world_size / tp`` ranks (a mesh
    dimension over every rank reuses the default group); otherwise every row."""
    desc = coll["pg_desc"].astype(object)
    keep = pd.Series(True, index=coll.index)
    if desc.astype(str).str.startswith("mesh_").any():
        keep &= desc == "mesh_dp"
    elif tp > 1 and world_size:  # groups not named after mesh dimensions: go by their size
        keep &= coll["group_size"] == world_size // tp
    return keep


def gradient_allreduces(coll: pd.DataFrame, tp: int = 1, world_size: int | None = None) -> pd.Series:
    """Mask of the gradient-bucket rows of a collective table: allreduces (plain or coalesced) launched
    in a step's backward on the data-parallel group (:func:`data_parallel_groups`)."""
    name = coll["coll_name"].astype(object).astype(str).str.lower()
    keep = (coll["phase"] == "backward") & name.isin(ALLREDUCE_NAMES) & (coll["step"] >= 0)
    return keep & data_parallel_groups(coll, tp, world_size)


def bucket_table(rt: RankTrace, coll: pd.DataFrame, tp: int = 1, world_size: int | None = None) -> pd.DataFrame:
    """DDP gradient buckets: the allreduces (plain or coalesced) launched during backward on the
    data-parallel group, per step.

    ``bucket`` is the launch order within the step (0 = first bucket launched,
    which holds the last layers' gradients). ``launch_offset_us`` and
    ``start_offset_us`` are the CPU launch and kernel start relative to the
    start of the step's backward (first ``autograd::engine::evaluate_function``,
    or the compiled-autograd region). ``launch_op`` names the functional op of a
    compiled-autograd bucket (``_c10d_functional::all_reduce_`` with inductor's concat
    fusion, ``all_reduce_coalesced_`` with the coalesced one), None for the C++ reducer.
    ``wait_offset_us`` / ``wait_cpu_us``: where ``wait_tensor`` waits on it (see
    :func:`tracekit.analyses.functional.wait_columns`; NaN without ``wait_tensor`` ops).
    """
    b = coll[gradient_allreduces(coll, tp, world_size)].copy()
    if b.empty:
        return pd.DataFrame(columns=list(BUCKET_COLUMNS))
    bws, _ = phase_windows(rt)["backward"]
    b = b.sort_values(["step", "launch_ts_ns"], kind="stable")
    b["bucket"] = b.groupby("step").cumcount()
    launch = b["launch_ts_ns"].to_numpy()
    i = np.searchsorted(bws, launch, side="right") - 1  # the backward span the launch falls in
    start = np.where(i >= 0, bws[np.clip(i, 0, None)] if bws.size else launch, launch)
    b["launch_offset_us"] = (b["launch_ts_ns"].to_numpy() - start) / NS_PER_US
    b["start_offset_us"] = np.where(b["start_ns"] >= 0, (b["start_ns"].to_numpy() - start) / NS_PER_US, np.nan)
    b["wait_offset_us"], b["wait_cpu_us"] = functional.wait_columns(
        rt, launch, b["end_ns"].to_numpy(), start)
    return b[list(BUCKET_COLUMNS)].reset_index(drop=True)


# -- registered tables (see tracekit.analyses.registry) ------------------------------------------


def collectives_table(ctx: RankContext) -> pd.DataFrame:
    rt = ctx.trace
    cls = classify_gpu(rt, ctx.options.comm_pattern) if rt.has_gpu_activity else pd.Series([], dtype=object)
    return collective_table(rt, cls, ctx.world_size, functional.manifest_gloo_threads(ctx.manifest, rt.rank))


def process_group_label(c: pd.DataFrame) -> pd.Series:
    """``pg_name`` with its description where known (``3:mesh_tp``), else ``?``."""
    name = c["pg_name"].astype(object).fillna("?").astype(str)
    desc = c["pg_desc"].astype(object)
    return name.where(desc.isna(), name + ":" + desc.astype(str))


_KEY = ["pg_name", "step", "step_seq"]


def with_transfer_busbw(rows: pd.DataFrame, instances: pd.DataFrame | None) -> pd.DataFrame:
    """``rows`` (collectives or buckets) with ``busbw_gbps``: the matched instance's bus bandwidth on its
    transfer time (the last arriver's kernel, see :mod:`tracekit.analyses.crossrank`); NaN when unmatched."""
    if instances is None or instances.empty or rows.empty:
        return rows.assign(busbw_gbps=np.nan)
    key = rows[_KEY].assign(pg_name=rows["pg_name"].astype(object).fillna("?").astype(str))
    inst = instances[_KEY + ["busbw_gbps"]].assign(pg_name=instances["pg_name"].astype(object).astype(str))
    bw = key.merge(inst.drop_duplicates(_KEY), on=_KEY, how="left")["busbw_gbps"].to_numpy()
    return rows.assign(busbw_gbps=bw)


def collective_summary(c: pd.DataFrame, instances: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per rank, process group, collective and phase: count, total bytes, total/mean duration, exposed,
    mean ``busbw_gbps`` (on the transfer time, from ``instances``) and mean ``busbw_incl_wait_gbps``
    (on this rank's kernel time, waiting included).

    Only collectives launched inside the window (pre-window kernels are counted in the run summary).
    """
    if c.empty:
        return pd.DataFrame()
    c = c[~c["pre_window"].astype(bool)]
    c = with_transfer_busbw(c, instances).assign(pg=process_group_label(c))
    g = c.groupby(["rank", "pg", "coll_name", "phase"], dropna=False, observed=True)

    def total(x: pd.Series) -> float:  # NaN when nothing is known (CPU traces), not 0
        return x.sum(min_count=1)

    out = g.agg(count=("dur_us", "size"), mb_total=("bytes", lambda x: total(x) / 1e6),
                dur_total_us=("dur_us", total), dur_mean_us=("dur_us", "mean"),
                exposed_total_us=("exposed_us", total), busbw_mean_gbps=("busbw_gbps", "mean"),
                busbw_incl_wait_mean_gbps=("busbw_incl_wait_gbps", "mean"))
    return out.reset_index()


def bucket_summary(b: pd.DataFrame, instances: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per rank and bucket index: mean over steps of bytes, launch offset, duration, exposed time,
    ``busbw_gbps`` (transfer time, from ``instances``) and ``busbw_incl_wait_gbps`` (own kernel time)."""
    if b.empty:
        return pd.DataFrame()
    g = with_transfer_busbw(b, instances).groupby(["rank", "bucket"])
    out = g.agg(steps=("step", "nunique"), mb=("bytes", lambda x: x.mean() / 1e6),
                launch_offset_us=("launch_offset_us", "mean"), start_offset_us=("start_offset_us", "mean"),
                dur_us=("dur_us", "mean"), exposed_us=("exposed_us", "mean"), busbw_gbps=("busbw_gbps", "mean"),
                busbw_incl_wait_gbps=("busbw_incl_wait_gbps", "mean"))
    if "launch_op" in b and b["launch_op"].notna().any():  # compiled-autograd buckets: op and where it is waited on
        ops = g["launch_op"].agg(lambda x: ",".join(sorted({str(v).split("::")[-1] for v in x.dropna()})) or "-")
        out.insert(1, "op", ops)
        out["wait_offset_us"] = g["wait_offset_us"].mean()
        out["wait_cpu_us"] = g["wait_cpu_us"].mean()
    return out.reset_index()


def manifest_tp(manifest: Manifest | None) -> int:
    """``config.tp`` of a tracekit profile manifest (1 when absent)."""
    tp = manifest.config.get("tp") if manifest is not None else None
    return tp if isinstance(tp, int) and tp > 0 else 1


TABLES = [
    Table(
        name="collectives", scope="rank", title="Collectives (one row per collective instance and rank)",
        doc="On GPU traces an instance is a communication kernel, its args from the kernel or from the "
            "record_param_comms op with the same External id; on CPU-only (gloo) traces it is the backend's "
            "CPU range and the overlap columns are null. The text report sums them per rank, collective and phase.",
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
            Column("pre_window", "bool", "launched before the profiler window (no launch event)"),
            Column("kernel", "name", "kernel name (GPU traces)"),
            Column("launch_op", "name", "the functional op that launched it (_c10d_functional::all_reduce_, "
                                        "all_reduce_coalesced_, ...: compiled autograd, inductor's DDP fusion, "
                                        "DTensor); null for the C++ reducer, FSDP and eager calls"),
        ),
        compute=collectives_table, order=30,
        view=lambda t, o: View("Collectives (launched in the window; busbw_gbps on the transfer time, "
                               "busbw_incl_wait_gbps on the own kernel)",
                               collective_summary(t["collectives"], t.get("instances"))),
    ),
    Table(
        name="buckets", scope="rank", title="DDP buckets (backward allreduces per rank and step)",
        doc="The allreduces launched during backward are DDP's gradient buckets; offsets are from the start of "
            "the step's backward (first autograd::engine::evaluate_function). The text report shows the mean "
            "over steps.",
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
            Column("launch_offset_us", "us", "CPU launch − backward start"),
            Column("start_offset_us", "us", "kernel start − backward start"),
            Column("dur_us", "us", "kernel duration"),
            Column("exposed_us", "us", "part of the kernel overlapped by no compute kernel"),
            Column("busbw_incl_wait_gbps", "GB/s", "bus bandwidth on this rank's kernel time, waiting included "
                                                   "(see collectives; the text report adds busbw_gbps on the "
                                                   "transfer time)"),
            Column("wait_offset_us", "us", "first _c10d_functional::wait_tensor on the launching thread after the "
                                           "launch − backward start (null without wait_tensor ops)"),
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
