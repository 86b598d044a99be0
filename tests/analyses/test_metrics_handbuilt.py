"""Every metric on tiny hand-built traces, with the expected value worked out in the assert.

All times below are µs relative to the builder's ``t0_us``; metric values are µs.
"""

from __future__ import annotations

import json
import math
import warnings
from decimal import Decimal

import numpy as np
import pytest

from tracekit.analyses import crossrank
from tracekit.analyses.collectives import bus_factor
from tracekit.analyses.options import AnalyzeOptions
from tracekit.runner.run import AnalysisWarning, analyze
from tracekit.traces.loader import TraceLoadWarning, load

try:
    from tests.tracebuilder import TraceBuilder
except ImportError:  # tests/ not a package
    from tracebuilder import TraceBuilder

BIG_T0 = 4407664264000.0  # a real kineto clock value (µs): metrics must not depend on it
BWD = "autograd::engine::evaluate_function: AddmmBackward0"


def run(tmp_path, *builders, **kw):
    for tb in builders:
        tb.write(tmp_path / f"rank{tb.rank}.trace.json.gz")
    return analyze(load(tmp_path), AnalyzeOptions(**kw))


def row(df, **where):
    m = np.ones(len(df), dtype=bool)
    for k, v in where.items():
        m &= (df[k] == v).to_numpy()
    assert m.sum() == 1, f"expected one row for {where}, got {int(m.sum())}"
    return df[m].iloc[0]


# -- breakdown ---------------------------------------------------------------------
@pytest.mark.parametrize("t0", [0.0, BIG_T0])
def test_rank_breakdown(tmp_path, t0):
    tb = TraceBuilder(rank=0, world_size=1, t0_us=t0)
    tb.step(1, 0, 1000)
    tb.kernel("gemm_a", 100, 50, stream=7, launch_at_us=10)      # [100, 150)
    tb.kernel("gemm_b", 130, 40, stream=8, launch_at_us=11)      # [130, 170): compute ∪ = [100, 170)
    tb.nccl_allreduce(160, 40, launch_at_us=20, nelems=1000)     # comm [160, 200)
    tb.memcpy(250, 10, launch_at_us=30)                          # [250, 260)
    tb.memset(255, 10, launch_at_us=31)                          # [255, 265): memory ∪ = [250, 265)
    res = run(tmp_path, tb)
    r = row(res.ranks, rank=0)
    assert r.kernels == 5
    assert r.compute_total_us == 170 - 100
    assert r.comm_total_us == 200 - 160
    assert r.overlap_total_us == 170 - 160
    assert r.exposed_comm_total_us == (200 - 160) - (170 - 160)
    assert r.overlap_pct == 100 * (170 - 160) / (200 - 160)
    assert r.memory_total_us == 265 - 250
    assert r.busy_total_us == (200 - 100) + (265 - 250)
    assert r.span_us == 265 - 100
    assert r.idle_total_us == (265 - 100) - ((200 - 100) + (265 - 250))
    assert r.steps == 1 and r.step_mean_us == 1000
    assert res.meta["device_metrics"] is True
    assert res.meta["gpus"] == ["NVIDIA H200"]


def test_no_comm_gives_nan_overlap_pct(tmp_path):
    tb = TraceBuilder(rank=0, world_size=1)
    tb.step(1, 0, 100)
    tb.kernel("gemm", 10, 20, launch_at_us=5)
    r = row(run(tmp_path, tb).ranks, rank=0)
    assert r.comm_total_us == 0 and r.overlap_total_us == 0 and r.exposed_comm_total_us == 0
    assert math.isnan(r.overlap_pct)
    assert r.compute_total_us == 20 and r.idle_total_us == 0


def test_comm_fully_hidden_and_fully_exposed(tmp_path):
    tb = TraceBuilder(rank=0, world_size=1)
    tb.step(1, 0, 1000)
    tb.kernel("gemm", 100, 100, launch_at_us=1)                 # [100, 200)
    tb.nccl_allreduce(120, 30, launch_at_us=2, nelems=10)       # inside the gemm: hidden
    tb.nccl_allreduce(300, 20, launch_at_us=3, nelems=10)       # alone: exposed
    res = run(tmp_path, tb)
    r = row(res.ranks, rank=0)
    assert r.overlap_total_us == 30 and r.exposed_comm_total_us == 20 and r.overlap_pct == 100 * 30 / (30 + 20)
    c = res.collectives.sort_values("start_ns")
    assert c["overlap_us"].tolist() == [30, 0]
    assert c["exposed_us"].tolist() == [30 - 30, 20 - 0]


