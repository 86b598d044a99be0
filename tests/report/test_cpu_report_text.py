"""The text report of a CPU-only (gloo) run: no "GPU time" title, no all-empty device columns (JSON keeps
them), ratios printed with the run summary's rounding. Hand-built two-rank gloo traces."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

import tracekit
from tracekit.report import render
from tracekit.report.fmt import table
from tests.tracebuilder import TraceBuilder


def _gloo_run(tmp_path: Path) -> Path:
    for rank in (0, 1):
        tb = TraceBuilder(rank=rank, world_size=2, backend="gloo")
        for s in range(2):
            t = 1000.0 * s
            tb.step(s, t, t + 900)
            tb.annotation("tracekit.backward", t + 100, 600)
            tb.cpu_op("gloo:all_reduce", t + 300 + 50 * rank, 200, tid=2000)
        tb.write(tmp_path / f"rank{rank}.trace.json")
    return tmp_path


def test_cpu_run_hides_empty_device_columns_and_says_so(tmp_path: Path) -> None:
    res = tracekit.analyze(_gloo_run(tmp_path))
    assert res.meta["device_metrics"] is False
    text = render.render(res, "table")
    section = text.split("Per-rank breakdown")[1].split("\n\n\n")[0]
    assert "GPU time" not in section and "CPU-only run" in section.splitlines()[0]
    header = section.splitlines()[2]
    assert "compute_per_step_us" not in header and "overlap_pct" not in header and "step_mean_us" in header
    assert "not shown (--format json / csv keep them): compute_per_step_us, comm_per_step_us" in section
    doc = json.loads(render.render(res, "json"))
    assert "compute_total_us" in doc["ranks"][0] and doc["ranks"][0]["compute_total_us"] is None


def test_gpu_run_keeps_every_column(tmp_path: Path) -> None:
    tb = TraceBuilder(rank=0, world_size=1)
    tb.step(0, 0, 1000)
    tb.kernel("gemm", 10, 100, launch_at_us=5)
    tb.write(tmp_path / "rank0.trace.json")
    text = render.render(tracekit.analyze(tmp_path), "table")
    assert "totals over the whole trace window" in text and "not shown" not in text


def test_ratio_columns_have_the_summary_rounding() -> None:
    out = table(pd.DataFrame({"ratio": [0.744], "step_us": [12.34]}), "table")
    assert "0.74" in out and "12.3" in out and "12.34" not in out


def test_bucket_disagreement_note_gives_the_figures_and_which_to_trust() -> None:
    from tracekit.analyses.distortion import _disagreement_note

    bad = pd.DataFrame([{"rank": 1, "clock": "host", "note": "trace differs from the unprofiled steps: comm per step",
                         "trace_comm_us_per_step": 432220.5, "event_comm_us_per_step": 379577.1}])
    note = _disagreement_note(bad)
    assert "rank(s) 1" in note and "comm per step" in note
    assert "432220 µs" in note and "379577 µs" in note and "host clock" in note
    assert "what training sees" in note
