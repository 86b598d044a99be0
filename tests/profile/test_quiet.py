"""kineto's ``USDT ... profiler_start/stop`` lines stay off stderr during a profile; nothing else does."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from tracekit.profile.quiet import drop_markers

ROOT = Path(__file__).resolve().parents[2]
START = b"USDT:2026-11-24 16:39:49 7783:7783 SyncActivityProfilerHandler.cpp:52] profiler_start\n"
STOP = b"USDT:2026-11-24 16:39:50 7783:7783 SyncActivityProfilerHandler.cpp:59] profiler_stop\n"


def test_only_the_markers_are_dropped() -> None:
    data = b"warning: a\n" + START + b"USDT: something else\n" + STOP + b"tail without newline"
    assert drop_markers(data) == b"warning: a\nUSDT: something else\ntail without newline"


def _run(code: str, tmp_path: Path, env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    import os

    env = {**os.environ, "PYTHONPATH": str(ROOT), **(env_extra or {})}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, timeout=120,
                          cwd=tmp_path, env=env)


def test_fd2_lines_around_the_markers_are_kept_in_order(tmp_path: Path) -> None:
    r = _run(f"""
        import os
        from tracekit.profile.quiet import drop_kineto_markers
        os.write(2, b"before\\n")
        with drop_kineto_markers():
            os.write(2, {START!r})
            os.write(2, b"error: from C\\n")
            os.write(2, {STOP!r})
        os.write(2, b"after\\n")
        """, tmp_path)
    assert r.returncode == 0 and r.stderr == b"before\nerror: from C\nafter\n"


def test_a_profiler_window_prints_no_kineto_markers(tmp_path: Path) -> None:
    code = """
        import torch
        from tracekit.profile.harness import ProfilerWindow
        with ProfilerWindow(".", 0, wait=0, warmup=1, active=1, device="cpu") as win:
            for _ in range(win.total_steps):
                torch.ones(64) @ torch.ones(64)
                win.step()
        print(win.trace_path)
        """
    r = _run(code, tmp_path)
    assert r.returncode == 0, r.stderr
    assert b"profiler_start" not in r.stderr and b"profiler_stop" not in r.stderr
    assert (tmp_path / "rank0.trace.json.gz").stat().st_size > 0
    # the filter is what removes them: with it off, this torch prints them (skip the check where it does not)
    raw = _run(code, tmp_path, {"TRACEKIT_KINETO_MARKERS": "1"})
    if b"USDT:" in raw.stderr:
        assert b"profiler_start" in raw.stderr


def test_the_process_group_probe_prints_no_kineto_markers(tmp_path: Path) -> None:
    r = _run(f"""
        import torch.distributed as dist
        from tracekit.profile.pg_probe import gloo_thread_map
        dist.init_process_group("gloo", init_method="file://{tmp_path}/store", rank=0, world_size=1)
        print(sorted(set(gloo_thread_map([dist.group.WORLD]).values())))
        dist.destroy_process_group()
        """, tmp_path)
    assert r.returncode == 0, r.stderr
    assert b"profiler_start" not in r.stderr and b"profiler_stop" not in r.stderr
    assert r.stdout.strip().startswith(b"[")


def test_the_profiler_cost_calibration_prints_no_kineto_markers(tmp_path: Path) -> None:
    """The calibration starts and stops a profiler for each of its timed loops (~40 per profile run): every
    one of them inside the filter."""
    code = """
        import torch
        from tracekit.profile.calibrate import calibrate
        print(calibrate("cpu", [torch.profiler.ProfilerActivity.CPU], n=3, reps=2)["cpu_op_ns"] is not None)
        """
    r = _run(code, tmp_path)
    assert r.returncode == 0, r.stderr
    assert b"profiler_start" not in r.stderr and b"profiler_stop" not in r.stderr
    raw = _run(code, tmp_path, {"TRACEKIT_KINETO_MARKERS": "1"})
    if b"USDT:" in raw.stderr:  # this torch prints them: the filter is what removed them above
        assert raw.stderr.count(b"profiler_start") >= 3
