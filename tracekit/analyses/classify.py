"""Which GPU activity is communication, compute or memory, and which rule said so.

A GPU kernel is **communication** when one of :data:`RULES` matches it; the first
match (in this order) is the rule reported for it (table ``comm_rules``):

1. ``nccl_kernel``: its name matches ``^(?:nccl|rccl)`` (``ncclDevKernel_*``,
   ``ncclKernel_*``, ROCm's RCCL kernels);
2. ``collective_op``: it was launched by a c10d collective CPU op
   (``record_param_comms``, ``c10d::*``, ``_c10d_functional::*``, ``nccl:*``,
   ``gloo:*``), linked by the profiler's External id (the kernel's own, else its
   launch call's): the op is the innermost one around the launch;
3. ``custom_kernel``: its name is a known non-NCCL collective kernel
   (:data:`CUSTOM_KERNEL_PATTERN`: vLLM/TRT-LLM custom all-reduce
   ``cross_device_reduce*``, torch symmetric memory ``one_shot_all_reduce``,
   ``two_shot_all_reduce``, ``multimem_*``, NVSHMEM ``nvshmem*``, DeepEP ``deep_ep::*``);
4. ``custom_op``: its launch lies inside a collective-like CPU op or
   ``record_function`` range on the same thread (:data:`CUSTOM_OP_PATTERN`:
   ``vllm::all_reduce`` and its in/out-of-place variants, ``vllm::all_gather``,
   ``vllm::reduce_scatter``, ``_C_custom_ar::*``, ``symm_mem::*`` collectives,
   DeepEP ``dispatch``/``combine``, ``nvshmem*``) -- the enclosing op at any depth,
   so kernels of the ops it calls count too; kernels launched before the window
   (no launch event) match by External id instead;
5. ``user_pattern``: its name matches the user's ``--comm-pattern`` regex.

Name patterns are case-insensitive searches. **Memory** activity is every memcpy
and memset. **Compute** is every other kernel.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from tracekit.analyses import intervals as iv
from tracekit.analyses.registry import Column, Table, View
from tracekit.traces import schema
from tracekit.traces.traceset import RankTrace

DEFAULT_COMM_PATTERN = r"^(?:nccl|rccl)"
#: CPU ops whose launches are collectives (matched by External id)
COLLECTIVE_OP_PATTERN = r"^(?:record_param_comms$|c10d::|_c10d_functional::|c10d_functional::|nccl:|gloo:)"
#: kernel names of collectives that are not NCCL's
CUSTOM_KERNEL_PATTERN = (r"cross_device_reduce|one_shot_all_reduce|two_shot_all_reduce|multimem_|nvshmem|"
                         r"deep_ep::|allreduce_fusion_kernel")
#: CPU ops / record_function ranges whose launches (at any depth) are collectives
CUSTOM_OP_PATTERN = (r"^(?:vllm::(?:inplace_|outplace_)?(?:all_reduce|all_gather|reduce_scatter|all_to_all)"
                     r"|_C_custom_ar::|symm_mem::(?!fused)|deep_?ep|nvshmem)"
                     r"|\bBuffer(?:\.|::)(?:low_latency_|intranode_|internode_)?(?:dispatch|combine)$")

COMPUTE, COMM, MEMORY = "compute", "comm", "memory"
CLASSES = (COMPUTE, COMM, MEMORY)


@dataclass(frozen=True)
class Rule:
    """A communication rule: ``name``, what it looks at (``kernel`` name, ``op_id`` = the launching
    op by External id, ``op_span`` = any enclosing op on the launch thread), its regex and a doc line."""

    name: str
    by: str
    pattern: str | None
    doc: str


RULES = (
    Rule("nccl_kernel", "kernel", DEFAULT_COMM_PATTERN, "kernel name ^nccl / ^rccl"),
    Rule("collective_op", "op_id", COLLECTIVE_OP_PATTERN,
         "launched by record_param_comms, c10d::*, _c10d_functional::*, nccl:*, gloo:* (External id)"),
    Rule("custom_kernel", "kernel", CUSTOM_KERNEL_PATTERN,
         "custom all-reduce / symmetric-memory / NVSHMEM / DeepEP kernel name"),
    Rule("custom_op", "op_span", CUSTOM_OP_PATTERN,
         "launched inside vllm::all_reduce, _C_custom_ar::*, symm_mem::*, DeepEP dispatch/combine, nvshmem*"),
    Rule("user_pattern", "kernel", None, "kernel name matches --comm-pattern"),
)
RULE_NAMES = tuple(r.name for r in RULES)


def collective_external_ids(rt: RankTrace, pattern: str = COLLECTIVE_OP_PATTERN) -> np.ndarray:
    """External ids of the CPU ops whose name matches ``pattern`` (default: the c10d collectives)."""
    ext = rt.column("external_id")
    hit = (rt.column("kind") == schema.CPU_OP) & (ext >= 0) & rt.name_hits(pattern)
    return np.unique(ext[hit])


def classify_gpu(rt: RankTrace, comm_pattern: str | None = None) -> pd.Series:
    """Class of each row of ``rt.gpu``: ``"compute"``, ``"comm"`` or ``"memory"`` (computed once per pattern)."""
    return rt.memo(("classify_gpu", comm_pattern or None), lambda: _classify(rt, comm_pattern))


def comm_rule(rt: RankTrace, comm_pattern: str | None = None) -> np.ndarray:
    """Per row of ``rt.gpu``: the index in :data:`RULES` of the first rule that makes it communication,
    -1 for compute kernels and memory activity (computed once per pattern)."""
    return rt.memo(("comm_rule", comm_pattern or None), lambda: _comm_rule(rt, comm_pattern))


def _name_hits(rt: RankTrace, pattern: str) -> np.ndarray:
    """Rows of ``rt.gpu`` whose kernel name matches ``pattern`` (case-insensitive search), tested once per
    distinct name (``gpu["name"]`` is a Categorical except in an empty header-only rank)."""
    if not isinstance(rt.gpu["name"].dtype, pd.CategoricalDtype):
        return np.zeros(len(rt.gpu), dtype=bool)
    return rt.name_category_hits(pattern, flags=re.IGNORECASE)[rt.gpu_column("name")]


def _inside_ops(rt: RankTrace, pattern: str) -> np.ndarray:
    """Rows of ``rt.gpu`` launched inside (at any depth) a CPU op or annotation matching ``pattern`` on the
    launching thread; rows without a launch event match by External id."""
    hit = np.zeros(len(rt.gpu), dtype=bool)
    kind = rt.column("kind")
    m = np.flatnonzero(((kind == schema.CPU_OP) | (kind == schema.ANNOTATION)) & rt.name_hits(pattern))
    if not m.size:
        return hit
    op_tid, op_ts, op_end = rt.column("tid")[m], rt.column("ts_ns")[m], rt.column("end_ns")[m]
    lts, ltid = rt.gpu_column("launch_ts_ns"), rt.gpu_column("launch_tid")
    launched = ~rt.gpu_column("pre_window")
    for tid in np.unique(op_tid):  # a handful of threads
        on = op_tid == tid
        s, e = iv.union(op_ts[on], op_end[on])
        sel = np.flatnonzero(launched & (ltid == tid))
        i = np.searchsorted(s, lts[sel], side="right") - 1
        ok = i >= 0
        ok[ok] = lts[sel][ok] <= e[i[ok]]
        hit[sel[ok]] = True
    ext = rt.column("external_id")[m]
    hit |= ~launched & np.isin(rt.gpu_column("external_id"), ext[ext >= 0])
    return hit


def _comm_rule(rt: RankTrace, comm_pattern: str | None) -> np.ndarray:
    kernel = rt.gpu_column("kind") == schema.KERNEL
    out = np.full(kernel.size, -1, dtype=np.int8)
    todo = kernel.copy()
    for i, rule in enumerate(RULES):
        if not todo.any():
            break
        pattern = comm_pattern if rule.name == "user_pattern" else rule.pattern
        if not pattern:
            continue
        if rule.by == "kernel":
            hit = _name_hits(rt, pattern)
        elif rule.by == "op_id":
            hit = np.isin(rt.gpu_column("external_id"), collective_external_ids(rt, pattern))
        else:
            hit = _inside_ops(rt, pattern)
        hit = hit & todo
        out[hit] = i
        todo &= ~hit
    return out


def _classify(rt: RankTrace, comm_pattern: str | None) -> pd.Series:
    kernel = rt.gpu_column("kind") == schema.KERNEL
    codes = np.where(~kernel, 2, np.where(comm_rule(rt, comm_pattern) >= 0, 1, 0)).astype(np.int8)
    # a Categorical: comparisons (``cls == COMPUTE``) run on the codes, not on strings
    return pd.Series(pd.Categorical.from_codes(codes, categories=CLASSES), index=rt.gpu.index, name="cls")


# -- registered table (see tracekit.analyses.registry) -------------------------------------------

def comm_rules_table(ctx) -> pd.DataFrame:  # noqa: ANN001 - a RankContext
    """One row per rule that classified at least one kernel of this rank as communication."""
    rt = ctx.trace
    if not rt.has_gpu_activity:
        return None
    rule = comm_rule(rt, ctx.options.comm_pattern)
    dur_all = rt.gpu_column("dur_ns")
    rows = []
    for i in np.unique(rule[rule >= 0]):
        sel = rule == i
        dur = dur_all[sel]
        names, inv = np.unique(_gpu_names(rt, sel), return_inverse=True)  # sorted, as a groupby's keys
        total = np.zeros(names.size, dtype=dur.dtype)
        np.add.at(total, inv, dur)
        # the first of pandas' descending quicksort (sort_values(ascending=False)), ties included
        top = np.arange(total.size)[::-1][total[::-1].argsort(kind="quicksort")][-1]
        rows.append({"rank": rt.rank, "rule": RULES[i].name, "kernels": int(sel.sum()),
                     "kernel_names": int(names.size), "kernel_total_us": float(dur.sum()) / 1e3,
                     "top_kernel": str(names[top])})
    return pd.DataFrame(rows)


def _gpu_names(rt: RankTrace, sel: np.ndarray) -> np.ndarray:
    """Kernel names (str; a missing one is ``"nan"``) of the rows ``sel`` of ``rt.gpu`` (a Categorical)."""
    cats = np.array([*rt.name_categories(), "nan"], dtype=object)  # code -1 -> the last
    return cats[rt.gpu_column("name")[sel]].astype(str)


def _view(tables, opts) -> View | None:  # noqa: ANN001
    t = tables["comm_rules"]
    if t.empty or set(t["rule"]) <= {"nccl_kernel", "collective_op"}:
        return None  # plain NCCL traffic: nothing to explain
    return View("Communication kernels by classification rule", t)


def class_mask(cls: pd.Series, value: str) -> np.ndarray:
    """Mask of the rows of a :func:`classify_gpu` result that are ``value``
    (compared on the Categorical's codes: no string comparison per row)."""
    if isinstance(cls.dtype, pd.CategoricalDtype):
        cat = cls.array  # the Categorical itself: no accessor built per call
        return cat.codes == (cat.categories.get_loc(value) if value in cat.categories else -2)
    return (cls == value).to_numpy()


TABLES = [
    Table(
        name="comm_rules", scope="rank", title="Which rule classified which kernels as communication",
        doc="Rules in order (the first match is reported): " + "; ".join(f"`{r.name}`: {r.doc}" for r in RULES)
            + ". The text report shows this table when a rule other than the NCCL ones classified something.",
        columns=(
            Column("rank", "rank", "the rank"),
            Column("rule", "name", "the first rule that made these kernels communication"),
            Column("kernels", "count", "kernels it classified"),
            Column("kernel_names", "count", "distinct kernel names among them"),
            Column("kernel_total_us", "us", "summed kernel durations (not a union: concurrent kernels add up)"),
            Column("top_kernel", "name", "the kernel name with the most time under this rule"),
        ),
        compute=comm_rules_table, view=_view, order=25,
    ),
]
