#!/usr/bin/env python
"""Where the unprofiled step's time goes, phase by phase, on 1 and 2 ranks timed in one job (the
multi-rank lean: the replay predicts 2-rank CPU-bound steps too fast, 1-rank ones not).

Every variant (``world-size=1``, ``world-size=2``: ``benchmarks/gpu/paired_ddp_variants.py``'s specs) is built, warmed
up and timed round by round, the order rotating, a barrier before each step, as ``paired_ddp_variants.py``
does; on top, the CPU clock (``time.perf_counter``, no device synchronize) is read at each phase boundary the
trainer marks (``tracekit.profile.heartbeat.mark``: forward, backward, optimizer) and when ``step()`` returns.
Per variant and rank (JSON, medians over rounds, ms): ``forward`` (forward mark -> backward mark),
``backward`` (-> optimizer mark: ``loss.backward()`` returned), ``optimizer`` (-> ``step()`` returned),
``drain`` (-> the device synchronize after the step returned: GPU work still queued), ``step`` (the whole,
between synchronizes). Nothing here is an input to a prediction: it is what ``tracekit whatif``'s predicted
phases are compared with (``benchmarks/results/phase_times_*``).

Usage (2 processes)::

    python -m torch.distributed.run --standalone --nproc-per-node 2 benchmarks/gpu/phase_times.py --device cuda \\
        --model toy --width 4096 --depth 8 --batch-size 64 --variant world-size=1 --variant world-size=2 \\
        --json phases.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import paired_ddp_variants as pv  # noqa: E402

from tracekit.profile import heartbeat  # noqa: E402

PHASES = ("forward", "backward", "optimizer", "drain")


def _timed_step(trainer: object, sync: object, marks: list[tuple[str, float]]) -> dict[str, float]:
    """One step of ``trainer``: its phases (s) from the marks the trainer makes."""
    sync()
    marks.clear()
    t0 = time.perf_counter()
    trainer.step()
    t_ret = time.perf_counter()
    sync()
    t_end = time.perf_counter()
    at = {name: t for name, t in marks}
    return {"forward": at["backward"] - at["forward"], "backward": at["optimizer"] - at["backward"],
            "optimizer": t_ret - at["optimizer"], "drain": t_end - t_ret, "step": t_end - t0}


def run(args: argparse.Namespace) -> dict | None:
    import torch
    import torch.distributed as dist

    cuda = torch.cuda.is_available() and args.device != "cpu"
    device = torch.device(f"cuda:{os.environ.get('LOCAL_RANK', '0')}" if cuda else "cpu")
    if cuda:
        torch.cuda.set_device(device)  # NCCL's own collectives (the barriers) on this rank's GPU, not GPU 0
    dist.init_process_group("nccl" if cuda else "gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    specs = [(v, pv._spec(v, args.ranks)) for v in args.variant]
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    trainers = []
    for _, opts in specs:
        group = dist.new_group(list(range(opts["world_size"])))
        trainers.append(pv._variant(args, opts, group, device) if rank < opts["world_size"] else None)
    marks: list[tuple[str, float]] = []
    heartbeat.mark = lambda phase, **_: marks.append((phase, time.perf_counter()))  # the clock, not the file
    heartbeat.begin_step = lambda *a, **k: None
    times: list[list[dict[str, float]]] = [[] for _ in specs]
    for r in range(-args.warmup, args.rounds):
        for k in range(len(specs)):
            i = (k + r) % len(specs)
            dist.barrier()
            if trainers[i] is not None:
                t = _timed_step(trainers[i], sync, marks)
                if r >= 0:
                    times[i].append(t)
    # each rank's timings through a file beside the output (no object collective over NCCL)
    Path(f"{args.json}.rank{rank}").write_text(json.dumps(times))
    dist.barrier()
    dist.destroy_process_group()
    if rank != 0:
        return None
    gathered = []
    for rk in range(world):
        part = Path(f"{args.json}.rank{rk}")
        gathered.append(json.loads(part.read_text()))
        part.unlink()
    out = {"variants": [], "torch": torch.__version__, "world": world, "cpus": os.cpu_count(), "shape": vars(args)}
    for i, (name, opts) in enumerate(specs):
        per_rank = {}
        for rk, ts in enumerate(gathered):
            if ts[i]:
                per_rank[rk] = {p: 1e3 * statistics.median(t[p] for t in ts[i]) for p in (*PHASES, "step")}
        out["variants"].append({"variant": name, "options": opts, "per_rank_ms": per_rank})
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variant", action="append", required=True, help="as benchmarks/gpu/paired_ddp_variants.py's")
    pv.add_job_args(ap)  # the trainer is paired_ddp_variants.py's: so are its options
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--json", type=Path, required=True)
    args = ap.parse_args(argv)
    out = run(args)
    if out is not None:
        args.json.write_text(json.dumps(out, default=str))
        for v in out["variants"]:
            for rk, ph in v["per_rank_ms"].items():
                print(f"{v['variant']:14s} rank {rk}: " + "  ".join(f"{p} {ph[p]:.2f}" for p in (*PHASES, "step")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
