"""The one step (tracekit.traces.steps): on the device's clock for GPU runs, the host range on CPU runs, the same
in every table and in the what-if replay; communication per step is a union of intervals.

Times are µs relative to the builder's ``t0_us``."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from tracekit.analyses import intervals as iv
from tracekit.analyses.collectives import collective_overlap_note
from tracekit.analyses.distortion import _trace_bucket_figures
from tracekit.analyses.options import AnalyzeOptions
from tracekit.runner.run import analyze
from tracekit.traces import steps as step_defs
from tracekit.traces.loader import load

try:
    from tests.tracebuilder import TraceBuilder
except ImportError:  # tests/ not a package
    from tracebuilder import TraceBuilder


def _run(tmp_path, *builders):  # noqa: ANN001, ANN202
    for tb in builders:
        tb.write(tmp_path / f"rank{tb.rank}.trace.json.gz")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return analyze(load(tmp_path), AnalyzeOptions())


def _gpu_bound(tb: TraceBuilder) -> TraceBuilder:
    """Three steps the host enqueues in 100 µs each while each step's kernel runs 500 µs back to back."""
    for k in range(3):
        tb.step(k + 1, 100 * k, 100 * (k + 1))
        tb.kernel(f"gemm{k}", 20 + 500 * k, 500, launch_at_us=100 * k + 10)  # [20, 520), [520, 1020), [1020, 1520)
    return tb


def test_step_windows_arithmetic() -> None:
    # host ranges [0, 100), [100, 200), [200, 300); step 1's work ends at 520, step 2's at 1020, step 3 launched nothing
    lo, hi = step_defs.step_windows(np.array([1, 2, 3]), np.array([0, 100, 200]), np.array([100, 200, 300]),
                                    np.array([1, 2, -1]), np.array([520, 1020, 2000]), None)
    assert lo.tolist() == [0, 520, 1020] and hi.tolist() == [520, 1020, 1020]  # step 3: empty behind step 2
    # a backlog (work launched before the window) ending at 50 pushes the first step's start
    lo, hi = step_defs.step_windows(np.array([1]), np.array([0]), np.array([100]), np.array([1]), np.array([80]), 50)
    assert (lo.tolist(), hi.tolist()) == ([50], [100])  # the host range ends last: the step ends with it


def test_window_pieces_cut_at_step_edges() -> None:
    s, e, seg, src = step_defs.window_pieces(np.array([5, 90, 300]), np.array([20, 130, 310]),
                                             np.array([0, 100]), np.array([100, 200]))
    assert list(zip(s.tolist(), e.tolist(), seg.tolist(), src.tolist())) == [
        (5, 20, 0, 0), (90, 100, 0, 1), (100, 130, 1, 1)]  # the interval at 300 is in no step


def test_gpu_bound_step_is_the_device_period(tmp_path) -> None:
    res = _run(tmp_path, _gpu_bound(TraceBuilder(rank=0, world_size=1)))
    s = res.steps.sort_values("step")
    assert s["step_us"].tolist() == [520 - 0, 1020 - 520, 1520 - 1020]
    assert s["host_step_us"].tolist() == [100, 100, 100]
    assert s["busy_us"].tolist() == [500, 500, 500]
    r = res.ranks.iloc[0]
    assert r["step_mean_us"] == pytest.approx((520 + 500 + 500) / 3) and r["host_step_mean_us"] == 100
    idle = res.tables["gpu_idle"].sort_values("step")
    assert idle["step_us"].tolist() == s["step_us"].tolist()
    assert idle["gpu_idle_us"].tolist() == [20, 0, 0]


def test_cpu_run_step_is_the_host_range(tmp_path) -> None:
    tb = TraceBuilder(rank=0, world_size=1)
    tb.step(1, 0, 300)
    tb.step(2, 300, 450)
    res = _run(tmp_path, tb)
    assert res.steps.sort_values("step")["step_us"].tolist() == [300, 150]
    assert res.steps["host_step_us"].tolist() == res.steps["step_us"].tolist()


def test_backlog_delays_the_first_step(tmp_path) -> None:
    tb = TraceBuilder(rank=0, world_size=1)
    tb.step(1, 0, 100)
    tb.kernel("queued", 0, 300, pre_window=True)      # launched before the window: the previous step's
    tb.kernel("mine", 300, 100, launch_at_us=50)       # step 1's own work, behind it
    res = _run(tmp_path, tb)
    assert res.steps["step_us"].tolist() == [400 - 300] and res.steps["busy_us"].tolist() == [100]