def test_two_comm_streams_are_a_union(tmp_path):
    # overlapping comm kernels on two streams must not be double counted
    tb = TraceBuilder(rank=0, world_size=1)
    tb.step(1, 0, 1000)
    tb.nccl_allreduce(100, 50, launch_at_us=1, nelems=10, stream=17)   # [100, 150)
    tb.nccl_allreduce(120, 50, launch_at_us=2, nelems=10, stream=21)   # [120, 170)
    tb.kernel("gemm", 140, 100, launch_at_us=3)                        # [140, 240)
    r = row(run(tmp_path, tb).ranks, rank=0)
    assert r.comm_total_us == 170 - 100
    assert r.overlap_total_us == 170 - 140
    assert r.busy_total_us == 240 - 100 and r.idle_total_us == 0


# -- per-step attribution ------------------------------------------------------------
def test_step_attribution_follows_the_launch(tmp_path):
    tb = TraceBuilder(rank=0, world_size=1)
    tb.step(1, 0, 100)
    tb.step(2, 100, 200)
    tb.kernel("k_a", 150, 30, launch_at_us=50)    # launched in step 1, runs during step 2's CPU range
    tb.kernel("k_b", 185, 10, launch_at_us=120)   # step 2
    tb.kernel("k_c", 196, 2, launch_at_us=100)    # launch exactly at step 2's start: step 2 (half-open)
    tb.kernel("k_d", 210, 5, launch_at_us=200)    # launch at step 2's end: no step
    res = run(tmp_path, tb)
    s1, s2 = row(res.steps, step=1), row(res.steps, step=2)
    assert s1.kernels == 1 and s1.compute_us == 30 and s1.span_us == 30
    assert s2.kernels == 2 and s2.compute_us == 10 + 2
    assert s2.span_us == 198 - 185 and s2.idle_us == (198 - 185) - (10 + 2)
    # the step on the device's clock: step 1 lasts until k_a (its launch) ends, step 2 starts there
    assert s1.step_us == 180 - 0 and s2.step_us == 200 - 180
    assert s1.host_step_us == 100 and s2.host_step_us == 100
    r = row(res.ranks, rank=0)
    assert r.kernels == 4 and r.compute_total_us == 30 + 10 + 2 + 5 and r.steps == 2
    g = load(tmp_path).ranks[0].gpu.set_index("name")
    assert g.loc["k_a", "step"] == 1 and g.loc["k_c", "step"] == 2 and g.loc["k_d", "step"] == -1


def test_step_metrics_measure_the_device_work_inside_the_step(tmp_path):
    # step 1's allreduce runs until 190, so step 1 lasts until 190 on the device's clock; step 2's gemm ran
    # inside that window, under the allreduce: it counts in step 1's window, step 2 (190..200) ran nothing
    tb = TraceBuilder(rank=0, world_size=1)
    tb.step(1, 0, 100)
    tb.step(2, 100, 200)
    tb.nccl_allreduce(150, 40, launch_at_us=90, nelems=10)   # step 1, [150, 190)
    tb.kernel("gemm", 150, 30, launch_at_us=110)             # step 2, [150, 180)
    res = run(tmp_path, tb)
    s1, s2 = row(res.steps, step=1), row(res.steps, step=2)
    assert s1.step_us == 190 - 0 and s2.step_us == 200 - 190
    assert s1.comm_us == 40 and s1.compute_us == 30 and s1.overlap_us == 180 - 150
    assert s1.exposed_comm_us == 190 - 180 and s1.busy_us == 190 - 150
    assert s2.busy_us == 0 and s2.kernels == 1
    assert row(res.ranks, rank=0).overlap_total_us == 180 - 150


def test_step_cuts_work_that_runs_across_its_end(tmp_path):
    # a CPU-bound step: the host range ends last; a kernel of step 1 launched late runs into step 2's window
    # only as far as step 1's end allows (step 1 ends with its last kernel), and a kernel of step 2 that starts
    # before step 2's host range (impossible on one stream, possible on a second) is cut at step 2's start
    tb = TraceBuilder(rank=0, world_size=1)
    tb.step(1, 0, 100)
    tb.step(2, 100, 200)
    tb.kernel("k1", 90, 20, launch_at_us=80)                 # step 1, [90, 110): step 1 ends at 110
    tb.kernel("k2", 105, 50, launch_at_us=101, stream=9)      # step 2, [105, 155): 5 µs of it before 110
    res = run(tmp_path, tb)
    s1, s2 = row(res.steps, step=1), row(res.steps, step=2)
    assert s1.step_us == 110 and s2.step_us == 200 - 110
    assert s1.busy_us == 110 - 90 and s2.busy_us == 155 - 110
    for s in (s1, s2):
        assert s.busy_us <= s.step_us and s.compute_us <= s.step_us


