"""The findings reference (docs/reference/findings.md) is written by hand: fail when it names a code the
analysis cannot emit (the registered finding classes), misses one it can, or states a threshold the code
does not use."""

from __future__ import annotations

import re
from pathlib import Path

from tracekit.analyses import collectives, crossrank, distortion, findings, fusion, gpu_idle, ops_findings, timeline

PAGE = Path(__file__).parents[2] / "docs" / "reference" / "findings.md"


def _documented_codes() -> list[str]:
    text = PAGE.read_text(encoding="utf-8")
    table = text.split("| code | fires when | example |")[1].split("\n\n")[0]
    return re.findall(r"^\| `([a-z_]+)` \|", table, re.M)


def _emitted_codes() -> set[str]:
    return {findings.code_of(k) for k in findings.kinds()}


def test_every_finding_code_is_documented_once() -> None:
    documented = _documented_codes()
    assert len(documented) == len(set(documented))
    assert set(documented) == _emitted_codes()


def _fires_when(code: str) -> str:
    row = re.search(rf"^\| `{code}` \| ([^|]+) \|", PAGE.read_text(encoding="utf-8"), re.M)
    assert row is not None, code
    return row.group(1)


def test_thresholds_on_the_page_are_the_codes() -> None:
    assert f"≥{timeline.AFTER_BACKWARD_SHARE:.0%}" in _fires_when("allreduce_after_backward")
    assert f"<{collectives.LOW_OVERLAP_PCT:.0f}%" in _fires_when("backward_comm_exposed")
    assert f"≥{collectives.LOW_OVERLAP_MIN_STEP_PCT:.0f}% of the step" in _fires_when("backward_comm_exposed")
    assert f"> {distortion.DISTORTED_RATIO}" in _fires_when("profiler_distortion")
    assert f"≥{crossrank.WAIT_SHARE_PCT:.0f}%" in _fires_when("rank_waiting")
    assert f"≥{crossrank.WAIT_MIN_US_PER_STEP:.0f} µs/step" in _fires_when("rank_waiting")
    assert f"≥{gpu_idle.GPU_IDLE_PCT:.0f}%" in _fires_when("gpu_idle")
    assert f"≥{gpu_idle.GPU_IDLE_MIN_US:.0f} µs" in _fires_when("gpu_idle")
    for code in ("exposed_first_bucket", "exposed_last_bucket"):
        assert f"≥{timeline.EXPOSED_BUCKET_SHARE:.0%} exposed" in _fires_when(code)
        assert f"≥{timeline.EXPOSED_BUCKET_MIN_STEP_PCT:.0f}% of step" in _fires_when(code)
    assert f"≥{ops_findings.GEMM_MIN_STEP_PCT:.0f}% of the step" in _fires_when("gemm_below_peak")
    assert f"below {ops_findings.GEMM_SLOW_PCT:.0f}% of its roofline" in _fires_when("gemm_below_peak")
    assert f"≥{fusion.CHAIN_MIN_CALLS} consecutive" in _fires_when("unfused_chain")
    assert f"≥{ops_findings.FUSION_MIN_STEP_PCT:.0f}% of the step" in _fires_when("unfused_chain")
    head = PAGE.read_text(encoding="utf-8")
    assert f"≥{findings.SEVERITY_HIGH_PCT:.0f}% high, ≥{findings.SEVERITY_MEDIUM_PCT:.0f}% medium" in head


def test_diff_findings_are_documented_with_their_thresholds() -> None:
    from tracekit.compare import breakdown

    text = PAGE.read_text(encoding="utf-8")
    table = text.split("| code | fires when (`tracekit diff`) | example |")[1].split("\n\n")[0]
    assert re.findall(r"^\| `([a-z_]+)` \|", table, re.M) == [findings.code_of(breakdown.CompiledSlowerThanEager)]
    row = table.splitlines()[-1]
    assert f"≥{breakdown.SLOWER_MIN_PCT:.0f} %" in row and f"≥{breakdown.SLOWER_MIN_US:.0f} µs per step" in row
