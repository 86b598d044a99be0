"""The findings reference (docs/reference/findings.md) is written by hand: fail when it names a code the
analysis cannot emit, misses one it can, or states a threshold the code does not use."""

from __future__ import annotations

import re
from pathlib import Path

from tracekit.analyses import distortion, findings

PAGE = Path(__file__).parent.parent / "docs" / "reference" / "findings.md"
SOURCE = Path(findings.__file__).read_text(encoding="utf-8")


def _documented_codes() -> list[str]:
    text = PAGE.read_text(encoding="utf-8")
    table = text.split("| code | fires when | example |")[1].split("\n\n")[0]
    return re.findall(r"^\| `([a-z_]+)` \|", table, re.M)


def _emitted_codes() -> set[str]:
    direct = set(re.findall(r'_finding\(\s*"([a-z_]+)"', SOURCE))
    buckets = set(re.findall(r'_exposed_bucket\(\s*"([a-z_]+)"', SOURCE))
    return direct | buckets | set(findings.TIMING_CODES)


def test_every_finding_code_is_documented_once() -> None:
    documented = _documented_codes()
    assert len(documented) == len(set(documented))
    assert set(documented) == _emitted_codes()


def _fires_when(code: str) -> str:
    row = re.search(rf"^\| `{code}` \| ([^|]+) \|", PAGE.read_text(encoding="utf-8"), re.M)
    assert row is not None, code
    return row.group(1)


def test_thresholds_on_the_page_are_the_codes() -> None:
    f = findings
    assert f"≥{f.AFTER_BACKWARD_SHARE:.0%}" in _fires_when("allreduce_after_backward")
    assert f"<{f.LOW_OVERLAP_PCT:.0f}%" in _fires_when("backward_comm_exposed")
    assert f"≥{f.LOW_OVERLAP_MIN_STEP_PCT:.0f}% of the step" in _fires_when("backward_comm_exposed")
    assert f"> {distortion.DISTORTED_RATIO}" in _fires_when("profiler_distortion")
    assert f"≥{f.WAIT_SHARE_PCT:.0f}%" in _fires_when("rank_waiting")
    assert f"≥{f.WAIT_MIN_US_PER_STEP:.0f} µs/step" in _fires_when("rank_waiting")
    assert f"≥{f.GPU_IDLE_PCT:.0f}%" in _fires_when("gpu_idle") and f"≥{f.GPU_IDLE_MIN_US:.0f} µs" in _fires_when("gpu_idle")
    for code in ("exposed_first_bucket", "exposed_last_bucket"):
        assert f"≥{f.EXPOSED_BUCKET_SHARE:.0%} exposed" in _fires_when(code)
        assert f"≥{f.EXPOSED_BUCKET_MIN_STEP_PCT:.0f}% of step" in _fires_when(code)
    head = PAGE.read_text(encoding="utf-8")
    assert f"≥{f.SEVERITY_HIGH_PCT:.0f}% high, ≥{f.SEVERITY_MEDIUM_PCT:.0f}% medium" in head
