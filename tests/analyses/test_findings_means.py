"""findings.group_means (the per-rank means of the findings and of profiler_distortion) against pandas' groupby."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tracekit.analyses.findings import group_means


@pytest.mark.parametrize("keys", ["ranks", "negative", "float_missing", "sparse"])
def test_group_means_is_pandas_groupby_mean(keys: str) -> None:
    rng = np.random.default_rng(7)
    for _ in range(30):
        n = int(rng.integers(1, 400))
        key = {"ranks": lambda: rng.integers(0, 20, n), "negative": lambda: rng.integers(-5, 20, n),
               "float_missing": lambda: np.where(rng.random(n) < 0.2, np.nan, rng.integers(0, 20, n).astype(float)),
               "sparse": lambda: rng.integers(0, 10**9, n)}[keys]()
        v = np.where(rng.random(n) < 0.3, np.nan, rng.random(n))
        t = {"k": key, "v": v, "w": rng.integers(0, 100, n)}
        got_keys, (mv, mw) = group_means(t, "k", ["v", "w"])
        want = pd.DataFrame(t).groupby("k")[["v", "w"]].mean()
        assert got_keys.dtype == want.index.dtype and np.array_equal(got_keys, want.index.to_numpy())
        np.testing.assert_allclose(mv, want["v"].to_numpy(), rtol=1e-12, equal_nan=True)
        np.testing.assert_allclose(mw, want["w"].to_numpy(), rtol=1e-12)


def test_a_rank_without_present_values_is_nan() -> None:
    keys, (m,) = group_means({"rank": np.array([0, 0, 2]), "x": np.array([np.nan, np.nan, 1.0])}, "rank", ["x"])
    assert keys.tolist() == [0, 2] and np.isnan(m[0]) and m[1] == 1.0
