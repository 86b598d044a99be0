"""The profiler window: the schedule edge case where the cycle ends exactly on the last step."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from tracekit.errors import RunError
from tracekit.profile.harness import ProfilerWindow, time_steps

torch = pytest.importorskip("torch")


def _work() -> None:
    with torch.profiler.record_function("tracekit.test_step"):
        a = torch.randn(64, 64)
        (a @ a).sum()


def _events(path: Path) -> list[dict]:
    with gzip.open(path, "rt") as fh:
        return json.load(fh)["traceEvents"]


def test_cycle_ending_on_last_step_still_exports(tmp_path: Path) -> None:
    # wait + warmup + active == number of steps run: the cycle ends exactly on the
    # last win.step(), so the profiler is idle at exit. Exporting after the
    # context would give an empty trace; on_trace_ready must have written it.
    with ProfilerWindow(tmp_path, rank=0, wait=1, warmup=1, active=2, device="cpu") as win:
        for _ in range(win.total_steps):
            _work()
            win.step()
    assert win.exports == 1
    assert win.trace_path == tmp_path / "rank0.trace.json.gz"
    events = _events(win.trace_path)
    steps = {e["name"] for e in events if e.get("name", "").startswith("ProfilerStep#")}
    assert steps == {"ProfilerStep#2", "ProfilerStep#3"}  # exactly the active steps
    assert sum(e.get("name") == "tracekit.test_step" for e in events) == 2
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp files left


def test_steps_after_cycle_end_do_not_touch_the_trace(tmp_path: Path) -> None:
    # After the single cycle the profiler is idle: later steps must neither
    # re-export (an empty trace over the good one) nor add events.
    with ProfilerWindow(tmp_path, rank=1, wait=0, warmup=1, active=2, device="cpu") as win:
        for _ in range(win.total_steps + 2):
            _work()
            win.step()
    assert win.exports == 1
    events = _events(tmp_path / "rank1.trace.json.gz")
    assert sum(e.get("name") == "tracekit.test_step" for e in events) == 2


def test_too_few_steps_raises_instead_of_writing_nothing(tmp_path: Path) -> None:
    # The active cycle never completes, and the profiler flushes on exit; we accept
    # that trace, but zero recorded steps must be an error, not a silent empty file.
    with pytest.raises(RunError, match="exported no trace"):
        with ProfilerWindow(tmp_path, rank=3, wait=2, warmup=1, active=2, device="cpu") as win:
            _work()
            win.step()


def test_time_steps_counts_and_syncs() -> None:
    calls = []
    out = time_steps(lambda: calls.append("step"), 3, lambda: calls.append("sync"))
    assert len(out) == 3 and all(t >= 0 for t in out)
    assert calls == ["sync", "step", "sync"] * 3
