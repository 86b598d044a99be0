#!/usr/bin/env python
"""Time a graph-break twin pair in one process, step by step alternating: the paired truth for
``tracekit whatif --no-graph-breaks``.

Separate ``tracekit profile`` runs of the model with the break and of its twin without it
measured the same program up to 50 % apart from one run to the next on the GPU hosts
(``docs/whatif.md``), ten times the effect of the break. Here both twins live in one process
on one rank (DDP over a world of 1, as ``tracekit profile --nproc 1``; the same model builder,
compile and training step), are compiled during warm-up, and then run in rounds: each round
times one step of each, in alternating order (AB, BA, ...), so drift of the host moves both
alike. The measured change is the median over rounds of (step without the break / step with
it − 1); its spread (quartiles over rounds) is printed with it. ``--break-kind item`` makes the break a
data-dependent ``.item()`` check (``tracekit profile --graph-break-kind item``: a break that also makes the host
wait for the GPU); the twin without the break is the plain model either way.

Usage (on a GPU host; CPU works for a dry run)::

    python benchmarks/gpu/paired_twins.py --model toy --width 256 --depth 16 --batch-size 32 --at 7 \\
        --rounds 200 --json paired.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import statistics
import sys
import time
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tracekit.profile.config import GRAPH_BREAK_KINDS, ProfileConfig  # noqa: E402
from tracekit.profile.harness import time_steps  # noqa: E402
from tracekit.profile.models import build_workload  # noqa: E402
from tracekit.profile.parallel import parallelize  # noqa: E402
from tracekit.profile.training import Trainer  # noqa: E402


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _init_world(device_type: str) -> None:
    import torch.distributed as dist

    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(_free_port()))
    dist.init_process_group("nccl" if device_type == "cuda" else "gloo", rank=0, world_size=1)


def _twin(args: argparse.Namespace, at: int | None, device: object, stack: ExitStack) -> Trainer:
    import torch

    config = ProfileConfig(model=args.model, width=args.width, depth=args.depth, seq_len=args.seq_len,
                           batch_size=args.batch_size, graph_break_at=at, dynamo=args.dynamo, nproc=1,
                           graph_break_kind=args.break_kind if at is not None else "explicit")
    torch.manual_seed(config.seed)
    model, batch_fn, blocks = build_workload(config)
    torch.manual_seed(config.seed + 1)
    batches = [batch_fn(config.batch_size, device)]
    model.to(device)
    train_model, _ = parallelize(model, blocks, config, device)
    return Trainer(config, train_model, batches, device)


def measure(args: argparse.Namespace) -> dict:
    """Warm both twins up, then time ``args.rounds`` rounds of one step each, alternating order."""
    import torch
    import torch._dynamo

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    _init_world(device.type)
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    with ExitStack() as stack:
        if args.dynamo != "none":
            stack.enter_context(torch._dynamo.config.patch(optimize_ddp="ddp_optimizer"))
            torch._dynamo.config.cache_size_limit = max(torch._dynamo.config.cache_size_limit, 16)
        from torch._dynamo.utils import counters

        twins = {"break": _twin(args, args.at, device, stack), "none": _twin(args, None, device, stack)}
        graphs = {}
        for name, t in twins.items():  # compiled here, in warm-up; the graphs each twin compiled are kept
            before = counters["stats"]["unique_graphs"]
            time_steps(t.step, args.warmup, sync)
            graphs[name] = counters["stats"]["unique_graphs"] - before
        times: dict[str, list[float]] = {"break": [], "none": []}
        order = ["break", "none"]
        for r in range(args.rounds):
            for name in order if r % 2 == 0 else order[::-1]:
                times[name] += time_steps(twins[name].step, 1, sync)
    import torch.distributed as dist

    dist.destroy_process_group()
    ratios = sorted(b / a - 1 for a, b in zip(times["break"], times["none"]))
    q = statistics.quantiles(ratios, n=4)
    return {
        "shape": vars(args), "device": torch.cuda.get_device_name() if device.type == "cuda" else platform.processor(),
        "torch": torch.__version__, "host_load": os.getloadavg(), "cpus": os.cpu_count(),
        "break_ms_median": 1e3 * statistics.median(times["break"]),
        "none_ms_median": 1e3 * statistics.median(times["none"]),
        "paired_delta_pct_median": 100 * statistics.median(ratios),
        "break_kind": args.break_kind, "paired_delta_pct_q1": 100 * q[0], "paired_delta_pct_q3": 100 * q[2], "graphs_compiled": graphs,
        "step_ms": {k: [1e3 * x for x in v] for k, v in times.items()},
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog="example: python benchmarks/gpu/paired_twins.py --model toy --width 256 --depth 16 "
                                        "--batch-size 32 --at 7 --json paired.jsonl")
    ap.add_argument("--model", default="toy", choices=("toy", "transformer"))
    ap.add_argument("--width", type=int, default=256)
    ap.add_argument("--depth", type=int, default=16)
    ap.add_argument("--seq-len", type=int, default=64)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--at", type=int, required=True, help="the break after this block (--graph-break-at)")
    ap.add_argument("--break-kind", default="explicit", choices=GRAPH_BREAK_KINDS,
                    help="the twin with the break: torch._dynamo.graph_break() (explicit) or an .item() check (item), "
                         "as tracekit profile --graph-break-kind")
    ap.add_argument("--dynamo", default="inductor")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--json", type=Path, required=True,
                    help="where the result goes, one JSON object (name it .jsonl beside traces: tracekit analyze "
                         "takes every .json in a folder for a trace)")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    out = measure(args)
    out["seconds"] = time.perf_counter() - t0
    args.json.write_text(json.dumps(out, default=str))
    print(f"{args.json}: break {out['break_ms_median']:.3f} ms, none {out['none_ms_median']:.3f} ms, paired change "
          f"{out['paired_delta_pct_median']:+.1f} % (quartiles {out['paired_delta_pct_q1']:+.1f} .. "
          f"{out['paired_delta_pct_q3']:+.1f} %); graphs compiled {out['graphs_compiled']} (break: {args.break_kind})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
