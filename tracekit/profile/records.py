"""What a rank reports and how rank 0 assembles ``run.json`` (``tracekit profile`` and ``tracekit bench``).

* :func:`versions`, :func:`topology` -- software versions and ``nvidia-smi topo -m``.
* :func:`reducer_buckets` -- the C++ reducer's actual buckets (DDP logging data).
* :func:`build_manifest` -- the manifest from every rank's record (see
  :mod:`tracekit.traces.manifest` for the keys).
"""

from __future__ import annotations

import datetime as _dt
import platform
import shutil
import subprocess
import sys
from typing import Any

from tracekit.cpus import usable_cpus
from tracekit.version import version
from tracekit.profile import bucket_events, calibrate
from tracekit.profile.module_ranges import forward_is_compiled
from tracekit.profile.config import ProfileConfig
from tracekit.profile.harness import add_profiled_timings, summarize_ranks
from tracekit.traces.manifest import SCHEMA_VERSION
from tracekit.profile.models import workload_kind


def versions() -> dict[str, Any]:
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
        "tracekit": version(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "nccl": nccl,
        "cudnn": cudnn,
        "platform": platform.platform(),
    }


def topology() -> tuple[str | None, str | None]:
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


def reducer_buckets(ddp: Any) -> tuple[dict[str, Any] | None, str | None]:
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
        "param_bytes": _param_bytes(ddp),
    }, None


def _param_bytes(ddp: Any) -> list[int] | None:
    """Bytes of each parameter DDP reduces, in DDP's parameter order (the indices of
    ``rebuilt_per_bucket_param_indices``): what a what-if regroups into other buckets."""
    try:
        return [int(p.numel() * p.element_size()) for p in ddp.module.parameters() if p.requires_grad]
    except Exception:  # noqa: BLE001 - FSDP/replicate wrappers without .module: no layout to record
        return None


def rank_record(*, rank: int, local_rank: int, device: Any, warmup_s: list[float], step_s: list[float],
                compile_facts: dict[str, Any], ddp: Any, applied: dict[str, Any], trace: dict[str, Any] | None,
                backward_compiler: Any = None, profiled_step_s: list[float] | None = None,
                bucket_timing: dict[str, Any] | None = None, window_step_s: list[float] | None = None,
                cpu_only_step_s: list[float] | None = None) -> dict[str, Any]:
    """What one rank contributes to the manifest (gathered on rank 0 with ``all_gather_object``).

    ``compiled_autograd`` (python reducer runs): the captured backward graphs (see
    :class:`tracekit.profile.compiled_autograd.BackwardCompiler`) and the inductor DDP-fusion
    settings in effect; None otherwise. ``profiled_step_s``: the profiler's recorded steps, timed;
    ``window_step_s``: every step of the profiler's window (wait, warm-up, recorded), timed; ``cpu_only_step_s``:
    the steps after it profiled with the CPU recorded and CUPTI off (``--profile-cpu-only-steps``), timed;
    ``bucket_timing``: :meth:`tracekit.profile.bucket_events.BucketTimer.results` or ``{"unavailable": why}``.
    """
    import os
    import socket

    import torch

    reducer, reducer_why = reducer_buckets(ddp) if ddp is not None else (None, "no DDP reducer (FSDP or no DDP)")
    ca = None
    if backward_compiler is not None:
        ca = {"graphs": backward_compiler.graphs, "inductor_ddp_fusion": backward_compiler.fusion_settings}
    return {
        "rank": rank, "local_rank": local_rank, "hostname": socket.gethostname(), "pid": os.getpid(),
        "device": str(device),
        "gpu_name": torch.cuda.get_device_name(device) if device.type == "cuda" else None,
        "cpus": usable_cpus(), "torch_threads": torch.get_num_threads(),
        "warmup_step_s": warmup_s, "step_s": step_s,
        "compile": dict(rank=rank, **compile_facts),
        "reducer": reducer, "reducer_unavailable": reducer_why,
        "compiled_autograd": ca,
        "parallel_applied": applied, "trace": trace,
        "tf32": {"matmul": bool(torch.backends.cuda.matmul.allow_tf32), "cudnn": bool(torch.backends.cudnn.allow_tf32)},
        "profiled_step_s": profiled_step_s or [], "window_step_s": window_step_s or [],
        "cpu_only_step_s": cpu_only_step_s or [],
        "bucket_timing": bucket_timing,
    }


