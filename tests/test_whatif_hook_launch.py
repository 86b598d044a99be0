"""The comm hook's cast kernels (tracekit.replay.hook) and the buckets' CPU launch work
(tracekit.replay.buckets) on hand-built traces: every expected time is arithmetic."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

import tracekit
from tracekit.replay import hook
from tracekit.replay import scenarios as sc
from tracekit.runner.options import RunOptions
from tracekit.runner.pipeline import load_and_analyze

from tests.test_whatif_scenarios import MIB, US, _new_buckets, _scenario
from tests.tracebuilder import TraceBuilder

HOOK_OP = "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad"


def _run(tmp_path: Path, *, launch_work_us: float = 0.0, copy: bool = True) -> Path:
    """Two identical ranks, one step [0, 300], 4 gradients of 1 MiB ready at 40, 60, 80, 100 (as
    ``_bucket_run`` of test_whatif_scenarios): gemm kernel [ready-10, ready-5] on stream 7, AccumulateGrad
    [ready-5, ready] inside the engine's call of it, which runs on to ready+2 (DDP's hook: 2 µs a parameter),
    plus ``launch_work_us`` for a bucket's last parameter. Buckets {p0, p1}, {p2, p3} (cap 2 MiB): an event
    recorded and waited for at ready+1.2 / ready+1.5 (the allreduce's stream waits for the gemm), the kernel
    launched at ready+2 on stream 17, [ready+3, ready+23]. ``copy``: a device-to-device copy of 2 MiB in
    10 µs at [200, 210] (2 x 2 MiB / 10 µs = 419.4304 bytes per ns of memory traffic)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    for rank in (0, 1):
        tb = TraceBuilder(rank=rank, world_size=2)
        tb.step(1, 0, 300)
        tb.annotation("tracekit.backward", 10, 190)
        for i, ready in enumerate((40, 60, 80, 100)):
            last = i in (1, 3)
            tb.kernel("gemm_bwd", ready - 10, 5, launch_at_us=ready - 12)
            tb.cpu_op(HOOK_OP, ready - 6, 8 + (launch_work_us if last else 0))
            tb.cpu_op("torch::autograd::AccumulateGrad", ready - 5, 5)
            if last:
                tb.launch(ready + 1.2, 900 + ready, name="cudaEventRecord", dur_us=0.2)
                tb.launch(ready + 1.5, 950 + ready, name="cudaStreamWaitEvent", dur_us=0.2)
                tb.nccl_allreduce(ready + 3, 20, launch_at_us=ready + 1, nelems=MIB // 2, op_dur_us=1)
        if copy:
            tb.memcpy(200, 10, name="Memcpy DtoD (Device -> Device)", launch_at_us=198, nbytes=2 * MIB)
        tb.launch(250, 990, name="cudaDeviceSynchronize", dur_us=1)
        tb.write(tmp_path / f"rank{rank}.trace.json.gz")
    (tmp_path / "run.json").write_text(json.dumps({
        "schema_version": 1, "run": {"world_size": 2, "device": "cuda", "backend": "nccl"},
        "buckets": {"reducer": {"bucket_cap_bytes": 2 * MIB, "rebuilt_bucket_sizes_bytes": [2 * MIB, 2 * MIB],
                                "rebuilt_per_bucket_param_indices": "0 1, 2 3", "param_bytes": [MIB] * 4}}}))
    return tmp_path


def _nccl(g, start, end, rank: int = 0) -> list[tuple[float, float]]:
    return sorted((start[v] / US, end[v] / US) for v in range(len(g.dur))
                  if g.rank[v] == rank and g.kind[v] == 3 and g.dur[v] > 0 and g.orig_start[v] - min(g.orig_start)
                  in (63 * US, 103 * US))


def test_copy_throughput_comes_from_the_traces_device_copies(tmp_path):
    traces, _ = load_and_analyze([str(_run(tmp_path))], RunOptions.of(keep_events=True))
    assert hook.copy_throughput(traces) == {0: pytest.approx(2 * 2 * MIB / 10_000), 1: pytest.approx(419.4304)}


def test_comm_hook_adds_its_cast_kernels(tmp_path):
    path = _run(tmp_path)
    # casts at 419.4304 B/ns: compress 2.5 x 2 MiB -> 12.5 µs after the gemm the allreduce waits for (on the
    # gemm's stream), decompress 1.5 x 2 MiB -> 7.5 µs after the halved transfer (20 -> 10 µs):
    # bucket 1: gemm [50, 55] + 12.5 -> 67.5, allreduce [67.5, 67.5 + 10 + 7.5]; bucket 2: gemm [90, 95] -> 107.5
    g, out, start, end = _scenario([path], sc.Scenario(comm_hook="bf16"))
    assert _nccl(out, start, end) == [(67.5, 85.0), (107.5, 125.0)]
    assert _nccl(out, start, end, rank=1) == [(67.5, 85.0), (107.5, 125.0)]
    # no device copy to measure memory speed by: the halved transfer only, and a note says so
    nocopy = _run(tmp_path / "nocopy", copy=False)
    g, out, start, end = _scenario([nocopy], sc.Scenario(comm_hook="bf16"))
    assert _nccl(out, start, end) == [(63, 73), (103, 113)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = tracekit.whatif(nocopy, comm_hook="bf16")
    assert any("modelled on 0 of 4 allreduces" in n for n in r.notes)


def _sync_start_us(g, start, rank: int = 0) -> float:
    origin = min(g.orig_start)
    v = next(v for v in range(len(g.dur)) if g.rank[v] == rank and g.kind[v] == 1
             and g.orig_start[v] - origin == 250 * US)
    return start[v] / US


def test_bucket_launch_work_scales_with_the_bucket_count(tmp_path):
    # each bucket's last parameter: hook window [ready, ready + 2 + 6]; the others' [ready, ready + 2]: 6 µs of
    # launch work per recorded bucket, 12 µs a step
    path = _run(tmp_path, launch_work_us=6)
    base, out, start, end = _scenario([path], sc.Scenario(bucket_cap_mb=2))  # the recorded layout: unchanged
    sync = _sync_start_us(out, start)
    assert _new_buckets(base, out, start, end) == [(63, 83), (103, 123)]
    # one bucket (cap 4 MiB): half the launch work, 6 µs less CPU before the sync
    base, out, start, end = _scenario([path], sc.Scenario(bucket_cap_mb=4))
    assert _sync_start_us(out, start) == pytest.approx(sync - 6, abs=0.01)
    # four buckets (cap 1 MiB): twice the launch work, 12 µs more
    base, out, start, end = _scenario([path], sc.Scenario(bucket_cap_mb=1))
    assert _sync_start_us(out, start) == pytest.approx(sync + 12, abs=0.01)


def test_the_recorded_layout_replays_as_the_baseline_with_profiler_cost_taken_out(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = tracekit.whatif(_run(tmp_path, launch_work_us=6), bucket_cap_mb=2)  # documented default costs
    assert r.profiler_cost["source"] == "default"
    assert r.scenarios[0]["delta_us"] == 0
