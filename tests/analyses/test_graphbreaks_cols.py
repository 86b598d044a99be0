"""The numpy primitives of the graph-break and bucket-timeline analyses against the pandas operations they
replaced (random tables, fixed seeds), and the dtypes of their tables where pandas' inference decided them."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tracekit.analyses.graphbreaks import _step_sums, graph_break_summary
from tracekit.analyses.manifest_check import manifest_check, median_by
from tracekit.traces import cols as C


@pytest.mark.parametrize("seed", range(4))
def test_median_by_is_pandas(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 80
    v = rng.integers(0, 9, n).astype(float)
    v[rng.random(n) < 0.2] = np.nan
    t = {"rank": rng.integers(0, 6, n), "v": v}
    want = pd.DataFrame(t).groupby("rank")["v"].median().dropna().to_dict()
    assert median_by(t, "rank", "v") == pytest.approx(want)


def test_factorize_is_pandas() -> None:
    names = C.obj(["b", None, "a", "b", float("nan"), "c", "a"])
    code, uniq = C.factorize(names)
    want_code, want_uniq = pd.factorize(names)
    assert code.tolist() == want_code.tolist() and uniq.tolist() == list(want_uniq)


def test_step_sums_float_without_a_boundary_of_a_kind() -> None:
    """Every sum is a float column, also for a kind no boundary has (bincount of nothing is int)."""
    bnd = {"step": np.array([3, 3, 5]), "kind": C.obj(["ddp_split"] * 3), "gap_cpu_us": np.array([1.0, 2.0, 4.0]),
           "idle_gpu_us": np.array([0.5, np.nan, 1.0])}
    sums = _step_sums(bnd, np.array([5, 3, 7]))
    assert all(v.dtype == np.float64 for v in sums.values())
    assert sums["eager_between_us"].tolist() == [4.0, 3.0, 0.0]
    assert sums["idle_at_splits_us"].tolist() == [1.0, 0.5, 0.0]  # NaN skipped, as pandas' sum does
    assert sums["eager_at_breaks_us"].tolist() == [0.0, 0.0, 0.0]


def test_graph_break_summary_dtypes_are_pandas() -> None:
    gb = {"rank": np.array([1, 0, 0]), "step": np.array([1, 1, 2]), "regions": np.array([3, 2, 4]),
          "fwd_subgraphs": np.array([8, 16, 16]), "bwd_subgraphs": np.array([8, 16, 16]),
          "triton_kernels": np.array([40, 80, 80]),
          "ddp_splits": np.array([7, 15, 14]), "real_breaks": np.array([0, 0, 1]),
          "compiled_cpu_us": np.array([50.0, 100.0, 300.0]), "eager_between_us": np.array([5.0, 10.0, 20.0]),
          "idle_at_breaks_us": np.array([0.0, 0.0, 40.0]), "cost_per_break_us": np.array([np.nan, np.nan, 40.0]),
          "compile_skipped": np.array([True, False, True])}
    got = C.to_frame(graph_break_summary(gb))
    df = pd.DataFrame(gb)
    num = [c for c in gb if c not in ("rank", "step", "compile_skipped")]
    g = df.groupby("rank", sort=True)
    want = g[num].mean()
    want.insert(0, "steps", g["step"].size())
    want["compile_skipped_steps"] = g["compile_skipped"].sum().astype(int)
    pd.testing.assert_frame_equal(got, want.reset_index())


def test_manifest_check_columns_typed_as_pandas_rows() -> None:
    """No manifest: no rows, object columns (``pd.DataFrame(columns=...)``)."""
    got = manifest_check({}, {}, None, [0, 1])
    want = pd.DataFrame(columns=list(got))
    pd.testing.assert_frame_equal(C.to_frame(got), want)


class _Manifest:
    """A run.json whose DDPOptimizer split rank 0's graph in 2 buckets and that records no reducer buckets."""

    buckets = None

    def reducer(self) -> None:
        return None

    def compile_facts(self, rank: int):  # noqa: ANN201
        from types import SimpleNamespace

        from tracekit.traces.manifest import CompileFacts

        if rank:
            return None
        graphs = [SimpleNamespace(bucket_count=2, buckets=[])]
        return CompileFacts(rank=0, enabled=True, optimize_ddp="ddp_optimizer",
                            ddp_optimizer=SimpleNamespace(graphs=graphs))


def test_manifest_check_mixed_column_typed_as_pandas_rows() -> None:
    """``expected`` holds an int and a None: float64 as ``pd.DataFrame(rows)`` makes it (3 -> 3.0 in JSON)."""
    gb = pd.DataFrame({"rank": [0, 0, 1], "bwd_subgraphs": [2, 3, 1]})
    tl = {"rank": np.array([0]), "step": np.array([1]), "bucket": np.array([0]), "bytes": np.array([4_000_000])}
    got = manifest_check(tl, gb, _Manifest(), [0, 1])
    rows = [{"rank": 0, "check": "backward_subgraphs_per_step", "expected": 2, "observed": 2},
            {"rank": 0, "check": "allreduce_bytes", "expected": None, "observed": "1 buckets [4.00] MB"},
            {"rank": 1, "check": "allreduce_bytes", "expected": None, "observed": "0 buckets [] MB"}]
    want = pd.DataFrame(rows)
    frame = C.to_frame(got)
    pd.testing.assert_frame_equal(frame[list(want)], want)
    assert frame["expected"].dtype == np.float64 and frame["observed"].dtype == object