def manifest_header(config: ProfileConfig, status: str) -> dict[str, Any]:
    """The keys every run.json starts with, a finished run's (``status`` "ok") or a failed one's."""
    cfg = config.to_dict()
    cfg.pop("command_line", None)
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "tracekit", "version": version()},
        "created_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "command_line": config.command_line or sys.argv,
        "status": status,
        "config": cfg,
    }


def build_manifest(config: ProfileConfig, ranks: list[dict[str, Any]], world: int, device: str,
                    backend: str) -> dict[str, Any]:
    ranks = sorted(ranks, key=lambda r: r["rank"])
    local_examples = config.batch_size * config.grad_accum
    timings = summarize_ranks([r["step_s"] for r in ranks], local_examples)
    timings["method"] = ("wall time of each step between device synchronizes, profiler off, "
                         "after the warm-up steps")
    timings["warmup_step_s"] = {str(r["rank"]): r["warmup_step_s"] for r in ranks}
    add_profiled_timings(timings, [r.get("profiled_step_s") or [] for r in ranks], config.profile_activities,
                         [r.get("window_step_s") or [] for r in ranks], [r.get("cpu_only_step_s") or [] for r in ranks])
    topo, topo_why = topology() if device == "cuda" or shutil.which("nvidia-smi") else (None, "cpu run")
    r0 = ranks[0]
    ddp_opt = (r0["compile"].get("ddp_optimizer") or {}).get("graphs") if r0["compile"].get("enabled") else None
    bucket_why = {}
    if r0["reducer"] is None:
        bucket_why["reducer"] = r0["reducer_unavailable"]
    if config.resolved_optimize_ddp != "ddp_optimizer":
        bucket_why["ddp_optimizer"] = "DDPOptimizer not in use"
    if not config.uses_python_reducer:
        bucket_why["compiled_autograd"] = "python reducer not in use"
    elif config.dynamo != "inductor":
        bucket_why["inductor_ddp_buckets"] = "inductor does not compile the backward (no DDP fusion)"
    return {
        **manifest_header(config, "ok"),
        "run": {
            "world_size": world,
            "device": device,
            "backend": backend,
            "launcher": config.launcher,
            "model_kind": workload_kind(config.model),
            "notice": config.device_notice,
            "examples_per_step_per_rank": local_examples,
            "global_batch": local_examples * world,
            "parallel_applied": r0["parallel_applied"],
            "tf32": r0.get("tf32"),
        },
        "versions": versions(),
        "hardware": {
            "ranks": [{**{k: r.get(k) for k in ("rank", "local_rank", "hostname", "pid", "device", "gpu_name", "cpus",
                                                "torch_threads")},
                       **({"gloo_threads": r["gloo_threads"]} if r.get("gloo_threads") else {})}
                      for r in ranks],
            "topology": topo,
            "topology_unavailable": topo_why,
        },
        "timings": timings,
        "profile_window": {
            "wait": config.profile_wait, "warmup": config.profile_warmup, "active": config.profile_steps,
            # steps run before the window: warm-up, timed, and the bucket-timing steps where they ran
            "first_step": config.warmup + config.steps + len((ranks[0].get("bucket_timing") or {}).get("steps") or []),
            "record_shapes": config.record_shapes, "with_stack": config.with_stack,
            "activities": config.profile_activities,
            "record_modules": config.record_modules and not forward_is_compiled(config.dynamo,
                                                                                config.resolved_optimize_ddp),
        },
        "compile": {"per_rank": [r["compile"] for r in ranks]},
        "profiler_cost": calibrate.summarize([r.get("profiler_cost") for r in ranks], device=device,
                                             activities=config.profile_activities,
                                             record_shapes=config.record_shapes, with_stack=config.with_stack),
        "buckets": {
            "ddp_optimizer": ddp_opt,
            "reducer": r0["reducer"],
            "inductor_ddp_buckets": r0["compile"].get("inductor_ddp_buckets"),
            "compiled_autograd": r0.get("compiled_autograd"),
            "unavailable": bucket_why,
        },
        "bucket_timing": bucket_events.manifest_section(ranks),
        "traces": [r["trace"] for r in ranks],
        "graphs": r0.get("graphs"),  # tracekit.profile.graph_section (rank 0 only)
    }
