#!/usr/bin/env python
"""All-reduce bus bandwidth per message size, one process a GPU (nccl-tests' busbw, through PyTorch).

The independent figure behind ``tracekit whatif --bandwidth-x`` checks: the same all-reduces timed under
two NCCL settings (say the default and ``NCCL_MAX_NCHANNELS=2``) give the bandwidth ratio K that a run
under one setting is predicted to the other with. busbw = bytes / time x 2(n-1)/n (nccl-tests'
definition: what each link carries in a ring). Times are CUDA-event medians over ``--iters`` calls.

    torchrun --standalone --nproc-per-node 2 benchmarks/gpu/nccl_busbw.py --json busbw.json --label default
"""

from __future__ import annotations

import argparse
import json
import os
import statistics


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes-mb", default="1,4,16,25,64,100,256", help="message sizes, MiB (fp32)")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--label", default="default")
    ap.add_argument("--json", required=True, help="appended to, one JSON line per size")
    args = ap.parse_args()
    import torch
    import torch.distributed as dist

    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    dist.init_process_group("nccl")
    n, rank = dist.get_world_size(), dist.get_rank()
    rows = []
    for mb in (float(x) for x in args.sizes_mb.split(",")):
        x = torch.ones(int(mb * 2**20) // 4, device="cuda")
        for _ in range(3):
            dist.all_reduce(x)
        times = []
        for _ in range(args.iters):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            dist.barrier()
            torch.cuda.synchronize()
            a.record()
            dist.all_reduce(x)
            b.record()
            b.synchronize()
            times.append(a.elapsed_time(b) / 1e3)
        t = statistics.median(times)
        rows.append({"label": args.label, "ranks": n, "size_mb": mb, "time_us": t * 1e6,
                     "algbw_gbps": mb * 2**20 / t / 1e9, "busbw_gbps": mb * 2**20 / t / 1e9 * 2 * (n - 1) / n,
                     "env": {k: v for k, v in os.environ.items() if k.startswith("NCCL_")}})
    dist.destroy_process_group()
    if rank == 0:
        with open(args.json, "a") as f:
            f.writelines(json.dumps(r) + "\n" for r in rows)
        for r in rows:
            print(f"{args.label:12s} n={n} {r['size_mb']:7.1f} MiB {r['time_us']:9.1f} us busbw {r['busbw_gbps']:7.1f} GB/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
