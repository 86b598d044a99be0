"""The profiler window as a context manager, and step timing with the profiler off.

Why export from ``on_trace_ready``: with ``schedule(wait, warmup, active, repeat=1)``
torch calls ``on_trace_ready`` exactly when the active cycle ends -- also when it
ends on the very last ``step()``, where the profiler is already idle when the
context exits and an export made after the context depends on leftover state
(it can be empty or stale, depending on the torch version and on how many steps
followed). :class:`ProfilerWindow` exports inside the callback, once, and raises
if no trace was exported, so an empty trace is never written silently.
"""

from __future__ import annotations

import os
import statistics
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tracekit.errors import RunError
from tracekit.profile.quiet import drop_kineto_markers

PERCENTILES = (50, 75, 90, 95)


def trace_filename(rank: int) -> str:
    return f"rank{rank}.trace.json.gz"


class ProfilerWindow:
    """``torch.profiler.profile`` over ``wait + warmup + active`` steps, writing one trace atomically.

    Usage::

        with ProfilerWindow(out_dir, rank, wait=1, warmup=1, active=3, device="cpu") as win:
            for _ in range(win.total_steps):
                train_step()
                win.step()
        win.trace_path  # <out_dir>/rank<R>.trace.json.gz

    Contract: on a clean exit ``trace_path`` exists and holds the ``active``
    steps; otherwise :class:`RunError` is raised. The file is written to a
    hidden temporary name and renamed, so readers never see a partial trace.
    """

    def __init__(self, out_dir: str | os.PathLike[str], rank: int, *, wait: int, warmup: int, active: int,
                 device: str, record_shapes: bool = False, with_stack: bool = False,
                 activities: str = "cpu,cuda") -> None:
        self.out_dir = Path(out_dir)
        self.rank = rank
        self.wait, self.warmup, self.active = wait, warmup, active
        self.device = device
        self.record_shapes = record_shapes
        self.with_stack = with_stack
        self.activities = activities
        self.trace_path: Path | None = None
        self.exports = 0
        self.step_s: list[float] = []
        #: steps timed after the window with the CPU recorded and CUPTI off (:func:`cpu_only_steps`)
        self.cpu_only_step_s: list[float] = []
        self._prof: Any = None

    @property
    def total_steps(self) -> int:
        return self.wait + self.warmup + self.active

    @property
    def active_step_s(self) -> list[float]:
        """Wall times of the recorded steps (the last ``active`` of :attr:`step_s`)."""
        return self.step_s[-self.active:] if len(self.step_s) >= self.total_steps else []

    def _on_trace_ready(self, prof: Any) -> None:
        from tracekit.profile import heartbeat

        heartbeat.mark("profiler export")
        self.out_dir.mkdir(parents=True, exist_ok=True)
        final = self.out_dir / trace_filename(self.rank)
        # Must end in .gz: export_chrome_trace gzips based on the suffix.
        tmp = self.out_dir / f".{final.name[:-3]}.tmp{os.getpid()}.gz"
        prof.export_chrome_trace(str(tmp))
        os.replace(tmp, final)
        self.trace_path = final
        self.exports += 1

    def __enter__(self) -> ProfilerWindow:
        import torch

        activities = profiler_activities(self.activities, self.device)
        self._prof = torch.profiler.profile(
            activities=activities,
            schedule=torch.profiler.schedule(wait=self.wait, warmup=self.warmup, active=self.active, repeat=1),
            on_trace_ready=self._on_trace_ready,
            record_shapes=self.record_shapes,
            with_stack=self.with_stack,
        )
        with drop_kineto_markers():
            self._prof.__enter__()
        return self

    def step(self) -> None:
        with warnings.catch_warnings(), drop_kineto_markers():
            # "Profiler clears events at the end of each cycle": one cycle is all we record.
            warnings.filterwarnings("ignore", message=".*Profiler clears events.*")
            self._prof.step()

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        with drop_kineto_markers():
            self._prof.__exit__(exc_type, exc, tb)
        if exc_type is None and self.trace_path is None:
            raise RunError(f"rank {self.rank}: the profiler exported no trace "
                           f"(ran fewer than {self.total_steps} steps?)")


def profiler_activities(spec: str, device: str) -> list[Any]:
    """``torch.profiler`` activities for ``--profile-activities`` (``cpu,cuda`` or ``cuda``) on ``device``.

    ``cpu,cuda`` on a CPU run records the CPU only. ``cuda`` (GPU runs only) drops the CPU side:
    no ProfilerStep, annotation or operator ranges, no launch calls.
    """
    import torch

    names = {a.strip() for a in spec.split(",") if a.strip()}
    acts = []
    if "cpu" in names:
        acts.append(torch.profiler.ProfilerActivity.CPU)
    if "cuda" in names and device == "cuda":
        acts.append(torch.profiler.ProfilerActivity.CUDA)
    if not acts:
        raise RunError(f"--profile-activities {spec!r} records nothing on {device}")
    return acts


def time_steps(step_fn: Callable[[], None], n: int, sync: Callable[[], None]) -> list[float]:
    """Run ``step_fn`` n times; return each step's wall time in seconds, device-synchronized."""
    out = []
    for _ in range(n):
        sync()
        t0 = time.perf_counter()
        step_fn()
        sync()
        out.append(time.perf_counter() - t0)
    return out


