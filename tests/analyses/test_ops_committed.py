"""The ops and modules tables on committed real traces (GPU runs, CPU/gloo runs, public traces of other tools):
they analyse without error, no op is above 100 % of its roofline, and the modules' self times sum to the ops'."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

import tracekit

ROOT = Path(__file__).resolve().parents[2]
RUNS = [
    "sample_traces/fixtures/h200x2_gpt2_inductor_bf16", "sample_traces/fixtures/h200x2_resnet50_inductor_cudaonly",
    "sample_traces/fixtures/eager_ddp", "sample_traces/whatif/cpu16_gloo_scenarios/a/ws1", "sample_traces/whatif/h100_unsynced/vit-bf16",
    *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests/data/external").iterdir() if p.is_dir()),
]


@pytest.mark.parametrize("run", RUNS)
def test_ops_on_committed_traces(run: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = tracekit.analyze(ROOT / run)
    ops, mods = res.tables["ops"], res.tables["modules"]
    assert len(ops) > 0
    assert not (ops["pct_of_roofline"] > 100.0).any(), ops[ops["pct_of_roofline"] > 100.0]
    assert ops["category"].isin(["gemm", "conv", "attention", "elementwise", "reduction", "norm", "memory",
                                 "communication", "other"]).all()
    for rank, rows in ops.groupby("rank"):
        self_us = mods.loc[mods["rank"] == rank, "self_us_per_step"].sum()
        assert self_us == pytest.approx(rows["us_per_step"].sum(), rel=1e-9)
    # a share is at most the whole: on the committed runs communication beside compute summed to 139 % of the step
    assert not (mods["device_share_pct"] > 100.0 + 1e-9).any(), mods[mods["device_share_pct"] > 100.0]
