"""One rank of a profile run: set up, train, time, profile, gather, write the manifest.

Entry points:

* :func:`run_rank` -- in-process (used under torchrun/srun, where this process *is* a rank).
* ``python -m tracekit.profile.worker`` -- what our elastic launch starts per rank;
  it reads the config from ``$TRACEKIT_PROFILE_CONFIG``. On an exception it writes
  ``rank<R>.error.txt`` into the run folder (so the launcher can name the rank and
  its error) and exits non-zero.
"""

from __future__ import annotations

import datetime as _dt
import os
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from tracekit.errors import RunError
from tracekit.profile.compile_facts import enter_compile_scope
from tracekit.profile.config import DDP_LIKE, ProfileConfig, default_out_dir
from tracekit.profile.env import CONFIG_ENV, apply_gpu_safety_env, detect_rank_env
from tracekit.profile import bucket_events, flight_recorder, heartbeat
from tracekit.profile.failure import report_failure
from tracekit.profile import calibrate
from tracekit.profile.graph_capture import GraphRecorder
from tracekit.profile.graph_section import graphs_section
from tracekit.profile.harness import profiler_activities, run_profiled_steps, time_steps
from tracekit.profile.inductor_capture import InductorCapture
from tracekit.profile.module_ranges import ModuleRanges, forward_is_compiled
from tracekit.traces.manifest import write_manifest
from tracekit.profile.models import build_workload
from tracekit.profile.parallel import ddp_of, device_meshes, parallelize
from tracekit.profile.pg_probe import gloo_thread_map
from tracekit.profile.records import build_manifest, rank_record
from tracekit.profile.training import Trainer


def run_rank(config: ProfileConfig) -> dict[str, Any] | None:
    """Run this rank; return the manifest on rank 0 (None elsewhere).

    Expects RANK/WORLD_SIZE/LOCAL_RANK/MASTER_ADDR/MASTER_PORT in the environment
    and ``config.device`` resolved to "cuda" or "cpu".
    """
    rank_env = detect_rank_env()
    if rank_env is None:
        raise RunError("run_rank needs RANK/WORLD_SIZE (or SLURM_*) in the environment")
    heartbeat.start(config.out_dir, rank_env.rank)  # without --out under torchrun: once rank 0 named the folder
    heartbeat.mark("init")
    if config.device == "cuda":
        apply_gpu_safety_env()
    flight_recorder.apply_env(config.out_dir)
    import torch
    import torch.distributed as dist

    if config.device == "cuda":
        torch.cuda.set_device(rank_env.local_rank)
        device = torch.device("cuda", rank_env.local_rank)
        backend = "nccl"
    else:
        device = torch.device("cpu")
        backend = "gloo"
    heartbeat.mark("rendezvous")
    dist.init_process_group(backend=backend, timeout=_dt.timedelta(seconds=config.timeout_s))
    rank, world = dist.get_rank(), dist.get_world_size()
    try:
        manifest = _run(config, rank, rank_env.local_rank, world, device, backend)
    except BaseException:
        # Do not tear down the group here: peers may be stuck in a collective;
        # the launcher kills them. Exiting is enough, after keeping the flight recorder's
        # view of this rank's collectives for the launcher's diagnosis.
        out = os.environ.get("TRACEKIT_OUT_DIR") or config.out_dir
        if out:
            flight_recorder.dump(out, rank, backend)
        heartbeat.stop(clean=False)
        raise
    # Tear down together: a gloo rank that destroys its group while a peer is still
    # finishing the manifest gather can abort at exit ("terminate called without an
    # active exception", SIGABRT), seen about once in five CPU runs.
    heartbeat.mark("teardown")
    dist.barrier()
    dist.destroy_process_group()
    heartbeat.mark("done")
    heartbeat.stop(clean=True)
    out = os.environ.get("TRACEKIT_OUT_DIR") or config.out_dir
    if out:
        flight_recorder.remove_empty_dir(out)
    return manifest


def _resolve_out_dir(config: ProfileConfig, rank: int) -> Path:
    import torch.distributed as dist

    name = [config.out_dir]
    if name[0] is None:
        name = [default_out_dir(config) if rank == 0 else None]
        dist.broadcast_object_list(name, src=0)  # every rank must agree on the folder
    out = Path(name[0])
    out.mkdir(parents=True, exist_ok=True)
    return out


