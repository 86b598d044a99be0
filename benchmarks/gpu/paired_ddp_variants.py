#!/usr/bin/env python
"""DDP variants timed in one job, steps alternating: the paired truth for ``tracekit whatif``'s
bucket-cap, first-bucket, comm-hook and world-size scenarios (CPU/gloo, or one GPU per rank).

Separate ``tracekit profile`` runs of the same program measured its step up to 55 % apart on the
shared hosts (``docs/whatif.md``), as much as the changes to check. Here every variant lives in one
job: the same model (``tracekit profile``'s builder, same weights) wrapped in DDP once per variant
(``tracekit.profile.parallel.wrap_ddp``: its bucket cap, first bucket, and process group: ``world_size=N``
runs on the first N ranks of the job, the others wait), each warmed up, then timed for ``--rounds``
rounds of one step each, the variants' order rotating from round to round, a barrier before every step.
``solo=1`` (with ``world-size=1``): every rank trains its own copy on a group of one at the same time, and
rank 0's step is timed: one rank beside an independent one, to tell the cost of sharing the host from that of
communicating (``benchmarks/gpu/world_size_one_solo.sh``).
A step's time is its slowest rank's (as run.json's ``timings.overall``). The measured change of a
variant is the median over rounds of (its step / the first variant's step in the same round − 1).

Usage (4 processes: variants of 1, 2 and 4 ranks; the first variant is the baseline)::

    OMP_NUM_THREADS=1 python -m torch.distributed.run --standalone --nproc-per-node 4 \\
        benchmarks/gpu/paired_ddp_variants.py --ranks 2 --variant bucket-cap-mb=25 --variant bucket-cap-mb=1 \\
        --variant first-bucket-cap-mb=5 --variant world-size=1 --variant world-size=4 --json paired.jsonl
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tracekit.profile.config import ProfileConfig  # noqa: E402
from tracekit.profile.harness import time_steps  # noqa: E402
from tracekit.profile.models import build_workload  # noqa: E402
from tracekit.profile.parallel import wrap_ddp  # noqa: E402
from tracekit.profile.training import Trainer  # noqa: E402


def _spec(text: str, ranks: int) -> dict:
    """``bucket-cap-mb=1,first-bucket-cap-mb=5`` -> options; ``world_size`` defaults to ``ranks``;
    ``bucket-cap-mb=default`` leaves DDP's cap unset (25 MiB with a 1 MiB first bucket)."""
    out: dict = {"world_size": ranks, "bucket_cap_mb": 25.0, "first_bucket_cap_mb": None, "comm_hook": "none",
                 "solo": False}
    for part in filter(None, text.split(",")):
        key, _, value = part.partition("=")
        key = key.strip().replace("-", "_")
        if key == "bucket_cap_mb" and value.strip() == "default":  # DDP's own default: 25 MiB, first bucket 1 MiB
            out[key] = None
            continue
        if key == "solo":  # every rank trains its own copy on a group of one, all at once; rank 0's step timed
            if value.strip() not in ("0", "1"):
                raise SystemExit(f"--variant {text}: solo takes 0 or 1, not {value.strip()!r}")
            out[key] = value.strip() == "1"
            continue
        out[key] = int(value) if key == "world_size" else value.strip() if key == "comm_hook" else float(value)
    return out


def _variant(args: argparse.Namespace, opts: dict, group: object, device: object) -> Trainer:
    import torch

    config = ProfileConfig(model=args.model, width=args.width, depth=args.depth, batch_size=args.batch_size,
                           device=device.type, nproc=opts["world_size"], bucket_cap_mb=opts["bucket_cap_mb"],
                           first_bucket_cap_mb=opts["first_bucket_cap_mb"], comm_hook=opts["comm_hook"],
                           seq_len=args.seq_len, amp=args.amp)
    torch.manual_seed(config.seed)
    model, batch_fn, _ = build_workload(config)
    torch.manual_seed(config.seed + 1 + int(os.environ["RANK"]))
    batches = [batch_fn(config.batch_size, device)]
    model.to(device)
    ddp, _ = wrap_ddp(model, config, device, process_group=group)
    return Trainer(config, ddp, batches, device)


def _slowest(t: float, device: object) -> float:
    """The step time of the slowest rank that ran it (0 from the ranks that did not)."""
    import torch
    import torch.distributed as dist

    x = torch.tensor([t], dtype=torch.float64, device=device)
    dist.all_reduce(x, op=dist.ReduceOp.MAX)
    return float(x.item())


