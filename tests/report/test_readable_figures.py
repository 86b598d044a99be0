"""Figures a reader must not have to decode (issue 23, items 7 and 8): a profiler-distortion ratio below 1
is doubtful, not a distortion, and says why; the run summary rounds the compile time and says
"not recorded"; a cuda-only capture's distortion finding says what is known."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from tests.explain_builders import load_run
from tests.tracebuilder import TraceBuilder
from tracekit.analyses.findings import as_dicts
from tracekit.traces.manifest import decode_manifest
from tracekit.report.render import distortion_text, manifest_rows


def _run(folder: Path, run_json: dict | None, *, cpu_ops: bool = True) -> Path:
    """Two ranks, one ProfilerStep of 1000 µs (left out with ``cpu_ops=False``: a cuda-only capture),
    a 200 µs gemm and a 100 µs allreduce each."""
    folder.mkdir(parents=True, exist_ok=True)
    for rank in (0, 1):
        tb = TraceBuilder(rank=rank, world_size=2)
        if cpu_ops:
            tb.step(1, 0, 1000)
        tb.kernel("gemm", 50, 200, launch_at_us=40)
        tb.nccl_allreduce(300, 100, launch_at_us=290, nelems=1000)
        doc = tb.to_dict()
        if not cpu_ops:  # kineto with ProfilerActivity.CUDA only: GPU rows, no CPU ops nor runtime calls
            doc["traceEvents"] = [e for e in doc["traceEvents"] if e.get("cat") in ("kernel", "gpu_memcpy")
                                  or e.get("ph") == "M"]
        (folder / f"rank{rank}.trace.json").write_text(json.dumps(doc))
    if run_json is not None:
        (folder / "run.json").write_text(json.dumps(run_json))
    return folder


def _analyze(folder: Path):  # noqa: ANN202
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_run(folder)[1]


def _timings(unprof: list[float], prof: list[float] | None) -> dict:
    per = [{"rank": r, "step_s": unprof} | ({"profiled_step_s": prof} if prof else {}) for r in (0, 1)]
    t = {"per_rank": per, "overall": {"mean_sec_per_iter": sum(unprof) / len(unprof), "step_s": unprof}}
    if prof:
        t["profiled"] = {"mean_sec_per_iter": sum(prof) / len(prof), "step_s": prof}
    return {"schema_version": 1, "timings": t}


def test_ratio_below_one_from_trace_steps_is_doubtful(tmp_path: Path) -> None:
    # no profiled_step_s: the profiled figure is the trace's step (its ProfilerStep range, 1000 µs: the device
    # work ends at 400), vs 2 ms unprofiled: faster than the profiler can make a step, so noise
    d = _analyze(_run(tmp_path / "t", _timings([0.002] * 3, None))).meta["profiler_distortion"]
    assert d["ratio"] == pytest.approx(1000 / 2000) and d["source"] == "trace"
    assert d["doubtful"] and not d["distorted"] and "the trace's steps ran faster" in d["doubt"]
    text = distortion_text(d)
    assert text.startswith("0.50x") and "-- doubtful: " in text and "says nothing" in text


def test_ratio_below_one_from_slow_unprofiled_steps(tmp_path: Path) -> None:
    # unprofiled: 1, 1, 4 ms (mean 2 ms, median 1 ms: 4 > 1.5 x 1); profiled 1.2 ms -> ratio 0.6
    d = _analyze(_run(tmp_path / "s", _timings([0.001, 0.001, 0.004], [0.0012, 0.0012]))).meta["profiler_distortion"]
    assert d["ratio"] == pytest.approx(1.2 / 2.0) and d["source"] == "run.json" and d["doubtful"]
    assert "max 4.00 ms vs median 1.00 ms" in d["doubt"]


def test_ratio_below_one_without_an_explanation_says_noise(tmp_path: Path) -> None:
    d = _analyze(_run(tmp_path / "n", _timings([0.002] * 4, [0.0015] * 2))).meta["profiler_distortion"]
    assert d["ratio"] == pytest.approx(0.75) and d["doubtful"]
    assert "profiled steps (2) ran faster than the unprofiled ones (4)" in d["doubt"]


def test_ratio_near_or_above_one_is_not_doubtful(tmp_path: Path) -> None:
    d = _analyze(_run(tmp_path / "ok", _timings([0.001] * 3, [0.00096] * 2))).meta["profiler_distortion"]
    assert d["ratio"] == pytest.approx(0.96) and not d["doubtful"] and d["doubt"] is None
    assert "doubtful" not in distortion_text(d)


def test_cuda_only_capture_distortion_says_what_is_known(tmp_path: Path) -> None:
    run_json = _timings([0.001] * 3, [0.0015] * 2) | {"config": {"profile_activities": "cuda"}}
    res = _analyze(_run(tmp_path / "c", run_json, cpu_ops=False))
    assert res.meta["device_metrics"] is True
    f = next(f for f in as_dicts(res.findings) if f["code"] == "profiler_distortion")
    assert "no GPU activity" not in f["message"]
    assert "GPU activity only (captured with --profile-activities cuda" in f["message"]
    assert "cannot be measured" in f["message"]


def test_compile_facts_rounded_and_not_recorded() -> None:
    man = decode_manifest({"compile": {"per_rank": [{"rank": 0, "enabled": True, "graph_count": 2,
                                                     "compile_time_s": 29.107844}]}}, "run.json")
    line = dict(manifest_rows(man))["compile (rank 0)"]
    assert "compile time=29.1 s" in line and "DDPOptimizer splits=not recorded" in line
    assert "None" not in line


BF16_HOOK_RUNS = [Path(__file__).parents[2] / "sample_traces" / "whatif/h200x4_nccl_scenarios" / name / "bf16"
                  for name in ("gpubound", "toy4096")]


@pytest.mark.parametrize("run", BF16_HOOK_RUNS, ids=lambda p: p.parent.name)
def test_no_collective_queues_for_negative_time_on_a_bf16_hook_run(run: Path) -> None:
    """Real 4 x H200 DDP runs with the bf16 compression hook: its callbacks cast the previous bucket back on
    pool streams, kernels launched before the next allreduce that still run when it starts. The bucket
    timeline's comm-stream backlog (queue_us = start - max(ready_gpu, launch)) cannot be negative: the
    gradients it waited for were ready before it started."""
    import tracekit

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = tracekit.analyze(str(run)).tables["bucket_timeline"]
    assert len(t) > 0
    ready = t[t["ready_gpu_ns"] >= 0]
    assert (ready["ready_gpu_ns"] <= ready["start_ns"]).all()
    assert (t["queue_us"].dropna() >= 0).all()
