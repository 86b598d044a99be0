"""Does a finished torch.profiler session leave the process slower? (diagnosis; device only)

Times a step with no profiler, before any profiler ran in the process, then after a short
profiler session (activities as given), and again after a second one.

    python benchmarks/gpu/profiler_after_effect.py [cpu|cuda|cpu,cuda] [mlp|ddp]
"""

from __future__ import annotations

import os
import statistics
import sys
import time

import torch
import torch.distributed as dist
from torch import nn


def main() -> None:
    acts_arg = sys.argv[1] if len(sys.argv) > 1 else "cpu,cuda"
    ddp = len(sys.argv) > 2 and sys.argv[2] == "ddp"
    acts = [{"cpu": torch.profiler.ProfilerActivity.CPU, "cuda": torch.profiler.ProfilerActivity.CUDA}[a]
            for a in acts_arg.split(",")]
    torch.manual_seed(0)
    m = nn.Sequential(*[x for _ in range(24) for x in (nn.Linear(1024, 1024), nn.ReLU())]).cuda()
    if ddp:
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29561")
        dist.init_process_group("nccl", rank=0, world_size=1)
        m = nn.parallel.DistributedDataParallel(m, device_ids=[0])
    opt = torch.optim.SGD(m.parameters(), lr=1e-3)
    x = torch.randn(128, 1024, device="cuda")

    def step() -> None:
        m(x).sum().backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    def timed(n: int = 30) -> list[float]:
        out = []
        for _ in range(n):
            torch.cuda.synchronize()
            t = time.perf_counter()
            step()
            torch.cuda.synchronize()
            out.append((time.perf_counter() - t) * 1e3)
        return out

    def show(label: str) -> None:
        v = timed()
        print(f"{acts_arg:9s} ddp={ddp!s:5s} {label:34s} median {statistics.median(v):6.2f} ms  min {min(v):6.2f}  "
              f"max {max(v):6.2f}", flush=True)

    for _ in range(10):
        step()
    show("no profiler yet")
    show("no profiler yet (again)")
    with torch.profiler.profile(activities=acts):
        for _ in range(3):
            step()
    torch.cuda.synchronize()
    show("after one profiler session")
    show("after one profiler session (again)")
    with torch.profiler.profile(activities=acts):
        for _ in range(3):
            step()
    show("after a second session")
    if ddp:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
