"""The what-if scenarios' recorded checks (tracekit.replay.validation) agree with the committed measurements.

Every figure of :data:`~tracekit.replay.validation.CHECKS` is recomputed here from the result files it
names (``benchmarks/results/whatif_scenarios_*.jsonl``, written by ``benchmarks/bench_whatif.py
--baseline ... --variant ...``): the number of variant runs and the median and max delta error, the
absolute difference between the predicted and the measured change in points of the baseline step.
"""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path

import pytest

from tracekit.replay import validation
from tracekit.replay.scenario_spec import Scenario
from tracekit.replay.api import WhatifResult

RESULTS = Path(__file__).resolve().parent.parent / "benchmarks" / "results"


def _variants(check: validation.Check) -> list[dict]:
    """The variant rows of the check's files whose change is the check's and whose run matches ``variants``."""
    rows = []
    for fragment in check.sources:
        files = sorted(RESULTS.glob(f"{fragment}*.jsonl"))
        assert files, f"{fragment}: no such result file"
        for f in files:
            for line in f.read_text().splitlines():
                r = json.loads(line)
                changes = r.get("changes")
                if changes in (None, "baseline"):
                    continue
                if changes.split("=")[0].replace("-", "_") == check.change and re.search(check.variants, r["variant"]):
                    rows.append(r)
    return rows


@pytest.mark.parametrize("check", validation.CHECKS, ids=lambda c: f"{c.change}:{c.setting[:30]}")
def test_check_matches_its_results(check: validation.Check) -> None:
    assert check.change in Scenario.__dataclass_fields__
    assert check.verdict in (validation.CHECKED, validation.NOISY, validation.NOT_RUN)
    if check.verdict == validation.NOT_RUN:
        assert check.runs == 0 and check.delta_error_pp_median is None and not check.sources
        return
    rows = _variants(check)
    errors = [abs(r["predicted_delta_pct"] - r["measured_delta_pct"]) for r in rows]
    assert len(rows) == check.runs
    assert round(statistics.median(errors), 1) == check.delta_error_pp_median
    assert round(max(errors), 1) == check.delta_error_pp_max


def test_every_scenario_field_has_a_check() -> None:
    assert set(Scenario.__dataclass_fields__) == {c.change for c in validation.CHECKS}


def test_result_lists_the_checks_of_its_scenarios_only() -> None:
    import pandas as pd

    empty = pd.DataFrame()
    r = WhatifResult(baseline={}, profiler_cost={}, ranks=empty, steps=empty,
                     scenarios=[{"name": "bucket-cap-mb=5", "changes": {"bucket_cap_mb": 5.0}}])
    assert {c["change"] for c in r.scenario_checks} == {"bucket_cap_mb"}
    assert r.to_dict()["scenario_checks"] == r.scenario_checks
    assert WhatifResult(baseline={}, profiler_cost={}, ranks=empty, steps=empty).scenario_checks == []
