"""The data behind each figure of the HTML report (tracekit.report.chart_data / collect), on hand-built traces."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.explain_builders import manifest_for, write_run
from tests.tracebuilder import TraceBuilder
from tracekit.runner.pipeline import load_and_analyze
from tracekit.errors import ConfigError
from tracekit.report import chart_data, collect

SAMPLES = Path(__file__).resolve().parents[2] / "sample_traces"


def _steps(rows: list[tuple[int, int, float, int]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["rank", "step", "step_us", "kernels"])


def test_pick_step_median_of_slowest_rank() -> None:
    # slowest rank per step: step 1 -> 120, step 2 -> 300, step 3 -> 200: the median is step 3
    s = _steps([(0, 1, 100, 5), (1, 1, 120, 5), (0, 2, 300, 5), (1, 2, 250, 5), (0, 3, 200, 5), (1, 3, 150, 5)])
    assert chart_data.pick_step(s) == 3
    # a step with no GPU work on one rank is not shown while others have work everywhere
    s.loc[(s["rank"] == 1) & (s["step"] == 3), "kernels"] = 0
    assert chart_data.pick_step(s) in (1, 2) and chart_data.pick_step(s) == 1  # lower middle of [120, 300]
    # equal durations: the later step
    assert chart_data.pick_step(_steps([(0, 1, 50, 1), (0, 2, 50, 1)])) == 2
    assert chart_data.pick_step(_steps([])) is None


def test_gaps_are_the_uncovered_parts() -> None:
    gs, ge = chart_data.gaps(np.array([10, 15, 40]), np.array([20, 30, 50]), 0, 60)
    assert list(zip(gs, ge)) == [(0, 10), (30, 40), (50, 60)]
    gs, ge = chart_data.gaps(np.array([0]), np.array([100]), 10, 20)
    assert gs.size == 0


def _one_step_rank(tmp_path: Path) -> Path:
    """One rank, one step [0, 1000) µs: two gemms, a memcpy, an allreduce, a late kernel."""
    for r in (0, 1):
        tb = TraceBuilder(rank=r, world_size=2)
        tb.step(1, 0, 1000)
        tb.kernel("gemm_small", 10, 20, launch_at_us=5)          # [10, 30)
        tb.kernel("gemm_big", 25, 25, launch_at_us=6)            # [25, 50): merges with the first
        tb.memcpy(60, 10, launch_at_us=7)                        # [60, 70)
        tb.nccl_allreduce(40, 40, launch_at_us=8, nelems=1000)   # [40, 80)
        tb.kernel("late", 100, 10, launch_at_us=9)               # [100, 110): idle [80, 100) before it
        tb.write(tmp_path / f"rank{r}.trace.json")
    return tmp_path


def test_class_lanes_by_hand(tmp_path: Path) -> None:
    traces, res = load_and_analyze([str(_one_step_rank(tmp_path))])
    tl = collect.timeline(traces, res)
    assert tl is not None and tl.step == 1 and [r.rank for r in tl.ranks] == [0, 1]
    lanes = tl.ranks[0].lanes
    # origin = the ProfilerStep start, so times are the builder's µs
    assert [(s.start_us, s.end_us, s.count, s.name) for s in lanes["compute"]] == [
        (10.0, 50.0, 2, "gemm_big"), (100.0, 110.0, 1, "late")]
    assert [(s.start_us, s.end_us) for s in lanes["comm"]] == [(40.0, 80.0)]
    assert [(s.start_us, s.end_us) for s in lanes["memory"]] == [(60.0, 70.0)]
    assert [(s.start_us, s.end_us) for s in lanes["idle"]] == [(80.0, 100.0)]
    # the idle lane sums to the per-step table's idle_us
    row = res.steps[(res.steps["rank"] == 0) & (res.steps["step"] == 1)].iloc[0]
    assert sum(s.dur_us for s in lanes["idle"]) == pytest.approx(row["idle_us"]) == 20.0
    assert sum(s.dur_us for s in lanes["compute"]) == pytest.approx(row["compute_us"]) == 50.0


def test_bucket_spans_exposed_parts_by_hand() -> None:
    tl = pd.DataFrame({"bucket": [0], "bytes": [4e6], "ready_gpu_ns": [90_000], "ready_cpu_ns": [50_000],
                       "ready_device_ns": [70_000], "start_ns": [100_000], "end_ns": [200_000]})
    compute = (np.array([80_000, 120_000]), np.array([110_000, 150_000]))  # covers [100,110) and [120,150)
    (b,) = chart_data.bucket_spans(tl, compute, origin_ns=0)
    assert (b.ready_us, b.start_us, b.end_us) == (90.0, 100.0, 200.0)
    assert b.exposed == ((110.0, 120.0), (150.0, 200.0))
    assert b.exposed_us == pytest.approx(10 + 50)
    # unknown GPU readiness falls back to the CPU-side ready marker on the device's clock (never the host's);
    # never later than the start
    assert chart_data.bucket_spans(tl.assign(ready_gpu_ns=-1), compute, 0)[0].ready_us == 70.0
    tl2 = tl.assign(ready_gpu_ns=-1, ready_device_ns=150_000)
    assert chart_data.bucket_spans(tl2, compute, 0)[0].ready_us == 100.0


def test_bucket_spans_match_the_collective_table(tmp_path: Path) -> None:
    traces, res = load_and_analyze([str(write_run(tmp_path, "eager", straggle_us=40.0, straggler=1))])
    tl = collect.timeline(traces, res)
    btl = res.bucket_timeline
    for lanes in tl.ranks:
        mine = btl[(btl["rank"] == lanes.rank) & (btl["step"] == tl.step)].sort_values("bucket")
        assert [b.bucket for b in lanes.buckets] == list(mine["bucket"]) == [0, 1, 2, 3]
        for b, (_, row) in zip(lanes.buckets, mine.iterrows()):
            assert b.exposed_us == pytest.approx(row["exposed_us"])
            assert b.end_us - b.start_us == pytest.approx(row["dur_us"])
            assert b.ready_us <= b.start_us


def test_compiled_marks_break_and_splits(tmp_path: Path) -> None:
    run = write_run(tmp_path, "break", manifest=manifest_for("break", breaks=1))
    traces, res = load_and_analyze([str(run)])
    lanes = collect.timeline(traces, res).ranks[0]
    fwd = [b for b in lanes.boundaries if b.pass_ == "forward"]
    # explain_builders: forward subgraphs of 40 µs every 60 µs, 300 µs of eager code before the second
    assert [b.kind for b in fwd] == ["graph_break", "ddp_split", "ddp_split"]
    assert [round(b.end_us - b.start_us, 3) for b in fwd] == [20 + 300, 20, 20]
    assert len(lanes.subgraphs) == 4 + 4 and len(lanes.regions) == 2
    bwd = [b.kind for b in lanes.boundaries if b.pass_ == "backward"]
    assert bwd == ["ddp_split", "ddp_split", "graph_break"]  # the forward's kinds, reversed


def test_breakdown_bars_parts_sum_to_span() -> None:
    steps = pd.DataFrame({"rank": [0, 0], "step": [1, 2], "kernels": [3, 3], "compute_us": [100.0, 120.0],
                          "comm_us": [50.0, 50.0], "overlap_us": [30.0, 30.0], "exposed_comm_us": [20.0, 20.0],
                          "memory_us": [25.0, 25.0], "busy_us": [140.0, 160.0], "idle_us": [10.0, 10.0],
                          "span_us": [150.0, 170.0]})
    (row,) = chart_data.breakdown_bars(steps).to_dict("records")
    assert row["compute_only_us"] == 110 - 30
    assert row["memory_only_us"] == 150 - 110 - 20
    assert sum(row[p] for p in chart_data.BREAKDOWN_PARTS) == pytest.approx(row["span_us"]) == 160.0


def test_breakdown_bars_on_a_real_sample() -> None:
    _, res = load_and_analyze([str(SAMPLES / "fixtures/inductor_ddp_optimizer")])
    d = chart_data.breakdown_bars(res.steps)
    assert list(d["rank"]) == [0, 1]
    np.testing.assert_allclose(d[list(chart_data.BREAKDOWN_PARTS)].sum(axis=1), d["span_us"], rtol=1e-9)
    assert (d[list(chart_data.BREAKDOWN_PARTS)] >= 0).all().all()


def _tl() -> chart_data.Timeline:
    r = chart_data.RankLanes(rank=1)
    r.lanes = {"compute": [chart_data.Segment(0, 50)], "comm": [chart_data.Segment(60, 70), chart_data.Segment(90, 95)],
               "memory": [], "idle": []}
    r.buckets = [chart_data.BucketSpan(0, 1e6, 10, 20, 30, (), 0.0), chart_data.BucketSpan(1, 1e6, 40, 45, 80, (), 0.0)]
    r.boundaries = [chart_data.Boundary(5, 9, "ddp_split", "forward", 0), chart_data.Boundary(12, 18, "graph_break",
                                                                                          "forward", 1)]
    return chart_data.Timeline(step=3, origin_ns=0, ranks=[chart_data.RankLanes(rank=0), r])


@pytest.mark.parametrize(("code", "lane", "span"), [
    ("exposed_last_bucket", "buckets", (40, 80)),
    ("exposed_first_bucket", "buckets", (10, 30)),
    ("allreduce_after_backward", "buckets", (10, 80)),
    ("rank_waiting", "comm", (60, 95)),
    ("graph_break", "compiled", (12, 18)),
    ("compile_skipped", "compute", (0, 95)),
])
def test_finding_targets(code: str, lane: str, span: tuple[float, float]) -> None:
    t = chart_data.finding_target({"code": code, "rank": 1, "evidence": {}}, _tl())
    assert t == chart_data.Target(rank=1, lane=lane, x0_us=span[0], x1_us=span[1])


def test_finding_on_all_ranks_points_at_the_worst() -> None:
    f = {"code": "rank_waiting", "rank": None, "evidence": {"worst_rank": 1, "ranks": [0, 1]}}
    assert chart_data.finding_target(f, _tl()).rank == 1
    # nothing of it in the shown step on that rank: no link
    assert chart_data.finding_target({"code": "graph_break", "rank": 0, "evidence": {}}, _tl()) is None


def test_unknown_step_is_a_config_error(tmp_path: Path) -> None:
    traces, res = load_and_analyze([str(_one_step_rank(tmp_path))])
    with pytest.raises(ConfigError, match="--step 7: no such profiled step .*1"):
        collect.timeline(traces, res, 7)


def test_coarsen_merges_the_closest_bars() -> None:
    segs = [chart_data.Segment(0, 1, "a", 1), chart_data.Segment(2, 3, "b", 2), chart_data.Segment(3.5, 4, "c", 1),
            chart_data.Segment(10, 11, "d", 1)]
    # gaps 1, 0.5, 6: three bars -> close the 0.5 gap; two bars -> close 0.5 and 1
    assert chart_data.coarsen(segs, 3) == [segs[0], chart_data.Segment(2, 4, "b", 3), segs[3]]
    assert chart_data.coarsen(segs, 2) == [chart_data.Segment(0, 4, "a", 4), segs[3]]
    assert chart_data.coarsen(segs, 4) == segs
    many = [chart_data.Segment(float(i), i + 0.5, "k", 1) for i in range(10_000)]
    out = chart_data.coarsen(many, 2000)
    assert len(out) <= 2000 and sum(s.count for s in out) == 10_000
    assert (out[0].start_us, out[-1].end_us) == (0.0, 9999.5)
    # idle: the longest gaps stay, in time order
    assert chart_data.longest(segs, 2) == [segs[0], segs[1]]  # equal lengths: the earlier ones
    assert chart_data.longest([chart_data.Segment(0, 5), chart_data.Segment(6, 7), chart_data.Segment(8, 12)], 2) == [
        chart_data.Segment(0, 5), chart_data.Segment(8, 12)]
