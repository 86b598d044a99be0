"""Checks before any rank starts: which device to use, and whether this torch can run the config.

Used by ``tracekit profile`` (:mod:`tracekit.profile.launcher`) and ``tracekit bench``.
"""

from __future__ import annotations

from tracekit.errors import ConfigError
from tracekit.profile.config import ProfileConfig


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


def check_torch_features(config: ProfileConfig, device: str) -> None:
    """Raise ConfigError when this torch or host cannot run ``config`` on ``device`` (before any rank starts)."""
    if config.parallel == "fsdp":
        try:
            from tracekit.profile.parallel import fully_shard_fn

            fully_shard_fn()
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
    if config.comm_hook == "bf16" and device == "cpu":
        raise ConfigError("--comm-hook bf16 needs cuda and NCCL (torch's bf16_compress_hook); use fp16 on cpu")
    if config.torchviz:
        from tracekit.profile.autograd_viz import check_available

        check_available()
    _check_new_features(config)


def _check_new_features(config: ProfileConfig) -> None:
    """replicate, tensor parallel, compiled autograd and inductor's DDP fusion moved or appeared over torch 2.x."""
    from tracekit.profile.compiled_autograd import compiled_autograd_enable, inductor_ddp_fusion_patch

    if config.parallel == "replicate":
        from tracekit.profile.parallel import _replicate

        _replicate()
    if config.tp > 1:
        try:
            from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel  # noqa: F401
        except ImportError as e:
            raise ConfigError(f"--tp needs torch.distributed.tensor.parallel: {e}") from e
    if config.uses_python_reducer:
        compiled_autograd_enable()
    inductor_ddp_fusion_patch(config)  # raises when the private settings are missing