def test_whatif_window_is_analyze_step(tmp_path) -> None:
    from tracekit.replay.api import whatif

    _gpu_bound(TraceBuilder(rank=0, world_size=1)).write(tmp_path / "rank0.trace.json.gz")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = whatif(tmp_path)
        a = analyze(load(tmp_path), AnalyzeOptions())
    w = r.steps.sort_values("step")["window_step_us"].tolist()
    assert w == a.steps.sort_values("step")["step_us"].tolist() == [520, 500, 500]


def test_committed_gpu_bound_run_step_is_not_below_unprofiled() -> None:
    # sample_traces/fixtures/inductor_no_optimization: the host enqueued each step in ~5.0 ms while the device ran it in
    # ~14.5 ms; the unprofiled (device-synchronized) step is 14.7 ms
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = analyze(load("sample_traces/fixtures/inductor_no_optimization"), AnalyzeOptions())
    d = res.meta["profiler_distortion"]
    assert d["ratio"] >= 0.95 and not d["doubtful"]  # the host range gave 0.36x ("doubtful")
    r = res.ranks
    assert (r["host_step_mean_us"] < 6000).all() and (r["step_mean_us"] > 14000).all()
    s = res.steps
    assert (s["busy_us"] <= s["step_us"]).all() and (s["compute_us"] + s["comm_us"] - s["overlap_us"]
                                                     <= s["step_us"]).all()


# -- communication per step is a union (item: overlapping collectives) -------------------------------

def test_overlapping_bucket_allreduces_count_once() -> None:
    # one rank, one step, gloo: bucket 0 runs [100, 300) µs after the backward start, bucket 1 [150, 200)
    # (gloo's worker threads run them at once), bucket 2 [400, 450)
    buckets = {"rank": np.array([0, 0, 0]), "step": np.array([1, 1, 1]),
               "start_offset_us": np.array([100.0, 150.0, 400.0]), "dur_us": np.array([200.0, 50.0, 50.0])}
    figs = _trace_bucket_figures({}, buckets)[0]
    assert figs["comm"] == (300 - 100) + (450 - 400) and figs["sum"] == 200 + 50 + 50 and figs["buckets"] == 3


# -- host instants on the device's clock (the bucket timeline) -----------------------------------------

def test_to_device_clock_arithmetic() -> None:
    # launches at 10, 20, 50 whose operations start at 110, 130, 60: lags 100, 110, 10
    lags = step_defs.launch_lags(np.array([20, 10, 50, -1]), np.array([130, 110, 60, 5]))
    got = step_defs.to_device_clock(np.array([5, 10, 15, 40, 50, 70, -1]), lags)
    assert got.tolist() == [
        min(5 + 0, 110),      # no launch before: lag 0, before the device starts what is launched next
        10 + 100,             # at a launch: its own lag
        min(15 + 100, 130),   # after the launch at 10 (lag 100), before the one at 20 (starts 130)
        min(40 + 110, 60),    # the launch at 20 has lag 110, but what the host launched next started at 60
        50 + 10,
        70 + 10,              # after the last launch: no bound
        -1]




def test_bucket_timeline_is_on_the_device_clock(tmp_path) -> None:
    tb = TraceBuilder(rank=0, world_size=2)
    tb.step(1, 0, 100)
    tb.kernel("fwd", 20, 380, launch_at_us=10)                                 # launch 10 -> 20: lag 10
    tb.cpu_op("autograd::engine::evaluate_function: MmBackward0", 30, 20)     # host backward [30, 50)
    tb.kernel("bwd", 400, 300, launch_at_us=35)                                # launch 35 -> 400: lag 365
    tb.nccl_allreduce(700, 100, launch_at_us=60, nelems=1000)                  # launch call 61 -> 700: lag 639
    tb.nccl_allreduce(800, 100, launch_at_us=70, nelems=2000)                  # launch call 71 -> 800: lag 729
    tb.cpu_op("autograd::engine::evaluate_function: MmBackward0", 65, 15)     # the host backward spans [30, 80)
    res = _run(tmp_path, tb)
    assert res.steps["step_us"].tolist() == [900 - 0]                           # to the last allreduce's end
    tl = res.tables["bucket_timeline"].sort_values("bucket")
    assert tl["bucket"].tolist() == [0, 1]
    bwd = min(30 + 10, 400)        # backward start: after the fwd launch (lag 10), before the bwd kernel starts
    assert (tl["bwd_start_ns"] == 30_000).all() and (tl["bwd_start_device_ns"] == bwd * 1000).all()
    assert tl["ready_cpu_ns"].tolist() == [50_000, 50_000]                      # the backward op's end
    assert tl["ready_us"].tolist() == [min(50 + 365, 700) - bwd] * 2            # after the bwd launch (lag 365)
    # bucket 0's launch (60) follows the bwd kernel's (35, lag 365), before its own kernel (700); bucket 1's (70)
    # follows bucket 0's launch call (61, lag 639), before its own kernel (800)
    assert tl["launch_us"].tolist() == [min(60 + 365, 700) - bwd, min(70 + 639, 800) - bwd]
    assert tl["start_us"].tolist() == [700 - bwd, 800 - bwd] and tl["end_us"].tolist() == [800 - bwd, 900 - bwd]
    assert tl["queue_us"].tolist() == [700 - max(700, 425), 800 - max(700, 709)]
    assert tl["launch_delay_us"].tolist() == [60 - 50, 70 - 50]                 # host clock
    # every time lies inside the step's window [0, 900) on the device's clock; on the host's clock the kernels
    # started 650 µs after the backward in a 100 µs host step
    for c in ("ready_us", "launch_us", "start_us", "end_us"):
        assert (0 <= bwd + tl[c]).all() and (bwd + tl[c] <= 900).all(), c


