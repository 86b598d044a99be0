"""Hand-built DDP training steps (eager / compiled / DDPOptimizer-split / graph break / skipped) on top of
:mod:`tests.tracebuilder`, for the explain and diff tests.

:func:`write_run` writes one trace per rank (and ``run.json`` when a manifest is given) and
returns the folder. One step: forward on the main thread (tid 1000), backward on the
autograd thread (tid 2000), one compute kernel per bucket (stream 7), one allreduce per
bucket (stream 17) launched from an AccumulateGrad hook, then the optimizer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.tracebuilder import TraceBuilder

MAIN, AUTOGRAD = 1000, 2000
MODES = ("eager", "split", "nosplit", "break", "skipped")


def build_rank(rank: int, world: int, mode: str, *, n_buckets: int = 4, steps: tuple[int, ...] = (1, 2),
               compute_us: float = 200.0, ar_us: list[float] | None = None, straggle_us: float = 0.0,
               straggler: int | None = None, step_len_us: float = 4000.0, break_gap_us: float = 300.0,
               bucket_nelems: int = 1_000_000) -> TraceBuilder:
    """One rank's trace. ``straggle_us``: every rank but ``straggler`` starts its allreduces that much
    earlier and waits (its kernels last longer), as NCCL kernels do while a peer is late."""
    assert mode in MODES
    ar = ar_us if ar_us is not None else [150.0] * (n_buckets - 1) + [10.0]
    tb = TraceBuilder(rank=rank, world_size=world, tid=MAIN)
    compiled = mode in ("split", "nosplit", "break")
    for k, n in enumerate(steps):
        s0 = k * step_len_us
        tb.step(n, s0, s0 + step_len_us - 10)
        gpu = s0 + 50.0  # compute stream free at
        # -- forward -------------------------------------------------------------
        t = s0 + 20
        if mode in ("skipped", "break", "split", "nosplit"):
            tb.cpu_op("TorchDynamo Cache Lookup", t, 5)
            t += 10
        fwd_end = t + 40 + n_buckets * 60 + (break_gap_us if mode == "break" else 0)
        tb.annotation("DistributedDataParallel.forward", t, fwd_end - t)
        if mode != "eager":
            tb.cpu_op("Torch-Compiled Region: 0/0", t, fwd_end - t)
        c = t + 20
        for i in range(n_buckets if mode != "nosplit" else 1):
            if mode == "break" and i == 1:
                tb.cpu_op("aten::mul", c, break_gap_us - 20)  # eager code between the graphs
                c += break_gap_us
                tb.cpu_op("Torch-Compiled Region: 1/0", c - 10, fwd_end - c)
            name = "CompiledFunction" if compiled else "aten::addmm"
            tb.cpu_op(name, c, 40)
            ksteps = n_buckets if mode == "nosplit" else 1
            for j in range(ksteps):
                la = c + 5 + j * 2
                gpu = max(gpu, la + 5)
                tb.kernel("triton_fwd" if compiled else "gemm_fwd", gpu, 30, launch_at_us=la, launch_tid=MAIN)
                gpu += 30
            c += 60
        # -- backward ------------------------------------------------------------
        b = fwd_end + 50
        comm_free = 0.0
        ar_launch: list[float] = []
        ready: list[float] = []
        if mode == "nosplit":
            tb.cpu_op("autograd::engine::evaluate_function: CompiledFunctionBackward", b, 40 + 20 * n_buckets,
                      tid=AUTOGRAD)
            tb.cpu_op("CompiledFunctionBackward", b + 2, 30 + 20 * n_buckets, tid=AUTOGRAD)
            for i in range(n_buckets):
                la = b + 10 + 20 * i
                gpu = max(gpu, la + 5)
                tb.kernel("triton_bwd", gpu, compute_us, launch_at_us=la, launch_tid=AUTOGRAD)
                gpu += compute_us
            b += 60 + 20 * n_buckets
            for i in range(n_buckets):
                tb.cpu_op("autograd::engine::evaluate_function: torch::autograd::AccumulateGrad", b, 50, tid=AUTOGRAD)
                ar_launch.append(b + 20)
                ready.append(gpu)
                b += 60
        else:
            for i in range(n_buckets):
                if compiled:
                    tb.cpu_op("autograd::engine::evaluate_function: CompiledFunctionBackward", b, 100, tid=AUTOGRAD)
                    tb.cpu_op("CompiledFunctionBackward", b + 2, 90, tid=AUTOGRAD)
                else:
                    tb.cpu_op("autograd::engine::evaluate_function: AddmmBackward0", b, 100, tid=AUTOGRAD)
                la = b + 10
                gpu = max(gpu, la + 5)
                tb.kernel("triton_bwd" if compiled else "gemm_bwd", gpu, compute_us, launch_at_us=la,
                          launch_tid=AUTOGRAD)
                gpu += compute_us
                tb.cpu_op("autograd::engine::evaluate_function: torch::autograd::AccumulateGrad", b + 100, 50,
                          tid=AUTOGRAD)
                tb.cpu_op("torch::autograd::AccumulateGrad", b + 102, 3, tid=AUTOGRAD)
                ar_launch.append(b + 120)
                ready.append(gpu)
                b += 150
        for i, la in enumerate(ar_launch):
            start = max(la + 6, ready[i], comm_free)
            dur = ar[i]
            if straggle_us and rank != straggler:
                start, dur = start - straggle_us, dur + straggle_us
            tb.nccl_allreduce(start, dur, la, bucket_nelems, kernel_args=not compiled, tid=AUTOGRAD)
            comm_free = start + dur
        opt = max(b, comm_free) + 20
        tb.annotation("Optimizer.step#SGD.step", opt, 50)
        tb.kernel("sgd", max(opt + 10, gpu, comm_free), 20, launch_at_us=opt + 5, launch_tid=MAIN)
    return tb


def manifest_for(mode: str, *, n_buckets: int = 4, world: int = 2, p50_s: float = 0.01, p95_s: float = 0.012,
                 bucket_bytes: float = 4e6, skipped: bool = False, breaks: int = 0) -> dict[str, Any]:
    """A ``run.json`` shaped like tracekit.traces.manifest's (only the keys explain/diff read)."""
    compiled = mode != "eager"
    per_rank = []
    for r in range(world):
        f: dict[str, Any] = {"rank": r, "enabled": compiled, "backend": "inductor" if compiled else "none",
                             "optimize_ddp": "ddp_optimizer" if mode in ("split", "break") else (False if compiled else None)}
        if compiled:
            f["graph_count"] = 0 if skipped else 1 + breaks
            f["graph_breaks"] = {"total": breaks, "model": breaks, "ddp_wrapper": 0, "reasons": [
                {"reason": "call_function graph_break", "detail": "", "count": breaks, "origin": "model"}] if breaks else []}
            f["compile_time_s"] = 12.5
            f["skipped_frames"] = [{"function": "forward", "reason": "graph break in loop"}] if skipped else []
            f["ddp_optimizer"] = ({"intended_splits": n_buckets - 1, "graphs": [{
                "graph": 0, "bucket_cap_bytes": 25 * 2**20, "bucket_count": n_buckets,
                "buckets": [{"index": i, "bytes": int(bucket_bytes), "params": [f"l{i}.weight"]}
                            for i in range(n_buckets)]}]} if mode in ("split", "break") else None)
        per_rank.append(f)
    timing = {"sec_per_iter": {"p50": p50_s, "p75": p50_s, "p90": p95_s, "p95": p95_s}}
    return {
        "schema_version": 1, "compile": {"per_rank": per_rank},
        "timings": {"per_rank": [dict(rank=r, **timing) for r in range(world)], "overall": timing},
        "buckets": {"reducer": {"bucket_cap_bytes": 25 * 2**20, "bucket_sizes_bytes": [int(bucket_bytes)] * n_buckets,
                                "rebuilt_bucket_sizes_bytes": None}},
    }


def write_run(folder: Path, mode: str, *, world: int = 2, manifest: dict[str, Any] | None = None,
              **kw: Any) -> Path:
    """Write ``rank<R>.trace.json`` files (and ``run.json``) into ``folder``; return it."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for r in range(world):
        build_rank(r, world, mode, **kw).write(folder / f"rank{r}.trace.json")
    if manifest is not None:
        (folder / "run.json").write_text(json.dumps(manifest))
    return folder


def load_run(folder: Path) -> tuple[Any, Any]:
    """Load, attach run.json when present, analyze: ``(traces, result)``."""
    import tracekit
    from tracekit.traces.manifest import read_manifest

    ts = tracekit.load(folder)
    if ts.manifest is None:
        ts.manifest = read_manifest(folder)
    return ts, tracekit.analyze(ts)
