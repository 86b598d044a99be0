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

from tracekit.replay import evidence, validation
from tracekit.replay.scenario_spec import Scenario
from tracekit.replay.api import WhatifResult

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"


def _variants(check: validation.Check) -> list[dict]:
    """The variant rows of the check's files whose change is the check's and whose run matches ``variants``."""
    rows = []
    for fragment in check.sources:
        files = evidence.result_files(RESULTS, fragment)
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
    # world size: a run of one rank gets the checks of runs grown from one rank, a run of several the others
    ws = [{"name": "world-size=2", "changes": {"world_size": 2}}]
    one = WhatifResult(baseline={}, profiler_cost={}, ranks=pd.DataFrame({"rank": [0]}), steps=empty, scenarios=ws)
    two = WhatifResult(baseline={}, profiler_cost={}, ranks=pd.DataFrame({"rank": [0, 1]}), steps=empty, scenarios=ws)
    grown = [c for c in validation.CHECKS if c.change == "world_size" and c.from_one_rank]
    assert len(grown) == 2 and [c["setting"] for c in one.scenario_checks] == [c.setting for c in grown]
    assert {c["setting"] for c in two.scenario_checks} == {c.setting for c in validation.CHECKS
                                                           if c.change == "world_size" and not c.from_one_rank}
    # and the checks of runs over the same backend (and single GPUs): a gloo run sees no NCCL row
    bc = [{"name": "bucket-cap-mb=5", "changes": {"bucket_cap_mb": 5.0}}]
    gloo = WhatifResult(baseline={}, profiler_cost={}, ranks=empty, steps=empty, scenarios=bc, backend="gloo")
    nccl = WhatifResult(baseline={}, profiler_cost={}, ranks=empty, steps=empty, scenarios=bc, backend="nccl")
    assert gloo.scenario_checks and all("CPU/gloo" in c["setting"] for c in gloo.scenario_checks)
    assert nccl.scenario_checks and all(c["setting"].startswith("NCCL") for c in nccl.scenario_checks)
    assert len(gloo.scenario_checks) + len(nccl.scenario_checks) == len(r.scenario_checks)


def _ranking_rows(k: validation.Ranking) -> list[dict]:
    rows = []
    for fragment in k.sources:
        files = evidence.result_files(RESULTS, fragment)
        assert files, f"{fragment}: no such result file"
        rows += [r for f in files for r in map(json.loads, f.read_text().splitlines())
                 if re.search(k.variants, r["variant"])]
    return rows


@pytest.mark.parametrize("k", validation.RANKINGS, ids=lambda k: k.setting[:40])
def test_ranking_matches_its_results(k: validation.Ranking) -> None:
    pairs, ranked, misses = validation.ranked_pairs(_ranking_rows(k))
    assert (pairs, ranked) == (k.pairs, k.ranked)
    assert len(misses) == pairs - ranked and (k.misses == "none") == (not misses)


def test_ranked_pairs_counts_separated_pairs_only() -> None:
    """Three variants of one baseline, measured a +10 % (quartiles 8..12), b -5 % (-7..-3), c +1 % (-2..4); the
    baseline is 0 with no spread. Separated: (base, a), (base, b), (a, b), (a, c), (b, c) (-3 < -2); c's quartiles
    hold 0, so (base, c) has no measured order. Predicted a +4, b -1, c +2 order all five as measured; b
    predicted at 0, a tie with the baseline, counts against."""
    row = lambda ch, p, m, q1, q3: {"variant": "run:" + ch, "changes": ch, "predicted_delta_pct": p,  # noqa: E731
                                    "measured_delta_pct": m, "measured_delta_q1_pct": q1, "measured_delta_q3_pct": q3}
    rows = [row("a", 4.0, 10.0, 8.0, 12.0), row("b", -1.0, -5.0, -7.0, -3.0), row("c", 2.0, 1.0, -2.0, 4.0)]
    # pairs: (base, a), (base, b), (a, b), (a, c), (b, c) separated; (base, c) not
    assert validation.ranked_pairs(rows) == (5, 5, [])
    rows[1]["predicted_delta_pct"] = 0.0
    pairs, ranked, misses = validation.ranked_pairs(rows)
    assert (pairs, ranked, misses) == (5, 4, [("run", "baseline", "b")])


