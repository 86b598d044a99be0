"""One training step of a profile run or a bench point: micro-batches, backward, optimizer.

Shared by ``tracekit profile`` (:mod:`tracekit.profile.worker`) and ``tracekit bench ddp``
(:mod:`tracekit.bench.ddp_worker`), so both time exactly the same step.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, nullcontext
from typing import Any

from tracekit.profile import heartbeat
from tracekit.profile.compiled_autograd import BackwardCompiler, compiled_autograd_enable, inductor_ddp_fusion_patch
from tracekit.profile.config import ProfileConfig
from tracekit.profile.models import output_to_loss


def call_model(model: Any, inputs: Any) -> Any:
    """``model(inputs)`` for a tensor, a tuple of positional args or a dict of keyword args."""
    if isinstance(inputs, dict):
        return model(**inputs)
    if isinstance(inputs, (tuple, list)):
        return model(*inputs)
    return model(inputs)


@contextmanager
def skip_gradient_sync(model: Any) -> Iterator[None]:
    """Accumulate gradients locally: DDP ``no_sync()``, replicate/FSDP2 ``set_requires_gradient_sync(False)``."""
    if hasattr(model, "no_sync") and not hasattr(model, "set_requires_gradient_sync"):
        with model.no_sync():
            yield
        return
    if hasattr(model, "set_requires_gradient_sync"):
        model.set_requires_gradient_sync(False)
        try:
            yield
        finally:
            model.set_requires_gradient_sync(True)
        return
    yield


class Trainer:
    """One step = ``grad_accum`` micro-batches (gradient sync skipped on all but the last) + optimizer step.

    With DDP's python reducer (``--optimize-ddp python_reducer*``) backward runs under
    compiled autograd with :class:`~tracekit.profile.compiled_autograd.BackwardCompiler`;
    ``backward_compiler.graphs`` then describes the captured backward graphs.
    """

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
        self.backward_compiler: BackwardCompiler | None = None
        self._enable: Any = None
        if config.uses_python_reducer:
            self.backward_compiler = BackwardCompiler(config.dynamo)
            self._enable = compiled_autograd_enable()
        self.fail_now = False
        #: called with the loss of the step's last micro-batch before its backward (``--torchviz``)
        self.on_loss: Any = None

    def _backward_ctx(self) -> Any:
        if self.backward_compiler is None:
            return nullcontext()
        stack = ExitStack()
        # Scoped to the backward, where inductor compiles the compiled-autograd graph: DDP's
        # constructor (replicate's: in the first forward) sets the same settings globally.
        stack.enter_context(inductor_ddp_fusion_patch(self.config))
        stack.enter_context(self._enable(self.backward_compiler))
        return stack

    def step(self) -> None:
        torch = self.torch
        rf = torch.profiler.record_function
        n = len(self.batches)
        heartbeat.begin_step()  # progress marks: a few µs each, at phase boundaries (tracekit.profile.heartbeat)
        for i, inputs in enumerate(self.batches):
            sync_ctx = skip_gradient_sync(self.model) if i < n - 1 else nullcontext()
            with sync_ctx:
                # tracekit's annotations wrap compiled code; inside it they would be ignored.
                heartbeat.mark("forward")
                with rf("tracekit.forward"):
                    amp = (torch.autocast(device_type=self.device.type, dtype=self.amp_dtype)
                           if self.amp_dtype is not None else nullcontext())
                    with amp:
                        loss = output_to_loss(call_model(self.model, inputs)) / n
                if self.on_loss is not None and i == n - 1:
                    self.on_loss(loss)
                if self.fail_now:
                    raise RuntimeError(f"tracekit test failure injected on rank {os.environ.get('RANK')}")
                heartbeat.mark("backward")
                with rf("tracekit.backward"), self._backward_ctx():
                    (self.scaler.scale(loss) if self.scaler else loss).backward()
        heartbeat.mark("optimizer")
        with rf("tracekit.optimizer"):
            if self.scaler:
                self.scaler.step(self.opt)
                self.scaler.update()
            else:
                self.opt.step()
            self.opt.zero_grad(set_to_none=True)
