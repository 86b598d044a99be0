"""Where does the profiler's cost per event come from? (diagnosis for the replay; device only)

For several small training steps, each timed with the profiler off and on (same settings as
``tracekit profile``: CPU + CUDA activity, no shapes, no stacks), prints the extra wall time per
step and per recorded event (CPU operators + runtime/driver calls), so the calibration's
workload can be compared with what real steps cost:

- ``mlp6``: the calibration's own step (6 x Linear(32), batch 8), plain;
- ``mlp6-ddp``: the same under DDP (world size 1, NCCL): DDP's reducer hooks recorded too;
- ``mlp48x256`` / ``mlp48x256-ddp``: the toy launch-bound model of bench_whatif's ``smallmlp``;
- ``add-loop``: 200 x ``torch.add`` on tiny CUDA tensors (one operator + one launch each).

Usage (device): python benchmarks/gpu/profiler_cost_probe.py > probe.txt
"""

from __future__ import annotations

import os
import statistics
import time

import torch
import torch.distributed as dist
from torch import nn


def mlp(depth: int, width: int, batch: int, ddp: bool):
    torch.manual_seed(0)
    m = nn.Sequential(*[x for _ in range(depth) for x in (nn.Linear(width, width), nn.ReLU())]).cuda()
    if ddp:
        m = nn.parallel.DistributedDataParallel(m, device_ids=[0])
    opt = torch.optim.SGD(m.parameters(), lr=1e-3)
    x = torch.randn(batch, width, device="cuda")

    def step():
        m(x).sum().backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    return step


def transformer(width: int, depth: int, seq: int, batch: int, ddp: bool):
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(width, max(1, width // 64), 4 * width, batch_first=True)
    m = nn.TransformerEncoder(layer, depth, enable_nested_tensor=False).cuda()
    if ddp:
        m = nn.parallel.DistributedDataParallel(m, device_ids=[0])
    opt = torch.optim.AdamW(m.parameters(), lr=1e-4)
    x = torch.randn(batch, seq, width, device="cuda")

    def step():
        m(x).float().pow(2).mean().backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    return step


def add_loop():
    a = torch.randn(16, device="cuda")
    out = torch.empty_like(a)

    def step():
        for _ in range(200):
            torch.add(a, 1.0, out=out)
    return step


def timed(step, n):
    torch.cuda.synchronize()
    t = time.perf_counter_ns()
    for _ in range(n):
        step()
    torch.cuda.synchronize()
    return (time.perf_counter_ns() - t) / n


def prof():
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    return torch.profiler.profile(activities=acts)


def count(p):
    ops = rt = 0
    for e in p.profiler.kineto_results.events():
        if str(e.device_type()).rsplit(".", 1)[-1] != "CPU":
            continue
        n = e.name()
        if n.startswith(("cuda", "cu")) and not n.startswith("cudnn"):
            rt += 1
        elif not n.startswith("ProfilerStep"):
            ops += 1
    return ops, rt


def probe(name, step, n=50, reps=7):
    for _ in range(5):
        step()
    with prof() as p:
        for _ in range(n):
            step()
    torch.cuda.synchronize()
    ops, rt = count(p)
    ops, rt = ops / n, rt / n
    offs, ons = [], []
    for _ in range(reps):
        offs.append(timed(step, n))
        with prof():
            timed(step, 3)
            ons.append(timed(step, n))
    off, on = statistics.median(offs), statistics.median(ons)
    extra = on - off
    print(f"{name:16s} off {off/1e3:9.1f} us  on {on/1e3:9.1f} us  extra {extra/1e3:8.1f} us  ops {ops:7.0f}  rt {rt:6.0f}"
          f"  ns/event {extra/(ops+rt):7.0f}  ns/op(rt=3op) {extra/(ops+3*rt):7.0f}  off-spread {100*(max(offs)/min(offs)-1):.1f}%",
          flush=True)


def window(name, step, reps=3):
    """Per-step wall time of the recorded steps of a scheduled window (wait 1, warmup 1, active 3), as
    tracekit profile's harness runs it, next to the same steps unprofiled."""
    for _ in range(5):
        step()
    sched = torch.profiler.schedule(wait=1, warmup=1, active=3, repeat=1)
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    for _ in range(reps):
        off = [timed(step, 1) for _ in range(5)]
        on = []
        with torch.profiler.profile(activities=acts, schedule=sched, on_trace_ready=lambda p: None) as p:
            for i in range(5):
                t = timed(step, 1)
                if i >= 2:
                    on.append(t)
                p.step()
        print(f"{name:16s} window: off {[round(x/1e3) for x in off]} us  recorded steps {[round(x/1e3) for x in on]} us",
              flush=True)


def main():
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29533")
    dist.init_process_group("nccl", rank=0, world_size=1)
    print(torch.__version__, torch.cuda.get_device_name(0))
    import sys
    if "window" in sys.argv:
        step = mlp(24, 1024, 128, True)
        window("mlp24x1024-ddp", step)
        probe("mlp24x1024-ddp", step, n=20)
        window("mlp24x1024-ddp", step)
        dist.destroy_process_group()
        return
    for rep in range(2):
        probe("mlp6-ddp", mlp(6, 32, 8, True))
        probe("mlp24x1024-ddp", mlp(24, 1024, 128, True), n=20)
        probe("tf64x2-ddp", transformer(64, 2, 16, 2, True), n=20)
        probe("tf256x4-ddp", transformer(256, 4, 64, 4, True), n=20)
        probe("tf512x6-ddp", transformer(512, 6, 256, 8, True), n=10)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
