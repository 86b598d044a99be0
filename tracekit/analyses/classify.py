"""Which GPU activity is communication, compute or memory, and which rule said so.

A GPU kernel is **communication** when a row of the data table
:data:`tracekit.analyses.comm_kernels.COMM_RULES` matches it (pattern, library, kind; the user's
``--comm-kernel`` regexes are the last row); the first matching row, in table order, is the one
reported for it (table ``comm_rules``). The rows come in five families (``rule``):

1. ``nccl_kernel``: the kernel name matches ``^(?:nccl|rccl)``;
2. ``collective_op``: it was launched by a c10d collective CPU op (``record_param_comms``,
   ``c10d::*``, ``_c10d_functional::*``, ``nccl:*``, ``gloo:*``), linked by External id;
3. ``custom_kernel``: its name is a known non-NCCL communication kernel (DeepEP's
   ``intranode`` / ``internode`` / ``internode_ll`` notify, dispatch and combine kernels, vLLM's and
   TensorRT-LLM's custom all-reduces, torch symmetric memory, MSCCL++, NVSHMEM);
4. ``custom_op``: its launch lies inside a collective-like CPU op or ``record_function`` range on
   the same thread (vLLM's custom all-reduce ops, ``symm_mem::*``, DeepEP ``Buffer`` methods,
   ``nvshmem*``), at any depth;
5. ``user_pattern``: its name matches the user's ``--comm-kernel`` (alias ``--comm-pattern``) regex.

Name patterns are case-insensitive searches. **Memory** activity is every memcpy and memset.
**Compute** is every other kernel.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from tracekit.analyses import intervals as iv
from tracekit.analyses.comm_kernels import COLLECTIVE_OP_PATTERN, COMM_RULES, CommRule, with_user_patterns
from tracekit.analyses.registry import Column, Table, View
from tracekit.traces import cols as C
from tracekit.traces import schema
from tracekit.traces.arrays import unique
from tracekit.traces.frames import NO_ROWS, Columnar
from tracekit.traces.traceset import RankTrace

DEFAULT_COMM_PATTERN = COMM_RULES[0].pattern

COMPUTE, COMM, MEMORY = "compute", "comm", "memory"
CLASSES = (COMPUTE, COMM, MEMORY)

#: the rule family of each row index :func:`comm_rule` returns (the user's row is the last)
RULE_NAMES = (*(r.rule for r in COMM_RULES), "user_pattern")
#: the families in order, with what each looks at (the docs of the ``comm_rules`` table)
RULE_DOCS = (
    ("nccl_kernel", "kernel name ^nccl / ^rccl"),
    ("collective_op", "launched by record_param_comms, c10d::*, _c10d_functional::*, nccl:*, gloo:* (External id)"),
    ("custom_kernel", "a known non-NCCL communication kernel name (DeepEP, vLLM / TensorRT-LLM custom all-reduce, "
                      "symmetric memory, MSCCL++, NVSHMEM)"),
    ("custom_op", "launched inside vLLM's custom all-reduce ops, symm_mem::*, DeepEP Buffer methods, nvshmem*"),
    ("user_pattern", "kernel name matches --comm-kernel"),
)


def collective_external_ids(rt: RankTrace, pattern: str = COLLECTIVE_OP_PATTERN) -> np.ndarray:
    """External ids of the CPU ops whose name matches ``pattern`` (default: the c10d collectives)."""
    ext = rt.column("external_id")
    hit = (rt.column("kind") == schema.CPU_OP) & (ext >= 0) & rt.name_hits(pattern)
    return unique(ext[hit])


def classify_gpu(rt: RankTrace, comm_pattern: str | None = None) -> Any:
    """Class of each row of ``rt.gpu``: ``"compute"``, ``"comm"`` or ``"memory"``, as a Categorical pandas Series
    (computed once per pattern), for the callers outside ``tracekit analyze`` (the report, the replay); the
    analyses use :func:`class_codes`, the same classes without pandas."""
    def build() -> Any:
        import pandas as pd  # only for these callers: tracekit analyze never asks for the Series

        cat = pd.Categorical.from_codes(class_codes(rt, comm_pattern), categories=CLASSES)
        # a Categorical: comparisons (``cls == COMPUTE``) run on the codes, not on strings
        return pd.Series(cat, index=pd.RangeIndex(rt.n_gpu), name="cls")

    return rt.memo(("classify_gpu", comm_pattern or None), build)


def class_codes(rt: RankTrace, comm_pattern: str | None = None) -> np.ndarray:
    """Per row of ``rt.gpu``: the index in :data:`CLASSES` of its class (int8; computed once per pattern)."""
    return rt.memo(("class_codes", comm_pattern or None), lambda: _classify(rt, comm_pattern))


def comm_rule(rt: RankTrace, comm_pattern: str | None = None) -> np.ndarray:
    """Per row of ``rt.gpu``: the index in the rule table (:func:`.comm_kernels.with_user_patterns`) of the
    first row that makes it communication, -1 for compute kernels and memory activity (computed once per
    pattern); :data:`RULE_NAMES` gives its family."""
    return rt.memo(("comm_rule", comm_pattern or None), lambda: _comm_rule(rt, comm_pattern))


def _name_hits(rt: RankTrace, pattern: str) -> np.ndarray:
    """Rows of ``rt.gpu`` whose kernel name matches ``pattern`` (case-insensitive search), tested once per
    distinct name (``gpu["name"]`` is a Categorical except in an empty header-only rank)."""
    if rt.categories("name") is None:
        return np.zeros(rt.n_gpu, dtype=bool)
    return rt.name_category_hits(pattern, flags=re.IGNORECASE)[rt.gpu_column("name")]


def _inside_ops(rt: RankTrace, pattern: str) -> np.ndarray:
    """Rows of ``rt.gpu`` launched inside (at any depth) a CPU op or annotation matching ``pattern`` on the
    launching thread; rows without a launch event match by External id."""
    hit = np.zeros(rt.n_gpu, dtype=bool)
    kind = rt.column("kind")
    m = np.flatnonzero(((kind == schema.CPU_OP) | (kind == schema.ANNOTATION)) & rt.name_hits(pattern))
    if not m.size:
        return hit
    op_tid, op_ts, op_end = rt.column("tid")[m], rt.column("ts_ns")[m], rt.column("end_ns")[m]
    lts, ltid = rt.gpu_column("launch_ts_ns"), rt.gpu_column("launch_tid")
    launched = ~rt.gpu_column("pre_window")
    for tid in unique(op_tid):  # a handful of threads
        on = op_tid == tid
        s, e = iv.union(op_ts[on], op_end[on])
        sel = np.flatnonzero(launched & (ltid == tid))
        i = np.searchsorted(s, lts[sel], side="right") - 1
        ok = i >= 0
        ok[ok] = lts[sel][ok] <= e[i[ok]]
        hit[sel[ok]] = True
    ext = rt.column("external_id")[m]
    hit |= ~launched & iv.isin_sorted(rt.gpu_column("external_id"), unique(ext[ext >= 0]))
    return hit


def _comm_rule(rt: RankTrace, comm_pattern: str | None) -> np.ndarray:
    kernel = rt.gpu_column("kind") == schema.KERNEL
    out = np.full(kernel.size, -1, dtype=np.int8)
    todo = kernel.copy()
    rules = with_user_patterns(comm_pattern)
    for group in _groups(rules):
        if not todo.any():
            break
        if len(group) > 1 and not (_hits(rt, rules[group[0]].by, _union(rules, group)) & todo).any():
            continue  # none of the group's rows can match: skip testing them one by one
        for i in group:
            hit = _hits(rt, rules[i].by, rules[i].pattern) & todo
            out[hit] = i
            todo &= ~hit
    return out


def _groups(rules: tuple[CommRule, ...]) -> list[list[int]]:
    """Indices of consecutive rows that look at the same thing (``by``)."""
    out: list[list[int]] = []
    for i, r in enumerate(rules):
        if out and rules[out[-1][0]].by == r.by:
            out[-1].append(i)
        else:
            out.append([i])
    return out


def _union(rules: tuple[CommRule, ...], group: list[int]) -> str:
    return "|".join(f"(?:{rules[i].pattern})" for i in group)


def _hits(rt: RankTrace, by: str, pattern: str) -> np.ndarray:
    """Rows of ``rt.gpu`` that ``pattern`` matches, looking at ``by`` (see :mod:`.comm_kernels`)."""
    if by == "kernel":
        return _name_hits(rt, pattern)
    if by == "op_id":
        return iv.isin_sorted(rt.gpu_column("external_id"), collective_external_ids(rt, pattern))
    return _inside_ops(rt, pattern)


def _classify(rt: RankTrace, comm_pattern: str | None) -> np.ndarray:
    kernel = rt.gpu_column("kind") == schema.KERNEL
    return np.where(~kernel, 2, np.where(comm_rule(rt, comm_pattern) >= 0, 1, 0)).astype(np.int8)


# -- registered table (see tracekit.analyses.registry) -------------------------------------------

def comm_rules_table(ctx) -> Columnar | None:  # noqa: ANN001 - a RankContext
    """One row per row of the rule table that classified at least one kernel of this rank as communication
    (columns; none without GPU activity or communication)."""
    rt = ctx.trace
    if not rt.has_gpu_activity:
        return None
    rules = with_user_patterns(ctx.options.comm_pattern)
    rule = comm_rule(rt, ctx.options.comm_pattern)
    dur_all = rt.gpu_column("dur_ns")
    rows: list[tuple[Any, ...]] = []
    for i in unique(rule[rule >= 0]):
        sel = rule == i
        dur = dur_all[sel]
        names, inv = unique(_gpu_names(rt, sel), return_inverse=True)  # sorted, as a groupby's keys
        total = np.zeros(names.size, dtype=dur.dtype)
        np.add.at(total, inv, dur)
        # the first of pandas' descending quicksort (sort_values(ascending=False)), ties included
        top = np.arange(total.size)[::-1][total[::-1].argsort(kind="quicksort")][-1]
        rows.append((rules[i].rule, rules[i].library, rules[i].kind, int(sel.sum()), int(names.size),
                     float(dur.sum()) / 1e3, str(names[top])))
    if not rows:
        return NO_ROWS
    rule_, library, kind, kernels, kernel_names, total_us, top_kernel = zip(*rows)
    return {"rank": np.full(len(rows), rt.rank, dtype=np.int64), "rule": C.obj(rule_), "library": C.obj(library),
            "kind": C.obj(kind), "kernels": np.array(kernels, dtype=np.int64),
            "kernel_names": np.array(kernel_names, dtype=np.int64),
            "kernel_total_us": np.array(total_us, dtype=np.float64), "top_kernel": C.obj(top_kernel)}


def _gpu_names(rt: RankTrace, sel: np.ndarray) -> np.ndarray:
    """Kernel names (str; a missing one is ``"nan"``) of the rows ``sel`` of ``rt.gpu`` (a Categorical)."""
    cats = np.array([*rt.name_categories(), "nan"], dtype=object)  # code -1 -> the last
    return cats[rt.gpu_column("name")[sel]].astype(str)


def _view(tables, opts) -> View | None:  # noqa: ANN001
    t = C.as_cols(tables["comm_rules"])
    if not C.nrows(t) or set(t["rule"].tolist()) <= {"nccl_kernel", "collective_op"}:
        return None  # plain NCCL traffic: nothing to explain
    return View("Communication kernels by classification rule", t)


def class_mask(cls: Any, value: str) -> np.ndarray:
    """Mask of the rows of a :func:`class_codes` (or :func:`classify_gpu`) result that are ``value``
    (compared on the codes: no string comparison per row)."""
    if isinstance(cls, np.ndarray):
        return cls == (CLASSES.index(value) if value in CLASSES else -2)
    if type(cls.dtype).__name__ == "CategoricalDtype":  # a classify_gpu Series (told apart without pandas)
        cat = cls.array  # the Categorical itself: no accessor built per call
        return cat.codes == (cat.categories.get_loc(value) if value in cat.categories else -2)
    return (cls == value).to_numpy()


TABLES = [
    Table(
        name="comm_rules", scope="rank", title="Which rule classified which kernels as communication",
        doc="One row per row of the communication data table (tracekit.analyses.comm_kernels.COMM_RULES: pattern, "
            "library, kind; docs/communication.md lists it) that took kernels. Families in order (the first "
            "matching row is reported): " + "; ".join(f"`{n}`: {d}" for n, d in RULE_DOCS)
            + ". The text report shows this table when a rule other than the NCCL ones classified something.",
        columns=(
            Column("rank", "rank", "the rank"),
            Column("rule", "name", "the family of the first rule that made these kernels communication"),
            Column("library", "name", "the library that launches such kernels (user (--comm-kernel) for the "
                                      "user's regex)"),
            Column("kind", "name", "the kind of communication (all_reduce, dispatch (all-to-all), ...)"),
            Column("kernels", "count", "kernels it classified"),
            Column("kernel_names", "count", "distinct kernel names among them"),
            Column("kernel_total_us", "us", "summed kernel durations (not a union: concurrent kernels add up)"),
            Column("top_kernel", "name", "the kernel name with the most time under this rule"),
        ),
        compute=comm_rules_table, view=_view, order=25,
    ),
]
