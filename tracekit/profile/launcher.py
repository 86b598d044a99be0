"""``run_profile``: validate, pick the device, start the ranks, report how it went.

Without an outer launcher we start ``nproc`` ranks with torch's elastic launcher
(:mod:`tracekit.profile.elastic`) -- the same machinery as ``torchrun --standalone``, so failure
detection and child cleanup are torch's, not ours. Under torchrun or srun this
process is one rank and runs it in-process (:func:`tracekit.profile.worker.run_rank`).
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tracekit.errors import ConfigError, RunError
from tracekit.profile.config import ProfileConfig, default_out_dir
from tracekit.profile.outdir import prepare_out_dir
from tracekit.profile.elastic import launch_module
from tracekit.profile.env import CHILD_MARKER, CONFIG_ENV, apply_gpu_safety_env, detect_rank_env
from tracekit.profile.failed_run import clear_leftovers, record_failure
from tracekit.profile.failure import last_line, write_error_file
from tracekit.profile.heartbeat import read_progress
from tracekit.traces.manifest import read_manifest
from tracekit.profile.models import check_model_available
from tracekit.profile.preflight import check_torch_features, resolve_device
from tracekit.profile.worker import run_rank

__all__ = ["run_profile", "default_out_dir", "resolve_device", "check_torch_features"]


def _failure_error(config: ProfileConfig, out_dir: Path, exc: Exception) -> RunError:
    """Name the rank that stopped first, where, and the ranks that failed because of it
    (:mod:`tracekit.profile.diagnose`); ``run.json`` records the same with ``status: failed``."""
    failure = record_failure(config, out_dir, exc)
    traces = sorted(p.name for p in out_dir.glob("rank*.trace.json.gz"))
    kept = f"; traces kept: {', '.join(traces)}" if traces else ""
    return RunError(f"{failure.summary} (run folder {out_dir}{kept})")


def run_profile(config: ProfileConfig, *, notify: Callable[[str], None] | None = None,
                force: bool = False) -> dict[str, Any] | None:
    """Run the profile described by ``config``; return the manifest (None on ranks other than 0).

    A run folder that already holds a finished run is refused (ConfigError) unless ``force``; the
    earlier run's files are removed first (:mod:`tracekit.profile.outdir`; by the launching process,
    not under torchrun/srun, where the ranks start together).
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
        check_torch_features(config, device)
        if notice and rank_env.rank == 0 and not os.environ.get(CHILD_MARKER):
            notify(f"notice: {notice}")
        config = dataclasses.replace(config, device=device, nproc=rank_env.world_size,
                                     launcher=config.launcher or rank_env.launcher,
                                     device_notice=config.device_notice or notice)
        try:
            return run_rank(config)
        except ConfigError:
            raise
        except Exception as e:
            # torchrun/srun: no tracekit launcher sees all ranks; leave what `tracekit diagnose` reads
            out = os.environ.get("TRACEKIT_OUT_DIR") or config.out_dir
            write_error_file(out, rank_env.rank, e)
            hint = f"; which rank stopped first: tracekit diagnose {out}" if out else ""
            raise RunError(f"rank {rank_env.rank} failed: {type(e).__name__}: {last_line(str(e))}{hint}") from e

    import torch

    if config.nproc is None:
        gpus = torch.cuda.device_count() if torch.cuda.is_available() and config.device != "cpu" else 0
        nproc = gpus if gpus > 0 else 2
    else:
        nproc = config.nproc
    device, notice = resolve_device(config, nproc)
    check_torch_features(config, device)
    if notice:
        notify(f"notice: {notice}")
    out_dir = Path(config.out_dir or default_out_dir(config))
    removed = prepare_out_dir(out_dir, force=force)
    if removed:
        what = "run" if any(p.name == "run.json" for p in removed) else "incomplete run (no run.json)"
        notify(f"notice: removed the earlier {what} in {out_dir}: {len(removed)} file(s)")
    out_dir.mkdir(parents=True, exist_ok=True)
    clear_leftovers(out_dir)
    config = dataclasses.replace(config, device=device, nproc=nproc, out_dir=str(out_dir), launcher="elastic",
                                 device_notice=notice, command_line=config.command_line or list(sys.argv))
    if device == "cuda":
        apply_gpu_safety_env()
    _elastic_launch(config, out_dir, notify)
    typed = read_manifest(out_dir)
    if typed is None:
        raise RunError(f"the ranks finished but {out_dir}/run.json is missing or unreadable")
    manifest = typed.to_dict()
    manifest["_out_dir"] = str(out_dir)
    return manifest


def _elastic_launch(config: ProfileConfig, out_dir: Path, notify: Callable[[str], None]) -> None:
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError

    try:
        launch_module(config.nproc, "tracekit.profile.worker", {CONFIG_ENV: config.to_json()},
                      config.timeout_s, "tracekit")
    except ChildFailedError as e:
        if _finished_anyway(out_dir, int(config.nproc or 0)):
            who = ", ".join(f"rank {r} ({getattr(f, 'exitcode', '?')})" for r, f in sorted(e.failures.items()))
            notify(f"notice: {who} exited abnormally after every rank finished and run.json was written "
                   "(a crash at process exit, e.g. gloo's 'terminate called without an active exception'); "
                   "the results are complete")
            return
        raise _failure_error(config, out_dir, e) from None
    except Exception as e:  # rendezvous errors, agent failures
        typed = read_manifest(out_dir)
        if typed is not None and typed.status == "ok":  # rank 0 finished; the agent failed afterwards
            return
        raise _failure_error(config, out_dir, e) from e


def _finished_anyway(out_dir: Path, world: int) -> bool:
    """Every rank recorded ``done`` (after the teardown barrier) and rank 0's run.json says ok."""
    typed = read_manifest(out_dir)
    progress = read_progress(out_dir)
    return (typed is not None and typed.status == "ok" and world > 0
            and all((progress.get(r) or {}).get("phase") == "done" for r in range(world)))
