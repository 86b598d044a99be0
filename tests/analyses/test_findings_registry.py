"""The findings framework (tracekit.analyses.findings): registration, the JSON form of a record, the
all-rank collapse, the qualifier and the one ranking, on hand-built records."""

from __future__ import annotations

import pytest

from tracekit.analyses.crossrank import RankWaiting
from tracekit.analyses.distortion import ProfilerDistortion
from tracekit.analyses.findings import FindingContext, code_of, collapse, kinds, ranked
from tracekit.analyses.gpu_idle import GpuIdle
from tracekit.analyses.graphbreaks import CompileSkipped
from tracekit.analyses.registry import RegistryError


def _idle(rank: int, idle_us: float, step_us: float = 1000.0) -> GpuIdle:
    return GpuIdle(rank=rank, message=f"rank {rank} idle", cost_us=idle_us, step_us=step_us,
                   gpu_idle_pct=100.0 * idle_us / step_us, launch_idle_pct=10.0, gpu_idle_us_per_step=idle_us,
                   kernels_per_step=5.0, cpu_bound=False, makes_wait=None)


def _waiting(rank: int) -> RankWaiting:
    return RankWaiting(rank=rank, message="waits", cost_us=300.0, step_us=1000.0, wait_share_pct=50.0,
                       wait_us_per_step=300.0, straggler=1 - rank, comm_us=600.0, partial_wait_share=0.0,
                       late_cause=None)


def test_every_finding_is_registered_once_in_run_order() -> None:
    ks = kinds()
    codes = [code_of(k) for k in ks]
    assert len(codes) == len(set(codes)) == 11
    assert [k.ORDER for k in ks] == sorted(k.ORDER for k in ks)
    assert codes[-1] == "profiler_distortion" and ks[-1].QUALIFIER


def test_json_form_cost_step_own_fields_then_what_the_ranking_added() -> None:
    f = _idle(0, 400.04)
    assert f.severity == "high"  # 400 of 1000 µs ≥ 10 %
    row = f.row()
    assert list(row) == ["code", "severity", "rank", "message", "evidence"] and row["code"] == "gpu_idle"
    assert list(row["evidence"]) == ["cost_us", "step_us", "gpu_idle_pct", "launch_idle_pct", "gpu_idle_us_per_step",
                                     "kernels_per_step", "cpu_bound", "makes_wait"]
    assert row["evidence"]["cost_us"] == 400.0  # rounded to 0.1 µs


def test_unset_optional_evidence_is_left_out_and_none_kept() -> None:
    ev = _waiting(0).evidence()
    assert "straggler_gpu_idle_pct" not in ev and "last_loaded_arrival" not in ev
    assert ev["late_cause"] is None and list(ev)[-1] == "late_cause"


def test_collapse_fires_on_every_rank_once_except_per_rank_findings() -> None:
    out = collapse([_idle(0, 200.0), _idle(1, 400.0), _waiting(0), _waiting(1)], ranks=[0, 1])
    assert [(f.code, f.rank) for f in out] == [("gpu_idle", None), ("rank_waiting", 0), ("rank_waiting", 1)]
    ev = out[0].evidence()
    assert ev["cost_us"] == 400.0 and list(ev)[-2:] == ["ranks", "worst_rank"]
    assert ev["ranks"] == [0, 1] and ev["worst_rank"] == 1
    assert [f.rank for f in collapse([_idle(0, 200.0)], ranks=[0, 1])] == [0]  # not every rank


def test_ranking_qualifier_first_then_severity_then_cost_unknown_cost_first() -> None:
    skipped = CompileSkipped(rank=0, message="eager", cost_us=None, step_us=1000.0, steps_skipped=3, steps=3,
                             cache_lookups_per_step=1.0, regions_per_step=1.0, compiled_subgraphs=0,
                             skipped_frames=None, dynamo_skips=None)
    low, mid, high = _idle(0, 10.0), _idle(1, 50.0), _idle(2, 500.0)
    dist = _distortion()
    assert (low.severity, mid.severity, high.severity) == ("low", "medium", "high")
    assert ranked([low, mid, high, skipped, dist]) == [dist, skipped, high, mid, low]


def _distortion() -> ProfilerDistortion:
    return ProfilerDistortion(rank=None, message="distorted", cost_us=350.0, step_us=1000.0, ratio=1.35,
                              unprofiled_step_us=1000.0, profiled_step_us=1350.0, source="run.json", threshold=1.15,
                              worst_gpu_idle_pct=None, worst_launch_idle_pct=None, kernels_per_step=None,
                              cpu_bound=None, may_invalidate=["gpu_idle"], bucket_events_disagree=None)


def test_qualifier_marks_only_timing_findings() -> None:
    dist = _distortion()
    idle = dist.qualify(_idle(0, 400.0))
    assert idle.message == "rank 0 idle [measured under a distorted window: the profiled step is 1.35× the unprofiled one]"
    assert list(idle.evidence())[-1] == "distorted_window" and idle.evidence()["distorted_window"] is True
    skipped = CompileSkipped(rank=0, message="eager", cost_us=None, step_us=1.0, steps_skipped=1, steps=1,
                             cache_lookups_per_step=1.0, regions_per_step=1.0, compiled_subgraphs=0,
                             skipped_frames=None, dynamo_skips=None)
    assert dist.qualify(skipped) is skipped  # not a window timing


def test_reading_a_finding_before_it_ran_fails() -> None:
    with pytest.raises(RegistryError, match="rank_waiting"):
        FindingContext(result=None, manifest=None).earlier("rank_waiting")
