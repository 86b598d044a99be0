"""The numpy primitives of tracekit.analyses.crossrank against the pandas operations they replace (the
module computed with pandas first; its tables must not change)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tracekit.traces import cols as C

from tracekit.analyses import crossrank as cr


@pytest.mark.parametrize("seed", range(5))
def test_largest_first_is_sort_values_descending(seed: int) -> None:
    rng = np.random.default_rng(seed)
    v = rng.integers(0, 6, 40).astype(float)  # many ties: their order is pandas' (quicksort) one
    v[rng.random(40) < 0.2] = np.nan
    want = pd.DataFrame({"v": v}).sort_values("v", ascending=False).index.to_numpy()
    assert cr._largest_first(v).tolist() == want.tolist()


def test_value_counts_order_is_pandas() -> None:
    vals = np.array(["b", "a", "c", "a", "b", "d"], dtype=object)
    want = list(pd.Series(vals).value_counts().items())
    assert cr._value_counts(vals) == want


def test_grouped_median_is_median_per_group() -> None:
    rng = np.random.default_rng(0)
    codes, vals = rng.integers(0, 5, 200), rng.normal(size=200).round(2)
    vals[::17] = np.nan
    want = pd.Series(vals).groupby(codes).median().reindex(range(6)).to_numpy()  # NaN for a group without values
    assert np.array_equal(C.group_median(vals, codes, 6), want, equal_nan=True)


def test_runs_reductions_are_groupby_ones() -> None:
    rng = np.random.default_rng(1)
    key = rng.integers(0, 7, 300)
    df = pd.DataFrame({"k": key, "r": rng.integers(0, 4, 300), "x": rng.integers(0, 3, 300).astype(float),
                       "s": rng.choice(np.array(["a", "b", None], dtype=object), 300)})
    df.loc[df.index % 11 == 0, "x"] = np.nan
    codes = np.unique(key, return_inverse=True)[1]
    runs, g = cr._Runs(codes, 7), df.groupby("k")
    assert np.array_equal(runs.reduce(np.fmax, df["x"].to_numpy()), g["x"].max().to_numpy(), equal_nan=True)
    assert np.array_equal(runs.nunique(df["r"].to_numpy()), g["r"].nunique().to_numpy())
    first = runs.first(df["s"].to_numpy(dtype=object))
    assert [None if v is None else v for v in first] == [None if v != v else v for v in g["s"].first()]
    assert np.array_equal(runs.several(df["s"].to_numpy(dtype=object), first), (g["s"].nunique() > 1).to_numpy())