def percentile(values: list[float], q: float) -> float:
    """Linear-interpolated percentile (numpy's default), q in [0, 100]."""
    s = sorted(values)
    if not s:
        raise ValueError("no values")
    k = (len(s) - 1) * q / 100
    lo = int(k)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def summarize(step_s: list[float], examples_per_step: int) -> dict[str, Any]:
    """Percentiles of sec/iter and the matching examples/sec (higher percentile = slower)."""
    sec = {f"p{q}": percentile(step_s, q) for q in PERCENTILES}
    return {
        "steps": len(step_s),
        "sec_per_iter": sec,
        "mean_sec_per_iter": statistics.fmean(step_s),
        "examples_per_step": examples_per_step,
        "examples_per_sec": {k: (examples_per_step / v if v > 0 else None) for k, v in sec.items()},
        "step_s": step_s,
    }


def summarize_ranks(per_rank_step_s: list[list[float]], local_examples: int) -> dict[str, Any]:
    """Per-rank summaries and the overall one, where a step takes as long as its slowest rank."""
    world = len(per_rank_step_s)
    per_rank = [dict(rank=r, **summarize(s, local_examples)) for r, s in enumerate(per_rank_step_s)]
    slowest = [max(vals) for vals in zip(*per_rank_step_s)]
    overall = summarize(slowest, local_examples * world)
    overall["definition"] = "per step, the slowest rank's time; examples = global batch"
    return {"per_rank": per_rank, "overall": overall}


def run_profiled_steps(config: Any, out_dir: Any, rank: int, device_type: str,
                       step_fn: Callable[[], None], sync: Callable[[], None]) -> ProfilerWindow:
    """Run ``config``'s profiler window (wait + warmup + active steps of ``step_fn``) and export it.

    Each step is timed like the unprofiled ones (wall time between device synchronizes,
    :func:`time_steps`); the profiler's own ``step()`` (and the export after the last
    active step) is outside the timed part. Returns the closed window; its ``trace_path``
    is the exported trace and ``step_s`` the wall time of every step of the window
    (``active_step_s``: the recorded ones).
    """
    win = ProfilerWindow(out_dir, rank, wait=config.profile_wait, warmup=config.profile_warmup,
                         active=config.profile_steps, device=device_type,
                         record_shapes=config.record_shapes, with_stack=config.with_stack,
                         activities=getattr(config, "profile_activities", "cpu,cuda"))
    with win:
        for _ in range(win.total_steps):
            win.step_s.extend(time_steps(step_fn, 1, sync))
            win.step()
    sync()
    n = getattr(config, "profile_cpu_only_steps", 0)
    if n and device_type == "cuda" and "cpu" in getattr(config, "profile_activities", "cpu,cuda"):
        win.cpu_only_step_s = cpu_only_steps(step_fn, sync, n, record_shapes=config.record_shapes,
                                             with_stack=config.with_stack)
    return win


def cpu_only_steps(step_fn: Callable[[], None], sync: Callable[[], None], n: int, *, record_shapes: bool = False,
                   with_stack: bool = False) -> list[float]:
    """``n`` steps profiled with the CPU activity only (operators recorded, CUPTI off), each timed as
    :func:`time_steps` does, after one such step untimed (the session's start-up); no trace is kept."""
    import torch

    acts = [torch.profiler.ProfilerActivity.CPU]
    with warnings.catch_warnings(), drop_kineto_markers():
        warnings.simplefilter("ignore")
        with torch.profiler.profile(activities=acts, record_shapes=record_shapes, with_stack=with_stack):
            time_steps(step_fn, 1, sync)
            return time_steps(step_fn, n, sync)


def add_profiled_timings(timings: dict[str, Any], per_rank_profiled_s: list[list[float]], activities: str,
                         per_rank_window_s: list[list[float]] | None = None,
                         per_rank_cpu_only_s: list[list[float]] | None = None) -> None:
    """Add the profiled window's step times to run.json ``timings`` (in place).

    Per rank ``profiled_step_s`` (the recorded steps' wall times, measured as the unprofiled
    ones), ``profiled_mean_sec_per_iter`` and ``window_step_s`` (every step of the window, in order: the
    schedule's ``wait`` steps, the profiler created but off; its ``warmup`` steps, CUPTI's activity tracing on
    but nothing recorded; the recorded ones); ``profiled``: ``{"overall": mean over steps of the slowest rank's
    time, "activities", "definition"}``. Per rank ``cpu_only_step_s``, where timed: the steps after the window
    profiled with the CPU recorded and CUPTI off (:func:`cpu_only_steps`).
    """
    windows = per_rank_window_s or [[] for _ in per_rank_profiled_s]
    cpu_only = per_rank_cpu_only_s or [[] for _ in per_rank_profiled_s]
    for row, prof, win, cpu in zip(timings["per_rank"], per_rank_profiled_s, windows, cpu_only):
        row["profiled_step_s"] = prof
        row["profiled_mean_sec_per_iter"] = statistics.fmean(prof) if prof else None
        row["window_step_s"] = win
        if cpu:
            row["cpu_only_step_s"] = cpu
    slowest = [max(v) for v in zip(*per_rank_profiled_s)] if per_rank_profiled_s else []
    timings["profiled"] = {
        "mean_sec_per_iter": statistics.fmean(slowest) if slowest else None,
        "step_s": slowest,
        "activities": activities,
        "definition": "the profiler's recorded steps, timed as the unprofiled ones (per step the slowest rank)",
    }