def test_pre_window_kernels(tmp_path):
    tb = TraceBuilder(rank=0, world_size=1)
    tb.step(1, 0, 100)
    tb.kernel("k_pre", 45, 3, pre_window=True)         # runs inside step 1's range, but launched before the window
    tb.collective("allreduce", 20, 10, launch_at_us=0, nelems=100, pre_window=True)   # nccl, no CPU op/launch
    tb.kernel("k_in", 50, 10, launch_at_us=40)
    res = run(tmp_path, tb)
    r = row(res.ranks, rank=0)
    assert r.kernels == 3 and r.pre_window_kernels == 2
    assert r.compute_total_us == 3 + 10 and r.comm_total_us == 10
    assert r.span_us == 60 - 20
    s1 = row(res.steps, step=1)
    assert s1.kernels == 1 and s1.compute_us == 10 and s1.comm_us == 0
    assert res.meta["pre_window_kernels"] == 2
    c = row(res.collectives, rank=0)
    assert bool(c.pre_window) and c.step == -1 and c.seq == -1 and c.step_seq == -1 and c.launch_ts_ns == -1
    assert c.coll_name == "allreduce" and c.bytes == 100 * 4
    assert r.collectives == 0  # pre-window instances are not counted


def test_duplicate_step_on_two_threads_longest_wins(tmp_path):
    tb = TraceBuilder(rank=0, world_size=1)
    tb.step(1, 0, 100, tid=1000)
    tb.step(1, 0, 40, tid=2000)
    tb.kernel("k", 60, 5, launch_at_us=70)   # only inside the longer range
    res = run(tmp_path, tb)
    assert len(res.steps) == 1
    assert row(res.steps, step=1).step_us == 100 and row(res.steps, step=1).kernels == 1


# -- collectives: bytes, bandwidth, args ---------------------------------------------------
def test_bus_factor():
    assert bus_factor("allreduce", 2) == 2 * (2 - 1) / 2
    assert bus_factor("allreduce", 8) == 2 * (8 - 1) / 8
    assert bus_factor("allgather", 4) == (4 - 1) / 4
    assert bus_factor("_allgather_base", 8) == (8 - 1) / 8
    assert bus_factor("reduce_scatter", 4) == (4 - 1) / 4
    assert bus_factor("_reduce_scatter_base", 4) == (4 - 1) / 4
    assert bus_factor("all_to_all", 4) == (4 - 1) / 4
    assert bus_factor("broadcast", 4) == 1
    assert bus_factor(None, 4) == 1


def test_bus_factor_coalesced_reduce_scatter():
    assert bus_factor("reduce_scatter_tensor_coalesced", 4) == (4 - 1) / 4


def test_bytes_algbw_busbw(tmp_path):
    tb = TraceBuilder(rank=0, world_size=1)
    tb.step(1, 0, 10_000)
    # allreduce over 4 ranks: 1e6 fp32 = 4e6 B in 100 µs
    tb.nccl_allreduce(1000, 100, launch_at_us=10, nelems=1_000_000, group_size=4)
    # allgather: bytes from the larger (output) count, bf16
    tb.collective("allgather", 2000, 50, launch_at_us=20, nelems=0, in_nelems=250_000, out_nelems=1_000_000,
                  dtype="BFloat16", group_size=4)
    # reduce_scatter: bytes from the larger (input) count
    tb.collective("reduce_scatter", 3000, 80, launch_at_us=30, nelems=0, in_nelems=1_000_000,
                  out_nelems=250_000, group_size=4)
    tb.collective("broadcast", 4000, 10, launch_at_us=40, nelems=1000, dtype="Long", group_size=4)
    c = run(tmp_path, tb).collectives.set_index("coll_name")
    ar, ag, rs, bc = c.loc["allreduce"], c.loc["allgather"], c.loc["reduce_scatter"], c.loc["broadcast"]
    assert ar.bytes == 1_000_000 * 4 and ar.nelems == 1_000_000 and ar.group_size == 4
    assert ar.algbw_incl_wait_gbps == pytest.approx(4e6 / 1e9 / 100e-6)
    assert ar.busbw_incl_wait_gbps == pytest.approx(4e6 / 1e9 / 100e-6 * 2 * (4 - 1) / 4)
    assert ag.bytes == 1_000_000 * 2
    assert ag.algbw_incl_wait_gbps == pytest.approx(2e6 / 1e9 / 50e-6)
    assert ag.busbw_incl_wait_gbps == pytest.approx(2e6 / 1e9 / 50e-6 * (4 - 1) / 4)
    assert rs.bytes == 1_000_000 * 4
    assert rs.busbw_incl_wait_gbps == pytest.approx(4e6 / 1e9 / 80e-6 * (4 - 1) / 4)
    assert bc.bytes == 1000 * 8 and bc.busbw_incl_wait_gbps == pytest.approx(8000 / 1e9 / 10e-6)
    assert ar.dur_us == 100 and ar.start_ns == 1000 * 1000 and ar.end_ns == 1100 * 1000


