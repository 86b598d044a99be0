"""The comm hook's cast kernels (tracekit.replay.hook) and the buckets' CPU launch work
(tracekit.replay.buckets) on hand-built traces: every expected time is arithmetic."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import tracekit
from tracekit.analyses.classify import COMM, classify_gpu
from tracekit.replay import costs as cost_model
from tracekit.replay import hook, simulate
from tracekit.replay import scenarios as sc
from tracekit.runner.options import RunOptions
from tracekit.runner.pipeline import load_and_analyze

from tests.replay.test_scenarios import MIB, US, _new_buckets, _scenario
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


def test_comm_hook_adds_its_cast_kernels(tmp_path, monkeypatch):
    monkeypatch.setattr(hook, "HOOK_CPU_NS", 0.0)  # the casts alone (the CPU work: the next test)
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


def test_comm_hook_adds_its_cpu_work_before_each_allreduce_launch(tmp_path, monkeypatch):
    # 6 µs per bucket: bucket 1's allreduce is launched at 61 + 6 = 67 and starts after its recorded 2 µs
    # latency, 69, later than its casts allow (67.5): [69, 69 + 10 + 7.5]. Everything after on the thread moves
    # by 6, then 12: bucket 2's gemm is launched at 88 + 6 and runs [96, 101], its casts end at 113.5, its
    # allreduce is launched at 101 + 12 = 113 and starts at 115: [115, 132.5]
    path = _run(tmp_path)
    monkeypatch.setattr(hook, "HOOK_CPU_NS", 6000.0)
    g, out, start, end = _scenario([path], sc.Scenario(comm_hook="bf16"))
    assert _nccl(out, start, end) == [(69.0, 86.5), (115.0, 132.5)]
    assert _nccl(out, start, end, rank=1) == [(69.0, 86.5), (115.0, 132.5)]
    # the shipped figure, 59.6 µs: launches at 61 + 59.6 -> [122.6, 140.1]; gemm 2 launched at 88 + 59.6, runs
    # [149.6, 154.6]; allreduce 2 launched at 101 + 119.2 = 220.2 -> [222.2, 239.7]
    monkeypatch.undo()
    assert hook.HOOK_CPU_NS == 59_600.0
    g, out, start, end = _scenario([path], sc.Scenario(comm_hook="bf16"))
    assert _nccl(out, start, end) == [(122.6, 140.1), (222.2, 239.7)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        notes = tracekit.whatif(path, comm_hook="bf16").notes
    assert any("hook's CPU work, 59.6 us per bucket and step" in n and "before 4 of 4" in n for n in notes)


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


def test_bucket_launch_work_is_the_windows_work_less_its_own_events_profiler_cost(tmp_path):
    # 200 ns per event, half of it shed at each of its two cuts from the work that ends there (no bound per
    # cut, no step speed). A bucket's last parameter's hook window (ready, ready + 8] holds the cuts of
    # record_param_comms [+1, +2], cudaEventRecord [+1.2, +1.4], cudaStreamWaitEvent [+1.5, +1.7],
    # cuLaunchKernelEx [+2, +4] and the hook's end at +8: 9 event ends, 0.9 µs shed, 7.1 µs left; the first
    # bucket's (ready 60) also the start of the next gemm's launch at 68 (80 - 12): 1.0 µs shed, 7.0 left.
    # Another parameter's window (ready, ready + 2] holds the hook's end only: 1.9 µs left. Launch work
    # 7.0 - 1.9 = 5.1 and 7.1 - 1.9 = 5.2 µs (the recorded excess, 6 µs, times the thread's average rate
    # would be another figure)
    costs = cost_model.ProfilerCosts(200.0, 200.0, "test", step_speed=False, scale=1.0, cut_quantile=None)
    traces, res = load_and_analyze([str(_run(tmp_path, launch_work_us=6))], RunOptions.of(keep_events=True))
    coll = res.tables.get("collectives")
    g = simulate.build(traces, coll, costs)
    comm = {rt.rank: np.asarray(classify_gpu(rt).array == COMM) for rt in traces}
    ctx = sc.context(g, traces, coll, None, comm)

    def sync(cap: float) -> float:
        out, _, _ = sc.apply(g, ctx, sc.Scenario(bucket_cap_mb=cap))
        return _sync_start_us(out, simulate.evaluate(out)[0])

    recorded = sync(2)  # the recorded layout: the baseline prediction
    assert recorded == pytest.approx(_sync_start_us(g, simulate.evaluate(g)[0]), abs=0.001)
    # one bucket: half of each recorded bucket's launch work, 0.5 x (5.1 + 5.2) µs less before the sync
    assert sync(4) == pytest.approx(recorded - 0.5 * (5.1 + 5.2), abs=0.001)
    # four buckets: twice each recorded bucket's launch work, 1 x (5.1 + 5.2) µs more
    assert sync(1) == pytest.approx(recorded + (5.1 + 5.2), abs=0.001)


def test_the_recorded_layout_replays_as_the_baseline_with_profiler_cost_taken_out(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = tracekit.whatif(_run(tmp_path, launch_work_us=6), bucket_cap_mb=2)  # documented default costs
    assert r.profiler_cost["source"] == "default"
    assert r.scenarios[0]["delta_us"] == 0


def test_beside_comm_and_slowdowns_are_interval_arithmetic():
    import numpy as np

    from tracekit.replay import contention

    # ops: comm [50, 100]; compute [10, 20] alone, [60, 75] and [80, 95] inside it, [99, 110] overlapping its end,
    # [100, 110] touching it only
    start = np.array([50, 10, 60, 80, 99, 100]) * US
    end = np.array([100, 20, 75, 95, 110, 110]) * US
    comm = np.array([True, False, False, False, False, False])
    beside = contention.beside_comm(start, end, comm)
    assert beside.tolist() == [False, False, True, True, True, False]
    names = np.array([9, 1, 1, 1, 2, 2])
    # kernel 1: alone [10] (one instance: below MIN_INSTANCES) -> no slowdown
    assert contention.slowdowns(names, end - start, beside) == {}
    names = np.array([9, 1, 1, 1, 1, 1])  # kernel 1 alone 10 µs twice ([10, 20], [100, 110]); beside 15, 15, 11
    assert contention.slowdowns(names, end - start, beside) == {1: pytest.approx(1.5)}


def _contended_run(tmp_path: Path) -> Path:
    """Two identical ranks, step [0, 200]: "gemm" on stream 7 alone at [10, 20] and [30, 40], beside the
    allreduce [55, 100] (stream 17) at [60, 75] and [80, 95]: 1.5x slower beside communication."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    for rank in (0, 1):
        tb = TraceBuilder(rank=rank, world_size=2)
        tb.step(1, 0, 200)
        for s, d in ((10, 10), (30, 10), (60, 15), (80, 15)):
            tb.kernel("gemm", s, d, launch_at_us=s - 5)
        tb.nccl_allreduce(55, 45, launch_at_us=50, nelems=1 << 20, op_dur_us=1)
        tb.launch(150, 990, name="cudaDeviceSynchronize", dur_us=1)
        tb.write(tmp_path / f"rank{rank}.trace.json.gz")
    return tmp_path


