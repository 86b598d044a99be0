"""The 4-rank sample (tracekit profile on 4 × H200): cross-rank analysis beyond two ranks."""

from __future__ import annotations

from pathlib import Path

import pytest

import tracekit
from tracekit.runner.pipeline import analyze_paths

RUN = Path(__file__).resolve().parents[2] / "sample_traces" / "fixtures/h200x4_compare"


@pytest.fixture(scope="module")
def res():  # noqa: ANN201
    return tracekit.analyze(tracekit.load(RUN / "inductor"))


def test_all_ranks_loaded_and_matched(res) -> None:  # noqa: ANN001
    assert res.meta["world_size"] == 4 and res.meta["ranks"] == [0, 1, 2, 3]
    inst = res.instances
    inwin = res.collectives[~res.collectives["pre_window"].astype(bool)]
    assert len(inst) == len(inwin) // 4 and (inst["ranks"] == 4).all() and inst["consistent"].all()
    assert inst["end_spread_us"].max() < 100


def test_busbw_factor_four_ranks(res) -> None:  # noqa: ANN001
    c = res.collectives.dropna(subset=["busbw_incl_wait_gbps"])
    assert ((c["busbw_incl_wait_gbps"] / c["algbw_incl_wait_gbps"]).round(9) == round(2 * (4 - 1) / 4, 9)).all()


def test_wait_is_time_to_latest_arrival(res) -> None:  # noqa: ANN001
    w = res.waits
    # per instance: the straggler waits 0, everyone else waits latest start - own start >= 0
    assert (w.loc[w["is_straggler"], "wait_us"] == 0).all() and (w["wait_us"] >= 0).all()
    per_inst = w.groupby(["pg_name", "step", "step_seq"])["wait_us"].max()
    skew = res.instances.set_index(["pg_name", "step", "step_seq"])["skew_us"]
    assert (per_inst.sort_index() - skew.sort_index()).abs().max() < 1e-9
    assert res.ranks.set_index("rank")["last_count"].sum() == len(res.instances)


def test_compare_verdicts_four_ranks() -> None:
    nos = set(analyze_paths([str(RUN / "inductor-no_optimization")]).findings["code"])
    ind = set(analyze_paths([str(RUN / "inductor")]).findings["code"])
    assert "allreduce_after_backward" in nos and "allreduce_after_backward" not in ind
