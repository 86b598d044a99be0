"""Wrap a model for data parallelism (DDP or FSDP2) and compile it.

Order matters and is fixed here:

1. dynamo's ``optimize_ddp`` is set (by the caller, scoped) *before* DDP is
   constructed -- DDP reads it in ``__init__`` to choose the python reducer;
   changing it later fails with "Compiled autograd is not compatible with C++
   DDP Reducer".
2. The *inner* module is compiled in place (``nn.Module.compile``), then wrapped.
   Compiling the inner module keeps DDP's own wrapper code out of dynamo (its
   Python bookkeeping would show up as graph breaks that are not the model's),
   keeps parameter names unchanged, and DDPOptimizer still sees the active DDP
   module because the compiled call runs inside ``DDP.forward``.
"""

from __future__ import annotations

import inspect
from typing import Any

from tracekit.errors import ConfigError
from tracekit.profile.config import ProfileConfig


def _fully_shard() -> Any:
    try:  # torch >= 2.6
        from torch.distributed.fsdp import fully_shard
    except ImportError:  # torch 2.4 / 2.5
        from torch.distributed._composable.fsdp import fully_shard
    return fully_shard


def compile_inner(model: Any, config: ProfileConfig) -> None:
    """Compile ``model`` in place unless eager, or when only backward is compiled."""
    if config.dynamo == "none" or config.resolved_optimize_ddp == "python_reducer_without_compiled_forward":
        return
    model.compile(backend=config.dynamo, fullgraph=config.fullgraph)


def wrap_ddp(model: Any, config: ProfileConfig, device: Any) -> tuple[Any, dict[str, Any]]:
    """Return ``(ddp_model, applied)``; ``applied`` records the options as DDP got them."""
    import torch
    from torch.nn.parallel import DistributedDataParallel as DDP

    kwargs: dict[str, Any] = {
        "static_graph": config.static_graph,
        "gradient_as_bucket_view": config.gradient_as_bucket_view,
    }
    if device.type == "cuda":
        kwargs["device_ids"] = [device.index]
    if config.bucket_cap_mb is not None:
        kwargs["bucket_cap_mb"] = config.bucket_cap_mb
    if config.first_bucket_cap_mb is not None:
        params = inspect.signature(DDP.__init__).parameters
        if "bucket_cap_mb_list" not in params:
            raise ConfigError(f"--first-bucket-cap-mb needs a torch whose DDP takes bucket_cap_mb_list "
                              f"(this is torch {torch.__version__})")
        # The first entry caps the first bucket, the last one the rest.
        kwargs["bucket_cap_mb_list"] = [config.first_bucket_cap_mb, config.bucket_cap_mb]
    ddp = DDP(model, **kwargs)
    if config.comm_hook != "none":
        from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

        hook = {"bf16": default_hooks.bf16_compress_hook, "fp16": default_hooks.fp16_compress_hook}[config.comm_hook]
        ddp.register_comm_hook(state=None, hook=hook)
    applied = {k: v for k, v in kwargs.items() if k != "device_ids"}
    applied["comm_hook"] = config.comm_hook
    applied["python_reducer"] = bool(getattr(ddp, "_use_python_reducer", False))
    return ddp, applied


def wrap_fsdp(model: Any, blocks: list[Any], config: ProfileConfig, mesh_device: str) -> tuple[Any, dict[str, Any]]:
    """FSDP2: ``fully_shard`` each block, then the root; optional activation checkpointing per block."""
    from torch.distributed.device_mesh import init_device_mesh

    fully_shard = _fully_shard()
    import torch.distributed as dist

    mesh = init_device_mesh(mesh_device, (dist.get_world_size(),))
    if config.activation_checkpointing:
        from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import checkpoint_wrapper

        # Collect first, then replace: mutating while walking modules() never ends.
        targets = [(parent, name, child) for parent in model.modules()
                   for name, child in parent.named_children() if any(child is b for b in blocks)]
        wrapped = []
        for parent, name, child in targets:
            w = checkpoint_wrapper(child)
            setattr(parent, name, w)
            wrapped.append(w)
        blocks = wrapped or blocks
    for blk in blocks:
        fully_shard(blk, mesh=mesh)
    fully_shard(model, mesh=mesh)
    return model, {"sharded_blocks": len(blocks), "activation_checkpointing": config.activation_checkpointing}