def test_one_rank_gives_kernels_their_duration_without_communication(tmp_path):
    path = _contended_run(tmp_path)
    base, out, start, end = _scenario([path], sc.Scenario(world_size=1))
    origin = min(out.orig_start)
    gemm = sorted((out.orig_start[v] - origin) // US for v in range(len(base.dur))
                  if out.kind[v] == 3 and out.rank[v] == 0 and base.dur[v] in (10 * US, 15 * US))
    assert gemm == [10, 30, 60, 80]
    durs = [out.dur[v] // US for v in range(len(base.dur)) if out.kind[v] == 3 and out.rank[v] == 0
            and (out.orig_start[v] - origin) // US in (10, 30, 60, 80)]
    assert durs == [10, 10, 10, 10]  # the two beside the allreduce: 15 µs / 1.5
    base, out, start, end = _scenario([path], sc.Scenario(world_size=4))  # collectives kept: durations kept
    assert sorted(out.dur[v] // US for v in range(len(base.dur)) if out.kind[v] == 3 and out.rank[v] == 0
                  and (out.orig_start[v] - origin) // US in (10, 30, 60, 80)) == [10, 10, 15, 15]


def test_a_copy_whose_bytes_are_not_a_whole_number_is_read_without_them(tmp_path):
    # kineto writes "bytes" as an int; a string or a fraction must not stop the decode (the loose path reads
    # the trace and counts such values as absent, as for every integer arg) nor the copy-speed estimate
    tb = TraceBuilder(rank=0, world_size=1)
    tb.step(1, 0, 100)
    tb.memcpy(10, 10, name="Memcpy DtoD (Device -> Device)", launch_at_us=8, nbytes="lots")
    tb.memcpy(30, 10, name="Memcpy DtoD (Device -> Device)", launch_at_us=28, nbytes=2 * MIB + 0.5)
    tb.memcpy(50, 10, name="Memcpy DtoD (Device -> Device)", launch_at_us=48, nbytes=2 * MIB)
    tb.write(tmp_path / "rank0.trace.json.gz")
    traces, _ = load_and_analyze([str(tmp_path)], RunOptions.of(keep_events=True))
    rt = traces.ranks[0]
    assert sorted(rt.column("nbytes")[rt.column("nbytes") != -1].tolist()) == [2 * MIB]
    assert hook.copy_throughput(traces) == {0: pytest.approx(2 * 2 * MIB / 10_000)}


def test_regrouped_buckets_get_the_hooks_casts_and_cpu_work(tmp_path, monkeypatch):
    # the recorded layout (cap 2 MiB) regrouped with the hook on: its new allreduces get the casts and the 6 µs of
    # CPU work the hook-only scenario gives the recorded ones (previous test): [69, 86.5] and [115, 132.5]
    path = _run(tmp_path)
    monkeypatch.setattr(hook, "HOOK_CPU_NS", 6000.0)
    g, out, start, end = _scenario([path], sc.Scenario(bucket_cap_mb=2, comm_hook="bf16"))
    origin = min(out.orig_start)
    new = sorted(((start[v] - origin) / US, (end[v] - origin) / US) for v in range(len(g.dur), len(out.dur))
                 if out.rank[v] == 0 and out.kind[v] == 3 and out.dur[v] > 0)
    assert new == [(69.0, 86.5), (115.0, 132.5)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        both = tracekit.whatif(path, bucket_cap_mb=2, comm_hook="bf16")
        alone = tracekit.whatif(path, comm_hook="bf16")
    assert both.scenarios[0]["predicted_step_us"] == alone.scenarios[0]["predicted_step_us"]
    assert any("before 4 of 4 allreduce launches" in n for n in both.notes)
    assert not any("not modelled" in n for n in both.notes)
