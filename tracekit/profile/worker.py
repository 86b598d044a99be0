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
import platform
import shutil
import socket
import subprocess
import sys
from contextlib import ExitStack, nullcontext
from pathlib import Path
from typing import Any

from tracekit import __version__
from tracekit.errors import RunError
from tracekit.profile.compile_facts import enter_compile_scope
from tracekit.profile.config import ProfileConfig
from tracekit.profile.env import CONFIG_ENV, apply_gpu_safety_env, detect_rank_env
from tracekit.profile.failure import report_failure
from tracekit.profile.harness import run_profiled_steps, summarize_ranks, time_steps
from tracekit.profile.manifest import SCHEMA_VERSION, write_manifest
from tracekit.profile.models import build_workload, output_to_loss
from tracekit.profile.parallel import compile_inner, wrap_ddp, wrap_fsdp


def _versions() -> dict[str, Any]:
    import torch

    nccl = None
    if torch.cuda.is_available():
        try:
            v = torch.cuda.nccl.version()
            nccl = ".".join(map(str, v)) if isinstance(v, tuple) else str(v)
        except Exception:  # noqa: BLE001
            nccl = None
    cudnn = None
    try:
        cudnn = torch.backends.cudnn.version() if torch.cuda.is_available() else None
    except Exception:  # noqa: BLE001
        pass
    return {
        "tracekit": __version__,
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "nccl": nccl,
        "cudnn": cudnn,
        "platform": platform.platform(),
    }


