"""The collective and bucket summaries (text views) without pandas, checked against the pandas operations they
stand for: grouped means to the bit (Kahan-compensated, as pandas' group sums), groups with a missing key kept
and sorted last."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tracekit.analyses.collectives import collective_summary, process_group_label
from tracekit.traces import cols
from tracekit.traces.cols import group_mean, kahan_sums


@pytest.mark.parametrize("vector_max", [512, 20])  # long groups summed in Python, or every group by position
def test_group_means_and_sums_are_pandas(vector_max: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cols, "_KAHAN_VECTOR_MAX", vector_max)
    rng = np.random.default_rng(1)
    for trial in range(60):
        n, k = int(rng.integers(1, 2000)), int(rng.integers(1, 40))
        g = rng.integers(0, k, n)
        v = rng.normal(size=n) * 10.0 ** rng.integers(-3, 12, n)
        v[rng.random(n) < 0.1] = np.nan
        df = pd.DataFrame({"g": g, "v": v})
        keys = df.groupby("g")["v"].mean().index.to_numpy()
        assert np.array_equal(group_mean(v, g, k)[keys], df.groupby("g")["v"].mean().to_numpy(), equal_nan=True)
        assert np.array_equal(kahan_sums(v, g, k)[0][keys], df.groupby("g")["v"].sum().to_numpy())


def test_process_group_label() -> None:
    c = {"pg_name": np.array(["0", None, "3", "3", np.nan], dtype=object),
         "pg_desc": np.array(["default_pg", "x", None, "mesh_tp", None], dtype=object)}
    assert process_group_label(c).tolist() == ["0:default_pg", "?:x", "3", "3:mesh_tp", "?"]


def test_collective_summary_keeps_a_missing_collective_name_last() -> None:
    c = {"rank": np.array([1, 0, 0, 0]), "pg_name": np.array(["0"] * 4, dtype=object),
         "pg_desc": np.array([None] * 4, dtype=object), "coll_name": np.array(["b", None, "b", "a"], dtype=object),
         "phase": np.array(["other"] * 4, dtype=object), "pre_window": np.zeros(4, dtype=bool),
         "bytes": np.array([1e6, 2e6, 3e6, np.nan]), "dur_us": np.array([1.0, 2.0, 3.0, 4.0]),
         "exposed_us": np.array([0.5, np.nan, 1.0, 1.0]), "dur_once_us": np.array([1.0, 2.0, 3.0, 4.0]),
         "exposed_once_us": np.array([0.5, np.nan, 1.0, 1.0]), "busbw_incl_wait_gbps": np.array([1.0, 2.0, 3.0, 4.0]),
         "step": np.zeros(4, dtype=np.int64), "step_seq": np.arange(4)}
    s = collective_summary(c)
    assert s["rank"].tolist() == [0, 0, 0, 1] and s["coll_name"].tolist() == ["a", "b", None, "b"]
    assert s["count"].dtype == np.int64 and np.isnan(s["mb_total"][0]) and s["mb_total"][1] == 3.0
    assert list(s) == ["rank", "pg", "coll_name", "phase", "count", "mb_total", "dur_total_us", "comm_total_us",
                       "dur_mean_us", "exposed_total_us", "busbw_mean_gbps", "busbw_incl_wait_mean_gbps"]
    assert collective_summary({}) == {}
