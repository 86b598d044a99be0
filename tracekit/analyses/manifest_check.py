"""The run.json check: what ``run.json`` says of the gradient buckets against what the trace shows.

Per rank, DDPOptimizer's bucket assignment against the compiled backward subgraphs (the ``graph_breaks``
table), and the DDP reducer's buckets against the backward allreduces of the last profiled step (the
``bucket_timeline`` table, :mod:`tracekit.analyses.timeline`); :func:`manifest_check` lists the checks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from tracekit.analyses.registry import Column, RunContext, Table, View
from tracekit.traces import cols as C
from tracekit.traces.cols import Cols
from tracekit.traces.manifest import CompileFacts, Manifest

#: relative size tolerance when comparing bucket byte counts (manifest vs trace):
#: the reducer pads nothing, but a 1% slack absorbs dtype-size rounding in the args
BYTES_TOLERANCE = 0.01


def rank_compile_facts(manifest: Manifest | None, rank: int) -> CompileFacts:
    """The compile facts of ``rank`` (:meth:`Manifest.compile_facts`); empty ones (nothing
    enabled, every fact null) without a manifest or an entry for the rank."""
    facts = manifest.compile_facts(rank) if manifest is not None else None
    return facts if facts is not None else CompileFacts()


def _sizes_match(a: list[float], b: list[float]) -> bool:
    if len(a) != len(b):
        return False
    x, y = np.sort(np.asarray(a, float)), np.sort(np.asarray(b, float))
    return bool(np.all(np.abs(x - y) <= BYTES_TOLERANCE * np.maximum(np.abs(y), 1.0)))


def _fmt_sizes(sizes: list[float] | None) -> str | None:
    if sizes is None:
        return None
    mb = [f"{s / 1e6:.2f}" for s in sizes]
    return f"{len(mb)} buckets [" + ", ".join(mb) + "] MB"


CHECK_COLUMNS = ("rank", "check", "expected", "observed", "status", "note")


#: status of a reducer check that cannot apply: one rank, where NCCL launches no allreduce kernel
NOT_APPLICABLE = "not applicable"
SINGLE_RANK_NOTE = ("world size 1: a single rank has nothing to reduce and NCCL launches no allreduce kernel, "
                    "so the trace has no allreduces to compare (expected, not a mismatch)")


def median_by(t: Mapping[str, np.ndarray], by: str, values: str) -> dict[Any, float]:
    """Median of column ``values`` per distinct value of column ``by`` (``t.groupby(by)[values].median()``
    as a dict; missing values skipped, a group with none left out)."""
    key, v = np.asarray(t[by]), np.asarray(t[values], dtype=float)
    keep = ~C.isna(key) & ~np.isnan(v)
    key, v = key[keep], v[keep]
    if not v.size:
        return {}
    uniq, code = np.unique(key, return_inverse=True)
    med = C.group_median(v, code.reshape(-1), uniq.size)
    return dict(zip(uniq.tolist(), med.tolist()))


def _last_step_sizes(timeline: Cols) -> dict[int, list[float]]:
    """Per rank of ``timeline``: its buckets' bytes (as floats, in bucket order) in its last step."""
    if not C.nrows(timeline):
        return {}
    g = C.Groups(timeline, ["rank"])
    last = g.max(timeline["step"])[g.codes]  # the rank's last step, per row
    rows = C.order(timeline, ["rank", "bucket"])
    rows = rows[(timeline["step"][rows] == last[rows]) & (g.codes[rows] >= 0)]
    ranks, sizes = timeline["rank"][rows], np.asarray(timeline["bytes"][rows], dtype=float)
    out: dict[int, list[float]] = {}
    for r, b in zip(ranks.tolist(), sizes.tolist()):
        out.setdefault(r, []).append(b)
    return out


