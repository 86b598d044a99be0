"""Issue 13 findings on hand-built traces: gpu_idle, rank_waiting's cause, profiler_distortion (and the
findings it marks), bucket_events vs the trace, bandwidth from transfer time, and the fixed texts.
Every expected value is arithmetic on the trace below."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

import tracekit
from tests.explain_builders import load_run, manifest_for, write_run
from tests.tracebuilder import TraceBuilder
from tracekit.traces import cols as C
from tracekit.analyses import collectives, timeline
from tracekit.analyses.findings import as_dicts
from tracekit.report.render import manifest_rows
from tracekit.traces.manifest import decode_manifest

NELEMS = 1_000_000  # fp32: 4 MB per allreduce


def _waiting_run(folder: Path, late_kernels: list[tuple[float, float, float]]) -> Path:
    """Two ranks, one step [0, 1000] µs each. rank 0: compute [50, 250] (launched at 40), allreduce kernel
    [260, 900] (launched 255): it waits. rank 1: ``late_kernels`` (start, duration, launch call), then its
    allreduce [800, 900] (op at 794, launch call at 795)."""
    folder.mkdir(parents=True, exist_ok=True)
    for rank in (0, 1):
        tb = TraceBuilder(rank=rank, world_size=2)
        tb.step(1, 0, 1000)
        if rank == 0:
            tb.kernel("gemm", 50, 200, launch_at_us=40)
            tb.nccl_allreduce(260, 640, launch_at_us=254, nelems=NELEMS)
        else:
            for start, dur, launch in late_kernels:
                tb.kernel("gemm", start, dur, launch_at_us=launch)
            tb.nccl_allreduce(800, 100, launch_at_us=794, nelems=NELEMS)
        tb.write(folder / f"rank{rank}.trace.json")
    return folder


def _late_rank_run(folder: Path, run_json: dict | None = None) -> Path:
    """:func:`_waiting_run` where rank 1 computes [50, 150] (launched 45) and [700, 780] launched only at 690
    (its CPU is late)."""
    _waiting_run(folder, [(50, 100, 45), (700, 80, 690)])
    if run_json is not None:
        (folder / "run.json").write_text(json.dumps(run_json))
    return folder


def _analyze(folder: Path):  # noqa: ANN202
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_run(folder)[1]


def _by_code(res) -> dict:  # noqa: ANN001
    return {f["code"]: f for f in as_dicts(res.findings)}


def test_gpu_idle_table_and_launch_gaps(tmp_path: Path) -> None:
    res = _analyze(_late_rank_run(tmp_path / "r"))
    g = res.gpu_idle.set_index("rank")
    # rank 1 busy [50,150] + [700,780] + [800,900] = 280 of 1000 µs
    assert g.loc[1, "gpu_busy_us"] == pytest.approx(280.0) and g.loc[1, "gpu_idle_pct"] == pytest.approx(72.0)
    # launch gaps: [150, 690) before the second gemm's launch call, [780, 795) before the allreduce's
    assert g.loc[1, "launch_idle_us"] == pytest.approx((690 - 150) + (795 - 780))
    assert g.loc[1, "kernels"] == 3
    # rank 0 busy [50,250] + [260,900] = 840; its gap [250,260) ends with a kernel launched at 255
    assert g.loc[0, "gpu_idle_us"] == pytest.approx(1000 - 840)
    assert g.loc[0, "launch_idle_us"] == pytest.approx(255 - 250)


def test_rank_waiting_names_the_late_ranks_cause_and_gpu_idle_fires(tmp_path: Path) -> None:
    f = _by_code(_analyze(_late_rank_run(tmp_path / "r")))
    w = f["rank_waiting"]
    assert w["rank"] == 0 and w["evidence"]["straggler"] == 1
    # rank 0 waits 800 − 260 = 540 µs of its 640 µs allreduce
    assert w["evidence"]["wait_us_per_step"] == pytest.approx(540.0)
    assert w["evidence"]["wait_share_pct"] == pytest.approx(round(100 * 540 / 640, 1))
    assert w["evidence"]["late_cause"] == "cpu_launch_bound"
    assert w["evidence"]["straggler_launch_idle_pct"] == pytest.approx(55.5)
    assert "rank 1 is CPU-bound: its GPU is idle 72% of the step, 56% waiting for the CPU" in w["message"]
    gi = f["gpu_idle"]
    assert gi["rank"] == 1 and gi["evidence"]["cost_us"] == pytest.approx(720.0)
    assert gi["evidence"]["cpu_bound"] is True and gi["evidence"]["makes_wait"] == [0]
    assert "rank 1's GPU is idle 72% of each step (720 of 1000 µs)" in gi["message"]
    assert "rank 0 waits for it" in gi["message"]


def test_rank_waiting_names_more_compute_as_the_late_ranks_cause(tmp_path: Path) -> None:
    # rank 1's GPU is busy, not idle: compute [50, 790] in one kernel, then the allreduce [800, 900]; rank 0
    # computes [50, 250] and waits in its allreduce [260, 900] (ranks table: compute_total_us over 1 step each)
    res = _analyze(_waiting_run(tmp_path / "imbalance", [(50, 740, 45)]))
    assert res.ranks.set_index("rank")["compute_total_us"].to_dict() == {0: 200.0, 1: 740.0}
    w = _by_code(res)["rank_waiting"]
    assert w["rank"] == 0 and w["evidence"]["straggler"] == 1
    assert w["evidence"]["straggler_gpu_idle_pct"] == pytest.approx(100 * (1000 - 740 - 100) / 1000)  # below 30 %
    assert w["evidence"]["late_cause"] == "more_compute"
    assert "rank 1 has more GPU compute (740 µs vs 200 µs per step): load imbalance" in w["message"]


def test_gpu_idle_not_launch_bound_and_not_firing(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    folder.mkdir()
    tb = TraceBuilder(rank=0, world_size=1, distributed=False)
    tb.step(1, 0, 1000)
    tb.kernel("gemm", 100, 100, launch_at_us=95)
    tb.kernel("gemm", 700, 100, launch_at_us=150)  # queued early, started late: not waiting for the CPU
    tb.write(folder / "rank0.trace.json")
    res = _analyze(folder)
    assert res.gpu_idle["launch_idle_us"].tolist() == [0.0]
    gi = _by_code(res)["gpu_idle"]
    assert gi["evidence"]["gpu_idle_pct"] == pytest.approx(80.0) and gi["evidence"]["cpu_bound"] is False
    assert "only 0% of the step in launch gaps" in gi["message"]
    busy = tmp_path / "b"
    busy.mkdir()
    tb = TraceBuilder(rank=0, world_size=1, distributed=False)
    tb.step(1, 0, 1000)
    tb.kernel("gemm", 10, 800, launch_at_us=5)  # idle 200 of 1000 µs = 20 % < 30 %
    tb.write(busy / "rank0.trace.json")
    assert "gpu_idle" not in _by_code(_analyze(busy))


def _timings(unprof_s: float, prof_s: float) -> dict:
    return {"per_rank": [{"rank": r, "step_s": [unprof_s] * 3, "profiled_step_s": [prof_s] * 2} for r in (0, 1)],
            "overall": {"mean_sec_per_iter": unprof_s}, "profiled": {"mean_sec_per_iter": prof_s}}


def test_profiler_distortion_ranks_first_and_marks_timing_findings(tmp_path: Path) -> None:
    res = _analyze(_late_rank_run(tmp_path / "d", {"schema_version": 1, "timings": _timings(0.0010, 0.0015)}))
    d = res.meta["profiler_distortion"]
    assert d["ratio"] == pytest.approx(1.5) and d["distorted"] and d["source"] == "run.json"
    fs = as_dicts(res.findings)
    assert fs[0]["code"] == "profiler_distortion" and fs[0]["rank"] is None
    ev = fs[0]["evidence"]
    assert ev["cost_us"] == pytest.approx(1500 - 1000) and ev["may_invalidate"] == ["gpu_idle", "rank_waiting"]
    assert ev["worst_gpu_idle_pct"] == pytest.approx(72.0) and ev["cpu_bound"] is True
    assert "1.50× the unprofiled step (1.5 ms vs 1.0 ms per step)" in fs[0]["message"]
    assert "CPU-bound under the profiler" in fs[0]["message"]
    for f in fs[1:]:
        assert f["evidence"]["distorted_window"] is True
        assert "measured under a distorted window" in f["message"]
    rows = res.profiler_distortion.set_index("rank")
    assert rows.loc[1, "ratio"] == pytest.approx(1.5) and rows.loc[1, "kernels_per_step"] == 3


def test_no_distortion_below_threshold(tmp_path: Path) -> None:
    res = _analyze(_late_rank_run(tmp_path / "n", {"schema_version": 1, "timings": _timings(0.0010, 0.00114)}))
    assert res.meta["profiler_distortion"]["ratio"] == pytest.approx(1.14)
    assert not res.meta["profiler_distortion"]["distorted"]
    fs = as_dicts(res.findings)
    assert "profiler_distortion" not in {f["code"] for f in fs}
    assert not any(f["evidence"].get("distorted_window") for f in fs)


def test_distortion_falls_back_to_trace_steps_and_is_absent_without_run_json(tmp_path: Path) -> None:
    old = {"schema_version": 1, "timings": {"per_rank": [{"rank": r, "step_s": [0.0005] * 3} for r in (0, 1)],
                                            "overall": {"mean_sec_per_iter": 0.0005}}}
    res = _analyze(_late_rank_run(tmp_path / "o", old))
    d = res.meta["profiler_distortion"]
    assert d["source"] == "trace" and d["ratio"] == pytest.approx(1000 / 500)  # ProfilerStep#1 lasts 1000 µs
    assert _analyze(_late_rank_run(tmp_path / "x")).meta["profiler_distortion"] is None


def test_bandwidth_from_transfer_time_and_waiting_inclusive_separately(tmp_path: Path) -> None:
    res = _analyze(_late_rank_run(tmp_path / "bw"))
    c = res.collectives.set_index("rank")
    # own kernel: rank 0 640 µs (540 of it waiting), rank 1 100 µs; 2 ranks: busbw factor 2(2−1)/2 = 1
    assert c.loc[0, "busbw_incl_wait_gbps"] == pytest.approx(4e6 / 1e9 / 640e-6)
    assert c.loc[1, "busbw_incl_wait_gbps"] == pytest.approx(4e6 / 1e9 / 100e-6)
    s = C.to_frame(collectives.collective_summary(res.collectives, res.instances)).set_index("rank")
    # transfer time = the shortest kernel across ranks = the last arriver's 100 µs, for both ranks
    assert s.loc[0, "busbw_mean_gbps"] == pytest.approx(4e6 / 1e9 / 100e-6) == s.loc[1, "busbw_mean_gbps"]
    assert s.loc[0, "busbw_incl_wait_mean_gbps"] == pytest.approx(4e6 / 1e9 / 640e-6)


def test_bucket_busbw_from_transfer_time(tmp_path: Path) -> None:
    res = _analyze(write_run(tmp_path / "b", "split", straggle_us=100, straggler=1))
    s = C.to_frame(collectives.bucket_summary(res.buckets, res.instances)).set_index(["rank", "bucket"])
    # bucket 0: rank 1's kernel 150 µs, rank 0's 150 + 100 µs (waiting); 4 MB each
    assert s.loc[(0, 0), "busbw_gbps"] == pytest.approx(4e6 / 1e9 / 150e-6) == s.loc[(1, 0), "busbw_gbps"]
    assert s.loc[(0, 0), "busbw_incl_wait_gbps"] == pytest.approx(4e6 / 1e9 / 250e-6)


def test_after_backward_counts_are_per_step() -> None:
    # 3 steps x 10 allreduces, 28 of the 30 start after backward: "9.3 of 10 per step", never "28 of 10"
    tl = pd.DataFrame({"rank": 0, "step": [s for s in (1, 2, 3) for _ in range(10)], "bwd_compute_end_ns": 1,
                       "starts_after_backward": [True] * 28 + [False] * 2, "tail_exposed_us": 10.0,
                       "bytes": 4e6})
    result = SimpleNamespace(steps=pd.DataFrame({"rank": [0, 0], "step_us": [1000.0, 1000.0],
                                                 "exposed_comm_us": [80.0, 90.0]}))
    gb = pd.DataFrame({"rank": [0], "bwd_subgraphs": [3.0]})
    f = timeline.allreduce_after_backward(result, tl, gb, None)[0]
    assert f.message.startswith("9.3 of 10 allreduces per step start after backward compute ends")
    assert f.after_backward_per_step == pytest.approx(9.3)
    assert f.cost_us == pytest.approx((80.0 + 90.0) / 2)  # the steps table's exposed_comm_us, mean over steps
    assert f.tail_exposed_us == pytest.approx(10 * 10.0)  # 30 × 10 µs over 3 steps


def test_after_backward_one_bucket_says_nothing_to_split(tmp_path: Path) -> None:
    man = manifest_for("nosplit", n_buckets=1)
    for r in man["compile"]["per_rank"]:
        r["optimize_ddp"] = "ddp_optimizer"
    res = _analyze(write_run(tmp_path / "one", "nosplit", n_buckets=1, ar_us=[300.0], manifest=man))
    f = _by_code(res)["allreduce_after_backward"]
    assert f["message"].startswith("all 1 allreduce per step start after backward compute ends")
    assert "fit one DDP bucket" in f["message"] and "bucket cap 25 MiB" in f["message"]
    assert "DDPOptimizer has nothing to split" in f["message"] and "DDPOptimizer off" not in f["message"]


def test_last_bucket_cap_in_mib(tmp_path: Path) -> None:
    res = _analyze(write_run(tmp_path / "l", "split", ar_us=[150, 150, 150, 600], manifest=manifest_for("split")))
    f = _by_code(res)["exposed_last_bucket"]
    # run.json bucket_cap_bytes = 25 × 2**20 = 26214400: DDP's bucket_cap_mb is MiB
    assert "(now 25, i.e. 25 MiB)" in f["message"] and "26 MB" not in f["message"]
    assert f["evidence"]["bucket_cap_mib"] == 25.0 and f["evidence"]["bucket_cap_mb"] == pytest.approx(26.2)


def test_bucket_events_beside_the_trace(tmp_path: Path) -> None:
    # trace (split mode, no straggler): buckets of 150, 150, 150, 10 µs per step; only the last runs after
    # the last backward compute kernel, 10 µs of it (test_explain.test_bucket_timeline_numbers)
    def man(comm: float) -> dict:
        m = manifest_for("split")
        m["bucket_timing"] = {"per_rank": [{"rank": r, "clock": "cuda_events", "summary": {
            "steps": 20, "buckets_per_step": 4.0, "comm_us_per_step": comm, "exposed_us_per_step": 10.0,
            "overlap_pct": 100 * (comm - 10) / comm}} for r in (0, 1)]}
        return m

    ok = _analyze(write_run(tmp_path / "ok", "split", manifest=man(460.0))).bucket_events.set_index("rank")
    assert ok.loc[0, "trace_comm_us_per_step"] == pytest.approx(150 * 3 + 10)
    assert ok.loc[0, "trace_exposed_us_per_step"] == pytest.approx(10.0)
    assert bool(ok.loc[0, "agree"]) and ok.loc[0, "note"] == ""
    # 1000 µs of events vs 460 in the trace: |1000 − 460| > max(25 % of 1000, 200)
    bad = _analyze(write_run(tmp_path / "bad", "split", manifest=man(1000.0)))
    b = bad.bucket_events.set_index("rank")
    assert not bool(b.loc[0, "agree"]) and "comm per step" in b.loc[0, "note"]
    assert any("bucket_events" in n for n in bad.meta["notes"])


def test_config_line_shows_only_options_that_applied() -> None:
    def cfg(kind: str | None = None, **kw) -> str:  # noqa: ANN003
        base = {"model": "toy", "parallel": "ddp", "dynamo": "none", "batch_size": 32, "device": "cuda",
                "width": 2048, "depth": 8, "seq_len": 128, "heads": 4, "bucket_cap_mb": None}
        man = decode_manifest({"config": {**base, **kw}, "run": {"model_kind": kind}}, "run.json")
        return dict(manifest_rows(man))["config"]

    assert "width=2048" in cfg() and "depth=8" in cfg() and "seq_len" not in cfg()
    r50 = cfg("torchvision", model="resnet50", width=256, depth=4)
    assert "width" not in r50 and "depth" not in r50 and "seq_len" not in r50 and "model=resnet50" in r50
    gpt2 = cfg("hf", model="gpt2", width=256, depth=4)
    assert "width" not in gpt2 and "seq_len=128" in gpt2
    # a run.json without model_kind and a name that may be either: no shape option is claimed
    unknown = cfg(model="gpt2", width=256, depth=4)
    assert "width" not in unknown and "seq_len" not in unknown
    tr = cfg(model="transformer", width=256, depth=4)
    assert "width=256" in tr and "heads=4" in tr and "seq_len=128" in tr
    fsdp = cfg(parallel="fsdp", bucket_cap_mb=25)
    assert "bucket_cap_mb" not in fsdp


def test_real_run_analysis_has_no_impossible_shares() -> None:
    """On the sample runs every share is a share (0-100 %) and the wait never exceeds the kernel time."""
    root = Path(__file__).resolve().parents[2] / "sample_traces"
    for run in ("fixtures/h200x2_resnet50_inductor", "fixtures/h200x2_gpt2_inductor_bf16"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = tracekit.analyze(tracekit.load(root / run))
        for f in as_dicts(res.findings):
            for k, v in f["evidence"].items():
                if k.endswith("_pct") and v is not None:
                    assert 0 <= v <= 100, (f["code"], k, v)
        assert res.meta["profiler_distortion"]["distorted"]
        assert as_dicts(res.findings)[0]["code"] == "profiler_distortion"


def test_distortion_splits_off_the_profilers_warm_up_steps(tmp_path: Path) -> None:
    """run.json's window_step_s: wait 1 (1.0 ms), warm-up 3 (the first 1.9 ms, CUPTI's start-up; then 1.3 and
    1.4 ms on rank 0, 1.2 and 1.5 ms on rank 1), active 2 (1.5 ms): the warm-up steps after the first are
    CUPTI's alone, per rank 1.35 ms (1.35 x), per step the slowest rank 1.3 and 1.5 ms (1.4 x the 1.0 ms step)."""
    t = _timings(0.0010, 0.0015)
    warm = {0: [0.0019, 0.0013, 0.0014], 1: [0.0019, 0.0012, 0.0015]}
    for row in t["per_rank"]:
        row["window_step_s"] = [0.0010, *warm[row["rank"]], 0.0015, 0.0015]
    man = {"schema_version": 1, "timings": t, "profile_window": {"wait": 1, "warmup": 3, "active": 2}}
    res = _analyze(_late_rank_run(tmp_path / "w", man))
    rows = res.profiler_distortion.set_index("rank")
    assert rows.loc[0, "cupti_step_us"] == pytest.approx((1300 + 1400) / 2)
    assert rows.loc[1, "cupti_ratio"] == pytest.approx((1200 + 1500) / 2 / 1000)
    d = res.meta["profiler_distortion"]
    assert d["cupti_step_us"] == pytest.approx((1300 + 1500) / 2) and d["cupti_ratio"] == pytest.approx(1.4)
    f = as_dicts(res.findings)[0]
    assert f["code"] == "profiler_distortion" and f["evidence"]["cupti_ratio"] == pytest.approx(1.4)
    # 0.4 of the window's 0.5 over the unprofiled step is there before anything is recorded
    assert "already ran 1.40× the unprofiled step: at least half of the cost comes with CUPTI" in f["message"]
    # one warm-up step is CUPTI's start-up as much as its cost: nothing said
    man["profile_window"]["warmup"] = 1
    for row in t["per_rank"]:
        row["window_step_s"] = [0.0010, 0.0019, 0.0015, 0.0015]
    res = _analyze(_late_rank_run(tmp_path / "one", man))
    assert res.meta["profiler_distortion"]["cupti_ratio"] is None
    assert res.profiler_distortion["cupti_step_us"].isna().all() and "CUPTI" not in as_dicts(res.findings)[0]["message"]


def test_a_broken_window_step_list_is_warned_about_and_says_nothing(tmp_path: Path) -> None:
    """run.json's window_step_s as a string, or with a non-number in it: the manifest reader warns and drops it
    (or its bad items: then the steps no longer match the schedule), and the distortion has no CUPTI figure."""
    for bad in ("oops", [0.0010, "x", 0.0013, 0.0015, 0.0015]):
        t = _timings(0.0010, 0.0015)
        for row in t["per_rank"]:
            row["window_step_s"] = bad
        man = {"schema_version": 1, "timings": t, "profile_window": {"wait": 1, "warmup": 2, "active": 2}}
        with pytest.warns(UserWarning, match="window_step_s"):
            res = load_run(_late_rank_run(tmp_path / str(len(str(bad))), man))[1]
        assert res.meta["profiler_distortion"]["cupti_ratio"] is None
        assert res.profiler_distortion["cupti_step_us"].isna().all()
