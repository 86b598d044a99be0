"""tracekit.compare.core: the one definition of a change that tracekit diff, profile --compare and bench diff share."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from tracekit.compare.core import change_pct, long_form, speedup_pct


def test_change_pct_against_the_baseline_magnitude() -> None:
    assert change_pct(200.0, 150.0) == pytest.approx(-25.0)  # 100 · (150 − 200) / 200
    assert change_pct(-4.0, -2.0) == pytest.approx(50.0)  # |a|: a smaller negative is an increase
    assert math.isnan(change_pct(0.0, 3.0)) and math.isnan(change_pct(float("nan"), 3.0))
    s = change_pct(pd.Series([10.0, 0.0]), pd.Series([12.0, 1.0]))
    assert s.iloc[0] == pytest.approx(20.0) and math.isnan(s.iloc[1])


def test_speedup_is_the_change_of_time_with_the_sign_flipped() -> None:
    assert speedup_pct(0.12, 0.096) == pytest.approx(20.0)  # B 20 % less time per iteration: +20
    assert speedup_pct(0.0, 1.0) is None


def test_long_form_rows() -> None:
    df = long_form([("step_ms", 10, 12), ("breaks", None, 2), ("n", "x", 1)])
    assert list(df.columns) == ["metric", "a", "b", "delta", "delta_pct"]
    assert df.loc[0, ["delta", "delta_pct"]].tolist() == pytest.approx([2.0, 20.0])
    assert df[["a", "delta", "delta_pct"]].iloc[1:].isna().all().all()  # missing or non-numeric a