def manifest_check(timeline: Any, graph_breaks: Any, manifest: Manifest | None,
                   ranks: list[int], world_size: int | None = None) -> Cols:
    """Check DDPOptimizer's bucket assignment and the reducer's buckets (``run.json``) against what ran
    (``timeline``: the ``bucket_timeline`` table, ``graph_breaks`` that table: Cols or DataFrames).

    Rows per rank: ``backward_subgraphs_per_step`` (DDPOptimizer buckets vs
    ``CompiledFunctionBackward`` per step), ``allreduces_per_step`` and
    ``allreduce_bytes`` (reducer buckets vs backward allreduces of the last
    profiled step), ``ddp_optimizer_vs_reducer``. ``status``: match / mismatch /
    unknown (a fact is missing) / not applicable (``world_size`` 1 and no allreduce in the trace:
    the three reducer checks, see :data:`SINGLE_RANK_NOTE`). Empty without a manifest. The columns are
    typed as ``pd.DataFrame(rows)`` types them (:func:`tracekit.traces.cols.column`).
    """
    if manifest is None:
        return C.empty(CHECK_COLUMNS)
    timeline, graph_breaks = C.as_cols(timeline), C.as_cols(graph_breaks)
    bwd_sub = median_by(graph_breaks, "rank", "bwd_subgraphs") if C.nrows(graph_breaks) else {}
    last_sizes = _last_step_sizes(timeline)
    reducer = manifest.reducer()
    initial = reducer.bucket_sizes_bytes if reducer else None
    rebuilt = reducer.rebuilt_bucket_sizes_bytes if reducer else None
    rows: list[dict[str, Any]] = []
    for r in ranks:
        facts = rank_compile_facts(manifest, r)
        graphs = facts.ddp_optimizer.graphs if facts.ddp_optimizer else None
        if graphs is None and facts.optimize_ddp == "ddp_optimizer" and manifest.buckets:
            graphs = manifest.buckets.ddp_optimizer
        # backward subgraphs
        obs_sub = int(bwd_sub[r]) if r in bwd_sub else None
        if graphs:
            exp_sub = int(sum(g.bucket_count or 0 for g in graphs))
            st = "match" if obs_sub == exp_sub else "mismatch"
            note = ("one compiled backward subgraph per DDPOptimizer bucket" if st == "match" else
                    "DDPOptimizer's buckets do not map one-to-one to compiled backward subgraphs "
                    "(graph breaks add subgraphs; a skipped frame removes them)")
            rows.append(dict(rank=r, check="backward_subgraphs_per_step", expected=exp_sub, observed=obs_sub,
                             status=st, note=note))
        elif facts.enabled:
            rows.append(dict(rank=r, check="backward_subgraphs_per_step", expected=None, observed=obs_sub,
                             status="unknown", note=f"DDPOptimizer not in use (optimize_ddp={facts.optimize_ddp})"))
        # reducer buckets vs allreduces
        obs_sizes = last_sizes.get(r, [])
        cur = rebuilt if rebuilt else initial
        if cur:
            st = "match" if len(cur) == len(obs_sizes) else "mismatch"
            rows.append(dict(rank=r, check="allreduces_per_step", expected=len(cur), observed=len(obs_sizes),
                             status=st, note="reducer buckets vs backward allreduces in the last profiled step"))
            if _sizes_match(cur, obs_sizes):
                st, note = "match", ("the reducer rebuilt its buckets in gradient-ready order after the first "
                                     "iteration; the rebuilt buckets ran" if rebuilt and not _sizes_match(initial or [], rebuilt)
                                     else "the reducer's buckets ran as built")
            elif initial and _sizes_match(initial, obs_sizes):
                st, note = "match", "the initial (not rebuilt) buckets ran"
            else:
                st, note = "mismatch", "allreduce sizes differ from the reducer's buckets"
            rows.append(dict(rank=r, check="allreduce_bytes", expected=_fmt_sizes(cur), observed=_fmt_sizes(obs_sizes),
                             status=st, note=note))
        else:
            rows.append(dict(rank=r, check="allreduce_bytes", expected=None, observed=_fmt_sizes(obs_sizes),
                             status="unknown", note="run.json has no reducer bucket sizes"))
        if graphs and any(g.buckets for g in graphs):
            ddpo_sizes = [float(b.bytes or 0) for g in graphs for b in g.buckets]
            same = _sizes_match(ddpo_sizes, obs_sizes)
            note = ("DDPOptimizer's buckets equal the reducer's allreduces" if same else
                    "DDPOptimizer buckets differ from the reducer's allreduces"
                    + (": the reducer rebuilt its buckets in gradient-ready order after the first iteration"
                       if rebuilt and _sizes_match(rebuilt, obs_sizes) else ""))
            rows.append(dict(rank=r, check="ddp_optimizer_vs_reducer", expected=_fmt_sizes(ddpo_sizes),
                             observed=_fmt_sizes(obs_sizes), status="match" if same else "mismatch", note=note))
    if world_size == 1:
        rows = [_single_rank(row) for row in rows]
    return {c: C.column([row[c] for row in rows]) for c in CHECK_COLUMNS}


def _single_rank(row: dict[str, Any]) -> dict[str, Any]:
    """A reducer check of a one-rank run that found no allreduce: not applicable instead of a mismatch."""
    reducer_checks = ("allreduces_per_step", "allreduce_bytes", "ddp_optimizer_vs_reducer")
    if row["check"] in reducer_checks and row["status"] == "mismatch" and row["observed"] in (0, _fmt_sizes([])):
        return {**row, "status": NOT_APPLICABLE, "note": SINGLE_RANK_NOTE}
    return row


# -- registered table (see tracekit.analyses.registry) ---------------------------------------

def _check_table(ctx: RunContext) -> Cols:
    # CPU-only (gloo) traces have no bucket timeline to check the reducer's buckets against
    manifest = ctx.manifest if ctx.traces.has_gpu_activity else None
    return manifest_check(ctx.tables["bucket_timeline"], ctx.tables["graph_breaks"], manifest,
                          sorted(ctx.traces.ranks), ctx.traces.world_size)


TABLES = [
    Table(
        name="manifest_check", scope="run", title="run.json check (what run.json says vs what the trace shows)",
        doc="Checks per rank: backward_subgraphs_per_step (DDPOptimizer buckets vs CompiledFunctionBackward per "
            "step), allreduces_per_step and allreduce_bytes (reducer buckets vs backward allreduces of the last "
            "step), ddp_optimizer_vs_reducer. Empty without run.json or on CPU-only traces.",
        columns=(
            Column("rank", "rank", "the rank"),
            Column("check", "name", "what is checked"),
            Column("expected", "text", "from run.json"),
            Column("observed", "text", "from the trace"),
            Column("status", "name", "match / mismatch / unknown (a fact is missing) / not applicable (world size "
                                     "1: NCCL launches no allreduce, the reducer checks cannot apply)"),
            Column("note", "text", "what the result means"),
        ),
        compute=_check_table, needs=("bucket_timeline", "graph_breaks"), order=90,
        view=lambda t, o: View("run.json check", t["manifest_check"]) if C.nrows(t["manifest_check"]) else None,
    ),
]
