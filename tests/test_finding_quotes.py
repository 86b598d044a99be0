"""A scan over every committed run folder (sample_traces/, tests/data/): the per-step figures never exceed the
step, and every finding's figures are the values of the table columns it declares (``Finding.QUOTES``)."""

from __future__ import annotations

import math
import re
import warnings
from functools import cache
from pathlib import Path

import numpy as np
import pytest

import tracekit
from tracekit.analyses.findings import as_dicts, kinds

REPO = Path(__file__).resolve().parents[1]
#: every folder holding rank trace files
RUNS = sorted({p.parent.relative_to(REPO).as_posix() for root in ("sample_traces", "tests/data")
               for p in (REPO / root).rglob("*.json*") if "trace" in p.name and p.name != "run.json"})
#: rounding slack: evidence is rounded to 0.1 (µs, %, counts), means are compensated sums
TOL = 0.051


@cache
def _result(run: str):  # noqa: ANN202
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return tracekit.analyze(REPO / run)
        except tracekit.TracekitError:
            return None


def _expected(res, table: str, column: str, how: str, rank: int) -> float:  # noqa: ANN001
    t = res.tables[table]
    rows = t[t["rank"] == rank]
    v = rows[column].astype(float)
    if how == "mean":
        return float(v.mean())
    assert how == "per_step", how
    return float(v.sum() / rows["step"].nunique())


def test_the_scan_covers_the_committed_runs() -> None:
    assert len(RUNS) > 100 and "sample_traces/inductor_no_optimization" in RUNS


def test_every_finding_declares_what_it_quotes() -> None:
    for kind in kinds():
        for field, (table, column, how) in kind.QUOTES.items():
            assert field in kind.__struct_fields__, (kind, field)
            assert how in ("mean", "per_step") and table and column


@pytest.mark.parametrize("run", RUNS)
def test_per_step_figures_never_exceed_the_step(run: str) -> None:
    res = _result(run)
    if res is None:
        pytest.skip("not analysable (its own test says why)")
    s = res.steps
    for col in ("busy_us", "compute_us", "comm_us", "memory_us", "exposed_comm_us", "span_us"):
        bad = s[s[col] > s["step_us"] + 1e-6]
        assert bad.empty, f"{run}: {col} above step_us in {bad[['rank', 'step', col, 'step_us']].to_dict('records')}"
    idle = res.tables.get("gpu_idle")
    if idle is not None and len(idle):
        assert (idle["gpu_busy_us"] <= idle["step_us"] + 1e-6).all(), run
    ev = res.tables.get("bucket_events")
    if ev is not None and len(ev) and len(s):
        step = s.groupby("rank")["step_us"].mean()
        for r, comm in zip(ev["rank"], ev["trace_comm_us_per_step"].astype(float)):
            if math.isfinite(comm) and r in step.index:
                assert comm <= step[r] + 1e-6, (run, r, comm, step[r])
    _bucket_times_inside_steps(run, res)


def _bucket_times_inside_steps(run: str, res) -> None:  # noqa: ANN001
    """The bucket timeline is on the device's clock: its times of one step span at most the step."""
    tl = res.tables.get("bucket_timeline")
    if tl is None or not len(tl):
        return
    step = res.steps.set_index(["rank", "step"])["step_us"]
    times = tl[["ready_us", "launch_us", "start_us", "end_us"]].to_numpy(dtype=float)
    lo, hi = np.fmin(np.nanmin(times, axis=1), 0.0), np.nanmax(times, axis=1)
    for r, s, a, b in zip(tl["rank"], tl["step"], lo, hi):
        if (r, s) in step.index and math.isfinite(b):
            assert b - a <= step[(r, s)] + 1e-3, (run, r, s, a, b, step[(r, s)])


@pytest.mark.parametrize("run", RUNS)
def test_finding_figures_are_their_tables_values(run: str) -> None:
    res = _result(run)
    if res is None:
        pytest.skip("not analysable (its own test says why)")
    by_code = {k.__struct_config__.tag: k for k in kinds()}
    for f in as_dicts(res.tables["findings"]):
        ev = f["evidence"]
        rank = f["rank"] if f["rank"] is not None else ev.get("worst_rank")
        for field, (table, column, how) in by_code[f["code"]].QUOTES.items():
            got = ev.get(field)
            want = _expected(res, table, column, how, rank)
            if got is None:
                assert not np.isfinite(want), (run, f["code"], field, want)
                continue
            assert got == pytest.approx(want, abs=TOL), (run, f["code"], field, table, column)
        cost = ev.get("cost_us")
        if cost is not None and by_code[f["code"]].QUOTES.get("cost_us"):
            # the message quotes the cost in whole µs (of the unrounded value)
            said = [float(x) for x in re.findall(r"(\d+) (?:µs|of \d+ µs)", f["message"])]
            assert any(abs(x - cost) <= 0.5 + TOL for x in said), (run, cost, f["message"])