def _topology() -> tuple[str | None, str | None]:
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None, "nvidia-smi not found"
    try:
        p = subprocess.run([exe, "topo", "-m"], capture_output=True, text=True, timeout=15, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"nvidia-smi topo -m failed: {e}"
    if p.returncode != 0:
        return None, f"nvidia-smi topo -m exited {p.returncode}: {p.stderr.strip()[-200:]}"
    return p.stdout, None


def _reducer_buckets(ddp: Any) -> tuple[dict[str, Any] | None, str | None]:
    """The C++ reducer's actual bucket sizes, from DDP's own logging data."""
    try:
        data = ddp._get_ddp_logging_data()
    except Exception as e:  # noqa: BLE001
        return None, f"_get_ddp_logging_data failed: {type(e).__name__}: {e}"

    def ints(key: str) -> list[int] | None:
        v = data.get(key)
        if v in (None, ""):
            return None
        return [int(x) for x in str(v).split(",") if x.strip()]

    return {
        "bucket_cap_bytes": data.get("bucket_cap_bytes"),
        "bucket_sizes_bytes": ints("bucket_sizes"),
        "rebuilt_bucket_sizes_bytes": ints("rebuilt_bucket_sizes"),
        "rebuilt_per_bucket_param_indices": data.get("rebuilt_per_bucket_param_indices"),
        "has_rebuilt_buckets": data.get("has_rebuilt_buckets"),
        "gradient_as_bucket_view": data.get("gradient_as_bucket_view"),
        "python_reducer": bool(getattr(ddp, "_use_python_reducer", False)),
    }, None


def _call(model: Any, inputs: Any) -> Any:
    if isinstance(inputs, dict):
        return model(**inputs)
    if isinstance(inputs, (tuple, list)):
        return model(*inputs)
    return model(inputs)


class _Trainer:
    """One training step = grad_accum micro-batches (no_sync on all but the last) + optimizer step."""

    def __init__(self, config: ProfileConfig, model: Any, batches: list[Any], device: Any) -> None:
        import torch

        self.config, self.model, self.batches, self.device = config, model, batches, device
        self.torch = torch
        params = [p for p in model.parameters() if p.requires_grad]
        if config.optimizer == "adamw":
            self.opt = torch.optim.AdamW(params, lr=config.lr)
        else:
            self.opt = torch.optim.SGD(params, lr=config.lr)
        self.amp_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(config.amp)
        self.scaler = None
        if config.amp == "fp16" and device.type == "cuda":
            self.scaler = torch.amp.GradScaler("cuda")
        self.compiled_backward = None
        mode = config.resolved_optimize_ddp
        if mode and mode.startswith("python_reducer"):
            # The python reducer's allreduces are traced by compiled autograd.
            # fullgraph only when asked: on some torch versions (2.11) the compiled-autograd
            # graph reaches code dynamo cannot trace (a generator) and must be allowed to break.
            self.compiled_backward = torch.compile(backend=config.dynamo, fullgraph=config.fullgraph)
        self.fail_now = False

    def _backward_ctx(self) -> Any:
        if self.compiled_backward is None:
            return nullcontext()
        import torch._dynamo.compiled_autograd as ca

        enable = getattr(ca, "_enable", None) or ca.enable
        return enable(self.compiled_backward)

    def step(self) -> None:
        torch = self.torch
        rf = torch.profiler.record_function
        n = len(self.batches)
        for i, inputs in enumerate(self.batches):
            last = i == n - 1
            sync_ctx = self.model.no_sync() if (not last and hasattr(self.model, "no_sync")) else nullcontext()
            with sync_ctx:
                # tracekit's annotations wrap compiled code; inside it they would be ignored.
                with rf("tracekit.forward"):
                    amp = (torch.autocast(device_type=self.device.type, dtype=self.amp_dtype)
                           if self.amp_dtype is not None else nullcontext())
                    with amp:
                        loss = output_to_loss(_call(self.model, inputs)) / n
                if self.fail_now:
                    raise RuntimeError(f"tracekit test failure injected on rank {os.environ.get('RANK')}")
                with rf("tracekit.backward"), self._backward_ctx():
                    (self.scaler.scale(loss) if self.scaler else loss).backward()
        with rf("tracekit.optimizer"):
            if self.scaler:
                self.scaler.step(self.opt)
                self.scaler.update()
            else:
                self.opt.step()
            self.opt.zero_grad(set_to_none=True)


def run_rank(config: ProfileConfig) -> dict[str, Any] | None:
    """Run this rank; return the manifest on rank 0 (None elsewhere).

    Expects RANK/WORLD_SIZE/LOCAL_RANK/MASTER_ADDR/MASTER_PORT in the environment
    and ``config.device`` resolved to "cuda" or "cpu".
    """
    rank_env = detect_rank_env()
    if rank_env is None:
        raise RunError("run_rank needs RANK/WORLD_SIZE (or SLURM_*) in the environment")
    if config.device == "cuda":
        apply_gpu_safety_env()
    import torch
    import torch.distributed as dist

    if config.device == "cuda":
        torch.cuda.set_device(rank_env.local_rank)
        device = torch.device("cuda", rank_env.local_rank)
        backend = "nccl"
    else:
        device = torch.device("cpu")
        backend = "gloo"
    dist.init_process_group(backend=backend, timeout=_dt.timedelta(seconds=config.timeout_s))
    rank, world = dist.get_rank(), dist.get_world_size()
    try:
        manifest = _run(config, rank, rank_env.local_rank, world, device, backend)
    except BaseException:
        # Do not tear down the group here: peers may be stuck in a collective;
        # the launcher kills them. Exiting is enough.
        raise
    # Tear down together: a gloo rank that destroys its group while a peer is still
    # finishing the manifest gather can abort at exit ("terminate called without an
    # active exception", SIGABRT), seen about once in five CPU runs.
    dist.barrier()
    dist.destroy_process_group()
    return manifest


def _resolve_out_dir(config: ProfileConfig, rank: int) -> Path:
    import torch.distributed as dist

    name = [config.out_dir]
    if name[0] is None:
        from tracekit.profile.launcher import default_out_dir

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
    torch.manual_seed(config.seed)
    model, batch_fn, blocks = build_workload(config)
    torch.manual_seed(config.seed + 1 + rank)  # different data per rank, same weights
    batches = [batch_fn(config.batch_size, device) for _ in range(config.grad_accum)]
    mode = config.resolved_optimize_ddp

    with ExitStack() as stack:
        facts = enter_compile_scope(stack, config, mode)  # before DDP is constructed
        model.to(device)
        ddp = None
        if config.parallel == "ddp":
            compile_inner(model, config)
            ddp, applied = wrap_ddp(model, config, device)
            train_model = ddp
        else:
            train_model, applied = wrap_fsdp(model, blocks, config, device.type)
            compile_inner(train_model, config)
        trainer = _Trainer(config, train_model, batches, device)
        sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)

        warmup_s = []
        for i in range(config.warmup):
            trainer.fail_now = config.fail_rank == rank and config.fail_at == "warmup" and i == 0
            warmup_s.extend(time_steps(trainer.step, 1, sync))
        facts.mark_warmup_done()
        step_s = time_steps(trainer.step, config.steps, sync)

        win = run_profiled_steps(config, out_dir, rank, device.type, trainer.step, sync)
        facts.mark_run_done()
        compile_facts = facts.facts()
    if config.fail_rank == rank and config.fail_at == "end":
        raise RuntimeError(f"tracekit test failure injected on rank {rank} (after writing its trace)")

    reducer, reducer_why = _reducer_buckets(ddp) if ddp is not None else (None, "not a DDP run")
    record = {
        "rank": rank,
        "local_rank": local_rank,
        "hostname": socket.gethostname(),
        "pid": os.getpid(),
        "device": str(device),
        "gpu_name": torch.cuda.get_device_name(device) if device.type == "cuda" else None,
        "warmup_step_s": warmup_s,
        "step_s": step_s,
        "compile": dict(rank=rank, **compile_facts),
        "reducer": reducer,
        "reducer_unavailable": reducer_why,
        "parallel_applied": applied,
        "trace": {"rank": rank, "file": win.trace_path.name, "bytes": win.trace_path.stat().st_size},
    }
    gathered: list[Any] = [None] * world
    dist.all_gather_object(gathered, record)
    if rank != 0:
        return None
    manifest = _build_manifest(config, gathered, world, device.type, backend)
    write_manifest(out_dir, manifest)
    manifest["_out_dir"] = str(out_dir)
    return manifest