def run(args: argparse.Namespace) -> dict | None:
    import torch
    import torch.distributed as dist

    cuda = torch.cuda.is_available() and args.device != "cpu"
    device = torch.device(f"cuda:{os.environ.get('LOCAL_RANK', '0')}" if cuda else "cpu")
    dist.init_process_group("nccl" if cuda else "gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    specs = [(v, _spec(v, args.ranks)) for v in args.variant]
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    trainers: list[Trainer | None] = []
    for _, opts in specs:  # every rank creates every group, in the same order
        n = opts["world_size"]
        if n > world:
            raise SystemExit(f"world-size={n} needs {n} processes (this job has {world})")
        if opts["solo"]:  # groups of one for every rank, created by all ranks in the same order
            groups = [dist.new_group([r]) for r in range(world)]
            trainers.append(_variant(args, opts, groups[rank], device))
            continue
        group = dist.new_group(list(range(n)))
        trainers.append(_variant(args, opts, group, device) if rank < n else None)
    times: list[list[float]] = [[] for _ in specs]
    for r in range(-args.warmup, args.rounds):
        for k in range(len(specs)):
            i = (k + r) % len(specs)  # rotate the order from round to round
            dist.barrier()
            t = time_steps(trainers[i].step, 1, sync)[0] if trainers[i] is not None else 0.0
            if specs[i][1]["solo"] and rank != 0:
                t = 0.0  # the others ran beside rank 0, which is timed (no max over independent ranks)
            t = _slowest(t, device)
            if r >= 0:
                times[i].append(t)
    dist.destroy_process_group()
    if rank != 0:
        return None
    base = times[0]
    out = {"variants": [], "torch": torch.__version__, "world": world, "cpus": os.cpu_count(),
           "threads": torch.get_num_threads(), "host_load": os.getloadavg(), "shape": vars(args)}
    for (name, opts), ts in zip(specs, times):
        ratios = sorted(b / a - 1 for a, b in zip(base, ts))
        q = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else [math.nan] * 3
        out["variants"].append({"variant": name, "options": opts, "step_ms_median": 1e3 * statistics.median(ts),
                                "paired_delta_pct_median": 100 * statistics.median(ratios),
                                "paired_delta_pct_q1": 100 * q[0], "paired_delta_pct_q3": 100 * q[2],
                                "step_ms": [1e3 * t for t in ts]})
    return out


def add_job_args(ap: argparse.ArgumentParser) -> None:
    """The options :func:`_variant` builds every variant's trainer from (shared with benchmarks/gpu/phase_times.py):
    ranks, the model's shape, the device."""
    ap.add_argument("--ranks", type=int, default=2, help="ranks of a variant without world-size")
    ap.add_argument("--model", default="toy", help="tracekit profile's --model (toy, transformer, ...)")
    ap.add_argument("--seq-len", type=int, default=128)
    ap.add_argument("--amp", default="none", help="tracekit profile's --amp (none, bf16, fp16)")
    ap.add_argument("--width", type=int, default=1024)
    ap.add_argument("--depth", type=int, default=8)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--device", default="cpu", choices=("cpu", "cuda"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog="example: OMP_NUM_THREADS=1 python -m torch.distributed.run --standalone "
                                        "--nproc-per-node 2 benchmarks/gpu/paired_ddp_variants.py --variant bucket-cap-mb=25 "
                                        "--variant bucket-cap-mb=1 --json paired.jsonl")
    ap.add_argument("--variant", action="append", required=True,
                    help="options of one variant (bucket-cap-mb, first-bucket-cap-mb, world-size, comm-hook); the "
                         "first is the baseline")
    add_job_args(ap)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--json", type=Path, required=True,
                    help="where the result goes, one JSON object (name it .jsonl beside traces: tracekit analyze "
                         "takes every .json in a folder for a trace)")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    out = run(args)
    if out is not None:
        out["seconds"] = time.perf_counter() - t0
        args.json.write_text(json.dumps(out, default=str))
        for v in out["variants"]:
            print(f"{v['variant']:28s} {v['step_ms_median']:8.2f} ms  paired change {v['paired_delta_pct_median']:+6.1f} % "
                  f"({v['paired_delta_pct_q1']:+.1f} .. {v['paired_delta_pct_q3']:+.1f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
