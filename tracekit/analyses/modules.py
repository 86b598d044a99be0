"""Table ``modules``: the ``ops`` table rolled up the module tree, per rank.

A module's **self** figures are the sums over the ops whose ``module`` is exactly it; its inclusive figures
(``us_per_step``, ``kernels_per_step``, ``flops_per_step``, ``bytes_per_step``) add every module below it
(``blocks.3`` holds ``blocks.3.mlp`` holds ``blocks.3.mlp.0``). The root, the model itself, is module ``""``
(shown as ``(model)`` in the text report) and holds every module; ops outside every module form the row
``(outside modules)``, and optimizer ops outside modules the row ``(optimizer)``, both at depth 0 beside the
root. So the self times of all rows sum to the ``ops`` table's total time of the rank.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from tracekit.analyses import optree
from tracekit.analyses.registry import Column, RunContext, Table, View, ViewOptions
from tracekit.traces import cols as C
from tracekit.traces.frames import NO_ROWS

ROOT = "(model)"
OUTSIDE = "(outside modules)"

COLUMNS = (
    Column("rank", "rank", "the rank"),
    Column("module", "name", "dotted module path; '' = the model itself (the text report shows (model)), "
                             "(outside modules) = ops in no module, (optimizer) = optimizer ops in no module"),
    Column("parent", "name", "the enclosing module ('' for a top-level module); null at depth 0"),
    Column("depth", "count", "0 for the model, (outside modules) and (optimizer); 1 + the parent's depth below"),
    Column("us_per_step", "us", "summed op time (ops table us_per_step) of this module and every module below it"),
    Column("self_us_per_step", "us", "summed op time of the ops whose module is exactly this one"),
    Column("kernels_per_step", "count", "GPU activities launched by its ops and its sub-modules' ops per step"),
    Column("flops_per_step", "count", "modelled FLOPs of its ops and its sub-modules' ops per step (ops with a "
                                      "model; null when none has one)"),
    Column("bytes_per_step", "bytes", "modelled bytes of its ops and its sub-modules' ops per step (null when "
                                      "none has a model)"),
    Column("device_share_pct", "pct", "100 · us_per_step / the rank's summed op time per step (Σ self_us_per_step "
                                      "of its rows): the module's share of the rank's device work (CPU op time on "
                                      "CPU runs); at most 100, the depth-0 rows add up to 100. Not a share of the "
                                      "step's wall time: work on several streams overlaps"),
    Column("achieved_tflops", "count", "flops_per_step / us_per_step, in TFLOP/s"),
    Column("achieved_tbps", "count", "bytes_per_step / us_per_step, in TB/s"),
)


def _ancestors(path: str) -> list[str]:
    """``blocks.3.mlp`` -> ``blocks.3.mlp``, ``blocks.3``, ``blocks``, ``""``."""
    words = path.split(".") if path else []
    return [".".join(words[:i]) for i in range(len(words), -1, -1)]


def _label(m: str | None) -> str:
    return OUTSIDE if m is None else m


def rank_modules(ops: Mapping[str, np.ndarray]) -> dict[str, list[Any]]:
    """One rank's module rows (columns of :data:`COLUMNS` but ``rank``) from its ``ops_rank`` rows."""
    acc: dict[str | None, list[float]] = {}
    self_us: dict[str | None, float] = {}
    for m, us, k, f, b in zip(ops["module"].tolist(), ops["us_per_step"].tolist(), ops["kernels_per_step"].tolist(),
                              ops["flops_per_step"].tolist(), ops["bytes_per_step"].tolist()):
        m = None if m is None or (isinstance(m, float) and m != m) else str(m)
        self_us[m] = self_us.get(m, 0.0) + us
        chain = [m] if m in (None, optree.OPTIMIZER) else _ancestors(m)
        for a in chain:
            e = acc.setdefault(a, [0.0, 0.0, 0.0, 0.0, 0, 0])
            e[0] += us
            e[1] += k
            if f == f:
                e[2] += f
                e[4] += 1
            if b == b:
                e[3] += b
                e[5] += 1
    out: dict[str, list[Any]] = {c.name: [] for c in COLUMNS if c.name != "rank"}
    total = sum(self_us.values())
    for m in sorted(acc, key=_tree_order):
        us, k, f, b, nf, nb = acc[m]
        top = m is None or m in ("", optree.OPTIMIZER)
        parent = None if top else (m.rsplit(".", 1)[0] if "." in m else "")
        out["module"].append(_label(m))
        out["parent"].append(None if parent is None else _label(parent))
        out["depth"].append(0 if top else len(m.split(".")))
        out["us_per_step"].append(us)
        out["self_us_per_step"].append(self_us.get(m, 0.0))
        out["kernels_per_step"].append(k)
        out["flops_per_step"].append(f if nf else np.nan)
        out["bytes_per_step"].append(b if nb else np.nan)
        out["device_share_pct"].append(100.0 * us / total if total > 0 else np.nan)
        out["achieved_tflops"].append(f / us / 1e6 if nf and us > 0 else np.nan)
        out["achieved_tbps"].append(b / us / 1e6 if nb and us > 0 else np.nan)
    return out


def _tree_order(m: str | None) -> tuple[int, list[Any]]:
    """The root and its tree depth-first (numeric path words in number order), then (optimizer), then
    (outside modules)."""
    if m is None:
        return (2, [])
    if m == optree.OPTIMIZER:
        return (1, [])
    return (0, [(0, int(w), "") if w.isdigit() else (1, 0, w) for w in m.split(".")] if m else [])


def modules_table(ctx: RunContext) -> C.Cols:
    ops = C.as_cols(ctx.tables["ops_rank"])
    if not C.nrows(ops):
        return NO_ROWS
    parts = []
    by_rank = C.Groups(ops, ["rank"])  # one grouping: each rank's rows, ranks in order
    for r, sel in zip(by_rank.keys["rank"].tolist(), by_rank.rows()):
        rows = rank_modules(C.take(ops, sel))
        n = len(rows["module"])
        parts.append({"rank": np.full(n, r, dtype=np.int64),
                      **{k: (C.obj(v) if k in ("module", "parent") else np.asarray(v, dtype=np.float64
                                                                                    if k != "depth" else np.int64))
                         for k, v in rows.items()}})
    return C.concat(parts)


def _view(t: Mapping[str, Any], opts: ViewOptions) -> View | None:
    mods = C.as_cols(t["modules"])
    if not C.nrows(mods) or not (mods["module"] == "").any():  # no module ranges in the traces: no tree
        return None
    keep = np.flatnonzero(mods["depth"] <= 2)
    shown = ("rank", "module", "depth", "us_per_step", "self_us_per_step", "device_share_pct", "achieved_tflops")
    view = C.select(C.take(mods, keep), list(shown))
    view["module"] = C.obj([ROOT if m == "" else m for m in view["module"].tolist()])
    return View("Modules per rank (depth ≤ 2; --table modules for the whole tree)", view)


TABLES = [
    Table(name="modules", scope="run", title="Modules: the ops rolled up the module tree, per rank",
          doc="Per rank, a tree: every figure of a module includes its sub-modules (self_us_per_step does not). "
              "Modules come from `tracekit.module:<path>` ranges (tracekit profile), backward ops take their "
              "forward op's module, compiled kernels theirs from compiled_kernels.json: [Ops and modules]"
              "(../ops.md).",
          columns=COLUMNS, compute=modules_table, needs=("ops_rank",), view=_view, order=47),
]
