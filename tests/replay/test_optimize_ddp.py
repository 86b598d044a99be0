"""``whatif --optimize-ddp`` (tracekit.replay.changes.optimize_ddp): one compiled backward graph split at three
DDP buckets, on a hand-built trace whose answer is arithmetic; where it does not apply."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import tracekit
from tracekit.errors import ScenarioError
from tracekit.replay import scenarios as sc
from tracekit.replay.changes.optimize_ddp import SPLIT_NS
from tracekit.replay.graph import GPU_OP
from tracekit.replay.grow import CONTENTION_SLOWDOWN

from tests.replay.test_scenarios import _kernel_end, _scenario
from tests.tracebuilder import TraceBuilder

MIB = 1 << 20


def _one_graph_run(tmp_path: Path, mode: str = "no_optimization") -> Path:
    """Two identical ranks, step [0, 1000] µs, DDPOptimizer off: the backward is one compiled graph
    (CompiledFunctionBackward [20, 80]) launching six 100 µs kernels at 20, 30, ... 70; they run back to back,
    [30, 130] ... [530, 630] (the host is far ahead). DDP's three 1 MiB buckets are allreduced after the graph: each
    launch waits (cudaStreamWaitEvent) for the compute stream, so the kernels run [630, 640], [640, 650],
    [650, 660]."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    for rank in (0, 1):
        tb = TraceBuilder(rank=rank, world_size=2)
        tb.step(1, 0, 1000)
        tb.annotation("tracekit.backward", 10, 200)
        tb.cpu_op("CompiledFunctionBackward", 20, 60)
        for k in range(6):
            tb.kernel(f"triton_bwd_{k}", 30 + 100 * k, 100, launch_at_us=20 + 10 * k)
        for b, at in enumerate((85, 100, 115)):
            tb.launch(at - 3, 900 + b, name="cudaEventRecord", dur_us=1)
            tb.launch(at - 2, 910 + b, name="cudaStreamWaitEvent", dur_us=1)
            tb.nccl_allreduce(630 + 10 * b, 10, launch_at_us=at, nelems=MIB // 4, op_dur_us=5)
        tb.launch(900, 990, name="cudaDeviceSynchronize", dur_us=1)
        tb.write(tmp_path / f"rank{rank}.trace.json.gz")
    (tmp_path / "run.json").write_text(json.dumps({
        "schema_version": 1, "run": {"world_size": 2, "device": "cuda", "backend": "nccl"},
        "config": {"dynamo": "inductor", "optimize_ddp_resolved": mode},
        "buckets": {"reducer": {"bucket_cap_bytes": MIB, "rebuilt_bucket_sizes_bytes": [MIB] * 3,
                                "rebuilt_per_bucket_param_indices": "0, 1, 2", "param_bytes": [MIB] * 3}}}))
    return tmp_path


def _buckets(g, start, end, rank: int = 0) -> list[tuple[float, float]]:
    """(start, end) µs of the rank's allreduce kernels (the GPU operations recorded 10 µs long), by start."""
    return sorted((start[v] / 1e3, end[v] / 1e3) for v in range(len(g.dur))
                  if g.rank[v] == rank and g.kind[v] == GPU_OP and g.orig_end[v] - g.orig_start[v] == 10_000)


def test_three_buckets_split_out_of_one_backward_graph(tmp_path: Path) -> None:
    base, out, start, end = _scenario([_one_graph_run(tmp_path)], sc.Scenario(optimize_ddp="ddp_optimizer"))
    b_start, b_end = sc.simulate.evaluate(base)
    ends = [_kernel_end(base, b_end, 0, 30 + 100 * k) for k in range(6)]  # the baseline's: back to back
    assert [b - a for a, b in zip(ends, ends[1:])] == [100] * 5
    assert _buckets(base, b_start, b_end) == [(ends[5], ends[5] + 10), (ends[5] + 10, ends[5] + 20),
                                              (ends[5] + 20, ends[5] + 30)]
    # bucket b holds a third of the bytes: it is ready after (b + 1) x 6 / 3 kernels, the ends of kernels 1, 3, 5.
    # In one evaluation bucket 0 runs beside the first tenth of kernel 2 and bucket 1 beside kernel 4's: both take
    # 1 + 0.28 x 0.1 longer (2.8 µs), and the kernels after them move by as much
    d = 100 * (CONTENTION_SLOWDOWN - 1) * 0.1
    assert _kernel_end(out, end, 0, 130) == ends[1]
    assert _kernel_end(out, end, 0, 230) == pytest.approx(ends[2] + d)
    assert _kernel_end(out, end, 0, 530) == pytest.approx(ends[5] + 2 * d)
    got = [t for pair in _buckets(out, start, end) for t in pair]
    assert got == pytest.approx([ends[1], ends[1] + 10, ends[3] + d, ends[3] + d + 10, ends[5] + 2 * d,
                                 ends[5] + 2 * d + 10])
    # the host pays two new backward graph boundaries (it is far ahead of the GPU here: they do not show)
    cpu = [v for v in range(len(base.dur)) if base.kind[v] == 0]
    assert sum(out.dur[v] for v in cpu) - sum(base.dur[v] for v in cpu) == 2 * 2 * SPLIT_NS  # two ranks


def test_the_runs_own_mode_and_other_runs(tmp_path: Path) -> None:
    w = tracekit.whatif(_one_graph_run(tmp_path / "a"), optimize_ddp="no_optimization")
    assert w.scenarios[0]["delta_us"] == 0 and any("the run's own mode" in n for n in w.notes)
    eager = _one_graph_run(tmp_path / "b")
    doc = json.loads((eager / "run.json").read_text())
    doc["config"] = {"dynamo": "none"}
    (eager / "run.json").write_text(json.dumps(doc))
    with pytest.raises(ScenarioError, match="not a compiled DDP run"):
        tracekit.whatif(eager, optimize_ddp="ddp_optimizer")


def test_allreduce_after_backward_quotes_the_split(tmp_path: Path) -> None:
    w = tracekit.whatif(_one_graph_run(tmp_path), advice=True)
    f = next(f for f in w.advice if f["code"] == "allreduce_after_backward")
    assert f["evidence"]["whatif"]["scenario"] == "optimize-ddp=ddp_optimizer"


def _split_run(tmp_path: Path) -> Path:
    """As :func:`_one_graph_run`, DDPOptimizer on: three backward graphs (CompiledFunctionBackward [20, 40],
    [80, 100], [140, 160]), each launching two of the six 100 µs kernels ([30, 130] ... [530, 630]); bucket b's
    allreduce is launched after graph b and waits for its second kernel: [230, 240], [430, 440], [630, 640]."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    for rank in (0, 1):
        tb = TraceBuilder(rank=rank, world_size=2)
        tb.step(1, 0, 1000)
        tb.annotation("tracekit.backward", 10, 200)
        for b in range(3):
            tb.cpu_op("CompiledFunctionBackward", 20 + 60 * b, 20)
            for k in (2 * b, 2 * b + 1):
                tb.kernel(f"triton_bwd_{k}", 30 + 100 * k, 100, launch_at_us=22 + 60 * b + 8 * (k - 2 * b))
            at = 45 + 60 * b
            tb.launch(at - 3, 900 + b, name="cudaEventRecord", dur_us=1)
            tb.launch(at - 2, 910 + b, name="cudaStreamWaitEvent", dur_us=1)
            tb.nccl_allreduce(230 + 200 * b, 10, launch_at_us=at, nelems=MIB // 4, op_dur_us=5)
        tb.launch(900, 990, name="cudaDeviceSynchronize", dur_us=1)
        tb.write(tmp_path / f"rank{rank}.trace.json.gz")
    doc = json.loads((_one_graph_run(tmp_path.parent / f"{tmp_path.name}-layout") / "run.json").read_text())
    doc["config"]["optimize_ddp_resolved"] = "ddp_optimizer"
    (tmp_path / "run.json").write_text(json.dumps(doc))
    return tmp_path


def test_split_graphs_merged_every_allreduce_after_the_backward(tmp_path: Path) -> None:
    base, out, start, end = _scenario([_split_run(tmp_path)], sc.Scenario(optimize_ddp="no_optimization"))
    b_start, b_end = sc.simulate.evaluate(base)
    ends = [_kernel_end(base, b_end, 0, 30 + 100 * k) for k in range(6)]
    assert [t for pair in _buckets(base, b_start, b_end) for t in pair] == [
        ends[1], ends[1] + 10, ends[3], ends[3] + 10, ends[5], ends[5] + 10]
    # kernels 2 and 4 ran a tenth beside an allreduce: alone, 100 / (1 + 0.28 x 0.1) µs; the three allreduces then
    # follow the last kernel, one after the other
    d = 100 - 100 / (1 + (CONTENTION_SLOWDOWN - 1) * 0.1)
    last = ends[5] - 2 * d
    assert _kernel_end(out, end, 0, 530) == pytest.approx(last, abs=1e-3)
    got = [t for pair in _buckets(out, start, end) for t in pair]
    assert got == pytest.approx([last, last + 10, last + 10, last + 20, last + 20, last + 30], abs=1e-3)
