"""Wrap a model for data parallelism (DDP, composable replicate, FSDP2; tensor parallel on a mesh) and compile it.

Order matters and is fixed here:

1. dynamo's ``optimize_ddp`` is set (by the caller, scoped) *before* DDP is
   constructed -- DDP reads it in ``__init__`` to choose the python reducer;
   changing it later fails with "Compiled autograd is not compatible with C++
   DDP Reducer".
2. The *inner* module is compiled in place (``nn.Module.compile``), then wrapped.
   Compiling the inner module keeps DDP's own wrapper code out of dynamo (its
   Python bookkeeping would show up as graph breaks that are not the model's),
   keeps parameter names unchanged, and DDPOptimizer still sees the active DDP
   module because the compiled call runs inside ``DDP.forward``. ``replicate`` and
   FSDP2 turn the module itself into the wrapper, so there the wrapped module is compiled.
3. Tensor parallelism (``--tp``) is applied first, on the ``tp`` dimension of a
   ``(dp, tp)`` mesh; data parallelism then runs over the ``dp`` dimension.
"""

from __future__ import annotations

import inspect
from typing import Any

from tracekit.errors import ConfigError
from tracekit.profile import bucket_events
from tracekit.profile.config import ProfileConfig
from tracekit.profile.models import tp_plan


def fully_shard_fn() -> Any:
    """FSDP2's ``fully_shard`` (``torch.distributed.fsdp`` on torch >= 2.6, ``_composable.fsdp`` before)."""
    try:  # torch >= 2.6
        from torch.distributed.fsdp import fully_shard
    except ImportError:  # torch 2.4 / 2.5
        from torch.distributed._composable.fsdp import fully_shard
    return fully_shard


def compile_inner(model: Any, config: ProfileConfig, recorder: Any = None) -> None:
    """Compile ``model`` in place unless eager, or when only backward is compiled.

    ``recorder`` (a :class:`tracekit.profile.graph_capture.GraphRecorder`): compile with its
    recording backend, which records each graph and then calls the named backend."""
    if config.dynamo == "none" or config.resolved_optimize_ddp == "python_reducer_without_compiled_forward":
        return
    if recorder is not None:
        recorder.set_params(model)
        # the recording backend compiles with inductor under the mode's own config (graph_capture.GraphRecorder)
        model.compile(backend=recorder.backend(mode=config.compile_mode), fullgraph=config.fullgraph)
        return
    model.compile(backend=config.dynamo, fullgraph=config.fullgraph, mode=config.compile_mode)


def ddp_kwargs(config: ProfileConfig, device: Any) -> dict[str, Any]:
    """DistributedDataParallel keyword arguments for ``config`` (``device_ids`` on cuda; no process group)."""
    kwargs: dict[str, Any] = {
        "static_graph": config.static_graph,
        "gradient_as_bucket_view": config.gradient_as_bucket_view,
    }
    if device.type == "cuda":
        kwargs["device_ids"] = [device.index]
    if config.bucket_cap_mb is not None:
        kwargs["bucket_cap_mb"] = config.bucket_cap_mb
    if config.first_bucket_cap_mb is not None:
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP

        if "bucket_cap_mb_list" not in inspect.signature(DDP.__init__).parameters:
            raise ConfigError(f"--first-bucket-cap-mb needs a torch whose DDP takes bucket_cap_mb_list "
                              f"(this is torch {torch.__version__})")
        # The first entry caps the first bucket, the last one the rest.
        kwargs["bucket_cap_mb_list"] = [config.first_bucket_cap_mb, config.bucket_cap_mb]
    return kwargs


def comm_hook(config: ProfileConfig) -> Any:
    """The DDP default comm hook ``--comm-hook`` names, or None."""
    if config.comm_hook == "none":
        return None
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

    return {"bf16": default_hooks.bf16_compress_hook, "fp16": default_hooks.fp16_compress_hook}[config.comm_hook]


def _applied(kwargs: dict[str, Any], config: ProfileConfig, python_reducer: bool) -> dict[str, Any]:
    applied = {k: v for k, v in kwargs.items() if k not in ("device_ids", "device_id", "device_mesh",
                                                            "process_group")}
    applied["comm_hook"] = config.comm_hook
    applied["python_reducer"] = python_reducer
    return applied


def wrap_ddp(model: Any, config: ProfileConfig, device: Any, process_group: Any = None) -> tuple[Any, dict[str, Any]]:
    """Return ``(ddp_model, applied)``; ``applied`` records the options as DDP got them.

    ``process_group``: the group to reduce over (None: the default group); ``tracekit bench``
    passes a subgroup when a sweep point runs on the first N ranks of a larger job.
    """
    from torch.nn.parallel import DistributedDataParallel as DDP

    kwargs = ddp_kwargs(config, device)
    ddp = DDP(model, process_group=process_group, **kwargs)
    hook = comm_hook(config)
    python_reducer = bool(getattr(ddp, "_use_python_reducer", False))
    timing_off = bucket_events.unavailable_reason("ddp", python_reducer, config.bucket_timing)
    if timing_off is None:  # the timer's hook wraps the active one (None: DDP's default allreduce)
        bucket_events.install(ddp, hook, device.type, process_group)
    elif hook is not None:
        ddp.register_comm_hook(state=None, hook=hook)
    applied = _applied(kwargs, config, python_reducer)
    applied["bucket_timing"] = timing_off or "on"
    return ddp, applied


def _replicate() -> Any:
    try:
        from torch.distributed._composable.replicate import replicate
    except ImportError as e:
        import torch

        raise ConfigError(f"--replicate needs torch.distributed._composable.replicate "
                          f"(not in torch {torch.__version__})") from e
    return replicate


