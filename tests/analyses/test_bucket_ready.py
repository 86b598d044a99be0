"""The bucket timeline's ready marker comes from the bucket's own step (hand-built compiled traces)."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import tracekit
from tests.tracebuilder import TraceBuilder

AUTOGRAD = 2


def _run(tmp_path: Path, split: bool) -> Path:
    """Two ranks, two steps of 1000 µs; each backward is compiled: one ``CompiledFunctionBackward`` over
    [400, 700) with both allreduces launched from inside it (``split=False``, no DDPOptimizer split), or
    two subgraphs [400, 500) and [550, 650) each followed by the AccumulateGrad hook that launches its bucket
    (``split=True``)."""
    for rank in (0, 1):
        tb = TraceBuilder(rank=rank, world_size=2)
        for n, t in ((1, 0.0), (2, 1000.0)):
            tb.step(n, t, t + 1000)
            tb.kernel("triton_fwd", t + 50, 100, launch_at_us=t + 20)
            if split:
                for b, (s, e) in enumerate(((400, 500), (550, 650))):
                    tb.cpu_op("CompiledFunctionBackward", t + s, e - s, tid=AUTOGRAD)
                    tb.kernel("triton_bwd", t + s + 20, 50, launch_at_us=t + s + 10, launch_tid=AUTOGRAD)
                    tb.cpu_op("autograd::engine::evaluate_function: torch::autograd::AccumulateGrad", t + e, 30,
                              tid=AUTOGRAD)  # the reducer's hook launches the bucket
                    tb.nccl_allreduce(t + e + 20, 30, launch_at_us=t + e + 5, nelems=1000 * (b + 1),
                                      tid=AUTOGRAD)
            else:
                tb.cpu_op("CompiledFunctionBackward", t + 400, 300, tid=AUTOGRAD)
                tb.kernel("triton_bwd", t + 420, 50, launch_at_us=t + 410, launch_tid=AUTOGRAD)
                for b, la in enumerate((500, 600)):
                    tb.nccl_allreduce(t + la + 20, 30, launch_at_us=t + la, nelems=1000 * (b + 1), tid=AUTOGRAD)
        tb.write(tmp_path / f"rank{rank}.trace.json")
    return tmp_path


def _timeline(path: Path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tracekit.analyze(tracekit.load(path)).tables["bucket_timeline"]


def test_allreduce_inside_the_one_backward_graph_has_no_ready_marker(tmp_path: Path) -> None:
    tl = _timeline(_run(tmp_path, split=False))
    assert len(tl) == 8 and (tl["ready_source"] == "compiled_subgraph").all()
    # step 1's backward ended at 700 µs, before step 2's launches: it is not when step 2's gradients were ready
    assert (tl["ready_cpu_ns"] == -1).all()
    assert all(math.isnan(v) for v in tl["ready_us"]) and all(math.isnan(v) for v in tl["launch_delay_us"])


def test_split_graph_buckets_are_ready_at_their_subgraph_end(tmp_path: Path) -> None:
    tl = _timeline(_run(tmp_path, split=True))
    assert len(tl) == 8
    # ready at each subgraph's end (500, 650), on the device's clock: + the lag of its kernel (launched 410 ->
    # 420, 560 -> 570: lag 10); the backward starts at 400, after the forward kernel's launch (20 -> 50: lag 30)
    # but before the backward kernel's (410), which the device starts at 420
    assert sorted(set(tl["ready_us"].round(3))) == [500 + 10 - min(400 + 30, 420), 650 + 10 - min(400 + 30, 420)]
    assert sorted(set(tl["launch_delay_us"].round(3))) == [5.0]
