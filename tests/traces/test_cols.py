"""tracekit.traces.cols against the pandas operations it stands for (random tables, fixed seeds)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tracekit.traces import cols as C


def _table(seed: int, n: int = 60) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    f = rng.normal(size=n).round(2)
    f[rng.random(n) < 0.2] = np.nan
    s = C.obj([None if x < 0.15 else f"k{int(x * 4)}" for x in rng.random(n)])
    return {"i": rng.integers(0, 4, n), "j": rng.integers(0, 3, n), "s": s, "f": f,
            "b": rng.random(n) < 0.5, "v": rng.integers(-5, 5, n)}


def _same(got: np.ndarray, want: pd.Series | np.ndarray) -> None:
    want = np.asarray(want)
    assert got.dtype.kind == want.dtype.kind or {got.dtype.kind, want.dtype.kind} <= {"O"}, (got.dtype, want.dtype)
    if got.dtype.kind == "f":
        np.testing.assert_allclose(got, want.astype(float), rtol=1e-12, equal_nan=True)
    else:
        assert got.tolist() == want.tolist()


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("by", [["i"], ["s"], ["i", "s"], ["s", "j"], ["f"]])
def test_groups_match_pandas(seed: int, by: list[str]) -> None:
    t = _table(seed)
    df = pd.DataFrame({k: (v if v.dtype != object else pd.array(v, dtype=object)) for k, v in t.items()})
    g, pg = C.Groups(t, by), df.groupby(by)
    keys = pg.size().reset_index()
    for k in by:
        _same(g.keys[k], keys[k].astype(object) if k == "s" else keys[k])
    _same(g.size(), pg.size().to_numpy())
    for col in ("f", "v", "b"):
        _same(g.sum(t[col]), pg[col].sum().to_numpy())
        _same(g.mean(t[col]), pg[col].mean().to_numpy())
        _same(g.count(t[col]), pg[col].count().to_numpy())
        _same(g.nunique(t[col]), pg[col].nunique().to_numpy())
        _same(g.first(t[col]), pg[col].first().to_numpy())
        _same(g.last(t[col]), pg[col].last().to_numpy())
    for col in ("f", "v"):
        _same(g.max(t[col]), pg[col].max().to_numpy())
        _same(g.min(t[col]), pg[col].min().to_numpy())
    assert [r.tolist() for r in g.rows()] == [list(ix) for ix in pg.indices.values()]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("by,asc", [(["i"], True), (["f"], False), (["s", "i"], [True, False]), (["f", "v"], True)])
def test_sort_matches_pandas(seed: int, by: list[str], asc) -> None:  # noqa: ANN001
    t = _table(seed)
    df = pd.DataFrame(t)
    want = df.sort_values(by, ascending=asc, kind="stable", na_position="last").index.to_numpy()
    assert C.order(t, by, asc).tolist() == want.tolist()


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("how", ["left", "inner"])
def test_merge_matches_pandas(seed: int, how: str) -> None:
    t = _table(seed, 40)
    rng = np.random.default_rng(100 + seed)
    right = {"i": rng.integers(0, 6, 9), "j": rng.integers(0, 3, 9), "x": rng.integers(0, 9, 9),
             "y": rng.normal(size=9), "flag": rng.random(9) < 0.5, "name": C.obj([f"n{k}" for k in range(9)])}
    got = C.merge(t, right, ["i", "j"], how=how)
    want = pd.DataFrame(t).merge(pd.DataFrame(right), on=["i", "j"], how=how)
    assert list(got) == list(want.columns)
    for k in got:
        w = want[k]
        _same(got[k], w.astype(object).where(w.notna(), None) if got[k].dtype == object else w)


def test_concat_upcasts_and_skips_empty() -> None:
    a = {"x": np.array([1, 2]), "s": C.obj(["a", "b"])}
    b = {"x": np.array([0.5]), "s": C.obj([None])}
    out = C.concat([a, C.empty(["x", "s"]), b])
    assert out["x"].tolist() == [1.0, 2.0, 0.5] and out["x"].dtype == np.float64
    assert out["s"].tolist() == ["a", "b", None]
    assert C.concat([], ["x"])["x"].shape == (0,)


def test_records_and_frame_round_trip() -> None:
    t = {"r": np.array([0, 1]), "f": np.array([1.5, np.nan]), "s": C.obj(["a", None]), "b": np.array([True, False])}
    assert C.records(t) == [{"r": 0, "f": 1.5, "s": "a", "b": True}, {"r": 1, "f": None, "s": None, "b": False}]
    df = C.to_frame(t)
    assert C.records(C.as_cols(df)) == C.records(t)
    assert C.nrows(df) == 2 == C.nrows(t) and C.nrows({}) == 0


def test_column_infers_like_a_frame() -> None:
    assert C.column([1, 2]).dtype == np.int64
    assert C.column([1, None]).dtype == np.float64
    assert C.column([True, False]).dtype == bool
    assert C.column(["a", None]).dtype == object


def test_group_sum_of_no_present_value_keeps_the_dtype() -> None:
    g = C.Groups({"k": np.array([1, 2])}, ["k"])
    assert g.sum(np.array([np.nan, np.nan])).tolist() == [0.0, 0.0] and g.sum(np.array([np.nan, np.nan])).dtype == float
    assert np.isnan(g.mean(np.array([np.nan, 1.0]))[0]) and g.max(np.array([np.nan, 1.0])).tolist()[1] == 1.0


def test_frame_of_ints_with_missing_is_nullable_int() -> None:
    t = {"rank": C.obj([3, None, 1]), "none": C.obj([None, None]), "s": C.obj(["a", None, "b"])}
    t["none"] = C.obj([None, None, None])
    df = C.to_frame(t, nullable_ints=("rank", "none"))
    assert str(df["rank"].dtype) == "Int64" and df["rank"].isna().tolist() == [False, True, False]
    assert str(df["none"].dtype) == "Int64" and str(df["s"].dtype) != "Int64"
    assert str(C.to_frame(t)["rank"].dtype) == "object"
    assert str(C.to_frame(C.empty(["rank"]), nullable_ints=("rank",))["rank"].dtype) == "Int64"