def wrap_replicate(model: Any, blocks: list[Any], config: ProfileConfig, device: Any,
                   dp_mesh: Any = None) -> tuple[Any, dict[str, Any]]:
    """The composable ``replicate(model, ...)`` with the DDP knobs that apply; returns ``(model, applied)``.

    ``replicate`` builds its DDP lazily, in the first forward (inside the caller's
    ``optimize_ddp`` scope). With ``dp_mesh`` (``--tp``) it reduces over the mesh's data-parallel
    dimension. Comm hooks are registered now and applied by replicate when it builds the DDP.
    """
    replicate = _replicate()
    if config.activation_checkpointing:
        checkpoint_blocks(model, blocks)
    kwargs = ddp_kwargs(config, device)
    if "device_ids" in kwargs:
        kwargs["device_id"] = kwargs.pop("device_ids")[0]
    if dp_mesh is not None:
        kwargs["device_mesh"] = dp_mesh
    model = replicate(model, **kwargs)
    hook = comm_hook(config)
    if hook is not None:
        model.register_comm_hook(None, hook)
    applied = _applied(kwargs, config, config.uses_python_reducer)
    applied["activation_checkpointing"] = config.activation_checkpointing
    return model, applied


def replicate_ddp(model: Any) -> Any:
    """The DDP object ``replicate`` built for ``model`` (after its first forward), or None."""
    try:
        return _replicate().state(model)._ddp
    except Exception:  # noqa: BLE001 - not replicated / not initialised
        return None


def checkpoint_blocks(model: Any, blocks: list[Any]) -> list[Any]:
    """Wrap each of ``blocks`` in ``checkpoint_wrapper`` in place; return the wrappers."""
    from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import checkpoint_wrapper

    # Collect first, then replace: mutating while walking modules() never ends.
    targets = [(parent, name, child) for parent in model.modules()
               for name, child in parent.named_children() if any(child is b for b in blocks)]
    wrapped = []
    for parent, name, child in targets:
        w = checkpoint_wrapper(child)
        setattr(parent, name, w)
        wrapped.append(w)
    return wrapped


def device_meshes(config: ProfileConfig, device_type: str) -> tuple[Any, Any]:
    """``(dp_mesh, tp_mesh)`` of a ``(dp, tp)`` mesh over every rank; ``(None, None)`` without ``--tp``."""
    if config.tp == 1:
        return None, None
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh

    world = dist.get_world_size()
    if world % config.tp:
        raise ConfigError(f"--tp {config.tp} must divide the world size {world}")
    mesh = init_device_mesh(device_type, (world // config.tp, config.tp), mesh_dim_names=("dp", "tp"))
    return mesh["dp"], mesh["tp"]


def apply_tp(model: Any, plan: dict[str, str], tp_mesh: Any) -> dict[str, Any]:
    """``parallelize_module`` with ``ColwiseParallel``/``RowwiseParallel`` per ``plan`` (module path -> style)."""
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

    styles = {"colwise": ColwiseParallel, "rowwise": RowwiseParallel}
    parallelize_module(model, tp_mesh, {path: styles[style]() for path, style in plan.items()})
    return {"tp": tp_mesh.size(), "colwise": sum(s == "colwise" for s in plan.values()),
            "rowwise": sum(s == "rowwise" for s in plan.values())}


def wrap_fsdp(model: Any, blocks: list[Any], config: ProfileConfig, mesh_device: str,
              dp_mesh: Any = None) -> tuple[Any, dict[str, Any]]:
    """FSDP2: ``fully_shard`` each block, then the root; optional activation checkpointing per block.

    ``dp_mesh``: shard over this mesh (the data-parallel dimension with ``--tp``); default: all ranks.
    """
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh

    fully_shard = fully_shard_fn()
    mesh = dp_mesh if dp_mesh is not None else init_device_mesh(mesh_device, (dist.get_world_size(),))
    if config.activation_checkpointing:
        blocks = checkpoint_blocks(model, blocks) or blocks
    for blk in blocks:
        fully_shard(blk, mesh=mesh)
    fully_shard(model, mesh=mesh)
    return model, {"sharded_blocks": len(blocks), "activation_checkpointing": config.activation_checkpointing}


def parallelize(model: Any, blocks: list[Any], config: ProfileConfig, device: Any,
                meshes: tuple[Any, Any] = (None, None), recorder: Any = None) -> tuple[Any, dict[str, Any]]:
    """Tensor parallel (if ``--tp``), the data-parallel wrapper and ``torch.compile``, in that order.

    ``meshes``: ``(dp_mesh, tp_mesh)`` from :func:`device_meshes` (both None without ``--tp``).
    Returns ``(train_model, applied)``. Call inside the ``optimize_ddp`` scope (see module doc).
    ``recorder``: see :func:`compile_inner`.
    """
    dp_mesh, tp_mesh = meshes
    tp_applied = apply_tp(model, tp_plan(config, model), tp_mesh) if tp_mesh is not None else None
    if config.parallel == "ddp":
        compile_inner(model, config, recorder)
        wrapped, applied = wrap_ddp(model, config, device)
    elif config.parallel == "replicate":
        wrapped, applied = wrap_replicate(model, blocks, config, device, dp_mesh)
        compile_inner(wrapped, config, recorder)
    else:
        wrapped, applied = wrap_fsdp(model, blocks, config, device.type, dp_mesh)
        compile_inner(wrapped, config, recorder)
    if tp_applied is not None:
        applied["tensor_parallel"] = tp_applied
    return wrapped, applied


def ddp_of(train_model: Any, config: ProfileConfig) -> Any:
    """The DistributedDataParallel object behind ``train_model`` (its reducer), or None (FSDP)."""
    if config.parallel == "ddp":
        return train_model
    if config.parallel == "replicate":
        return replicate_ddp(train_model)
    return None
