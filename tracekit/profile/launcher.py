"""``run_profile``: validate, pick the device, start the ranks, report how it went.

Without an outer launcher we start ``nproc`` ranks with torch's elastic launcher
(``torch.distributed.launcher.api.elastic_launch``) and a c10d rendezvous on a
free local port (port 0) -- the same machinery as ``torchrun --standalone``, so failure
detection and child cleanup are torch's, not ours. Under torchrun or srun this
process is one rank and runs it in-process.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import logging
import os
import re
import sys
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tracekit.errors import ConfigError, RunError
from tracekit.profile.config import ProfileConfig
from tracekit.profile.env import CHILD_MARKER, CONFIG_ENV, apply_gpu_safety_env, detect_rank_env
from tracekit.profile.failure import describe_failure, last_line
from tracekit.profile.manifest import read_manifest
from tracekit.profile.models import check_model_available


def default_out_dir(config: ProfileConfig) -> str:
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    model = re.sub(r"[^A-Za-z0-9_.-]+", "_", config.model)
    return os.path.join("traces", f"{stamp}-{model}-{config.mode_label()}")


def resolve_device(config: ProfileConfig, local_ranks: int) -> tuple[str, str | None]:
    """``(device, notice)``: cuda when enough GPUs for the ranks on this host, else cpu (with a notice)."""
    import torch

    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if config.device == "cuda":
        if gpus < local_ranks:
            raise ConfigError(f"--device cuda with {local_ranks} ranks on this host needs {local_ranks} GPUs, "
                              f"found {gpus}")
        return "cuda", None
    if config.device == "cpu":
        return "cpu", None
    if gpus >= local_ranks and gpus > 0:
        return "cuda", None
    why = "no CUDA GPU" if gpus == 0 else f"{gpus} GPU(s) for {local_ranks} ranks"
    return "cpu", f"{why}: running on cpu with gloo (timings are not GPU timings)"


def _check_torch_features(config: ProfileConfig, device: str) -> None:
    if config.parallel == "fsdp":
        try:
            from tracekit.profile.parallel import _fully_shard

            _fully_shard()
        except ImportError as e:
            raise ConfigError(f"--fsdp needs FSDP2 fully_shard (torch >= 2.4): {e}") from e
    if config.first_bucket_cap_mb is not None:
        import inspect

        from torch.nn.parallel import DistributedDataParallel as DDP

        if "bucket_cap_mb_list" not in inspect.signature(DDP.__init__).parameters:
            import torch

            raise ConfigError(f"--first-bucket-cap-mb is not supported by torch {torch.__version__}")
    if config.dynamo == "inductor" and device == "cpu":
        import shutil

        if not (shutil.which("g++") or shutil.which("c++") or shutil.which("clang++")):
            raise ConfigError("--dynamo inductor on cpu needs a C++ compiler; use --dynamo aot_eager")
    if config.amp == "fp16" and device == "cpu":
        raise ConfigError("--amp fp16 needs cuda (use --amp bf16 on cpu)")


@contextmanager
def _scoped_env(values: dict[str, str]) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@contextmanager
def _quiet_elastic() -> Iterator[None]:
    """The elastic agent logs every phase at INFO/WARNING; keep the console to our summary."""
    lg = logging.getLogger("torch.distributed.elastic")
    saved = lg.level
    lg.setLevel(logging.ERROR)
    try:
        yield
    finally:
        lg.setLevel(saved)


def _failure_error(out_dir: Path, exc: Exception) -> RunError:
    """Name the rank that failed first and the last line of its error."""
    rank, line = describe_failure(out_dir, exc)
    if rank is None:
        line = str(exc)
    traces = sorted(p.name for p in out_dir.glob("rank*.trace.json.gz"))
    kept = f"; traces kept: {', '.join(traces)}" if traces else ""
    who = f"rank {rank}" if rank is not None else "a rank"
    return RunError(f"{who} failed: {line} (run folder {out_dir}{kept})")


def run_profile(config: ProfileConfig, *, notify: Callable[[str], None] | None = None) -> dict[str, Any] | None:
    """Run the profile described by ``config``; return the manifest (None on ranks other than 0).

    Raises ConfigError for bad options (before anything starts), MissingDependencyError
    for a missing optional package, RunError when a rank fails (the traces other
    ranks wrote are kept).
    """
    notify = notify or (lambda msg: print(msg, file=sys.stderr))
    check_model_available(config)
    rank_env = detect_rank_env()
    if rank_env is not None:
        if config.nproc is not None and config.nproc != rank_env.world_size:
            raise ConfigError(f"--nproc {config.nproc} disagrees with the launcher's WORLD_SIZE "
                              f"{rank_env.world_size}; drop --nproc under torchrun/srun")
        device, notice = resolve_device(config, rank_env.local_world_size)
        _check_torch_features(config, device)
        if notice and rank_env.rank == 0 and not os.environ.get(CHILD_MARKER):
            notify(f"notice: {notice}")
        config = dataclasses.replace(config, device=device, nproc=rank_env.world_size,
                                     launcher=config.launcher or rank_env.launcher,
                                     device_notice=config.device_notice or notice)
        from tracekit.profile.worker import run_rank

        try:
            return run_rank(config)
        except ConfigError:
            raise
        except Exception as e:
            raise RunError(f"rank {rank_env.rank} failed: {type(e).__name__}: {last_line(str(e))}") from e

    import torch

    if config.nproc is None:
        gpus = torch.cuda.device_count() if torch.cuda.is_available() and config.device != "cpu" else 0
        nproc = gpus if gpus > 0 else 2
    else:
        nproc = config.nproc
    device, notice = resolve_device(config, nproc)
    _check_torch_features(config, device)
    if notice:
        notify(f"notice: {notice}")
    out_dir = Path(config.out_dir or default_out_dir(config))
    out_dir.mkdir(parents=True, exist_ok=True)
    for stale in out_dir.glob("rank*.error.txt"):
        stale.unlink()
    config = dataclasses.replace(config, device=device, nproc=nproc, out_dir=str(out_dir), launcher="elastic",
                                 device_notice=notice, command_line=config.command_line or list(sys.argv))
    if device == "cuda":
        apply_gpu_safety_env()
    _elastic_launch(config, out_dir)
    manifest = read_manifest(out_dir)
    if manifest is None:
        raise RunError(f"the ranks finished but {out_dir}/run.json is missing or unreadable")
    manifest["_out_dir"] = str(out_dir)
    return manifest


def local_launch_config(nproc: int, timeout_s: float, run_prefix: str) -> Any:
    """Elastic ``LaunchConfig`` for ``nproc`` ranks on this host, as ``torchrun --standalone``.

    ``max_restarts=0``: one failing rank stops the others, so nothing hangs.
    """
    from torch.distributed.launcher.api import LaunchConfig

    return LaunchConfig(
        min_nodes=1,
        max_nodes=1,
        nproc_per_node=nproc,
        run_id=f"{run_prefix}-{uuid.uuid4().hex[:8]}",
        rdzv_backend="c10d",
        # Port 0, as torchrun --standalone: the OS picks a free port when the store
        # binds, so two runs can never race for a port we picked earlier.
        rdzv_endpoint="localhost:0",
        rdzv_configs={"timeout": int(min(timeout_s, 900))},
        max_restarts=0,
        monitor_interval=0.1,
        start_method="spawn",
    )


def _elastic_launch(config: ProfileConfig, out_dir: Path) -> None:
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError
    from torch.distributed.launcher.api import elastic_launch

    lc = local_launch_config(config.nproc, config.timeout_s, "tracekit")
    child_env = {
        CONFIG_ENV: config.to_json(),
        CHILD_MARKER: "1",
        # One compute thread per rank would starve a small CPU box; let torch decide
        # but avoid N ranks x all cores of oversubscription.
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // config.nproc))),
        "PYTHONUNBUFFERED": "1",
    }
    with _scoped_env(child_env), _quiet_elastic():
        try:
            elastic_launch(lc, sys.executable)("-m", "tracekit.profile.worker")
        except ChildFailedError as e:
            raise _failure_error(out_dir, e) from None
        except Exception as e:  # rendezvous errors, agent failures
            if (out_dir / "run.json").exists():
                return
            raise _failure_error(out_dir, e) from e