def _run(config: ProfileConfig, rank: int, local_rank: int, world: int, device: Any, backend: str) -> dict | None:
    import torch
    import torch.distributed as dist

    out_dir = _resolve_out_dir(config, rank)
    os.environ["TRACEKIT_OUT_DIR"] = str(out_dir)  # for the error file written by main()
    if config.out_dir is None:  # the folder is known only now (torchrun/srun without --out)
        heartbeat.start(out_dir, rank)
    heartbeat.mark("model build")
    torch.manual_seed(config.seed)
    model, batch_fn, blocks = build_workload(config)
    torch.manual_seed(config.seed + 1 + rank)  # different data per rank, same weights
    batches = [batch_fn(config.batch_size, device) for _ in range(config.grad_accum)]
    mode = config.resolved_optimize_ddp

    cal = (calibrate.Calibration(device.type, profiler_activities(config.profile_activities, device.type),
                                 record_shapes=config.record_shapes, with_stack=config.with_stack,
                                 ddp=config.parallel in DDP_LIKE and config.tp == 1, compiled=config.dynamo)
           if config.calibrate_profiler else None)
    if cal is not None:  # the compiled probe compiles now, before the run's compile facts start counting
        heartbeat.mark("profiler calibration probes")
        cal.prepare()
    with ExitStack() as stack:
        facts = enter_compile_scope(stack, config, mode)  # before DDP is constructed
        # which module and ATen ops each generated kernel comes from (compiled_kernels.json): every rank compiles
        # the same program, so rank 0 records and writes it; the others only configure inductor the same way
        capture = (stack.enter_context(InductorCapture(device.type, model, record=rank == 0))
                   if config.dynamo == "inductor" else None)
        model.to(device)
        meshes = device_meshes(config, device.type)
        recorder = GraphRecorder(config.dynamo, keep_code=rank == 0) if config.dynamo != "none" else None
        train_model, applied = parallelize(model, blocks, config, device, meshes, recorder)
        # gloo names no group in its trace: with a mesh, learn which worker threads serve which group
        gloo_threads = (gloo_thread_map([dist.group.WORLD, *(m.get_group() for m in meshes)])
                        if backend == "gloo" and meshes[1] is not None else None)
        trainer = Trainer(config, train_model, batches, device)
        if recorder is not None and trainer.backward_compiler is not None:
            trainer.backward_compiler.on_graph = recorder.record_backward
            trainer.backward_compiler.on_inputs = recorder.record_inputs
        sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)

        warmup_s = []
        heartbeat.set_stage("warmup")
        for i in range(config.warmup):
            trainer.fail_now = config.fail_rank == rank and config.fail_at == "warmup" and i == 0
            warmup_s.extend(time_steps(trainer.step, 1, sync))
        facts.mark_warmup_done()
        # the profiler-cost calibration times its unprofiled half now, before any profiler ran (calibrate doc)
        if cal is not None:
            heartbeat.set_stage("calibration")
            cal.before()
        ddp = ddp_of(train_model, config)
        timer = bucket_events.timer_of(ddp)
        heartbeat.set_stage("timed")
        step_s = time_steps(trainer.step, config.steps, sync)  # the unprofiled step time: the hook passes through
        if timer is not None:  # bucket marks in steps of their own, so their cost never reaches step_s
            heartbeat.set_stage("bucket_timing")
            time_steps(timer.timed(trainer.step), config.bucket_timing_steps, sync)

        heartbeat.set_stage("profiled")
        ranges = ModuleRanges(model, enabled=config.record_modules and not forward_is_compiled(config.dynamo, mode))
        with ranges:  # only for the profiler window: their cost stays out of the timed steps
            win = run_profiled_steps(config, out_dir, rank, device.type, trainer.step, sync)
        heartbeat.set_stage(None)
        facts.mark_run_done()
        cost = cal.after() if cal is not None else None
        compile_facts = facts.facts()
        graphs = graphs_section(config, rank, out_dir, recorder, trainer, ddp)
    if capture is not None and capture.record:  # one file per run (rank 0's)
        capture.write(out_dir)
    if config.fail_rank == rank and config.fail_at == "end":
        raise RuntimeError(f"tracekit test failure injected on rank {rank} (after writing its trace)")

    trace = {"rank": rank, "file": win.trace_path.name, "bytes": win.trace_path.stat().st_size}
    record = rank_record(rank=rank, local_rank=local_rank, device=device, warmup_s=warmup_s, step_s=step_s,
                         compile_facts=compile_facts, ddp=ddp, applied=applied,
                         trace=trace, backward_compiler=trainer.backward_compiler,
                         profiled_step_s=win.active_step_s, window_step_s=win.step_s,
                         cpu_only_step_s=win.cpu_only_step_s,
                         bucket_timing=timer.results() if timer else {"unavailable": bucket_events.unavailable_reason(
                             config.parallel, config.uses_python_reducer, config.bucket_timing) or "not installed"})
    record["gloo_threads"] = gloo_threads
    record["profiler_cost"] = {"rank": rank, **cost} if cost else None
    record["graphs"] = graphs
    gathered: list[Any] = [None] * world
    heartbeat.mark("manifest gather")
    dist.all_gather_object(gathered, record)
    if rank != 0:
        return None
    heartbeat.mark("write manifest")
    manifest = build_manifest(config, gathered, world, device.type, backend)
    write_manifest(out_dir, manifest)
    manifest["_out_dir"] = str(out_dir)
    return manifest


def main() -> int:
    """Entry of ``python -m tracekit.profile.worker`` (one rank under our elastic launch)."""
    config = ProfileConfig.from_json(os.environ[CONFIG_ENV])
    try:
        run_rank(config)
    except BaseException as e:
        rank = os.environ.get("RANK", "")
        out = os.environ.get("TRACEKIT_OUT_DIR") or config.out_dir
        return report_failure(out, int(rank) if rank.isdigit() else 0, e)
    return 0


if __name__ == "__main__":
    sys.exit(main())
