"""A real CPU run with --record-shapes: the ops table's GEMM FLOPs per step equal torch's FlopCounterMode over one
training step of the same model and batch (counted here, independently of the trace)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import tracekit

pytestmark = pytest.mark.slow

WIDTH, DEPTH, BATCH = 256, 3, 16


def _flop_counter_gemm_flops() -> int:
    """FLOPs FlopCounterMode counts over forward + backward of tracekit's toy model (its matmuls only)."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    from tracekit.profile.config import ProfileConfig
    from tracekit.profile.models import build_workload, output_to_loss

    model, batch_fn, _ = build_workload(ProfileConfig(model="toy", width=WIDTH, depth=DEPTH, batch_size=BATCH,
                                                      device="cpu", nproc=1))
    x = batch_fn(BATCH, torch.device("cpu"))
    with FlopCounterMode(display=False) as fc:
        output_to_loss(model(x)).backward()
    return int(fc.get_total_flops())


def test_cpu_run_gemm_flops_match_flop_counter(tmp_path: Path) -> None:
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "tracekit", "profile", "--out", str(out), "--device", "cpu", "--nproc", "1",
           "--record-shapes", "--width", str(WIDTH), "--depth", str(DEPTH), "--batch-size", str(BATCH),
           "--warmup", "1", "--steps", "1", "--profile-wait", "0", "--profile-warmup", "1", "--profile-steps", "2",
           "--no-calibrate-profiler", "--timeout", "60"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stderr[-2000:]
    res = tracekit.analyze(out)
    ops = res.tables["ops"]
    gemm = ops[ops["category"].isin(["gemm", "conv"])]
    modelled = gemm["flops_source"] == "shapes"
    assert set(gemm["op"][~modelled]) <= {"aten::linear"}  # composite: its FLOPs are aten::addmm's
    assert set(gemm["op"][modelled]) == {"aten::addmm", "aten::mm"}
    expected = _flop_counter_gemm_flops()
    # forward addmm per layer, backward grad-weight mm per layer and grad-input mm for all but the first
    assert expected == 2 * BATCH * WIDTH * WIDTH * (3 * DEPTH - 1)
    assert gemm["flops_per_step"].sum() == pytest.approx(expected, rel=1e-9)
    # every GEMM, backward ones included (paired by sequence number), belongs to its Linear module
    assert set(gemm.loc[modelled, "module"]) == {f"front.{i}.0" for i in range(DEPTH)}  # the Linear layers
    mods = res.tables["modules"].set_index("module")
    assert mods.loc["", "flops_per_step"] >= expected  # the model's GEMMs (and its elementwise ops)
    assert mods["self_us_per_step"].sum() == pytest.approx(ops["us_per_step"].sum())
