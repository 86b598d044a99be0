"""Where this process runs: outer-launcher detection and GPU-host safety variables."""

from __future__ import annotations

import os
from collections.abc import MutableMapping
from dataclasses import dataclass

from tracekit.errors import ConfigError

# NVLink multicast (NVLS / symmetric-memory multicast) is not needed for profiling
# DDP/FSDP and, on shared multi-GPU hosts, a program using it can take the host's
# GPUs out of service. We set these before any CUDA/NCCL init, in the launcher
# (children inherit them) and in every rank (for torchrun/srun launches), but only
# as defaults: a value the user exported wins.
GPU_SAFETY_ENV = {
    "NCCL_NVLS_ENABLE": "0",
    "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
    "NVSHMEM_DISABLE_NVLS": "1",
}

CHILD_MARKER = "TRACEKIT_ELASTIC_CHILD"  # set by our own launcher for its children
CONFIG_ENV = "TRACEKIT_PROFILE_CONFIG"  # the ProfileConfig as JSON, for children


def apply_gpu_safety_env(env: MutableMapping[str, str] | None = None) -> None:
    env = os.environ if env is None else env
    for k, v in GPU_SAFETY_ENV.items():
        env.setdefault(k, v)


@dataclass(frozen=True)
class RankEnv:
    """This process's place in an already-launched job."""

    rank: int
    local_rank: int
    world_size: int
    local_world_size: int
    launcher: str  # elastic (ours) | torchrun | slurm


def detect_rank_env(env: MutableMapping[str, str] | None = None) -> RankEnv | None:
    """The rank this process was started as, or None when no launcher started it.

    torchrun (and our own elastic launch) set RANK/WORLD_SIZE/LOCAL_RANK. Under
    srun we map SLURM_PROCID/SLURM_LOCALID/SLURM_NTASKS onto them, but only when
    MASTER_ADDR and MASTER_PORT are set too: a plain ``sbatch`` shell also has
    SLURM_PROCID, and there we launch ranks ourselves.
    """
    env = os.environ if env is None else env
    try:
        if "RANK" in env and "WORLD_SIZE" in env:
            world = int(env["WORLD_SIZE"])
            return RankEnv(
                rank=int(env["RANK"]),
                local_rank=int(env.get("LOCAL_RANK", "0")),
                world_size=world,
                local_world_size=int(env.get("LOCAL_WORLD_SIZE", str(world))),
                launcher="elastic" if env.get(CHILD_MARKER) else "torchrun",
            )
        if "SLURM_PROCID" in env and "SLURM_NTASKS" in env and "MASTER_ADDR" in env and "MASTER_PORT" in env:
            rank, world = int(env["SLURM_PROCID"]), int(env["SLURM_NTASKS"])
            local = int(env.get("SLURM_LOCALID", "0"))
            local_world = int(env.get("SLURM_NTASKS_PER_NODE", "1").split("(")[0] or 1)
            # init_process_group(init_method="env://") reads these.
            env["RANK"], env["WORLD_SIZE"], env["LOCAL_RANK"] = str(rank), str(world), str(local)
            env.setdefault("LOCAL_WORLD_SIZE", str(local_world))
            return RankEnv(rank, local, world, local_world, "slurm")
    except ValueError as e:
        raise ConfigError(f"bad launcher environment: {e}") from e
    return None
