"""The CPU call tree of a rank, as the ``ops`` table needs it: each op's parent, its owner and its module.

Nodes are the rank's ``cpu_op`` events plus the ``user_annotation`` ranges that name a module
(``tracekit.module:<dotted.path>``, written by ``tracekit profile``) or the optimizer (torch's
``Optimizer.step#...`` / ``Optimizer.zero_grad#...``). Events of one thread nest; a node's parent is the
innermost node of its thread that encloses it, found without a Python loop over events (:func:`parents`).

- **owner**: the innermost op, the node itself included, that has a FLOP/byte model
  (:func:`tracekit.analyses.op_models.has_model`); the node itself when none encloses it. GPU work launched
  under a node, and on CPU runs the node's self time, belong to its owner.
- **module**: the innermost enclosing module range; for a backward op (inside an autograd node, an event with
  a ``Fwd thread id``), the module of the forward op whose ``Sequence number`` the node carries (the last one
  carrying it: an op that creates no node carries the number the next node takes); for an op in
  an optimizer range and no module, ``(optimizer)``; else None (outside modules).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tracekit.analyses import op_models
from tracekit.traces import schema
from tracekit.traces.provenance import MODULE_RANGE_PREFIX as MODULE_PREFIX, strip_wrappers
from tracekit.traces.traceset import RankTrace

OPTIMIZER_PREFIXES = ("Optimizer.step#", "Optimizer.zero_grad#")
#: the module of optimizer ops outside every module range
OPTIMIZER = "(optimizer)"


@dataclass
class Tree:
    """The nodes (event rows of the rank, by start) and, per node: ``parent`` (node position, -1: none),
    ``owner`` (node position), ``module`` (object: dotted path, :data:`OPTIMIZER` or None), ``is_op``."""

    rows: np.ndarray
    parent: np.ndarray
    owner: np.ndarray
    module: np.ndarray
    is_op: np.ndarray
    depth: np.ndarray


def _launchers(ext: np.ndarray, launched: np.ndarray) -> np.ndarray:
    """Per event: its External id is one of ``launched`` (a lookup table where the ids are compact)."""
    top = int(max(ext.max(initial=-1), launched.max(initial=-1)))
    if top > 1 << 26:
        return np.isin(ext, launched)
    hit = np.zeros(top + 2, dtype=bool)
    hit[launched[launched >= 0]] = True
    return hit[np.where(ext >= 0, ext, top + 1)]


def _name_flags(names: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str | None]]:
    """Per name code (plus a trailing entry for -1): module range, optimizer range, has a model; module paths."""
    n = len(names)
    is_mod = np.zeros(n + 1, dtype=bool)
    is_opt = np.zeros(n + 1, dtype=bool)
    model = np.zeros(n + 1, dtype=bool)
    path: list[str | None] = [None] * (n + 1)
    for i, name in enumerate(names):
        if name.startswith(MODULE_PREFIX):
            is_mod[i] = True
            path[i] = strip_wrappers(name[len(MODULE_PREFIX):])
        elif name.startswith(OPTIMIZER_PREFIXES):
            is_opt[i] = True
        else:
            model[i] = op_models.has_model(name)
    return is_mod, is_opt, model, path


def parents(tid: np.ndarray, ts: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """``(parent, depth, levels)`` of intervals that nest per thread, given sorted by (tid, ts, -end): the parent
    is the innermost earlier interval of the thread still open at the start (-1: none); ``levels[d]`` the
    positions at depth d, ascending.

    depth = open intervals of the thread at the start = earlier starts − ends at or before it; the parent is
    the last earlier interval one level up (a search per depth level)."""
    n = ts.size
    parent = np.full(n, -1, dtype=np.int64)
    depth = np.zeros(n, dtype=np.int64)
    if not n:
        return parent, depth, []
    bounds = np.flatnonzero(tid[1:] != tid[:-1]) + 1
    starts = np.concatenate([[0], bounds])
    stops = np.concatenate([bounds, [n]])
    for a, b in zip(starts.tolist(), stops.tolist()):
        ends = np.sort(end[a:b], kind="stable")  # (nearly sorted already: timsort runs through it)
        closed = np.searchsorted(ends, ts[a:b], side="right")
        depth[a:b] = np.maximum(np.arange(b - a) - closed, 0)
    small = depth.astype(np.int16) if depth.max() < (1 << 15) else depth
    by_depth = np.argsort(small, kind="stable")  # (a radix sort for 16-bit keys)
    cuts = np.searchsorted(depth[by_depth], np.arange(int(depth.max()) + 2))
    levels = [by_depth[cuts[d]:cuts[d + 1]] for d in range(cuts.size - 1)]
    for d in range(1, len(levels)):
        here, up = levels[d], levels[d - 1]
        if not here.size or not up.size:
            continue
        k = np.searchsorted(up, here) - 1
        ok = k >= 0
        cand = up[np.maximum(k, 0)]
        ok &= tid[cand] == tid[here]
        parent[here[ok]] = cand[ok]
    return parent, depth, levels


def _top_down(parent: np.ndarray, levels: list[np.ndarray], own: np.ndarray) -> np.ndarray:
    """Per node: the innermost node, itself included, where ``own`` holds (-1: none) -- level by level."""
    out = np.where(own, np.arange(own.size), -1)
    for here in levels[1:]:
        here = here[~own[here]]
        p = parent[here]
        out[here] = np.where(p >= 0, out[np.maximum(p, 0)], -1)
    return out


def _order(tid: np.ndarray, ts: np.ndarray, end: np.ndarray) -> np.ndarray:
    """The order by (tid, ts, -end): two stable sorts of nearly sorted keys; a full lexsort only where equal
    starts on a thread are not already longest first."""
    o = np.argsort(ts, kind="stable")
    o = o[np.argsort(tid[o], kind="stable")]
    t, s, e = tid[o], ts[o], end[o]
    if ((t[1:] == t[:-1]) & (s[1:] == s[:-1]) & (e[1:] > e[:-1])).any():
        return np.lexsort((-end, ts, tid))
    return o


def build(rt: RankTrace, launched: np.ndarray | None = None) -> Tree:
    """The tree of ``rt``'s CPU ops and module/optimizer ranges (see the module doc).

    ``launched`` (the External ids of the GPU work to attribute) keeps only the ops that matter for it: the
    modelled ones, those that launched some of it and, with module ranges, the autograd nodes and forward ops
    of the backward pairing. The others (views, bookkeeping) own nothing: without them the same ops nest the
    same way, and a GPU run's tree is about half the size."""
    names = rt.categories("name") or []
    is_mod, is_opt, model, path = _name_flags([str(x) for x in names])
    kind = rt.column("kind")
    code = rt.column("name")
    is_op_ev = kind == schema.CPU_OP
    rng = (kind == schema.ANNOTATION) & (is_mod[code] | is_opt[code])
    keep = is_op_ev
    if launched is not None:
        keep = is_op_ev & (model[code] | _launchers(rt.column("external_id"), launched))
        if rng.any():
            idx, args = rt.op_args()
            paired = np.zeros(kind.size, dtype=bool)
            paired[idx] = args["seq_nr"] >= 0
            keep |= is_op_ev & paired
    rows = np.flatnonzero(keep | rng)
    tid, ts, end = rt.column("tid")[rows], rt.column("ts_ns")[rows], rt.column("end_ns")[rows]
    order = _order(tid, ts, end)
    rows, tid, ts, end = rows[order], tid[order], ts[order], end[order]
    parent, depth, levels = parents(tid, ts, end)
    c = code[rows]
    is_op = is_op_ev[rows]
    owner_at = _top_down(parent, levels, is_op & model[c])
    owner = np.where(owner_at >= 0, owner_at, np.arange(rows.size))
    module = _modules(rt, rows, parent, levels, c, is_op, is_mod, is_opt, path)
    return Tree(rows=rows, parent=parent, owner=owner, module=module, is_op=is_op, depth=depth)


