"""Per module or per op, run A next to run B: ``tracekit diff EAGER_RUN COMPILED_RUN --by module|op``.

Inputs are the ``modules`` and ``ops`` tables of the two runs (their contract: ``modules`` has ``rank, module,
parent, depth, us_per_step, kernels_per_step, bytes_per_step, ...``, one row per rank and module, inclusive
totals; ``ops`` has ``rank, op, category, module, calls_per_step, us_per_step, bytes_per_step, dtype, ...``,
one row per rank, module, op and dtype). Both are per-step means; this module compares them, nothing else.

Per module (:func:`compare_modules`), the key is the module path (``""`` the whole step); per op
(:func:`compare_ops`), the op name (an ATen op in eager runs, a compiled kernel in compiled ones), its rows
summed over modules and dtypes first. A figure of a run is the mean over its ranks of the per-rank value
(ranks missing a key count as absent, not as 0). Columns:

- ``presence``: ``both``, ``a only`` or ``b only`` (a module that ran on one side only, e.g. a compiled
  region's modules when B compiled them away, or an op that exists only eagerly).
- ``a_us_per_step``, ``b_us_per_step``: device time per step (op time on CPU runs).
- ``saving_us_per_step`` = a − b (positive: B is faster); ``saving_pct`` = 100 · (a − b) / a (None when a is 0
  or a side is missing).
- ``a_kernels_per_step`` / ``b_kernels_per_step`` (modules) or ``a_calls_per_step`` / ``b_calls_per_step`` (ops).
- ``a_bytes_per_step``, ``b_bytes_per_step``, ``bytes_saving_per_step`` = a − b: the bytes model's lower bound
  of memory traffic (what fusion saved, when B is the compiled twin).
- ``b_slower``: present on both sides and B slower by ≥ :data:`SLOWER_MIN_PCT` % and ≥
  :data:`SLOWER_MIN_US` µs per step.

Rows: B-slower rows first (largest excess first), then by the larger of the two times, descending.

Finding (:class:`CompiledSlowerThanEager`, code ``compiled_slower_than_eager``): for ``--by module``, when A
is an eager run and B a compiled one (``run.json`` ``config.dynamo``), each ``b_slower`` module none of whose
child modules is ``b_slower`` (the innermost slow modules; their parents are slower because of them).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import pandas as pd

from tracekit.analyses.findings import Finding
from tracekit.compare.core import as_number

#: a module or op counts as slower in B from this many % and µs per step over A (below: noise)
SLOWER_MIN_PCT = 5.0
SLOWER_MIN_US = 1.0

MODULE_COLUMNS = ("module", "depth", "presence", "a_us_per_step", "b_us_per_step", "saving_us_per_step",
                  "saving_pct", "a_kernels_per_step", "b_kernels_per_step", "a_bytes_per_step",
                  "b_bytes_per_step", "bytes_saving_per_step", "b_slower")
OP_COLUMNS = ("op", "category", "presence", "a_us_per_step", "b_us_per_step", "saving_us_per_step", "saving_pct",
              "a_calls_per_step", "b_calls_per_step", "a_bytes_per_step", "b_bytes_per_step",
              "bytes_saving_per_step", "b_slower")


class CompiledSlowerThanEager(Finding, tag="compiled_slower_than_eager"):
    """``compiled_slower_than_eager``: a module takes longer per step in the compiled run B than in its eager
    twin A (module doc); the cost is the excess, µs per step of B."""

    module: str
    eager_us_per_step: float | None
    compiled_us_per_step: float | None
    eager_kernels_per_step: float | None
    compiled_kernels_per_step: float | None

    ORDER: ClassVar[int] = 200
    TIMING: ClassVar[bool] = True


def _frame(t: Any, columns: tuple[str, ...]) -> pd.DataFrame | None:
    if t is None:
        return None
    df = t if isinstance(t, pd.DataFrame) else pd.DataFrame({k: np.asarray(v) for k, v in dict(t).items()})
    missing = [c for c in columns if c not in df]
    if missing:
        raise ValueError(f"table lacks columns {missing}")
    return df


def _per_key(df: pd.DataFrame, key: str, values: list[str], first: list[str]) -> pd.DataFrame:
    """Per key: each value summed per rank, then averaged over the ranks that have the key; ``first`` columns
    keep their first value."""
    d = df.copy()
    for v in values:
        d[v] = pd.to_numeric(d[v], errors="coerce")
    per_rank = d.groupby(["rank", key], sort=False, dropna=False).agg(
        {**{v: lambda s: s.sum(min_count=1) for v in values}, **{f: "first" for f in first}}).reset_index()
    return per_rank.groupby(key, sort=False, dropna=False).agg(
        {**{v: "mean" for v in values}, **{f: "first" for f in first}})


def _side_by_side(a: pd.DataFrame, b: pd.DataFrame, key: str, counts: str, first: list[str]) -> pd.DataFrame:
    values = ["us_per_step", counts, "bytes_per_step"]
    pa, pb = _per_key(a, key, values, first), _per_key(b, key, values, first)
    keys = list(dict.fromkeys([*pa.index, *pb.index]))
    out = pd.DataFrame({key: keys})
    for f in first:
        out[f] = [pa[f].get(k) if k in pa.index else pb[f].get(k) for k in keys]
    out["presence"] = ["both" if k in pa.index and k in pb.index else "a only" if k in pa.index else "b only"
                       for k in keys]
    for side, p in (("a", pa), ("b", pb)):
        for v in values:
            out[f"{side}_{v}"] = [p[v].get(k, np.nan) if k in p.index else np.nan for k in keys]
    out["saving_us_per_step"] = out["a_us_per_step"] - out["b_us_per_step"]
    a_us = out["a_us_per_step"]
    out["saving_pct"] = 100.0 * out["saving_us_per_step"] / a_us.where(a_us > 0)
    out["bytes_saving_per_step"] = out["a_bytes_per_step"] - out["b_bytes_per_step"]
    excess = -out["saving_us_per_step"]
    out["b_slower"] = ((out["presence"] == "both") & (excess >= SLOWER_MIN_US)
                       & (excess >= SLOWER_MIN_PCT / 100.0 * a_us.fillna(0))).astype(bool)
    size = out[["a_us_per_step", "b_us_per_step"]].max(axis=1).fillna(0)
    order = np.lexsort((-size.to_numpy(), -np.where(out["b_slower"], excess.fillna(0), 0), ~out["b_slower"].to_numpy()))
    return out.iloc[order].reset_index(drop=True)


def compare_modules(a: Any, b: Any) -> pd.DataFrame:
    """Run A's ``modules`` table next to run B's (module doc): one row per module, :data:`MODULE_COLUMNS`."""
    need = ("rank", "module", "depth", "us_per_step", "kernels_per_step", "bytes_per_step")
    fa, fb = _frame(a, need), _frame(b, need)
    out = _side_by_side(fa, fb, "module", "kernels_per_step", ["depth"])
    out["module"] = out["module"].fillna("")
    return out[list(MODULE_COLUMNS)]


def compare_ops(a: Any, b: Any) -> pd.DataFrame:
    """Run A's ``ops`` table next to run B's (module doc): one row per op, :data:`OP_COLUMNS`."""
    need = ("rank", "op", "category", "calls_per_step", "us_per_step", "bytes_per_step")
    fa, fb = _frame(a, need), _frame(b, need)
    out = _side_by_side(fa, fb, "op", "calls_per_step", ["category"])
    return out[list(OP_COLUMNS)]


def _parent(path: str) -> str | None:
    return None if path == "" else path.rsplit(".", 1)[0] if "." in path else ""


def slower_findings(rows: pd.DataFrame, step_us: float | None) -> list[CompiledSlowerThanEager]:
    """The ``compiled_slower_than_eager`` findings of a :func:`compare_modules` table (A eager, B compiled):
    the innermost ``b_slower`` modules (module doc); ``step_us``: B's mean step, for the severity."""
    slow = rows[rows["b_slower"]]
    paths = set(slow["module"])
    has_slow_child = {p for p in (_parent(m) for m in paths) if p is not None}
    out = []
    for r in slow.itertuples(index=False):
        if r.module == "" or r.module in has_slow_child:
            continue
        a, b = as_number(r.a_us_per_step), as_number(r.b_us_per_step)
        out.append(CompiledSlowerThanEager(
            rank=None, cost_us=b - a, step_us=step_us, module=r.module,
            message=(f"module {r.module} takes {b:.1f} µs per step compiled against {a:.1f} µs eager "
                     f"(+{b - a:.1f} µs{f', +{100 * (b - a) / a:.0f} %' if a > 0 else ''}): compare its kernels with "
                     f"`tracekit diff --by op` and the compiled code in compiled_kernels.json"),
            eager_us_per_step=round(a, 1), compiled_us_per_step=round(b, 1),
            eager_kernels_per_step=_r(r.a_kernels_per_step), compiled_kernels_per_step=_r(r.b_kernels_per_step)))
    return sorted(out, key=lambda f: -(f.cost_us or 0))


def _r(x: Any) -> float | None:
    v = as_number(x)
    return round(v, 2) if np.isfinite(v) else None
