"""Does a recorded event of compiled code cost the profiler more than one of eager code? (device only)

The replay's calibration (``tracekit/profile/calibrate.py``) times an eager step. On the inductor
graph-break runs (``sample_traces/whatif/h100_paired_twins``), the profiled windows carried 3.6 to
12.2 µs per recorded event against calibrations of 2.4 to 4.3 µs. This times the same small models
eager and under ``torch.compile`` (inductor), each with the profiler off and on (CPU + CUDA activity,
no shapes, no stacks), with ``profiler_cost_probe.probe``: extra wall time per step and per recorded
event (CPU operators + runtime/driver calls).

Usage (device): python benchmarks/gpu/profiler_cost_compiled.py > compiled.txt
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent))

from profiler_cost_probe import probe  # noqa: E402


def model_step(depth: int, width: int, batch: int, compiled: bool):
    torch.manual_seed(0)
    m = nn.Sequential(*[x for _ in range(depth) for x in (nn.Linear(width, width), nn.ReLU())]).cuda()
    opt = torch.optim.SGD(m.parameters(), lr=1e-3)
    f = torch.compile(m) if compiled else m
    x = torch.randn(batch, width, device="cuda")

    def step():
        f(x).sum().backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    for _ in range(3):  # compile here, outside every timed loop
        step()
    return step


def main() -> None:
    print(torch.__version__, torch.cuda.get_device_name(0), flush=True)
    for rep in range(2):
        for depth, width, batch, n in ((6, 32, 8, 50), (16, 256, 32, 30), (48, 256, 32, 20)):
            for compiled in (False, True):
                name = f"mlp{depth}x{width}-{'inductor' if compiled else 'eager'}"
                probe(name, model_step(depth, width, batch, compiled), n=n)


if __name__ == "__main__":
    main()