def _bucket_times_outside_steps(run: str) -> list[tuple]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = analyze(load(run), AnalyzeOptions())
    tl, s = res.tables["bucket_timeline"], res.steps
    bad = []
    for (rank, step), rows in tl.groupby(["rank", "step"]):
        step_us = float(s[(s["rank"] == rank) & (s["step"] == step)]["step_us"].iloc[0])
        for c in ("ready_us", "launch_us", "start_us", "end_us"):
            v = rows[c].dropna()
            if len(v) and (v.max() - min(v.min(), 0.0) > step_us + 1e-3):
                bad.append((rank, step, c, float(v.max()), step_us))
    return bad


def test_committed_bucket_timeline_times_lie_inside_the_step() -> None:
    # the host-clock timeline put inductor_no_optimization's allreduces 35 ms after the backward start in a
    # 14.5 ms step
    assert _bucket_times_outside_steps("sample_traces/fixtures/inductor_no_optimization") == []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tl = analyze(load("sample_traces/fixtures/inductor_no_optimization"), AnalyzeOptions()).tables["bucket_timeline"]
    assert tl["end_us"].max() < 14_500


# -- incomplete launch records (a sampled trace) ----------------------------------------------------------

def test_sampled_trace_has_no_backlog(tmp_path) -> None:
    # one stream; the trace kept the launch of one kernel only ("mine", launched at 150 in step 2). Kernels
    # without a launch run at 30, 500 (before "mine") and 700 (after it): the one at 700 cannot have been
    # launched before the window (a stream runs its work in launch order), so launches are missing and the
    # kernel at 500 may as well be step 1's or 2's own work: it must not push step 1's start to 520
    tb = TraceBuilder(rank=0, world_size=1)
    tb.step(1, 0, 100)
    tb.step(2, 100, 200)
    tb.kernel("a", 30, 10, pre_window=True)
    tb.kernel("b", 500, 20, pre_window=True)
    tb.kernel("mine", 600, 50, launch_at_us=150)
    tb.kernel("c", 700, 10, pre_window=True)
    res = _run(tmp_path, tb)
    s = res.steps.sort_values("step")
    # step 1: its host range [0, 100) (no backlog); step 2: from 100 to the end of its launched kernel (650)
    assert s["step_us"].tolist() == [100 - 0, 650 - 100]
    assert res.ranks["launches_missing"].tolist() == [1] and res.ranks["pre_window_kernels"].tolist() == [3]
    assert any("launch calls are missing" in n for n in res.meta["notes"])


