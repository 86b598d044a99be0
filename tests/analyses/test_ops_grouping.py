"""The ops analyses group rows once (per rank, per distinct name) rather than scanning a table per rank or per op:
the grouped results are the ones a scan per group gives, rows in any order."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from tracekit.analyses import modules, ops
from tracekit.traces import cols as C
from tracekit.traces.provenance import KernelOrigin


def test_top_rows_per_rank_in_row_order() -> None:
    rank = np.array([1, 0, 1, 0, 1, 2, 0])
    assert ops._top_per_rank(rank, 2).tolist() == [True, True, True, True, False, True, False]
    assert ops._top_per_rank(np.array([], dtype=np.int64), 3).tolist() == []


def _ops_rows() -> C.Cols:
    """Two ranks' ops_rank rows, interleaved (rank 1 first)."""
    rows = [(1, "a.x", 10.0, 2.0, 100.0, np.nan), (0, "a", 5.0, 1.0, np.nan, np.nan), (1, "a", 4.0, 1.0, 50.0, 8.0),
            (0, "a.y", 6.0, 3.0, 30.0, 6.0), (1, None, 1.0, 1.0, np.nan, np.nan)]
    return {"rank": np.array([r[0] for r in rows]), "module": C.obj([r[1] for r in rows]),
            "us_per_step": np.array([r[2] for r in rows]), "kernels_per_step": np.array([r[3] for r in rows]),
            "flops_per_step": np.array([r[4] for r in rows]), "bytes_per_step": np.array([r[5] for r in rows])}


def test_modules_table_is_each_ranks_rollup() -> None:
    t = _ops_rows()
    out = modules.modules_table(SimpleNamespace(tables={"ops_rank": t}))
    assert out["rank"].tolist() == [0, 0, 0, 1, 1, 1, 1]
    for r in (0, 1):
        mine = modules.rank_modules(C.take(t, np.flatnonzero(t["rank"] == r)))
        sel = out["rank"] == r
        assert out["module"][sel].tolist() == mine["module"]
        assert out["us_per_step"][sel].tolist() == mine["us_per_step"]
    # rank 1: root "" holds a (4 µs self) and a.x (10 µs); (outside modules) 1 µs beside it
    one = {m: us for m, us in zip(out["module"][out["rank"] == 1].tolist(), out["us_per_step"][out["rank"] == 1])}
    assert one == {"": 14.0, "a": 14.0, "a.x": 10.0, modules.OUTSIDE: 1.0}


def test_compiled_kernels_spread_to_every_call_of_their_name() -> None:
    names = ["triton_poi_fused_add_0", "aten::mm", "aten::relu"]
    codes = np.array([0, 1, 0, 2, 1])  # each call's name
    module = C.obj([None, "blk.0", "x", None, None])
    flops, nbytes = np.full(5, np.nan), np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    source = C.obj(["shapes"] * 5)
    compiled = {"triton_poi_fused_add_0": KernelOrigin(modules=["blk.1.mlp", "blk.1.attn"], flops=7, bytes=None),
                ops.EXTERN + "aten::mm": KernelOrigin(modules=["blk.2"])}
    ops._apply_compiled(compiled, names, codes, module, flops, nbytes, source)
    # the kernel: its module (common prefix) over any range's, its FLOPs and source, bytes kept (none given);
    # the extern aten::mm: its module only where no range gave one; aten::relu untouched
    assert module.tolist() == ["blk.1", "blk.0", "blk.1", None, "blk.2"]
    assert flops[[0, 2]].tolist() == [7.0, 7.0] and np.isnan(flops[[1, 3, 4]]).all()
    assert nbytes.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert source.tolist() == ["inductor", "shapes", "inductor", "shapes", "shapes"]
