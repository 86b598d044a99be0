"""Finding ``backward_comm_exposed`` on hand-built traces (fires / does not) and on the GPU samples."""

from __future__ import annotations

from pathlib import Path

import pytest

from tracekit.analyses.findings import as_dicts
from tracekit.runner.pipeline import analyze_paths

try:
    from tests.tracebuilder import TraceBuilder
except ImportError:  # pragma: no cover - run from inside tests/
    from tracebuilder import TraceBuilder

BWD = "autograd::engine::evaluate_function: AddmmBackward0"
SAMPLES = Path(__file__).resolve().parents[2] / "sample_traces"


def _trace(tmp_path: Path, compute_under_comm_us: float) -> list[dict]:
    """One step of 1000 µs: backward op [100, 900); compute [100, 400); an allreduce launched at 300
    runs [400, 600) with ``compute_under_comm_us`` of compute under it; a final compute kernel at
    [700, 750) keeps the allreduce from being 'after backward'."""
    for r in (0, 1):
        tb = TraceBuilder(rank=r, world_size=2)
        tb.step(1, 0, 1000)
        tb.cpu_op(BWD, 100, 800)
        tb.kernel("gemm_a", 100, 300, launch_at_us=110)
        if compute_under_comm_us:
            tb.kernel("gemm_b", 400, compute_under_comm_us, stream=8, launch_at_us=310)
        tb.nccl_allreduce(400, 200, launch_at_us=300, nelems=1 << 20)
        tb.kernel("gemm_c", 700, 50, launch_at_us=320)
        tb.write(tmp_path / f"rank{r}.trace.json.gz")
    return as_dicts(analyze_paths([str(tmp_path)]).findings)


def test_fires_when_backward_allreduce_is_mostly_exposed(tmp_path: Path) -> None:
    f = [x for x in _trace(tmp_path, 20) if x["code"] == "backward_comm_exposed"]
    assert len(f) == 1 and f[0]["rank"] is None  # same on both ranks: reported once
    ev = f[0]["evidence"]
    assert ev["overlap_pct"] == pytest.approx(100 * 20 / 200, abs=0.1)  # 10 %
    assert ev["exposed_us_per_step"] == pytest.approx(200 - 20, abs=0.1)
    assert not any(x["code"] == "allreduce_after_backward" for x in _trace(tmp_path, 20))


def test_silent_when_overlapped(tmp_path: Path) -> None:
    # 100 of 200 µs overlapped (50 % >= 25 %): no finding
    assert not any(x["code"] == "backward_comm_exposed" for x in _trace(tmp_path, 100))


def test_real_samples() -> None:
    def codes(run: str) -> set[str]:
        return set(analyze_paths([str(SAMPLES / run)]).findings["code"])

    assert "backward_comm_exposed" in codes("fixtures/aot_eager_python_reducer")
    # overlapped, or already explained by allreduce_after_backward
    assert "backward_comm_exposed" not in codes("fixtures/inductor_ddp_optimizer")
    assert "backward_comm_exposed" not in codes("fixtures/inductor_no_optimization")
