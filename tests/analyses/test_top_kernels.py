"""The top-kernels table (tracekit/analyses/top_kernels.py): hand-built arithmetic and a real trace."""

from __future__ import annotations

from pathlib import Path

import pytest

import tracekit
from tests.tracebuilder import TraceBuilder
from tracekit.analyses import top_kernels

REF = Path(__file__).parents[1] / "data" / "reference"


def test_top_kernels_hand_built(tmp_path: Path) -> None:
    tb = TraceBuilder(rank=0, world_size=1)
    tb.step(1, 0, 1000)
    tb.kernel("gemm", 100, 50, stream=7, launch_at_us=1)
    tb.kernel("gemm", 120, 50, stream=8, launch_at_us=2)   # overlaps the first gemm: 70 µs of union
    tb.kernel("gemm", 300, 30, stream=7, launch_at_us=3)
    tb.kernel("relu", 400, 10, stream=7, launch_at_us=4)
    tb.nccl_allreduce(500, 200, launch_at_us=5, nelems=1000)
    tb.memcpy(800, 40, launch_at_us=6)                      # busy time, but not a kernel
    tb.write(tmp_path / "rank0.trace.json.gz")
    top = tracekit.analyze(tmp_path).top_kernels.set_index("kernel")
    busy = 70 + 30 + 10 + 200 + 40
    assert list(top.index[:2]) == ["ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
                                   "gemm"]
    g = top.loc["gemm"]
    assert g["count"] == 3 and g["dur_total_us"] == pytest.approx(50 + 50 + 30)
    assert g["dur_mean_us"] == pytest.approx(130 / 3) and g["busy_total_us"] == pytest.approx(70 + 30)
    assert g["busy_share_pct"] == pytest.approx(100 * 100 / busy) and g["kernel_class"] == "compute"
    assert top.iloc[0]["kernel_class"] == "comm" and top.iloc[0]["busy_share_pct"] == pytest.approx(100 * 200 / busy)
    assert top.loc["relu", "busy_total_us"] == pytest.approx(10)


def test_top_kernels_real_trace_bounded_and_ranked() -> None:
    res = tracekit.analyze(REF / "inductor")
    top = res.top_kernels
    assert set(top["rank"]) == {0, 1} and (top.groupby("rank").size() == top_kernels.TOP_N).all()
    for rank, t in top.groupby("rank"):
        assert t["dur_total_us"].is_monotonic_decreasing
        busy = float(res.ranks.set_index("rank").loc[rank, "busy_total_us"])
        # an independent computation of the share: the name's union over all its kernels
        assert (t["busy_share_pct"] <= 100.0).all() and t["busy_share_pct"].sum() <= 100.0 * top_kernels.TOP_N
        assert ((t["busy_total_us"] <= t["dur_total_us"] + 1e-6)).all()
        assert t["busy_share_pct"].iloc[0] == pytest.approx(100 * t["busy_total_us"].iloc[0] / busy)


def test_top_kernels_in_every_output() -> None:
    from click.testing import CliRunner

    from tracekit.cli import main

    r = CliRunner().invoke(main, ["analyze", str(REF / "eager"), "--format", "csv", "--table", "top_kernels"])
    assert r.exit_code == 0 and r.stdout.splitlines()[0].startswith("rank,kernel,kernel_class,count")
    r = CliRunner().invoke(main, ["analyze", str(REF / "eager")])
    assert "Top kernels per rank" in r.stdout
