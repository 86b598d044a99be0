"""Measure what the profiler costs per recorded event on this machine (run.json ``profiler_cost``).

Why: on launch-bound steps the profiled window runs up to ~1.9x slower than the real step,
and the replay (``tracekit whatif``) predicts the undisturbed step by taking the
profiler's own cost out of every recorded event. That cost depends on the machine, the
torch/kineto/CUPTI versions and the profiler settings, so each run measures it with the
settings it profiled with. The run's own unprofiled step times are never used here: they
are what the prediction is checked against.

Method (per rank, after the timed steps, outside the profiler window):

1. **CPU operators.** A loop of ``n`` training steps of a small MLP (6 x Linear(32, 32)
   + ReLU, batch 8: forward, backward, SGD; the operator mix of a real step, nested
   autograd ranges included) on the CPU is timed with the profiler off and on (same
   activities, ``record_shapes``, ``with_stack`` as the run), ``reps`` times interleaved
   (off, on, off, on, ...). ``cpu_op_ns`` = median over the pairs of (on − off) / recorded CPU
   operators per loop (counted in one extra profiled loop).
2. **Kernel launches** (CUDA runs, CUDA activity on): the same loop on the GPU, where
   every operator that computes launches a kernel and backward runs on autograd's device
   thread (the loop is launch-bound: the kernels are tiny). ``runtime_ns`` = (median (on −
   off) − ``cpu_op_ns`` × recorded operators) / recorded runtime calls. (Bare launches
   without an operator around them cost far less under the profiler than launches in a
   real step, and predicted real steps worse: see docs/whatif.md.)

Both are wall ns added per event; negative results (noise on an idle machine) are
clipped at 0. The figures are written per rank and their median in ``profiler_cost``.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

#: training steps of the small model per timed loop, its depth, and interleaved repetitions of the off/on pair
LOOP_STEPS = 200
#: ... fewer where one loop would take longer than this: GPU runs (a few seconds in all), CPU runs (CI)
LOOP_TARGET_NS = {"cuda": 100e6, "cpu": 20e6}
LAYERS = 6
REPS = 7


def _loop(op: Any, n: int, sync: Any) -> float:
    sync()
    t0 = time.perf_counter_ns()
    for _ in range(n):
        op()
    sync()
    return float(time.perf_counter_ns() - t0)


def _profiled(torch: Any, activities: list[Any], record_shapes: bool, with_stack: bool) -> Any:
    return torch.profiler.profile(activities=activities, record_shapes=record_shapes, with_stack=with_stack)


def _count(prof: Any) -> tuple[int, int]:
    """(CPU operators, runtime calls) recorded by a finished ``torch.profiler.profile``."""
    ops = launches = 0
    for e in prof.profiler.kineto_results.events():  # the raw events: no FunctionEvent tree to build
        if str(e.device_type()).rsplit(".", 1)[-1] != "CPU":
            continue
        name = e.name()
        if name.startswith(("cuda", "cu", "hip")) and not name.startswith("cudnn"):
            launches += 1
        elif not name.startswith("ProfilerStep"):
            ops += 1
    return ops, launches


def _measure(torch: Any, op: Any, sync: Any, activities: list[Any], record_shapes: bool, with_stack: bool,
             n: int, reps: int, target_ns: float) -> tuple[float, int, int]:
    """(median extra wall ns per loop with the profiler on, ops per loop, runtime calls per loop)."""
    _loop(op, 2, sync)  # warm: first-call initialisation
    n = max(3, min(n, int(target_ns / max(_loop(op, 1, sync), 1.0))))
    with _profiled(torch, activities, record_shapes, with_stack) as prof:
        _loop(op, n, sync)
    ops, launches = _count(prof)
    diffs = []
    for _ in range(reps):  # paired: each on-loop against the off-loop just before it (slow drifts cancel)
        off = _loop(op, n, sync)
        with _profiled(torch, activities, record_shapes, with_stack):
            _loop(op, max(1, n // 8), sync)  # the profiler's own start-up, outside the timed loop
            diffs.append(_loop(op, n, sync) - off)
    return statistics.median(diffs), ops, launches


def _tiny_step(torch: Any, device: str) -> Any:
    """One training step of a small MLP on ``device``: forward, backward (autograd's device thread on
    CUDA), SGD update: the operator mix of a real step (nested autograd ranges, launches) at tiny sizes."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(*[m for _ in range(LAYERS) for m in (torch.nn.Linear(32, 32), torch.nn.ReLU())])
    model.to(device)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(8, 32, device=device)

    def step() -> None:
        model(x).sum().backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step


def calibrate(device: str, activities: list[Any], *, record_shapes: bool = False, with_stack: bool = False,
              n: int = LOOP_STEPS, reps: int = REPS) -> dict[str, Any]:
    """This rank's profiler cost (module doc): ``{"cpu_op_ns", "runtime_ns", "ops_per_rep",
    "launches_per_rep", "reps"}``; ``runtime_ns`` is None on CPU runs or without CUDA activity."""
    import torch

    cpu_acts = [a for a in activities if a == torch.profiler.ProfilerActivity.CPU]
    out: dict[str, Any] = {"cpu_op_ns": None, "runtime_ns": None, "ops_per_rep": None, "launches_per_rep": None,
                           "reps": reps}
    if not cpu_acts:
        return out  # a cuda-only capture records no CPU operators
    target = LOOP_TARGET_NS["cuda" if device == "cuda" else "cpu"]
    extra, ops, _ = _measure(torch, _tiny_step(torch, "cpu"), lambda: None, activities, record_shapes, with_stack,
                             n, reps, target)
    cpu_op = max(0.0, extra / ops) if ops else None
    out.update(cpu_op_ns=cpu_op, ops_per_rep=ops)
    if device == "cuda" and len(cpu_acts) < len(activities):
        # the same small step on the GPU: launches as real steps make them, inside operators, with backward on
        # autograd's device thread (bare launches, torch.cuda._sleep, cost ~1.1 µs each on an H100 and
        # under-predicted real steps by 48 % median: docs/whatif.md)
        extra, ops, launches = _measure(torch, _tiny_step(torch, "cuda"), torch.cuda.synchronize, activities,
                                        record_shapes, with_stack, n, reps, target)
        if launches:
            out.update(runtime_ns=max(0.0, (extra - (cpu_op or 0.0) * ops) / launches), launches_per_rep=launches)
    return out


def summarize(per_rank: list[dict[str, Any] | None], *, device: str, activities: str, record_shapes: bool,
              with_stack: bool) -> dict[str, Any] | None:
    """run.json ``profiler_cost`` from the ranks' :func:`calibrate` results (median over ranks)."""
    rows = [r for r in per_rank if r]
    if not rows:
        return None

    def med(key: str) -> float | None:
        vals = [r[key] for r in rows if isinstance(r.get(key), (int, float))]
        return statistics.median(vals) if vals else None

    return {
        "cpu_op_ns": med("cpu_op_ns"), "runtime_ns": med("runtime_ns"), "device": device,
        "activities": activities, "record_shapes": record_shapes, "with_stack": with_stack,
        "ops_per_rep": rows[0].get("ops_per_rep"), "launches_per_rep": rows[0].get("launches_per_rep"),
        "reps": rows[0].get("reps"),
        "per_rank": [{"rank": r.get("rank"), "cpu_op_ns": r.get("cpu_op_ns"), "runtime_ns": r.get("runtime_ns")}
                     for r in rows],
        "method": "a loop of small operators (and kernel launches on CUDA) timed with the profiler off and on, "
                  "same profiler settings as the run; median over interleaved repetitions, then over ranks",
    }
