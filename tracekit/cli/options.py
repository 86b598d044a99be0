"""Model and run options shared by ``tracekit profile`` and ``tracekit bench ddp``.

Each decorator adds a group of click options whose parameter names are
:class:`~tracekit.profile.config.ProfileConfig` field names, so a command passes them
straight into the config. ``--model`` itself is not here: ``profile`` takes one model,
``bench ddp`` a repeatable list.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from tracekit.profile.config import (
    AMP_DTYPES, COMM_HOOKS, DEVICES, DYNAMO_BACKENDS, INDUCTOR_DDP_FUSIONS, OPTIMIZE_DDP_MODES,
)

Deco = Callable[[Callable[..., Any]], Callable[..., Any]]

MODEL_HELP = ("toy | transformer | a torchvision name (resnet50) | hf:<type> or a Hugging Face model type (gpt2) "
              "| pkg.module:factory returning (model, batch_fn).")


def _stack(*options: Deco) -> Deco:
    """Apply ``options`` so that they appear in ``--help`` in the order given."""

    def deco(f: Callable[..., Any]) -> Callable[..., Any]:
        for opt in reversed(options):
            f = opt(f)
        return f

    return deco


def device_options() -> Deco:
    """``--device`` and ``--timeout``."""
    return _stack(
        click.option("--device", type=click.Choice(DEVICES), default="auto", show_default=True,
                     help="auto: cuda+NCCL when there is a GPU per rank, else cpu+gloo (with a notice)."),
        click.option("--timeout", "timeout_s", type=float, default=300.0, show_default=True,
                     help="Seconds for process-group init and each collective before a rank gives up."),
    )


def model_shape_options(per_model_defaults: bool = False) -> Deco:
    """Sizes of the built-in models and the per-rank batch.

    ``per_model_defaults`` (``profile``): width, depth and batch default to None, which
    :class:`ProfileConfig` resolves per model and device (toy 2048 x 8, batch 4096 on cuda);
    otherwise (``bench ddp``) fixed defaults 256 x 4, batch 32.
    """
    if per_model_defaults:
        shape = (
            click.option("--width", type=int, default=None,
                         help="toy/transformer hidden size (default: toy 2048, transformer 256)."),
            click.option("--depth", type=int, default=None,
                         help="toy layers / transformer blocks (default: toy 8, transformer 4)."),
        )
        batch = click.option("--batch-size", type=int, default=None,
                             help="Per-rank micro-batch size (default: 4096 for the toy model on cuda, else 32).")
    else:
        shape = (
            click.option("--width", type=int, default=256, show_default=True, help="toy/transformer hidden size."),
            click.option("--depth", type=int, default=4, show_default=True, help="toy layers / transformer blocks."),
        )
        batch = click.option("--batch-size", type=int, default=32, show_default=True,
                             help="Per-rank micro-batch size.")
    return _stack(
        *shape,
        click.option("--seq-len", type=int, default=128, show_default=True,
                     help="transformer / HF sequence length."),
        click.option("--heads", type=int, default=4, show_default=True, help="transformer attention heads."),
        batch,
    )


def ddp_options() -> Deco:
    """DDP reducer knobs (``--ddp`` and ``--replicate``)."""
    return _stack(
        click.option("--bucket-cap-mb", type=float, default=None, help="DDP bucket size (default: torch's 25)."),
        click.option("--first-bucket-cap-mb", type=float, default=None,
                     help="DDP first bucket size (torch versions whose DDP has bucket_cap_mb_list)."),
        click.option("--static-graph", is_flag=True, help="DDP static_graph=True."),
        click.option("--gradient-as-bucket-view", is_flag=True, help="DDP gradient_as_bucket_view=True."),
        click.option("--comm-hook", type=click.Choice(COMM_HOOKS), default="none", show_default=True,
                     help="DDP default comm hook: compress gradients to bf16/fp16 for the allreduce."),
    )


def compile_options() -> Deco:
    """``torch.compile`` backend, dynamo's DDP mode, inductor's DDP communication fusion, autocast."""
    return _stack(
        click.option("--amp", type=click.Choice(AMP_DTYPES), default="none", show_default=True,
                     help="Autocast dtype."),
        click.option("--dynamo", type=click.Choice(DYNAMO_BACKENDS), default="none", show_default=True,
                     help="torch.compile backend (none = eager)."),
        click.option("--optimize-ddp", type=click.Choice(OPTIMIZE_DDP_MODES), default=None,
                     help="torch._dynamo.config.optimize_ddp for compiled DDP/replicate (default ddp_optimizer); "
                          "python_reducer* run backward under compiled autograd."),
        click.option("--inductor-ddp-fusion", type=click.Choice(INDUCTOR_DDP_FUSIONS), default=None,
                     help="python_reducer + inductor: fuse the backward's allreduces into buckets by concat "
                          "(one all_reduce_ per bucket) or coalesced (all_reduce_coalesced_), or none "
                          "(default: torch's inductor config)."),
        click.option("--inductor-ddp-bucket-mb", type=int, default=None,
                     help="Bucket size in MB for --inductor-ddp-fusion (default: torch's 25)."),
    )


def workload_options(per_model_defaults: bool = False) -> Deco:
    """Everything :class:`ProfileConfig` needs to build and train the model, except ``--model``
    (``per_model_defaults``: see :func:`model_shape_options`)."""
    return _stack(device_options(), model_shape_options(per_model_defaults), ddp_options(), compile_options())
