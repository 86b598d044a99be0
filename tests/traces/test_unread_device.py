"""A trace whose device activity is in categories tracekit does not read (another accelerator's events,
CUPTI's range profiler) is not reported as a CPU-only run: the categories are named in a load warning, the
run notes, ``meta["unread_categories"]``, the breakdown's title and the HTML page. Hand-built traces."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

import tracekit
from tests.tracebuilder import TraceBuilder
from tracekit.report import render
from tracekit.traces.decode import unread_categories


def _run(tmp_path: Path, device_cat: str | None, n_device: int = 3, stack: int = 4) -> Path:
    """Two ranks, two steps of CPU ops; ``n_device`` events of ``device_cat`` a step on a device pid, and
    ``stack`` ``python_function`` frames a step (never counted)."""
    for rank in (0, 1):
        tb = TraceBuilder(rank=rank, world_size=2)
        for s in range(2):
            t = 1000.0 * s
            tb.step(s, t, t + 900)
            tb.cpu_op("aten::mm", t + 100, 300)
            for i in range(stack):
                tb.raw({"ph": "X", "cat": "python_function", "name": f"f{i}", "pid": tb.pid, "tid": tb.tid,
                        "ts": t + 110 + i, "dur": 1.0})
            for i in range(n_device if device_cat else 0):
                tb.raw({"ph": "X", "cat": device_cat, "name": "pe_exe", "pid": 9, "tid": 801,
                        "ts": t + 150 + 10 * i, "dur": 5.0})
            tb.raw({"ph": "i", "cat": device_cat or "cpu_instant_event", "name": "mark", "pid": 9, "tid": 801,
                    "ts": t + 1, "s": "t"})  # an instant event: not a complete one, never counted
        tb.write(tmp_path / f"rank{rank}.trace.json")
    return tmp_path


def test_unread_categories_counts_complete_events_only(tmp_path: Path) -> None:
    _run(tmp_path, "mtia_ccp_events", n_device=3)
    # 2 steps x 3 complete events; the instant event and the python_function frames are not counted
    assert unread_categories(tmp_path / "rank0.trace.json") == {"mtia_ccp_events": 2 * 3}


def test_device_in_an_unread_category_is_named_not_called_cpu_only(tmp_path: Path) -> None:
    _run(tmp_path, "mtia_ccp_events", n_device=3)
    with pytest.warns(UserWarning) as caught:
        res = tracekit.analyze(tmp_path)
    said = [str(w.message) for w in caught if "no GPU kernel" in str(w.message)]
    # one warning for both rank files, the counts summed: 2 ranks x 2 steps x 3 events
    assert said == ["2 rank files (rank0.trace.json, ...): no GPU kernel, copy or memset that tracekit reads, but "
                    "events of categories it does not read: mtia_ccp_events (12); device-side metrics are "
                    "unavailable for these ranks"]
    assert res.meta["device_metrics"] is False
    assert res.meta["unread_categories"] == {"mtia_ccp_events": 2 * 2 * 3}  # summed over the two ranks
    assert any("mtia_ccp_events (12)" in n and "CPU-only" not in n for n in res.meta["notes"])
    text = render.render(res, "table")
    assert "Per-rank breakdown (no GPU activity read" in text and "CPU-only run" not in text
    assert json.loads(render.render(res, "json"))["meta"]["unread_categories"] == {"mtia_ccp_events": 12}


def test_a_cpu_only_run_stays_one(tmp_path: Path) -> None:
    _run(tmp_path, None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning at all: python_function frames are no device
        res = tracekit.analyze(tmp_path)
    assert res.meta["unread_categories"] == {}
    assert any("CPU-only run" in n for n in res.meta["notes"])
    assert "Per-rank breakdown (CPU-only run" in render.render(res, "table")


def test_a_gpu_trace_is_not_rescanned(tmp_path: Path) -> None:
    for rank in (0, 1):
        tb = TraceBuilder(rank=rank, world_size=2)
        tb.step(0, 0, 900)
        tb.kernel("gemm", 100, 50, launch_at_us=90)
        tb.raw({"ph": "X", "cat": "cuda_profiler_range", "name": "k", "pid": 0, "tid": 7, "ts": 300, "dur": 5.0})
        tb.write(tmp_path / f"rank{rank}.trace.json")
    res = tracekit.analyze(tmp_path)
    assert res.meta["device_metrics"] is True and res.meta["unread_categories"] == {}
