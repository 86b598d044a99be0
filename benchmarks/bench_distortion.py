"""How much does the profiler slow the step down, and what do tracekit's bucket events cost?

For each variant, in ONE process per rank (so the model is compiled once and every mode
sees the same warmed-up program), after ``--warmup`` steps:

1. ``--reps`` interleaved blocks of ``--steps`` timed steps: bucket timing off (the comm
   hook passes through), then on (CUDA events per bucket, ``tracekit.profile.bucket_events``);
2. a profiler window with CPU+CUDA activities, then one with CUDA only (GPU runs), each
   ``wait 1, warmup 1, active --profile-steps`` steps, the active ones timed.

Every step is timed as ``tracekit profile`` times it: wall time between device
synchronizes; a step takes as long as its slowest rank. Variant ``MODEL:BACKEND[:AMP][:builtin]``
(``builtin``: no comm hook at all, DDP's C++ allreduce; only the unprofiled steps are timed).

Examples::

    # the issue-13 table on 2 GPUs
    python benchmarks/bench_distortion.py --nproc 2 \\
        --variants resnet50:eager,resnet50:eager:builtin,resnet50:inductor,gpt2:inductor:bf16 --out bench.json
    # plumbing check on CPU (gloo)
    python benchmarks/bench_distortion.py --device cpu --variants toy:eager --width 256 --depth 4 --steps 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from contextlib import nullcontext
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def _parse_variant(spec: str) -> dict[str, Any]:
    parts = spec.split(":")
    model, backend = parts[0], parts[1] if len(parts) > 1 else "eager"
    rest = parts[2:]
    return {"label": spec, "model": model, "dynamo": "none" if backend == "eager" else backend,
            "amp": next((p for p in rest if p in ("bf16", "fp16")), "none"), "builtin": "builtin" in rest}


def _call(model: Any, inputs: Any) -> Any:
    if isinstance(inputs, dict):
        return model(**inputs)
    return model(*inputs) if isinstance(inputs, (tuple, list)) else model(inputs)


def _slowest_mean_ms(per_rank: list[list[float]]) -> float | None:
    steps = [max(v) for v in zip(*per_rank)]
    return 1e3 * statistics.fmean(steps) if steps else None


def paired_overhead_pct(off: list[list[float]], on: list[list[float]], block: int) -> dict[str, float] | None:
    """The events' overhead from the interleaved blocks: per block pair, 100 · (mean on / mean off − 1) of
    the slowest rank's steps; returns the mean over pairs and a 95 % interval (mean ± t · sd / √pairs,
    t from the normal approximation 1.96 for ≥ 30 pairs, else the two-sided t quantile)."""
    a = [max(v) for v in zip(*off)]
    b = [max(v) for v in zip(*on)]
    pairs = min(len(a), len(b)) // block
    if pairs < 2:
        return None
    d = [100 * (statistics.fmean(b[k * block:(k + 1) * block]) / statistics.fmean(a[k * block:(k + 1) * block]) - 1)
         for k in range(pairs)]
    t = _T95.get(pairs - 1, 1.96)
    half = t * statistics.stdev(d) / pairs ** 0.5
    return {"mean_pct": statistics.fmean(d), "ci95_low_pct": statistics.fmean(d) - half,
            "ci95_high_pct": statistics.fmean(d) + half, "pairs": pairs}


#: two-sided 95 % t quantiles by degrees of freedom (small samples)
_T95 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26, 10: 2.23, 11: 2.20,
        12: 2.18, 13: 2.16, 14: 2.14, 15: 2.13, 16: 2.12, 17: 2.11, 18: 2.10, 19: 2.09, 20: 2.09, 24: 2.06, 29: 2.05}


def worker(a: argparse.Namespace) -> None:
    import torch
    import torch.distributed as dist

    from tracekit.profile import bucket_events
    from tracekit.profile.config import ProfileConfig
    from tracekit.profile.harness import run_profiled_steps, time_steps
    from tracekit.profile.models import build_workload, output_to_loss
    from tracekit.profile.parallel import compile_inner, wrap_ddp

    v = _parse_variant(a.variant)
    cuda = a.device == "cuda"
    local = int(os.environ["LOCAL_RANK"])
    if cuda:
        torch.cuda.set_device(local)
    device = torch.device("cuda", local) if cuda else torch.device("cpu")
    dist.init_process_group("nccl" if cuda else "gloo")
    rank = dist.get_rank()
    shape = {k: getattr(a, k) for k in ("width", "depth", "batch_size") if getattr(a, k) is not None}
    cfg = ProfileConfig(model=v["model"], dynamo=v["dynamo"], amp=v["amp"], device=a.device,
                        bucket_timing=not v["builtin"], **shape)
    torch.manual_seed(0)
    model, batch_fn, _ = build_workload(cfg)
    torch.manual_seed(1 + rank)
    inputs = batch_fn(cfg.batch_size, device)
    model.to(device)
    compile_inner(model, cfg)
    ddp, _ = wrap_ddp(model, cfg, device)
    opt = torch.optim.SGD(ddp.parameters(), lr=1e-4)
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(cfg.amp)

    def step() -> None:
        with torch.autocast(device.type, dtype=dtype) if dtype else nullcontext():
            loss = output_to_loss(_call(ddp, inputs))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    sync = torch.cuda.synchronize if cuda else (lambda: None)
    time_steps(step, a.warmup, sync)
    timer = bucket_events.timer_of(ddp)
    mine: dict[str, Any] = {"off": [], "events": []}
    for _ in range(a.reps):
        mine["off"] += time_steps(step, a.steps, sync)
        if timer is not None:
            mine["events"] += time_steps(timer.timed(step), a.steps, sync)
    mine["bucket_summary"] = timer.results()["summary"] if timer is not None else None
    if not v["builtin"]:
        with tempfile.TemporaryDirectory() as tmp:
            for acts in ("cpu,cuda", "cuda") if cuda else ("cpu,cuda",):
                pcfg = argparse.Namespace(profile_wait=1, profile_warmup=1, profile_steps=a.profile_steps,
                                          record_shapes=False, with_stack=False, profile_activities=acts)
                win = run_profiled_steps(pcfg, Path(tmp) / acts.replace(",", "_"), rank, device.type, step, sync)
                mine[acts] = win.active_step_s
    got: list[Any] = [None] * dist.get_world_size()
    dist.all_gather_object(got, mine)
    if rank == 0:
        row = {"variant": v["label"], "world_size": len(got), "device": a.device,
               "gpu": torch.cuda.get_device_name(device) if cuda else None, "torch": torch.__version__,
               "batch_size": cfg.batch_size, "steps_per_mode": a.steps * a.reps, "profiled_steps": a.profile_steps}
        for key in ("off", "events", "cpu,cuda", "cuda"):
            per = [g.get(key) or [] for g in got]
            row[f"{key}_ms"] = _slowest_mean_ms(per) if all(per) else None
        row["events_overhead"] = (paired_overhead_pct([g["off"] for g in got], [g["events"] for g in got], a.steps)
                                  if all(g["events"] for g in got) else None)
        row["bucket_summary_rank0"] = got[0]["bucket_summary"]
        with open(a.out, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(row) + "\n")
    dist.barrier()
    dist.destroy_process_group()


def _pct(a: float | None, b: float | None) -> str:
    return f"{100 * (a / b - 1):+.1f} %" if a and b else "-"


def table(rows: list[dict[str, Any]]) -> str:
    """Markdown: mean step (ms) per mode, the ratio to the unprofiled step and the events' overhead."""
    out = ["| variant | no profiler | bucket events on | events overhead, 95 % interval (block pairs) "
           "| CPU+CUDA activities | CUDA only |",
           "|---|---|---|---|---|---|"]
    for r in rows:
        off = r.get("off_ms")

        def cell(k: str) -> str:
            x = r.get(k)
            return "-" if x is None else f"{x:.1f} ms ({_pct(x, off)})" if k != "off_ms" else f"{x:.1f} ms"

        ov = r.get("events_overhead")
        ci = (f"{ov['mean_pct']:+.1f} % [{ov['ci95_low_pct']:+.1f}, {ov['ci95_high_pct']:+.1f}] ({ov['pairs']})"
              if ov else "-")
        out.append(f"| {r['variant']} | {cell('off_ms')} | {cell('events_ms')} | {ci} | {cell('cpu,cuda_ms')} | "
                   f"{cell('cuda_ms')} |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--variants", default="resnet50:eager,resnet50:eager:builtin,resnet50:inductor,gpt2:inductor:bf16")
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    ap.add_argument("--nproc", type=int, default=2)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--steps", type=int, default=10, help="steps per timed block")
    ap.add_argument("--reps", type=int, default=3, help="interleaved off/on block pairs")
    ap.add_argument("--profile-steps", type=int, default=5)
    ap.add_argument("--width", type=int, default=None)
    ap.add_argument("--depth", type=int, default=None)
    ap.add_argument("--batch-size", type=int, default=None)
    ap.add_argument("--out", default="bench_distortion.jsonl")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--variant", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.worker:
        worker(a)
        return 0
    Path(a.out).unlink(missing_ok=True)
    env = dict(os.environ, PYTHONPATH=f"{REPO}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    failed = []
    for spec in a.variants.split(","):
        cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={a.nproc}",
               __file__, "--worker", "--variant", spec, "--device", a.device, "--warmup", str(a.warmup),
               "--steps", str(a.steps), "--reps", str(a.reps), "--profile-steps", str(a.profile_steps),
               "--out", a.out]
        for k in ("width", "depth", "batch_size"):
            if getattr(a, k) is not None:
                cmd += [f"--{k.replace('_', '-')}", str(getattr(a, k))]
        print(f"== {spec}", file=sys.stderr, flush=True)
        try:
            p = subprocess.run(cmd, env=env, timeout=a.timeout, check=False)
            if p.returncode:
                failed.append(spec)
        except subprocess.TimeoutExpired:
            failed.append(f"{spec} (timeout)")
    rows = [json.loads(line) for line in Path(a.out).read_text().splitlines()] if Path(a.out).exists() else []
    print(table(rows))
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