def test_args_recovered_from_record_param_comms(tmp_path):
    # compiled runs: the nccl kernel carries no collective args; the CPU op has them
    tb = TraceBuilder(rank=0, world_size=2)
    tb.step(1, 0, 1000)
    tb.nccl_allreduce(100, 50, launch_at_us=10, nelems=3000, dtype="BFloat16", pg="7", kernel_args=False,
                      pg_desc="my_pg", group_size=2)
    with pytest.warns(TraceLoadWarning, match=r"rank\(s\) \[1\]"):
        res = run(tmp_path, tb)
    c = row(res.collectives, rank=0)
    assert c.coll_name == "allreduce" and c.pg_name == "7" and c.pg_desc == "my_pg" and c["dtype"] == "BFloat16"
    assert c.nelems == 3000 and c.bytes == 3000 * 2 and c.group_size == 2
    assert c.launch_ts_ns == 10 * 1000  # the record_param_comms op's start
    assert c.step == 1 and not c.pre_window
    assert c.busbw_incl_wait_gbps == pytest.approx(6000 / 1e9 / 50e-6 * 2 * (2 - 1) / 2)


def test_coll_name_guessed_from_kernel_name_without_args(tmp_path):
    tb = TraceBuilder(rank=0, world_size=1)
    tb.kernel("ncclDevKernel_ReduceScatter_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 10, 5,
              pre_window=True)
    c = row(run(tmp_path, tb).collectives, rank=0)
    assert c.coll_name == "reduce_scatter" and math.isnan(c.bytes) and math.isnan(c.busbw_incl_wait_gbps)


def test_comm_by_external_id_link(tmp_path):
    # a non-nccl kernel launched by record_param_comms is communication, linked via the
    # launch's External id when the kernel itself has none
    tb = TraceBuilder(rank=0, world_size=1)
    tb.step(1, 0, 1000)
    ext = tb.next_external_id()
    tb.cpu_op("record_param_comms", 10, 20, external_id=ext, **{
        "Collective name": "allreduce", "In msg nelems": 500, "Out msg nelems": 500, "Group size": 1,
        "dtype": "Float", "Process Group Name": "0", "Process Group Description": "default_pg"})
    k = tb.kernel("custom_allreduce_impl", 100, 40, stream=17, launch_at_us=11, external_id=ext,
                  launch_name="cuLaunchKernelEx")
    del k["args"]["External id"]
    tb.kernel("gemm", 120, 100, launch_at_us=12)
    res = run(tmp_path, tb)
    r = row(res.ranks, rank=0)
    assert r.comm_total_us == 40 and r.compute_total_us == 100 and r.overlap_total_us == 140 - 120
    c = row(res.collectives, rank=0)
    assert c.kernel == "custom_allreduce_impl" and c.coll_name == "allreduce" and c.bytes == 500 * 4


def test_user_comm_pattern(tmp_path):
    tb = TraceBuilder(rank=0, world_size=1)
    tb.step(1, 0, 1000)
    tb.kernel("myCommKernel_send", 100, 30, launch_at_us=1)
    tb.kernel("gemm", 110, 50, launch_at_us=2)
    tb.write(tmp_path / "rank0.trace.json.gz")
    default = row(analyze(load(tmp_path)).ranks, rank=0)
    assert default.comm_total_us == 0 and default.compute_total_us == 160 - 100
    custom = analyze(load(tmp_path), AnalyzeOptions(comm_pattern=r"^myComm"))
    r = row(custom.ranks, rank=0)
    assert r.comm_total_us == 30 and r.compute_total_us == 50 and r.overlap_total_us == 130 - 110
    assert r.overlap_pct == 100 * (130 - 110) / 30
    assert row(custom.collectives, rank=0).kernel == "myCommKernel_send"


# -- seq, phases, buckets ------------------------------------------------------------------
def test_seq_and_step_seq_per_process_group(tmp_path):
    tb = TraceBuilder(rank=0, world_size=1)
    tb.step(1, 0, 100)
    tb.step(2, 100, 200)
    tb.nccl_allreduce(300, 5, launch_at_us=10, nelems=1)
    tb.nccl_allreduce(310, 5, launch_at_us=20, nelems=1, pg="1")
    tb.nccl_allreduce(320, 5, launch_at_us=30, nelems=1)
    tb.nccl_allreduce(330, 5, launch_at_us=110, nelems=1)
    c = run(tmp_path, tb).collectives.sort_values("launch_ts_ns")
    assert c["pg_name"].astype(str).tolist() == ["0", "1", "0", "0"]
    assert c["step"].tolist() == [1, 1, 1, 2]
    assert c["seq"].tolist() == [0, 0, 1, 2]
    assert c["step_seq"].tolist() == [0, 0, 1, 0]