def _build_manifest(config: ProfileConfig, ranks: list[dict[str, Any]], world: int, device: str,
                    backend: str) -> dict[str, Any]:
    ranks = sorted(ranks, key=lambda r: r["rank"])
    local_examples = config.batch_size * config.grad_accum
    timings = summarize_ranks([r["step_s"] for r in ranks], local_examples)
    timings["method"] = ("wall time of each step between device synchronizes, profiler off, "
                         "after the warm-up steps")
    timings["warmup_step_s"] = {str(r["rank"]): r["warmup_step_s"] for r in ranks}
    topo, topo_why = _topology() if device == "cuda" or shutil.which("nvidia-smi") else (None, "cpu run")
    r0 = ranks[0]
    ddp_opt = (r0["compile"].get("ddp_optimizer") or {}).get("graphs") if r0["compile"].get("enabled") else None
    bucket_why = {}
    if r0["reducer"] is None:
        bucket_why["reducer"] = r0["reducer_unavailable"]
    if config.resolved_optimize_ddp != "ddp_optimizer":
        bucket_why["ddp_optimizer"] = "DDPOptimizer not in use"
    cfg = config.to_dict()
    cfg.pop("command_line", None)
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "tracekit", "version": __version__},
        "created_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "command_line": config.command_line or sys.argv,
        "status": "ok",
        "config": cfg,
        "run": {
            "world_size": world,
            "device": device,
            "backend": backend,
            "launcher": config.launcher,
            "notice": config.device_notice,
            "examples_per_step_per_rank": local_examples,
            "global_batch": local_examples * world,
            "parallel_applied": r0["parallel_applied"],
        },
        "versions": _versions(),
        "hardware": {
            "ranks": [{k: r[k] for k in ("rank", "local_rank", "hostname", "pid", "device", "gpu_name")}
                      for r in ranks],
            "topology": topo,
            "topology_unavailable": topo_why,
        },
        "timings": timings,
        "profile_window": {
            "wait": config.profile_wait, "warmup": config.profile_warmup, "active": config.profile_steps,
            "first_step": config.warmup + config.steps,
            "record_shapes": config.record_shapes, "with_stack": config.with_stack,
        },
        "compile": {"per_rank": [r["compile"] for r in ranks]},
        "buckets": {
            "ddp_optimizer": ddp_opt,
            "reducer": r0["reducer"],
            "inductor_ddp_buckets": r0["compile"].get("inductor_ddp_buckets"),
            "unavailable": bucket_why,
        },
        "traces": [r["trace"] for r in ranks],
    }


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
