"""The what-if text report on many ranks: the per-rank table is cut as the analysis report's tables are."""

from __future__ import annotations

import pandas as pd

from tracekit.report.whatif_render import shown_rank_rows


def _ranks(n: int) -> pd.DataFrame:
    # rank r's predicted step: 1000 + (r * 37) % n µs, so the slowest ranks are scattered
    return pd.DataFrame({"rank": range(n), "predicted_step_us": [1000.0 + (r * 37) % n for r in range(n)]})


def test_up_to_32_ranks_every_row():
    df = _ranks(32)
    rows, note = shown_rank_rows(df)
    assert rows.equals(df) and note is None


def test_above_32_ranks_the_first_16_and_the_16_slowest():
    n = 100
    rows, note = shown_rank_rows(_ranks(n))
    slowest = sorted(range(n), key=lambda r: -((r * 37) % n))[:16]
    assert set(rows["rank"]) == set(range(16)) | set(slowest)
    assert list(rows["rank"]) == sorted(rows["rank"])  # in rank order, as the result holds them
    assert note == (f"rows of {len(set(range(16)) | set(slowest))} of {n} ranks shown (the first 16 and the 16 "
                    "with the longest predicted step); every rank: --format json / csv")


def test_ranks_without_a_prediction_come_last():
    df = _ranks(40)
    df.loc[df["rank"] >= 20, "predicted_step_us"] = float("nan")
    rows, _ = shown_rank_rows(df)
    assert set(rows["rank"]) == set(range(20))  # the first 16, then the slowest of those with a prediction