def _phase_trace(tb, t=0):
    """Step [t, t+1000): forward [10,110), backward ops [200,220)+[380,400), optimizer [500,600)."""
    tb.step(1 + t // 1000, t, t + 1000)
    tb.annotation("DistributedDataParallel.forward", t + 10, 100)
    tb.cpu_op(BWD, t + 200, 20)
    tb.cpu_op(BWD, t + 380, 20)
    tb.annotation("Optimizer.step#SGD.step", t + 500, 100)


def test_phase_labels(tmp_path):
    tb = TraceBuilder(rank=0, world_size=1)
    _phase_trace(tb)
    for launch in (50, 250, 390, 400, 550, 700):
        tb.nccl_allreduce(launch + 5, 1, launch_at_us=launch, nelems=1)
    c = run(tmp_path, tb).collectives.sort_values("launch_ts_ns")
    # 400 is the backward span's (exclusive) end
    assert c["phase"].tolist() == ["forward", "backward", "backward", "other", "optimizer", "other"]


def test_phase_labels_with_backward_ops_outside_steps(tmp_path):
    tb = TraceBuilder(rank=0, world_size=1, t0_us=1000.0)  # the op at -300 must stay a valid ts (>= 0)
    _phase_trace(tb)
    tb.cpu_op(BWD, -300, 20)     # tail of the step before the window
    tb.cpu_op(BWD, 1200, 20)     # after the last step
    tb.nccl_allreduce(705, 1, launch_at_us=700, nelems=1)
    assert row(run(tmp_path, tb).collectives, rank=0).phase == "other"


def _bucket_trace(tb):
    """world_size 2 (rank 1 not written): allreduce busbw factor 2(2-1)/2 = 1."""
    tb.step(1, 0, 1000)
    tb.annotation("DistributedDataParallel.forward", 10, 100)
    tb.nccl_allreduce(60, 5, launch_at_us=50, nelems=1)                # forward: not a bucket
    tb.cpu_op(BWD, 200, 20)
    tb.cpu_op(BWD, 380, 20)                                            # step 1 backward [200, 400)
    tb.nccl_allreduce(300, 40, launch_at_us=250, nelems=1000)
    tb.nccl_allreduce(400, 20, launch_at_us=390, nelems=2000)
    tb.step(2, 1000, 2000)
    tb.cpu_op(BWD, 1200, 20)
    tb.cpu_op(BWD, 1300, 50)                                           # step 2 backward [1200, 1350)
    tb.nccl_allreduce(1260, 30, launch_at_us=1210, nelems=3000)
    tb.nccl_allreduce(1400, 10, launch_at_us=1290, nelems=4000)


def _check_buckets(b):
    b = b.sort_values(["step", "bucket"])
    assert b["step"].tolist() == [1, 1, 2, 2]
    assert b["bucket"].tolist() == [0, 1, 0, 1]
    assert b["bytes"].tolist() == [1000 * 4, 2000 * 4, 3000 * 4, 4000 * 4]
    # offsets on the device's clock: to_device(t) = min(t + lag of the operation launched last at or before t,
    # device start of the one launched next; lag = device start − launch call). Step 1: the backward start (200)
    # and the launch at 250 follow the forward allreduce's launch call (51 -> kernel 60: lag 9); the launch at
    # 390 follows bucket 0's (251 -> 300: lag 49) but its own kernel, launched next (391), starts at 400.
    # Step 2: its backward start (1200) follows step 1's bucket 1 (391 -> 400: lag 9), as does the launch at
    # 1210; the launch at 1290 follows step 2's bucket 0 (1211 -> 1260: lag 49).
    assert b["launch_offset_us"].tolist() == [(250 + 9) - (200 + 9), min(390 + 49, 400) - (200 + 9),
                                              (1210 + 9) - (1200 + 9), (1290 + 49) - (1200 + 9)]
    assert b["start_offset_us"].tolist() == [300 - (200 + 9), 400 - (200 + 9), 1260 - (1200 + 9), 1400 - (1200 + 9)]
    assert b["dur_us"].tolist() == [40, 20, 30, 10]
    assert b["exposed_us"].tolist() == [40, 20, 30, 10]
    assert b["busbw_incl_wait_gbps"].tolist() == pytest.approx([4000 / 1e9 / 40e-6, 8000 / 1e9 / 20e-6,
                                                      12000 / 1e9 / 30e-6, 16000 / 1e9 / 10e-6])


def test_bucket_table(tmp_path):
    tb = TraceBuilder(rank=0, world_size=2)
    _bucket_trace(tb)
    with pytest.warns(TraceLoadWarning):
        res = run(tmp_path, tb)
    _check_buckets(res.buckets)


def test_bucket_table_with_backward_ops_outside_steps(tmp_path):
    tb = TraceBuilder(rank=0, world_size=2)
    _bucket_trace(tb)
    tb.cpu_op(BWD, -300, 10)   # a backward op before the first ProfilerStep
    tb.cpu_op(BWD, 2500, 10)   # and one after the last
    tb.nccl_allreduce(710, 5, launch_at_us=700, nelems=1)   # step 1, outside its backward span [200, 400)
    with pytest.warns(TraceLoadWarning):
        res = run(tmp_path, tb)
    _check_buckets(res.buckets)


def test_gradients_ready_on_the_gpu_ignores_a_side_stream_kernel_still_running(tmp_path):
    """ready_gpu_ns: the latest end of the compute launched before the allreduce that had ended when its
    kernel started. A comm hook's callback kernel on a pool stream, launched earlier but still running at
    the NCCL kernel's start, was not waited for (it made queue_us negative on bf16-hook runs)."""
    tb = TraceBuilder(rank=0, world_size=2)
    tb.step(1, 0, 1000)
    tb.cpu_op(BWD, 200, 20)
    tb.kernel("gemm", 230, 50, launch_at_us=205)                     # compute stream: ends at 280
    tb.kernel("copy_callback", 260, 140, stream=23, launch_at_us=210)  # pool stream: runs 260-400
    tb.kernel("gemm_early", 100, 20, launch_at_us=90)                # ends at 120, long before
    tb.cpu_op(BWD, 380, 20)
    tb.nccl_allreduce(300, 40, launch_at_us=250, nelems=1000)
    with pytest.warns(TraceLoadWarning):
        t = run(tmp_path, tb).tables["bucket_timeline"]
    r = row(t, step=1, bucket=0)
    assert r.start_ns - r.ready_gpu_ns == 20_000        # the gemm's end (280 us), not the callback's (400 us)
    # start - max(ready_gpu, launch on the device's clock): the launch (250) follows the callback's (210 -> 260:
    # lag 50), bounded by its own kernel's start (300)
    assert r.queue_us == pytest.approx(300 - max(280, min(250 + 50, 300)))


# -- cross-rank ---------------------------------------------------------------------------
#: per instance: (launch, rank0 start, rank0 dur, rank1 start, rank1 dur)
INSTANCES = [(10, 100, 50, 130, 20), (200, 300, 10, 290, 20), (400, 500, 20, 505, 17)]


def _two_ranks(t0=(0.0, 0.0), nelems=(1_000_000, 1_000_000)):
    out = []
    for r in (0, 1):
        tb = TraceBuilder(rank=r, world_size=2, t0_us=t0[r])
        tb.step(1, 0, 1000)
        for launch, s0, d0, s1, d1 in INSTANCES:
            tb.nccl_allreduce((s0, s1)[r], (d0, d1)[r], launch_at_us=launch, nelems=nelems[r])
        out.append(tb)
    return out


def _check_instances(res):
    inst = res.instances.sort_values("step_seq")
    assert inst["ranks"].tolist() == [2, 2, 2]
    assert inst["skew_us"].tolist() == [130 - 100, 300 - 290, 505 - 500]
    assert inst["straggler"].tolist() == [1, 0, 1]
    assert inst["transfer_us"].tolist() == [min(50, 20), min(10, 20), min(20, 17)]
    assert inst["end_spread_us"].tolist() == [0, 0, (505 + 17) - (500 + 20)]
    assert inst["consistent"].all()
    assert inst["busbw_gbps"].tolist() == pytest.approx([4e6 / 1e9 / 20e-6, 4e6 / 1e9 / 10e-6, 4e6 / 1e9 / 17e-6])
    w = res.waits.set_index(["rank", "step_seq"])["wait_us"]
    assert w[(0, 0)] == 30 and w[(1, 0)] == 0 and w[(0, 1)] == 0 and w[(1, 1)] == 10 and w[(0, 2)] == 5
    r0, r1 = row(res.ranks, rank=0), row(res.ranks, rank=1)
    assert r0.wait_total_us == 30 + 0 + 5 and r1.wait_total_us == 0 + 10 + 0
    assert r0.last_count == 1 and r1.last_count == 2


@pytest.mark.parametrize("t0", [0.0, BIG_T0])
def test_cross_rank_wait_skew_straggler_transfer(tmp_path, t0):
    res = run(tmp_path, *_two_ranks(t0=(t0, t0)))
    _check_instances(res)
    assert res.meta["clock_aligned"] is False


def test_clock_offsets_with_shifted_rank(tmp_path):
    shift = 5000.0
    with pytest.warns(AnalysisWarning, match=r"3 rejected \(3 kernels do not overlap\)"):  # unaligned clocks
        res_off = run(tmp_path, *_two_ranks(t0=(0.0, shift)), align="off")
    # unaligned: the shift shows up as skew
    assert res_off.instances.sort_values("step_seq")["skew_us"].iloc[0] == (shift + 130) - 100
    off = crossrank.clock_offsets(res_off.collectives)
    # end differences: 5000, 5000, 5002 µs -> median 5000 µs, in ns
    assert off == {0: 0.0, 1: shift * 1000}
    res = analyze(load(tmp_path), AnalyzeOptions(align="on"))
    assert res.meta["clock_aligned"] is True
    assert res.meta["clock_offsets_us"] == {0: 0.0, 1: shift}
    _check_instances(res)


def test_inconsistent_match_warns(tmp_path):
    with pytest.warns(AnalysisWarning, match=r"3 rejected \(3 size differs\)"):
        res = run(tmp_path, *_two_ranks(nelems=(1000, 2000)))
    assert not res.instances["consistent"].any()
    assert not res.instances["accepted"].any() and set(res.instances["check"]) == {"size differs"}
    assert res.waits.empty and res.ranks["wait_total_us"].isna().all()
    assert res.meta["matching"] == {"matched": 3, "accepted": 0, "rejected": 3, "rejected_by": {"size differs": 3},
                                    "flagged": {}}


# -- decoding: precision, compact JSON, rank fallback ------------------------------------------
def test_exact_nanoseconds(tmp_path):
    tb = TraceBuilder(rank=0, world_size=1)
    tb.step(2, 4407664264230.208, 4407664264230.208 + 8097.242)
    tb.kernel("k", 4407664266765.786, 1.234, launch_at_us=4407664264467.08)
    tb.write(tmp_path / "rank0.json")
    assert b"4407664266765.786" in (tmp_path / "rank0.json").read_bytes()
    rt = load(tmp_path).ranks[0]
    k = rt.gpu.iloc[0]
    assert k.ts_ns == 4407664266765786
    assert k.dur_ns == 1234
    assert k.end_ns == 4407664266765786 + 1234
    assert k.launch_ts_ns == 4407664264467080
    assert rt.steps.iloc[0].dur_ns == 8097242 and rt.steps.iloc[0].ts_ns == 4407664264230208
    assert k.step == 2


def test_exact_nanoseconds_many_values(tmp_path):
    rng = np.random.default_rng(0)
    ns = 4407664264000000 + rng.integers(0, 10**10, 300)
    durs = rng.integers(0, 10**7, 300)
    tb = TraceBuilder(rank=0, world_size=1)
    for t, d in zip(ns.tolist(), durs.tolist()):
        tb.kernel(f"k{t}", t / 1000, d / 1000, pre_window=True)
    path = tb.write(tmp_path / "rank0.json")
    # what was written, as exact decimals
    written = {e["name"]: e for e in json.loads(path.read_text(), parse_float=Decimal)["traceEvents"]
               if e.get("cat") == "kernel"}
    ev = load(path).ranks[0].events
    ev = ev.set_index(ev["name"].astype(str))
    for t, d in zip(ns.tolist(), durs.tolist()):
        e = written[f"k{t}"]
        assert int(e["ts"] * 1000) == t and int(e["dur"] * 1000) == d
        assert ev.loc[f"k{t}", "ts_ns"] == t and ev.loc[f"k{t}", "dur_ns"] == d


def test_compact_json_rank_from_distributed_info(tmp_path):
    # file names sort opposite to the ranks and carry no rank number
    for name, rank in (("trace_a.json", 1), ("trace_b.json", 0)):
        tb = TraceBuilder(rank=rank, world_size=2)
        tb.step(1, 0, 10)
        tb.write(tmp_path / name, compact=True)
    text = (tmp_path / "trace_a.json").read_text()
    assert '"rank":1' in text and '"rank": 1' not in text
    with warnings.catch_warnings():
        warnings.simplefilter("error", TraceLoadWarning)
        ts = load(tmp_path)
    assert sorted(ts.ranks) == [0, 1]
    assert ts.ranks[1].path.name == "trace_a.json" and ts.ranks[0].path.name == "trace_b.json"
    assert ts.world_size == 2


def test_rank_from_file_name_when_no_distributed_info(tmp_path):
    for r in (0, 1):
        tb = TraceBuilder(rank=r, world_size=2, distributed=False)
        tb.step(1, 0, 10)
        tb.write(tmp_path / f"worker_rank{r}.pt.trace.json.gz")
    with pytest.warns(TraceLoadWarning) as rec:
        ts = load(tmp_path)
    msgs = sorted(str(w.message) for w in rec)
    assert len(msgs) == 2
    for r, m in enumerate(msgs):
        assert f"worker_rank{r}.pt.trace.json.gz" in m and f"took rank {r} from the file name" in m
    assert {r: rt.path.name for r, rt in ts.ranks.items()} == {0: "worker_rank0.pt.trace.json.gz",
                                                               1: "worker_rank1.pt.trace.json.gz"}
    assert ts.world_size == 2 and ts.missing_ranks == []


# -- CPU-only (gloo) --------------------------------------------------------------------------
def test_cpu_only_gloo_trace(tmp_path):
    builders = []
    for r in (0, 1):
        tb = TraceBuilder(rank=r, world_size=2, backend="gloo")
        tb.step(1, 0, 100)
        tb.step(2, 100, 300)
        tb.cpu_op("aten::addmm", 10, 20)
        tb.nccl_allreduce(0, 0, launch_at_us=40, nelems=1000)
        tb.nccl_allreduce(0, 0, launch_at_us=150, nelems=1000)
        # gloo runs the work on its own thread: rank 1 reaches each collective 5 µs later
        tb.annotation("gloo:all_reduce", 45 + 5 * r, 30 - 5 * r, tid=99)     # ends at 75 on both ranks
        tb.annotation("gloo:all_reduce", 155 + 5 * r, 30 - 5 * r, tid=99)    # ends at 185 on both ranks
        builders.append(tb)
    assert not any(e["cat"] == "kernel" for e in builders[0].events)
    res = run(tmp_path, *builders)
    assert res.meta["device_metrics"] is False
    assert res.meta["backend"] == "gloo" and res.meta["gpus"] == []
    assert res.meta["notes"]
    for rank in (0, 1):
        r = row(res.ranks, rank=rank)
        for col in ("compute_total_us", "comm_total_us", "overlap_total_us", "overlap_pct", "exposed_comm_total_us",
                    "idle_total_us", "span_us"):
            assert math.isnan(r[col]), col
        assert r.steps == 2 and r.step_mean_us == (100 + 200) / 2 and r.kernels == 0
        assert r.collectives == 2
    assert sorted(res.steps["step_us"].tolist()) == [100, 100, 200, 200]
    c = res.collectives[res.collectives["rank"] == 0].sort_values("launch_ts_ns")
    assert c["step"].tolist() == [1, 2] and c["coll_name"].tolist() == ["allreduce"] * 2
    assert c["bytes"].tolist() == [1000 * 4] * 2
    # CPU instances: the gloo range is the collective; launch is the record_param_comms op
    assert c["launch_ts_ns"].tolist() == [40_000, 150_000]
    assert c["dur_us"].tolist() == [30.0, 30.0]
    assert c["overlap_us"].isna().all() and c["exposed_us"].isna().all()
    inst = res.instances
    assert len(inst) == 2 and (inst["skew_us"] == 5.0).all() and (inst["straggler"] == 1).all()
    assert (inst["transfer_us"] == 25.0).all()
    assert row(res.ranks, rank=0).wait_total_us == 2 * 5.0 and row(res.ranks, rank=1).wait_total_us == 0.0


def test_no_profiler_steps(tmp_path):
    # traces without ProfilerStep annotations: rank rows and cross-rank matching still work
    builders = []
    for r in (0, 1):
        tb = TraceBuilder(rank=r, world_size=2)
        tb.kernel("gemm", 50, 60, launch_at_us=5)                                  # [50, 110)
        tb.nccl_allreduce(100 + 5 * r, 10, launch_at_us=10, nelems=10)            # r0 [100,110), r1 [105,115)
        builders.append(tb)
    res = run(tmp_path, *builders)
    assert res.steps.empty
    r0, r1 = row(res.ranks, rank=0), row(res.ranks, rank=1)
    assert r0.steps == 0 and math.isnan(r0.step_mean_us)
    assert r0.overlap_total_us == 10 and r1.overlap_total_us == 110 - 105
    inst = row(res.instances, step_seq=0)
    assert inst.step == -1 and inst.skew_us == 105 - 100 and inst.straggler == 1 and inst.transfer_us == 10
    assert r0.wait_total_us == 5 and r1.wait_total_us == 0