def _modules(rt: RankTrace, rows: np.ndarray, parent: np.ndarray, levels: list[np.ndarray], c: np.ndarray,
             is_op: np.ndarray, is_mod: np.ndarray, is_opt: np.ndarray, path: list[str | None]) -> np.ndarray:
    """Per node its module (see the module doc)."""
    n = rows.size
    out = np.full(n, None, dtype=object)
    if not n:
        return out
    paths = np.empty(len(path), dtype=object)
    paths[:] = path
    mod = ~is_op & is_mod[c]
    mod_at = _top_down(parent, levels, mod) if mod.any() else np.full(n, -1)
    out[mod_at >= 0] = paths[c[mod_at[mod_at >= 0]]]
    in_bwd = np.zeros(n, dtype=bool)
    if mod.any():  # backward ops take their forward op's module: nothing to take without module ranges
        seq, fwd = _seq_of(rt, rows)
        bwd_at = _top_down(parent, levels, is_op & (fwd > 0))
        in_bwd = (bwd_at >= 0) & (mod_at < 0)
    if in_bwd.any():
        # forward ops, latest start first: ops that create no autograd node (a view of the input ids) carry the
        # sequence number the next node will take, so the op that created node N is the last one carrying N
        fw = np.flatnonzero(is_op & (seq >= 0) & (fwd <= 0))[::-1]
        keys, last = np.unique(seq[fw], return_index=True)
        fw_mod = out[fw[last]]
        want = seq[bwd_at[in_bwd]]
        got = np.full(want.size, None, dtype=object)
        if keys.size:
            k = np.minimum(np.searchsorted(keys, want), keys.size - 1)
            match = keys[k] == want
            got[match] = fw_mod[k[match]]
        out[np.flatnonzero(in_bwd)] = got
    opt = ~is_op & is_opt[c]
    if opt.any():
        opt_at = _top_down(parent, levels, opt)
        out[(opt_at >= 0) & (mod_at < 0) & ~in_bwd] = OPTIMIZER
    return out


def _seq_of(rt: RankTrace, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``Sequence number`` and ``Fwd thread id`` of the nodes (-1: none)."""
    idx, args = rt.op_args()
    seq = np.full(rows.size, -1, dtype=np.int64)
    fwd = np.full(rows.size, -1, dtype=np.int64)
    if idx.size:
        k = np.minimum(np.searchsorted(idx, rows), idx.size - 1)
        hit = idx[k] == rows
        seq[hit] = args["seq_nr"][k[hit]]
        fwd[hit] = args["fwd_tid"][k[hit]]
    return seq, fwd


def arg_positions(rt: RankTrace, rows: np.ndarray) -> np.ndarray:
    """Per event row, its position in :meth:`RankTrace.op_args` (-1: it carries none)."""
    idx, _ = rt.op_args()
    if not idx.size:
        return np.full(rows.size, -1, dtype=np.int64)
    k = np.minimum(np.searchsorted(idx, rows), idx.size - 1)
    return np.where(idx[k] == rows, k, -1)
