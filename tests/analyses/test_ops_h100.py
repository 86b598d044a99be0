"""The ops and modules tables on the committed single-H100 runs of ``benchmarks/bench_ops.py``
(sample_traces/examples/h100_ops: GPT-2 bf16, ViT bf16, ResNet-18 fp32; eager and inductor), recomputed here
from the traces and checked against what the GPU run measured independently (the stored
``torch.utils.flop_counter.FlopCounterMode`` counts of one training step, benchmarks/results/bench_ops_h100.json)
and against the raw trace events. Our own figures are recomputed, never read from the JSON."""

from __future__ import annotations

import gzip
import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import tracekit

ROOT = Path(__file__).resolve().parents[2]
RUNS = ROOT / "sample_traces" / "examples" / "h100_ops"
BENCH = {(r["model"], r["mode"]): r
         for r in json.loads((ROOT / "benchmarks" / "results" / "bench_ops_h100.json").read_text())["runs"]}
NAMES = ["gpt2-eager", "gpt2-inductor", "vit-eager", "vit-inductor", "resnet-eager", "resnet-inductor"]
#: is the attention causal where the kernel can skip the masked half? GPT-2 eager calls cuDNN attention with
#: is_causal=True and no mask; compiled, transformers builds an explicit [8, 1, 512, 512] bias and passes
#: is_causal=False, so the kernel computes every score (FlopCounterMode's full count is then the truth); ViT is
#: not causal. None: no attention.
CAUSAL = {"gpt2-eager": True, "gpt2-inductor": False, "vit-eager": False, "vit-inductor": False,
          "resnet-eager": None, "resnet-inductor": None}


def _analyze(name: str) -> tracekit.AnalysisResult:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tracekit.analyze(RUNS / name)


@pytest.fixture(scope="module", params=NAMES)
def run(request: pytest.FixtureRequest) -> tuple[str, tracekit.AnalysisResult]:
    return request.param, _analyze(request.param)


def test_gemm_and_conv_flops_match_flop_counter(run) -> None:
    name, res = run
    ops = res.tables["ops"]
    ours = ops.loc[ops["category"].isin(["gemm", "conv"]), "flops_per_step"].sum()
    counted = BENCH[tuple(name.split("-"))]["gemm_conv_flops_counter"]
    assert ours == pytest.approx(counted, rel=0.03)


def test_attention_flops_match_the_counter_halved_where_causal(run) -> None:
    """FlopCounterMode counts every score (it does not halve causal attention): the expected count is its
    figure, halved where the kernel was told is_causal."""
    name, res = run
    ops = res.tables["ops"]
    ours = ops.loc[ops["category"] == "attention", "flops_per_step"].sum()
    counted = BENCH[tuple(name.split("-"))]["attention_flops_counter"]
    if CAUSAL[name] is None:
        assert ours == 0 and counted == 0
        return
    assert ours == pytest.approx(counted / 2 if CAUSAL[name] else counted, rel=0.05)


def test_no_op_above_its_roofline(run) -> None:
    _, res = run
    ops = res.tables["ops"]
    assert not (ops["pct_of_roofline"] > 100.0).any(), ops[ops["pct_of_roofline"] > 100.0][["op", "pct_of_roofline"]]


def test_modules_self_time_is_the_ops_time(run) -> None:
    _, res = run
    ops, mods = res.tables["ops"], res.tables["modules"]
    assert mods["self_us_per_step"].sum() == pytest.approx(ops["us_per_step"].sum(), rel=0.01)


def _raw_device_us_per_step(name: str) -> tuple[float, float]:
    """From the raw trace: ``(summed duration, union)`` per ProfilerStep of the GPU activities whose launch lies
    in a ProfilerStep."""
    doc = json.loads(gzip.open(RUNS / name / "rank0.trace.json.gz").read())
    ev = doc["traceEvents"]
    steps = [(e["ts"], e["ts"] + e["dur"]) for e in ev if str(e.get("name", "")).startswith("ProfilerStep#")]
    launch = {e["args"]["correlation"]: e["ts"] for e in ev
              if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {})}
    gpu = [e for e in ev if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")
           and any(a <= launch.get(e["args"].get("correlation"), -1) < b for a, b in steps)]
    total = sum(e["dur"] for e in gpu)
    iv = sorted((e["ts"], e["ts"] + e["dur"]) for e in gpu)
    union, end = 0.0, -np.inf
    for a, b in iv:
        if b > end:
            union += b - max(a, end)
            end = b
    return total / len(steps), union / len(steps)


@pytest.mark.parametrize("name", NAMES)
def test_ops_time_is_each_activity_once_which_can_exceed_busy_time(name: str) -> None:
    """The ops' time is the sum of the GPU activities' durations; the steps' busy time is their union. The two
    differ only where activities overlap: on the ResNet runs (one stream) cuDNN's kernels overlap their
    neighbours (Hopper's programmatic dependent launch), so the sum exceeds the union there."""
    res = _analyze(name)
    total, union = _raw_device_us_per_step(name)
    assert res.tables["ops"]["us_per_step"].sum() == pytest.approx(total, rel=1e-6)
    assert res.tables["steps"]["busy_us"].mean() == pytest.approx(union, rel=1e-3)
    if name.startswith("resnet"):
        assert total > union * 1.002  # the overlap is real: 0.24 % (eager), 2.5 % (inductor) of the busy time


def test_the_committed_results_hold_this_checkouts_figures(run) -> None:
    """benchmarks/results/bench_ops_h100.json's side of ours is what this checkout computes from the committed
    run (``bench_ops.py --remeasure`` rewrites it after a change to the models): a stale file fails here."""
    name, res = run
    row = BENCH[tuple(name.split("-"))]
    assert row["figures"] == f"recomputed from {RUNS.relative_to(ROOT) / name}"
    ops = res.tables["ops"]
    assert row["gemm_conv_flops"] == pytest.approx(
        ops.loc[ops["category"].isin(["gemm", "conv"]), "flops_per_step"].sum(), rel=1e-12)
    assert row["max_pct_of_roofline"] == pytest.approx(ops["pct_of_roofline"].max(), rel=1e-12)
    assert row["ops_us_per_step"] == pytest.approx(ops["us_per_step"].sum(), rel=1e-12)
