"""Table ``ops``: what each op costs per step, its FLOPs and bytes, and how close it runs to the device's roofline.

An **op** is what launched the GPU work: the innermost aten op with a FLOP/byte model that encloses the launch
(``aten::addmm``, ``aten::convolution_backward``, ``aten::_scaled_dot_product_flash_attention``...), a compiled
kernel (``triton_poi_fused_add_mul_0``, ``triton_tem_fused_mm_0``), or the innermost op when none has a model
(:mod:`tracekit.analyses.optree`); a GPU activity launched outside every op is its own op (its kernel name).
The link is the launch's correlation id (launch -> kernel) and its External id (launch -> CPU op). On a CPU-only
run the ops are the CPU ops, each with its self time (its duration less its children's), given to its owner.

Only the work launched inside a ProfilerStep counts, and every ``_per_step`` figure is the window's total
divided by the number of ProfilerSteps (the ``steps`` column of table ``ranks``). One row per rank, module, op
and dtype. FLOP and byte models: :mod:`tracekit.analyses.op_models`; device peaks: :mod:`tracekit.analyses.peaks`;
both stated in docs/ops.md.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from tracekit.analyses import fusion, op_models, optree, peaks
from tracekit.analyses.classify import COMM, class_codes
from tracekit.analyses.registry import Column, RankContext, RunContext, Table, View, ViewOptions
from tracekit.traces import cols as C
from tracekit.traces import provenance, schema
from tracekit.traces.decode import LAUNCHES_KEY, UNREAD_KEY
from tracekit.traces.frames import NO_ROWS
from tracekit.traces.traceset import assign_steps

NS_PER_US = 1000.0
#: a memory-bound op whose bytes per call are under this many times the device's last-level cache may be served
#: from it (the previous kernel's output often still is): device-memory bandwidth does not bound it
CACHE_FACTOR = 2.0
#: the key prefix of compiled_kernels.json's library calls in :func:`_compiled_kernels`'s mapping
EXTERN = "extern:"
#: ``flops_source`` values, most authoritative first (a group of calls takes the first one present)
SOURCES = ("inductor", "shapes", "kernel_name")

OPS_COLUMNS = (
    Column("rank", "rank", "the rank"),
    Column("op", "name", "the aten op (eager), compiled kernel (Triton, extern) or CPU op that did the work"),
    Column("category", "name", "gemm, conv, attention, elementwise, reduction, norm, memory, communication or other"),
    Column("module", "name", "dotted module path as in model.named_modules() ('' = the model itself, "
                             "'(optimizer)' = optimizer ops outside modules); null: outside every module"),
    Column("calls_per_step", "count", "calls of the op (its launches' owners) per ProfilerStep"),
    Column("us_per_step", "us", "summed device time of the GPU work it launched (on CPU runs: its self time), "
                                "per ProfilerStep"),
    Column("flops_per_step", "count", "modelled floating-point operations per ProfilerStep (docs/ops.md); null "
                                      "without a model or shapes"),
    Column("bytes_per_step", "bytes", "modelled bytes moved per ProfilerStep: inputs + outputs once (a lower bound); "
                                      "indexed ops and compiled kernels only the elements they touch (docs/ops.md)"),
    Column("achieved_tflops", "count", "flops_per_step / us_per_step, in TFLOP/s (1e12 FLOP per second)"),
    Column("achieved_tbps", "count", "bytes_per_step / us_per_step, in TB/s (1e12 bytes per second)"),
    Column("intensity_flop_per_byte", "count", "flops_per_step / bytes_per_step"),
    Column("bound", "name", "compute or memory: which roofline term is larger (flops / peak vs bytes / "
                            "bandwidth); null without both or without the device's peaks"),
    Column("pct_of_roofline", "pct", "100 · max(flops / peak, bytes / bandwidth) / us: the roofline time as a "
                                     "share of the measured time; null without peaks, and for memory-bound ops "
                                     "whose bytes per call fit in the L2 cache"),
    Column("dtype", "name", "dtype of the op's first tensor input (float32, bfloat16...); null without shapes"),
    Column("flops_source", "name", "shapes (record_shapes inputs), kernel_name (a Triton kernel's fused ops), "
                                   "inductor (compiled_kernels.json); null: no model (see the notes)"),
)
#: the internal rank table adds what the modules table needs
RANK_EXTRA = (Column("kernels_per_step", "count", "GPU activities (kernels, copies, memsets) per ProfilerStep"),
              Column("top_shape", "text", "Input Dims of the row's costliest call (JSON text; null without shapes)"),
              Column("peak_tflops", "count", "the device peak judging the row (TFLOP/s; null without one)"),
              Column("tf32_tflops", "count", "an FP32 GEMM/conv/attention row judged against the FP32 peak (its "
                                             "TF32 was off): the device's TF32 peak (TFLOP/s), else null"))
DEVICE_COLUMNS = (
    Column("rank", "rank", "the rank"),
    Column("device", "name", "the device whose peaks judged the rank's ops (built-in table or --peaks)"),
    Column("tbps", "count", "its memory bandwidth, TB/s"),
    Column("l2_mb", "count", "its last-level cache, MB (null: not given)"),
    Column("tf32", "bool", "FP32 GEMM and attention rows were judged against the TF32 peak (run.json says "
                           "matmul TF32 was on; torch's default is off)"),
    Column("tf32_conv", "bool", "FP32 convolution rows were judged against the TF32 peak (cuDNN's TF32, on unless "
                                "run.json says it was off: torch's default is on)"),
    *(Column(f"peak_{k}_tflops", "count", f"its dense {k} peak, TFLOP/s (null: none)") for k in peaks.PEAK_KEYS),
)
NOTE_COLUMNS = (Column("rank", "rank", "the rank"), Column("key", "name", "the note's kind"),
                Column("count", "count", "how many"), Column("text", "text", "the note"))


@dataclass
class Calls:
    """The owner calls of one rank: one entry per call, with its work summed."""

    name: np.ndarray      # op name (object)
    code: np.ndarray      # its code in the rank's event names (rt.categories("name"))
    module: np.ndarray    # module (object)
    owner_row: np.ndarray  # event row of the owning CPU op (-1: a GPU activity without one)
    us: np.ndarray
    kernels: np.ndarray
    comm: np.ndarray      # any of its work is a communication kernel
    copy: np.ndarray      # any of its work is a memcpy / memset
    #: per GPU activity counted (in launch-step order of the trace): its call, stream, start and end (ns)
    act_call: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    act_stream: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    act_ts: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    act_end: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    _names: tuple[np.ndarray, np.ndarray] | None = None

    def names(self) -> tuple[np.ndarray, np.ndarray]:
        """``(per call its distinct name's index, per distinct name one call)``, distinct names by code; once."""
        if self._names is None:
            _, first, inv = np.unique(self.code, return_index=True, return_inverse=True)
            self._names = inv.reshape(-1).astype(np.int64), first
        return self._names


def _gpu_calls(rt: Any, tree: optree.Tree, in_step: np.ndarray, comm_pattern: str | None) -> Calls:
    """Per owner call, the GPU work launched in a step (see the module doc)."""
    names = np.asarray([str(x) for x in rt.categories("name") or []] + [""], dtype=object)
    g_ext, g_name = rt.gpu_column("external_id"), rt.gpu_column("name")
    ts, end = rt.gpu_column("ts_ns")[in_step], rt.gpu_column("end_ns")[in_step]
    dur = end - ts
    kind = rt.gpu_column("kind")[in_step]
    comm = (class_codes(rt, comm_pattern) == COMM)[in_step]
    g_ext, g_name = g_ext[in_step], g_name[in_step]
    node_ext = rt.column("external_id")[tree.rows]
    ops = np.flatnonzero(tree.is_op & (node_ext >= 0))
    srt = ops[np.argsort(node_ext[ops], kind="stable")]
    keys = node_ext[srt]
    node = np.full(g_ext.size, -1, dtype=np.int64)
    if keys.size:
        k = np.minimum(np.searchsorted(keys, g_ext), keys.size - 1)
        hit = (keys[k] == g_ext) & (g_ext >= 0)
        node[hit] = srt[k[hit]]
    owner = tree.owner[node] if tree.rows.size else node  # (no CPU events: every node is -1)
    owner[node < 0] = -1
    key = np.where(owner >= 0, owner, tree.rows.size + np.arange(owner.size))
    first, inv = _dense_groups(key, tree.rows.size + owner.size)
    uniq = first  # (one entry per call)
    own = owner[first]
    mine = np.flatnonzero(own >= 0)
    code = rt.column("name")
    call_code = g_name[first].astype(np.int64)
    call_code[mine] = code[tree.rows[own[mine]]]
    name = names[call_code]
    module = np.full(uniq.size, None, dtype=object)
    module[mine] = tree.module[own[mine]]
    owner_row = np.full(uniq.size, -1, dtype=np.int64)
    owner_row[mine] = tree.rows[own[mine]]
    return Calls(name=name.astype(object), code=call_code, module=module, owner_row=owner_row,
                 us=np.bincount(inv, weights=dur, minlength=uniq.size) / NS_PER_US,
                 kernels=np.bincount(inv, minlength=uniq.size).astype(np.int64),
                 comm=np.bincount(inv, weights=comm, minlength=uniq.size) > 0,
                 copy=np.bincount(inv, weights=kind != schema.KERNEL, minlength=uniq.size) > 0,
                 act_call=inv.reshape(-1), act_stream=rt.gpu_column("stream")[in_step], act_ts=ts, act_end=end)


def _dense_groups(key: np.ndarray, bound: int) -> tuple[np.ndarray, np.ndarray]:
    """``(a member of each group, each item's group)`` of non-negative int keys below ``bound``, groups in key
    order: ``np.unique(key, return_index=True, return_inverse=True)`` without its sort."""
    present = np.zeros(bound, dtype=bool)
    present[key] = True
    group_of = np.cumsum(present) - 1
    inv = group_of[key]
    member = np.empty(int(present.sum()), dtype=np.int64)
    member[inv] = np.arange(key.size)
    return member, inv


def _cpu_calls(rt: Any, tree: optree.Tree, steps: Mapping[str, np.ndarray]) -> Calls:
    """Per owner call on a CPU-only rank: the self time of the ops it owns (inside a step; every op when the trace
    has no ProfilerStep)."""
    names = np.asarray([str(x) for x in rt.categories("name") or []] + [""], dtype=object)
    ts, end = rt.column("ts_ns")[tree.rows], rt.column("end_ns")[tree.rows]
    dur = (end - ts).astype(np.float64)
    p = tree.parent
    child = np.bincount(p[p >= 0], weights=dur[p >= 0], minlength=tree.rows.size)
    self_ns = np.maximum(dur - child, 0.0)
    in_step = assign_steps(steps, ts) >= 0 if steps["step"].size else np.ones(ts.size, dtype=bool)
    sel = tree.is_op & in_step
    owner = tree.owner[sel]
    uniq, inv = np.unique(owner, return_inverse=True)
    code = rt.column("name")[tree.rows[uniq]]
    n = uniq.size
    return Calls(name=names[code].astype(object), code=code.astype(np.int64), module=tree.module[uniq].astype(object),
                 owner_row=tree.rows[uniq], us=np.bincount(inv, weights=self_ns[sel], minlength=n) / NS_PER_US,
                 kernels=np.zeros(n, dtype=np.int64), comm=np.zeros(n, dtype=bool), copy=np.zeros(n, dtype=bool))


@dataclass
class Modelled:
    """Per call: category, FLOPs, bytes (NaN: none), dtype, flops source, module (compiled kernels' from
    compiled_kernels.json)."""

    category: np.ndarray
    flops: np.ndarray
    bytes: np.ndarray
    dtype: np.ndarray
    source: np.ndarray
    module: np.ndarray
    shaped: bool
    out_bytes: np.ndarray
    shape: np.ndarray     # the call's Input Dims text (object; None without)
    #: compiled kernels / library calls whose launches per step did not match compiled_kernels.json's per-launch
    #: list (their calls keep the common module of all their launches): distinct names
    launch_mismatch: int = 0


def _categories(calls: Calls, codes: np.ndarray, names: list[str]) -> np.ndarray:
    """Each call's category: by its name (once per distinct name), a kernel's own name for work launched outside
    every op, and communication or memory for an unknown op whose work is that."""
    by_name = C.obj([op_models.category(x) for x in names])
    by_kernel = C.obj([op_models.kernel_category(x) for x in names])
    cat = by_name[codes] if codes.size else C.obj([])
    alone = (cat == "other") & (calls.owner_row < 0)
    cat[alone] = by_kernel[codes[alone]]
    cat[(cat == "other") & calls.comm] = "communication"
    cat[(cat == "other") & calls.copy] = "memory"
    return cat


def _model(rt: Any, calls: Calls, compiled: Mapping[str, provenance.KernelOrigin]) -> Modelled:
    """Each call's category and modelled cost: names are looked at once each; the recorded inputs of the calls
    whose op has a model are decoded once per distinct inputs (:func:`op_models.model_of` caches them)."""
    n = calls.name.size
    codes, first = calls.names()
    names = [str(x) for x in calls.name[first].tolist()]
    cat = _categories(calls, codes, names)
    flops, nbytes, out_bytes = np.full(n, np.nan), np.full(n, np.nan), np.full(n, np.nan)
    dtype, source, shape = (np.full(n, None, dtype=object) for _ in range(3))
    module = calls.module.copy()
    idx, args = rt.op_args()
    dims, types, conc = args["input_dims"], args["input_type"], args["concrete_inputs"]
    shaped = bool(idx.size) and any(dims)
    if shaped:
        pos = optree.arg_positions(rt, calls.owner_row)
        for i in np.flatnonzero(pos >= 0).tolist():
            p = int(pos[i])
            if not dims[p]:
                continue
            shape[i] = dims[p]
            cost, src = op_models.model_of(names[codes[i]], dims[p], types[p], conc[p])
            if cost is not None:
                dtype[i], source[i] = cost.dtype, src if cost.flops is not None else None
                flops[i] = np.nan if cost.flops is None else cost.flops
                nbytes[i] = np.nan if cost.bytes is None else cost.bytes
                out_bytes[i] = np.nan if cost.out_bytes is None else cost.out_bytes
    mismatch = 0
    if compiled:
        unranged = np.equal(module, None)
        _apply_compiled(compiled, names, codes, module, flops, nbytes, source)
        mismatch = _per_launch_modules(rt, calls, names, compiled, module, unranged)
    return Modelled(cat, flops, nbytes, dtype, source, module, shaped, out_bytes, shape, mismatch)


def _per_launch_modules(rt: Any, calls: Calls, names: list[str], compiled: Mapping[str, provenance.KernelOrigin],
                        module: np.ndarray, unranged: np.ndarray) -> int:
    """Give each launch of a compiled kernel (and each library call of compiled code, ``extern``) the module of
    that launch (in place), where compiled_kernels.json lists one per launch (``calls``: a kernel inductor reuses
    across the layers it serves, say, runs once per layer). The k-th call of a name in a step, in time order, is
    the k-th entry (modulo their count: a step may run the graphs twice), as every step runs the graphs in the
    order they were compiled; a name whose calls per step are not a multiple of its entries keeps the common
    module of all (:func:`_apply_compiled`) and is counted in the return value. A library call counts only
    where no module range placed it (outside the compiled code, a range does)."""
    codes, _ = calls.names()
    owned = calls.owner_row >= 0
    ts = np.where(owned, rt.column("ts_ns")[np.maximum(calls.owner_row, 0)], 0)
    steps = rt.step_arrays()  # (no ProfilerStep: the whole window is one step, as the table's per-step figures)
    step = np.where(owned, assign_steps(steps, ts) if steps["step"].size else 0, -1)
    mismatch = 0
    by_name = np.argsort(codes, kind="stable")  # the calls of each name: one slice, not one scan per name
    bounds = np.searchsorted(codes[by_name], np.arange(len(names) + 1))
    for u, name in enumerate(names):
        entry, lib = compiled.get(name), False
        if entry is None:
            entry, lib = compiled.get(EXTERN + name), True
        if entry is None or len(entry.calls) < 2:
            continue
        rows = by_name[bounds[u]:bounds[u + 1]]
        rows = rows[(step[rows] >= 0) & (unranged[rows] if lib else True)]
        if not rows.size:
            continue
        rows = rows[np.lexsort((ts[rows], step[rows]))]
        _, first, counts = np.unique(step[rows], return_index=True, return_counts=True)
        m = len(entry.calls)
        if (counts % m).any():
            mismatch += 1
            continue
        per_launch = np.array([provenance.common_module(c) for c in entry.calls], dtype=object)
        ordinal = np.arange(rows.size) - np.repeat(first, counts)
        module[rows] = per_launch[ordinal % m]
    return mismatch


def _apply_compiled(compiled: Mapping[str, provenance.KernelOrigin], names: list[str], codes: np.ndarray,
                    module: np.ndarray, flops: np.ndarray, nbytes: np.ndarray, source: np.ndarray) -> None:
    """Give the calls of compiled kernels (in place) their module, FLOPs and bytes from compiled_kernels.json:
    looked up once per distinct name, spread to the calls through their name codes (one pass, not one per name).
    A library call of compiled code (``extern``) gives its module only where no range gave the call one."""
    k = len(names)
    u_mod, u_ext = np.full(k, None, dtype=object), np.full(k, None, dtype=object)
    u_flops, u_bytes = np.full(k, np.nan), np.full(k, np.nan)
    for u, name in enumerate(names):
        entry = compiled.get(name)
        if entry is None:
            extern = compiled.get(EXTERN + name)
            u_ext[u] = None if extern is None else provenance.module_of(extern)
            continue
        u_mod[u] = provenance.module_of(entry)
        u_flops[u] = np.nan if entry.flops is None else float(entry.flops)
        u_bytes[u] = np.nan if entry.bytes is None else float(entry.bytes)
    by_call = u_ext[codes]
    hit = ~np.equal(by_call, None) & np.equal(module, None)
    module[hit] = by_call[hit]
    by_call = u_mod[codes]
    hit = ~np.equal(by_call, None)
    module[hit] = by_call[hit]
    flops_of, bytes_of = u_flops[codes], u_bytes[codes]
    hit = ~np.isnan(flops_of)
    flops[hit], source[hit] = flops_of[hit], "inductor"
    hit = ~np.isnan(bytes_of)
    nbytes[hit] = bytes_of[hit]


def _factor(v: np.ndarray) -> tuple[np.ndarray, int]:
    """``(codes, how many distinct)`` of an object column (-1: missing); a column of None at C speed."""
    if v.tolist().count(None) == v.size:
        return np.full(v.size, -1, dtype=np.int64), 0
    c, u = C.factorize(np.asarray(v, dtype=object))
    return c.astype(np.int64), len(u)


def _group(calls: Calls, m: Modelled, n_steps: int) -> C.Cols:
    """One row per (module, op, dtype): the calls' sums per step."""
    combo = np.zeros(calls.name.size, dtype=np.int64)
    name_idx, name_first = calls.names()
    for c, k in (_factor(m.module), (name_idx, name_first.size), _factor(m.dtype)):
        combo = combo * (k + 1) + (c + 1)  # one int per (module, op, dtype): mixed-radix codes (-1 missing)
    uniq, first, inv = np.unique(combo, return_index=True, return_inverse=True)
    inv = inv.reshape(-1)
    g = uniq.size

    def total(v: np.ndarray) -> np.ndarray:
        has = np.bincount(inv, weights=~np.isnan(v), minlength=g) > 0
        s = np.bincount(inv, weights=np.nan_to_num(v), minlength=g)
        return np.where(has, s / n_steps, np.nan)

    src = np.full(g, None, dtype=object)
    for s in reversed(SOURCES):  # the most authoritative source present wins
        hit = np.bincount(inv, weights=m.source == s, minlength=g) > 0
        src[hit] = s
    top = np.full(g, None, dtype=object)
    if m.shaped:
        costliest = np.lexsort((-calls.us, inv))  # per group, its costliest call first
        starts = np.flatnonzero(np.r_[True, np.diff(inv[costliest]) != 0])
        top[inv[costliest[starts]]] = [None if x is None else x.decode() for x in m.shape[costliest[starts]].tolist()]
    return {
        "top_shape": top,
        "op": calls.name[first], "category": m.category[first], "module": m.module[first],
        "calls_per_step": np.bincount(inv, minlength=g) / n_steps,
        "us_per_step": np.bincount(inv, weights=calls.us, minlength=g) / n_steps,
        "kernels_per_step": np.bincount(inv, weights=calls.kernels, minlength=g) / n_steps,
        "flops_per_step": total(m.flops), "bytes_per_step": total(m.bytes),
        "dtype": m.dtype[first], "flops_source": src,
    }


def _roofline(t: C.Cols, device: peaks.Device | None, tf32: Tf32) -> tuple[C.Cols, int]:
    """The achieved figures and, with a device, the roofline columns; also how many memory-bound rows fit in L2."""
    us, fl, by = t["us_per_step"], t["flops_per_step"], t["bytes_per_step"]
    with np.errstate(divide="ignore", invalid="ignore"):
        t["achieved_tflops"] = np.where(us > 0, fl / us / 1e6, np.nan)
        t["achieved_tbps"] = np.where(us > 0, by / us / 1e6, np.nan)
        t["intensity_flop_per_byte"] = np.where(by > 0, fl / by, np.nan)
    n = us.size
    bound, pct = np.full(n, None, dtype=object), np.full(n, np.nan)
    t["peak_tflops"], t["tf32_tflops"] = np.full(n, np.nan), np.full(n, np.nan)
    in_l2 = 0
    if device is not None:
        bw_per_us = device.tbps * 1e6  # bytes per µs
        calls = t["calls_per_step"]
        for i in range(n):
            key = peaks.peak_key(t["category"][i], t["dtype"][i], tf32.on_for(t["category"][i]))
            peak = device.peak(key) if key else None
            t["peak_tflops"][i] = np.nan if peak is None else peak
            if key == "fp32" and t["category"][i] in ("gemm", "conv", "attention") and device.peak("tf32"):
                t["tf32_tflops"][i] = device.peak("tf32")
            t_c = fl[i] / (peak * 1e6) if peak and not np.isnan(fl[i]) else np.nan
            t_m = by[i] / bw_per_us if not np.isnan(by[i]) else np.nan
            if np.isnan(t_c) and np.isnan(t_m):
                continue
            if not np.isnan(t_c) and not np.isnan(t_m):
                bound[i] = "compute" if t_c >= t_m else "memory"
            if (bound[i] == "memory" and device.l2_mb and calls[i] > 0
                    and by[i] / calls[i] <= CACHE_FACTOR * device.l2_mb * 1e6):
                in_l2 += 1
                continue
            if us[i] > 0:
                pct[i] = 100.0 * np.nanmax([t_c, t_m]) / us[i]
    t["bound"], t["pct_of_roofline"] = bound, pct
    return t, in_l2


@functools.lru_cache(maxsize=16)
def _compiled_kernels(run_dir: str) -> tuple[dict[str, provenance.KernelOrigin], str | None]:
    """The run folder's compiled kernels by name, and its library calls (``extern``) under :data:`EXTERN` + their
    ATen op, read once per process (every rank shares them); for a file that cannot be read, its one-line problem
    (the analysis goes on without it)."""
    try:
        doc = provenance.read_compiled(run_dir)
    except provenance.ProvenanceError as e:
        return {}, str(e)
    if doc is None:
        return {}, None
    return dict(doc.kernels) | {EXTERN + k: v for k, v in doc.extern.items()}, None


class Tf32(NamedTuple):
    """Whether TF32 was on for FP32 matmuls (``torch.backends.cuda.matmul.allow_tf32``: GEMMs and attention) and
    for cuDNN's convolutions (``torch.backends.cudnn.allow_tf32``); None where run.json does not say."""

    matmul: bool | None
    conv: bool | None

    def on_for(self, category: str) -> bool:
        """TF32 judges FP32 rows of ``category``: convolutions unless cuDNN's TF32 was said off (torch's default
        is on), GEMMs and attention only when matmul TF32 was said on (torch's default is off)."""
        return self.conv is not False if category == "conv" else self.matmul is True


def tf32_of(manifest: Any) -> Tf32:
    """TF32 as run.json says it: ``run.tf32`` (``{"matmul", "cudnn"}``, recorded by ``tracekit profile``), else
    for matmuls ``config.tf32`` / ``allow_tf32`` / ``float32_matmul_precision`` other than "highest"."""
    run = getattr(getattr(manifest, "run", None), "tf32", None) or {}
    matmul, conv = run.get("matmul"), run.get("cudnn")
    cfg = getattr(manifest, "config", None) or {}
    if not isinstance(matmul, bool):
        matmul = next((cfg[k] for k in ("tf32", "allow_tf32") if isinstance(cfg.get(k), bool)), None)
    prec = cfg.get("float32_matmul_precision")
    if matmul is None and isinstance(prec, str):
        matmul = prec in ("high", "medium")
    return Tf32(matmul, conv if isinstance(conv, bool) else None)


def _manifest_gpu(manifest: Any, rank: int) -> str | None:
    hw = getattr(manifest, "hardware", None)
    for h in (hw.ranks if hw else []):
        if h.rank == rank and h.gpu_name:
            return str(h.gpu_name)
    return None


class RankOps(NamedTuple):
    """What the ops analysis computes for one rank (once: :func:`compute`)."""

    rows: C.Cols                          # :data:`OPS_COLUMNS` and :data:`RANK_EXTRA`
    notes: list[tuple[str, int, str]]     # ``(key, count, text)``
    chains: C.Cols                        # :func:`tracekit.analyses.fusion.chains`
    device: C.Cols                        # :data:`DEVICE_COLUMNS`: the peaks that judged the rows (none: NO_ROWS)


def compute(ctx: RankContext) -> RankOps:
    """The rank's rows, notes, fusion chains and device peaks (:class:`RankOps`)."""
    return ctx.memo("ops", lambda: _compute(ctx))


def _device_row(rank: int, device: peaks.Device | None, tf32: Tf32) -> C.Cols:
    """:data:`DEVICE_COLUMNS` of the device whose peaks judged the rank's rows; NO_ROWS without one."""
    if device is None:
        return NO_ROWS
    row: C.Cols = {"rank": np.array([rank], dtype=np.int64), "device": C.obj([device.name]),
                   "tbps": np.array([device.tbps]), "l2_mb": np.array([np.nan if device.l2_mb is None else
                                                                      device.l2_mb]),
                   "tf32": np.array([tf32.on_for("gemm")]), "tf32_conv": np.array([tf32.on_for("conv")])}
    for k in peaks.PEAK_KEYS:
        v = device.peak(k)
        row[f"peak_{k}_tflops"] = np.array([np.nan if v is None else float(v)])
    return row


def _compute(ctx: RankContext) -> RankOps:
    rt = ctx.trace
    notes: list[tuple[str, int, str]] = []
    if not rt.n_events:
        return RankOps(NO_ROWS, notes, NO_ROWS, NO_ROWS)
    steps = rt.step_arrays()
    n_steps = int(steps["step"].size)
    if rt.has_gpu_activity:
        g_step = rt.gpu_column("step")
        in_step = g_step >= 0 if n_steps else np.ones(g_step.size, bool)
        tree = optree.build(rt, rt.gpu_column("external_id")[in_step])
        calls = _gpu_calls(rt, tree, in_step, ctx.options.comm_pattern)
    else:
        tree = optree.build(rt)
        calls = _cpu_calls(rt, tree, steps)
    if not calls.name.size:
        return RankOps(NO_ROWS, notes, NO_ROWS, NO_ROWS)
    compiled, bad = _compiled_kernels(str(rt.path.parent))
    if bad:
        notes.append(("bad_compiled_kernels", 1, f"{bad}; compiled kernels are attributed by their names"))
    m = _model(rt, calls, compiled)
    t = _group(calls, m, max(n_steps, 1))
    tf32 = tf32_of(ctx.manifest)
    device, gpu_name = (peaks.device_of(rt.gpu_names, _manifest_gpu(ctx.manifest, rt.rank), peaks.override_of(
                            ctx.options.peaks))
                        if rt.has_gpu_activity else (None, None))
    t, in_l2 = _roofline(t, device, tf32)
    chains = fusion.chains(calls, m, max(n_steps, 1), device)
    notes += _notes(t, m, calls, n_steps, rt.has_gpu_activity, device, gpu_name, tf32, in_l2, compiled,
                    bool(rt.meta.get(UNREAD_KEY) or rt.meta.get(LAUNCHES_KEY)))
    order = np.argsort(-t["us_per_step"], kind="stable")
    t = {k: v[order] for k, v in t.items()}
    t["rank"] = np.full(order.size, rt.rank, dtype=np.int64)
    return RankOps(t, notes, chains, _device_row(rt.rank, device, tf32))


def _notes(t: C.Cols, m: Modelled, calls: Calls, n_steps: int, gpu: bool, device: peaks.Device | None,
           gpu_name: str | None, tf32: Tf32, in_l2: int,
           compiled: Mapping[str, Any], unread: bool = False) -> list[tuple[str, int, str]]:
    out: list[tuple[str, int, str]] = []
    if not n_steps:
        out.append(("no_steps", 1, "no ProfilerStep in the trace: the ops' _per_step figures are totals over the "
                                   "whole trace window"))
    if not m.shaped:
        out.append(("no_shapes", 1, "the traces carry no operator shapes: ops have times but no FLOPs or bytes; "
                                    "profile with --record-shapes (torch.profiler.profile(record_shapes=True)) to "
                                    "get them"))
    other = (t["category"] == "other") & ~np.array([op_models.no_work(str(x)) for x in t["op"]], dtype=bool)
    if other.any():
        names = C.sort({"op": t["op"][other], "us": t["us_per_step"][other]}, ["us"], ascending=False)["op"]
        top = list(dict.fromkeys(names.tolist()))
        out.append(("unknown_ops", len(top), f"{len(top)} op name(s) are unknown to the models (category other, "
                                             f"FLOPs null), the most time first: {', '.join(top[:5])}"))
    codes, first = calls.names()
    uniq = calls.name[first]
    is_triton = np.array([str(x).startswith("triton_") for x in uniq.tolist()], dtype=bool)
    triton = is_triton[codes] if codes.size else np.zeros(0, dtype=bool)
    unplaced = triton & np.equal(m.module, None)
    if unplaced.any() and not compiled:
        out.append(("compiled_no_module", int(unplaced.sum()), "compiled kernels have no module: the run folder has "
                                                               "no compiled_kernels.json (tracekit profile --dynamo "
                                                               "inductor writes it); their category and FLOPs come "
                                                               "from their names"))
    if m.launch_mismatch:
        out.append(("launch_mismatch", m.launch_mismatch, f"{m.launch_mismatch} compiled kernel name(s) ran a "
                                                          "number of times per step that is no multiple of the "
                                                          "launches compiled_kernels.json lists for them (a "
                                                          "recompile, a graph not run every step): their calls "
                                                          "keep the module common to all their launches"))
    if not gpu:
        what = "no GPU activity read" if unread else "CPU-only run"  # (a device whose records were not read)
        out.append(("cpu_run", 1, f"{what}: each op's time is its CPU self time; achieved figures without a "
                                  "roofline (no CPU peaks)"))
    if gpu and device is None:
        what = f"the GPU {gpu_name!r}" if gpu_name else "this GPU (the trace names no device)"
        out.append(("unknown_gpu", 1, f"no peaks for {what}: achieved TFLOP/s and TB/s without a roofline; give "
                                      "them with --peaks FILE (docs/ops.md)"))
    if device is not None:
        out += _tf32_notes(t, device, tf32)
        if in_l2:
            out.append(("fits_l2", in_l2, f"{in_l2} memory-bound op row(s) move less than {CACHE_FACTOR:g}× the "
                                          f"{device.l2_mb:g} MB last-level cache per call: the cache may serve them, "
                                          "device memory bandwidth does not bound them, so pct_of_roofline is null"))
    return out


def _tf32_notes(t: C.Cols, device: peaks.Device, tf32: Tf32) -> list[tuple[str, int, str]]:
    """Which peak judged the FP32 matmul and convolution rows, where run.json did not say (torch's defaults)."""
    fp32 = t["dtype"] == "float32"
    out = []
    if tf32.matmul is None and (np.isin(t["category"], ["gemm", "attention"]) & fp32).any():
        out.append(("tf32_assumed", 1, f"FP32 GEMMs and attention are judged against the FP32 peak "
                                       f"({device.peak('fp32')} TFLOP/s): run.json does not say matmul TF32 "
                                       "(torch.backends.cuda.matmul.allow_tf32) was on, torch's default is off"))
    if tf32.conv is None and ((t["category"] == "conv") & fp32).any() and device.peak("tf32"):
        out.append(("tf32_conv_assumed", 1, f"FP32 convolutions are judged against the TF32 peak "
                                            f"({device.peak('tf32')} TFLOP/s): run.json does not say cuDNN's TF32 "
                                            "(torch.backends.cudnn.allow_tf32) was off, torch's default is on"))
    return out


def ops_rank_table(ctx: RankContext) -> C.Cols:
    return compute(ctx).rows


def op_device_table(ctx: RankContext) -> C.Cols:
    return compute(ctx).device


def fusion_table(ctx: RankContext) -> C.Cols:
    chains = compute(ctx).chains
    if not C.nrows(chains):
        return NO_ROWS
    return {"rank": np.full(C.nrows(chains), ctx.rank, dtype=np.int64), **chains}


def op_notes_table(ctx: RankContext) -> C.Cols:
    notes = compute(ctx).notes
    if not notes:
        return NO_ROWS
    return {"rank": np.full(len(notes), ctx.rank, dtype=np.int64), "key": C.obj([k for k, _, _ in notes]),
            "count": np.array([c for _, c, _ in notes], dtype=np.int64), "text": C.obj([x for _, _, x in notes])}


def ops_table(ctx: RunContext) -> C.Cols:
    """The rank rows without the internal columns; the ranks' notes become run notes, one line per kind, and
    their devices' peaks ``meta["peaks"]`` (:func:`device_peaks`)."""
    t = C.as_cols(ctx.tables["ops_rank"])
    notes = C.as_cols(ctx.tables["op_notes"])
    devices = C.as_cols(ctx.tables["op_device"])
    if C.nrows(devices):
        ctx.meta["peaks"] = device_peaks(devices)
    if C.nrows(notes):
        seen: dict[str, list[Any]] = {}
        for r, k, c, x in zip(notes["rank"].tolist(), notes["key"].tolist(), notes["count"].tolist(),
                              notes["text"].tolist()):
            e = seen.setdefault(k, [x, set()])
            e[1].add(r)
        n_ranks = len(set(notes["rank"].tolist())) if C.nrows(t) == 0 else len(set(t["rank"].tolist()))
        for k, (text, ranks) in seen.items():
            where = "" if len(ranks) >= max(n_ranks, 1) else f" (rank{'s' if len(ranks) > 1 else ''} " \
                    f"{', '.join(map(str, sorted(ranks)))})"
            ctx.meta.setdefault("notes", []).append(f"ops: {text}{where}")
    if not C.nrows(t):
        return NO_ROWS
    return {c.name: t[c.name] for c in OPS_COLUMNS}


def device_peaks(devices: C.Cols) -> dict[int, dict[str, Any]]:
    """``meta["peaks"]``: per rank with a known device, the peaks its ops were judged against: ``device``,
    ``tbps``, ``l2_mb`` (None: not given), ``tf32`` (FP32 GEMMs and attention judged against TF32),
    ``tf32_conv`` (FP32 convolutions judged against TF32) and ``tflops``
    (peak key of :data:`tracekit.analyses.peaks.PEAK_KEYS` -> TFLOP/s, the device's keys only)."""
    out: dict[int, dict[str, Any]] = {}
    for r in C.records(devices):
        given = {k: r[f"peak_{k}_tflops"] for k in peaks.PEAK_KEYS}
        tflops = {k: float(v) for k, v in given.items() if v is not None and v == v}
        l2 = r["l2_mb"]
        out[int(r["rank"])] = {"device": str(r["device"]), "tbps": float(r["tbps"]),
                               "l2_mb": None if l2 is None or l2 != l2 else float(l2), "tf32": bool(r["tf32"]),
                               "tf32_conv": bool(r["tf32_conv"]),
                               "tflops": tflops}
    return out


def _view(t: Mapping[str, Any], opts: ViewOptions) -> View | None:
    ops = C.as_cols(t["ops"])
    if not C.nrows(ops):
        return None
    top = C.take(ops, np.flatnonzero(_top_per_rank(ops["rank"], 12)))
    shown = ("rank", "op", "category", "module", "calls_per_step", "us_per_step", "achieved_tflops",
             "achieved_tbps", "bound", "pct_of_roofline", "dtype")
    return View("Ops per rank (most time first; 12 per rank; --table ops for all)", C.select(top, list(shown)))


def _top_per_rank(rank: np.ndarray, n: int) -> np.ndarray:
    """Mask of each rank's first ``n`` rows (in row order): one stable sort by rank, not a scan per rank."""
    keep = np.zeros(rank.size, dtype=bool)
    if not rank.size:
        return keep
    order = np.argsort(rank, kind="stable")
    r = rank[order]
    start = np.flatnonzero(np.r_[True, r[1:] != r[:-1]])
    within = np.arange(r.size) - np.repeat(start, np.diff(np.r_[start, r.size]))
    keep[order[within < n]] = True
    return keep


TABLES = [
    Table(name="ops_rank", scope="rank", title="Ops per rank, with the modules table's kernel counts",
          columns=(*OPS_COLUMNS, *RANK_EXTRA), compute=ops_rank_table, internal=True),
    Table(name="fusion_chains", scope="rank", title="Chains of eager memory-bound kernels a compiler would fuse",
          columns=fusion.COLUMNS, compute=fusion_table, internal=True),
    Table(name="op_notes", scope="rank", title="What the ops table could not model, per rank",
          columns=NOTE_COLUMNS, compute=op_notes_table, internal=True),
    Table(name="op_device", scope="rank", title="The device peaks that judged a rank's ops (meta.peaks)",
          columns=DEVICE_COLUMNS, compute=op_device_table, internal=True),
    Table(name="ops", scope="run", title="Ops: time, FLOPs, bytes and roofline per rank, module, op and dtype",
          doc="One row per rank, module, op and dtype, most time first; every `_per_step` figure is the window's "
              "total over the work launched in ProfilerSteps divided by their number. Models, peaks and their "
              "sources: [Ops and modules](../ops.md).",
          columns=OPS_COLUMNS, compute=ops_table, needs=("ops_rank", "op_notes", "op_device"), view=_view,
          order=46),
]