def test_missing_launches_are_found_once_per_rank(tmp_path, monkeypatch) -> None:
    # the step windows (no backlog) and table ranks (launches_missing) read one mask per rank
    # (RankTrace.launches_lost), not one scan of the rank's device work each
    calls = []
    real = step_defs.launched_in_window_later

    def counted(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(step_defs, "launched_in_window_later", counted)
    tb = TraceBuilder(rank=0, world_size=1)
    tb.step(1, 0, 100)
    tb.kernel("b", 500, 20, pre_window=True)
    tb.kernel("mine", 600, 50, launch_at_us=50)
    tb.kernel("c", 700, 10, pre_window=True)  # after "mine" on its stream: its launch is missing
    res = _run(tmp_path, tb)
    assert res.ranks["launches_missing"].tolist() == [1]
    assert res.steps["step_us"].tolist() == [650 - 0]  # no backlog: from the host range's start
    assert len(calls) == 1


def test_complete_launch_records_keep_the_backlog(tmp_path) -> None:
    # the same without the kernel at 700: the ones at 30 and 500 ran before the stream's first launched kernel,
    # so they were queued before the window; the first step starts when they are done (520)
    tb = TraceBuilder(rank=0, world_size=1)
    tb.step(1, 0, 100)
    tb.step(2, 100, 200)
    tb.kernel("a", 30, 10, pre_window=True)
    tb.kernel("b", 500, 20, pre_window=True)
    tb.kernel("mine", 600, 50, launch_at_us=150)
    res = _run(tmp_path, tb)
    assert res.steps.sort_values("step")["step_us"].tolist() == [0, 650 - 520]
    assert res.ranks["launches_missing"].tolist() == [0]
    assert not any("launch calls are missing" in n for n in res.meta["notes"])


def test_committed_sampled_trace_keeps_its_step() -> None:
    # tests/data/external/hta_trace_compare_sampled: 16 of 17 kernels have no recorded launch; taking the ones on
    # the launched kernel's stream for backlog put step 1009's start 157 ms into a 100 ms host range (mean step
    # 32.6 ms); without a backlog the two steps tile the host ranges' span to step 1009's launched kernel's end
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = analyze(load("tests/data/external/hta_trace_compare_sampled"), AnalyzeOptions())
    s = res.steps.sort_values("step")
    host = s["host_step_us"].to_numpy()
    # the windows run from step 1009's host start (0) to step 1010's host end (100298 + 122149 µs after it, with
    # a 45 µs gap between the host ranges): step 1009 to its kernel's end (157408), step 1010 the rest
    assert s["step_us"].tolist() == pytest.approx([157408.0, 100298 + 45 + 122149 - 157408.0], abs=1.0)
    assert res.ranks["step_mean_us"].iloc[0] == pytest.approx(111246.0, abs=0.5)
    assert s["step_us"].iloc[0] >= host[0]
    assert res.ranks["launches_missing"].iloc[0] == 4


# -- every collective of a rank counted once (the collectives table) ---------------------------------------

def test_first_started_parts_arithmetic() -> None:
    # [0, 100), [50, 80) inside it, [60, 150) past it, [200, 210) alone
    s, e = iv.first_started_parts(np.array([0, 50, 60, 200]), np.array([100, 80, 150, 210]))
    assert (e - s).tolist() == [100, 0, 150 - 100, 10] and int((e - s).sum()) == iv.length(*iv.union(
        np.array([0, 50, 60, 200]), np.array([100, 80, 150, 210])))


def test_overlapping_collectives_count_once(tmp_path) -> None:
    # two NCCL streams: an allgather [100, 300) on stream 17 and a reduce_scatter [200, 400) on stream 19 run
    # at once; a gemm [250, 280) hides part of both. Compute covers 30 µs of the union [100, 400)
    tb = TraceBuilder(rank=0, world_size=2)
    tb.step(1, 0, 500)
    tb.collective("allgather", 100, 200, launch_at_us=10, nelems=1000)
    tb.collective("reduce_scatter", 200, 200, launch_at_us=20, nelems=1000, stream=19)
    tb.kernel("gemm", 250, 30, launch_at_us=30)
    res = _run(tmp_path, tb)
    c = res.collectives.sort_values("start_ns")
    assert c["dur_us"].tolist() == [200, 200] and c["exposed_us"].tolist() == [200 - 30, 200 - 30]
    assert c["dur_once_us"].tolist() == [200, 400 - 300] and c["exposed_once_us"].tolist() == [200 - 30, 100]
    assert c["dur_once_us"].sum() == res.ranks["comm_total_us"].iloc[0] == 400 - 100  # the breakdown's union
    assert c["exposed_once_us"].sum() == res.ranks["exposed_comm_total_us"].iloc[0] == 300 - 30
    note = next(n for n in res.meta["notes"] if n.startswith("collectives overlap each other"))
    assert "rank 0: 300 µs" in note and "(400 µs)" in note
    assert collective_overlap_note(c.iloc[:1]) is None  # the first-started one alone: its whole duration once


def test_gloo_threads_count_once(tmp_path) -> None:
    # a CPU run: gloo's two worker threads run allreduces [100, 300) and [150, 250) at once
    tb = TraceBuilder(rank=0, world_size=2, backend="gloo")
    tb.step(1, 0, 500)
    tb.annotation("tracekit.backward", 50, 400)
    tb.annotation("gloo:all_reduce", 100, 200, tid=2000)
    tb.annotation("gloo:all_reduce", 150, 100, tid=2001)
    res = _run(tmp_path, tb)
    c = res.collectives.sort_values("start_ns")
    assert c["dur_once_us"].tolist() == [200, 0] and c["dur_once_us"].sum() <= res.steps["step_us"].iloc[0]
    assert any(n.startswith("collectives overlap each other on rank(s) 0") for n in res.meta["notes"])
