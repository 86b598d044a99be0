#!/usr/bin/env python
"""The run's own step under three profiler states, in one process (where the profiler's cost comes from).

Per round, one DDP trainer of one rank (``benchmarks/gpu/paired_ddp_variants.py``'s builder, as ``tracekit profile``
trains it) is timed: ``plain`` steps (no profiler), then a ``torch.profiler`` session with CPU and CUDA activities
and the schedule ``wait=1, warmup=W, active=A`` (steps ``wait``: profiler created, off; ``cupti``: its warm-up,
CUPTI's activity tracing on and nothing recorded; ``full``: recorded, what a window is), then ``plain`` again, then
a session with the CPU activity only (``cpu_only``: every operator recorded, no CUPTI), the same schedule. Each step
is timed between device synchronizes, as ``tracekit profile`` times its steps.

If the two costs add up, ``cpu_only + cupti - full`` is the step without either: a figure from three profiled
states, none of them the unprofiled step, which it is checked against here (``plain``). Per round and state the
median step (ms); the JSON keeps every step. ``after_pct``: how much slower the plain steps after the first session
ran than those before it (the "after-effect" of a session that recorded the CPU, docs/whatif.md).

Usage (one GPU)::

    python -m torch.distributed.run --standalone --nproc-per-node 1 benchmarks/gpu/profiler_states.py --device cuda \\
        --model toy --width 4096 --depth 8 --batch-size 64 --rounds 3 --json states.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import paired_ddp_variants as pv  # noqa: E402

from tracekit.profile.harness import time_steps  # noqa: E402


def _session(torch: object, trainer: object, sync: object, acts: list, warm: int, active: int) -> dict[str, list[float]]:
    """One profiler session over ``1 + warm + active`` timed steps: {"wait", "warm", "active": [s, ...]}."""
    sched = torch.profiler.schedule(wait=1, warmup=warm, active=active, repeat=1)
    steps: list[float] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.profiler.profile(activities=acts, schedule=sched, on_trace_ready=lambda p: None) as prof:
            for _ in range(1 + warm + active):
                steps += time_steps(trainer.step, 1, sync)
                prof.step()
    return {"wait": steps[:1], "warm": steps[1:1 + warm], "active": steps[1 + warm:]}


def run(args: argparse.Namespace) -> dict:
    import torch
    import torch.distributed as dist

    cuda = torch.cuda.is_available() and args.device != "cpu"
    device = torch.device("cuda:0" if cuda else "cpu")
    if cuda:
        torch.cuda.set_device(device)
    dist.init_process_group("nccl" if cuda else "gloo")
    trainer = pv._variant(args, pv._spec("", 1), dist.new_group([0]), device)
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    both = [torch.profiler.ProfilerActivity.CPU] + ([torch.profiler.ProfilerActivity.CUDA] if cuda else [])
    cpu = [torch.profiler.ProfilerActivity.CPU]
    time_steps(trainer.step, args.warmup, sync)
    rounds = []
    for _ in range(args.rounds):
        r: dict[str, list[float]] = {"plain": time_steps(trainer.step, args.plain, sync)}
        full = _session(torch, trainer, sync, both, args.warm, args.active)
        r.update(wait=full["wait"], cupti=full["warm"], full=full["active"])
        r["plain_after"] = time_steps(trainer.step, args.plain, sync)
        cpu_only = _session(torch, trainer, sync, cpu, 1, args.active)
        r["cpu_only"] = cpu_only["active"]
        rounds.append(r)
    dist.destroy_process_group()
    return {"torch": torch.__version__, "shape": vars(args), "rounds": rounds}


def summary(out: dict) -> list[dict[str, float]]:
    """Per round: each state's median step (ms), the three-state estimate and its error against ``plain``."""
    rows = []
    for r in out["rounds"]:
        med = {k: 1e3 * statistics.median(v) for k, v in r.items() if v}
        est = med["cpu_only"] + med["cupti"] - med["full"]
        rows.append({**med, "estimate": est, "estimate_err_pct": 100 * (est / med["plain"] - 1),
                     "after_pct": 100 * (med["plain_after"] / med["plain"] - 1)})
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    pv.add_job_args(ap)
    ap.add_argument("--warmup", type=int, default=10, help="untimed steps first")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--plain", type=int, default=10, help="plain steps timed per round, before and after")
    ap.add_argument("--warm", type=int, default=3, help="profiler warm-up steps (CUPTI on) per session")
    ap.add_argument("--active", type=int, default=3, help="recorded steps per session")
    ap.add_argument("--json", type=Path, required=True)
    args = ap.parse_args(argv)
    out = run(args)
    out["summary"] = summary(out)
    args.json.write_text(json.dumps(out, default=str))
    for row in out["summary"]:
        print("  ".join(f"{k} {v:.2f}" for k, v in row.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