def test_whatif_json_carries_the_rankings_with_scenarios_only(tmp_path) -> None:
    res = WhatifResult(baseline={}, profiler_cost={}, ranks=None, steps=None)
    assert res.scenario_ranking == []
    res.scenarios = [{"name": "x", "changes": {"bucket_cap_mb": 5.0}}]
    assert [r["pairs"] for r in res.scenario_ranking] == [k.pairs for k in validation.RANKINGS]


def test_checks_and_rankings_render_as_tables_in_text_and_markdown() -> None:
    """The text report lists each check and ranking as a table row (the long settings wrapped in plain text,
    not in Markdown, whose rows cannot span lines); the reasons stay in the JSON."""
    import warnings

    import tracekit
    from tracekit.report.whatif_render import SETTING_WIDTH, render_text

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = tracekit.whatif(RESULTS.parent.parent / "sample_traces" / "whatif/h200x4_nccl_scenarios" / "toy4096" / "cap25",
                            bucket_cap_mb=5)
    checks = [c for c in validation.CHECKS if c.change == "bucket_cap_mb" and c.backend in (None, "nccl")]
    text = render_text(r, "table", evidence=True)
    assert "CPU/gloo" not in text[text.index("How far these changes"):text.index("How often the predictions")]
    block = text[text.index("How far these changes"):text.index("How often the predictions")]
    lines = block.splitlines()
    for c in checks:  # one row each, its verdict and figures at its end
        tail = [*c.verdict.split(), str(c.runs), f"{c.delta_error_pp_median:.1f}", f"{c.delta_error_pp_max:.1f}"]
        assert any(line.split()[-len(tail):] == tail for line in lines)
        assert c.why[:40] not in text
    assert max(len(line) for line in block.splitlines()[1:]) < SETTING_WIDTH + 80
    assert "scenario_checks[].why in --format json" in text
    md = render_text(r, "markdown", evidence=True)
    rows = [line for line in md[md.index("How far these changes"):].splitlines() if line.startswith("| bucket-cap-mb")]
    assert len(rows) == len(checks) and all(line.endswith("|") for line in rows)
    ranking = md[md.index("How often the predictions"):]
    assert sum(line.startswith("| ") for line in ranking.splitlines()) == len(validation.RANKINGS) + 1



def test_a_change_checked_in_one_setting_is_quoted_its_figures_in_the_singular() -> None:
    """--cuda-graphs has one setting of checks (one H100): its line says "1 setting" and its one median."""
    import warnings

    import tracekit
    from tracekit.report.whatif_render import render_text

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = tracekit.whatif(RESULTS.parent.parent / "sample_traces" / "whatif/h100_cuda_graphs" / "mlp512x16" / "default",
                            cuda_graphs=True)
    (c,) = [c for c in r.scenario_checks if c["change"] == "cuda_graphs"]
    assert (f"cuda-graphs: checked on 1 setting, {c['runs']} runs: median error {c['delta_error_pp_median']:.1f} "
            f"points of the step, at most {c['delta_error_pp_max']:.1f}") in render_text(r, "table")


def test_default_output_is_a_screen_with_the_evidence_summed() -> None:
    """Without --evidence: one line per change (settings, runs, the error range) and one for the rankings, figures
    summed from the same records the tables list; no date or work-log label reaches the page."""
    import re
    import warnings

    import tracekit
    from tracekit.report.whatif_render import render_text

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = tracekit.whatif(RESULTS.parent.parent / "sample_traces" / "whatif/h200x4_nccl_scenarios" / "toy4096" / "cap25",
                            sweep=("bucket-cap-mb=1,5,25,100",))
    text = render_text(r, "table")
    assert len(text.splitlines()) <= 45 and "How often the predictions" not in text
    done = [c for c in r.scenario_checks if c["verdict"] == "checked" and c["runs"]]
    runs = sum(c["runs"] for c in done)
    top = max(c["delta_error_pp_max"] for c in done)
    assert f"bucket-cap-mb: checked on {len(done)} settings, {runs} runs" in text and f"at most {top:.1f}" in text
    ranked, pairs = sum(k["ranked"] for k in r.scenario_ranking), sum(k["pairs"] for k in r.scenario_ranking)
    assert f"ranked as measured: {ranked} of {pairs} pairs" in text
    assert not re.search(r"\b20\d\d-\d\d-\d\d\b|\bsession\b|\bround \d", text), text
