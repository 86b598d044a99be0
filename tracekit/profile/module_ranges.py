"""Name each module's forward in the trace: a ``record_function`` range ``tracekit.module:<path>`` per call.

Forward pre-hooks open a range, forward hooks (``always_call``: also when the forward raises) close it, so
ranges nest as the modules do; ``<path>`` is the module's name in ``model.named_modules()`` with wrapper
prefixes (``module.``, ``_orig_mod.``) stripped. The model itself gets one too, ``tracekit.module:`` (the empty
path): work in its own forward (an HF model's loss, say) is the model's, not outside every module; of the
wrappers whose names strip to the empty path (DDP, FSDP), only the innermost, the user's model, is recorded.

Compiled code gets none: the hooks of a module that ``torch.compile`` traces would be traced into its graph
(dynamo inlines module hooks), so :func:`forward_is_compiled` runs say so and install nothing; and a hook
that runs while dynamo traces (``torch.compiler.is_compiling()``, a constant True under tracing) does
nothing, so it can never add a graph break or an unbalanced range. Compiled kernels get their modules
from ``compiled_kernels.json`` instead (:mod:`tracekit.profile.inductor_capture`).

Cost: two hook calls and one ``record_function`` per module call; the ranges are installed only for the
profiler window (measured in docs/commands/profile.md).
"""

from __future__ import annotations

from typing import Any

from tracekit.traces.provenance import MODULE_RANGE_PREFIX, strip_wrappers


def forward_is_compiled(dynamo: str, optimize_ddp: str | None) -> bool:
    """Whether a run's forward runs under ``torch.compile`` (every mode but eager and the python reducer
    that compiles only the backward)."""
    return dynamo != "none" and optimize_ddp != "python_reducer_without_compiled_forward"


def _is_compiling_fn() -> Any:
    import torch

    return getattr(getattr(torch, "compiler", None), "is_compiling", None) or torch._dynamo.is_compiling


class ModuleRanges:
    """Context manager: the module ranges on ``model``'s submodules while open (see the module doc).

    ``installed``: how many modules got hooks (0 when ``enabled`` is false)."""

    def __init__(self, model: Any, *, enabled: bool = True) -> None:
        self.model = model
        self.enabled = enabled
        self.installed = 0
        self._handles: list[Any] = []
        self._open: list[list[Any]] = []

    def __enter__(self) -> ModuleRanges:
        if not self.enabled:
            return self
        named = list(self.model.named_modules())
        root = max((n for n, _ in named if not strip_wrappers(n)), key=len, default=None)
        for name, mod in named:
            path = strip_wrappers(name)
            if not path and name != root:  # a wrapper around the model (DDP's, FSDP's): the model's range is it
                continue
            pre, post, stack = _hooks(MODULE_RANGE_PREFIX + path)
            self._open.append(stack)
            self._handles.append(mod.register_forward_pre_hook(pre))
            try:
                self._handles.append(mod.register_forward_hook(post, always_call=True))
            except TypeError:  # a torch without always_call
                self._handles.append(mod.register_forward_hook(post))
            self.installed += 1
        return self

    def __exit__(self, *exc: object) -> None:
        for h in self._handles:
            h.remove()
        for stack in self._open:  # a forward that raised past a hook-less path: close what is still open
            while stack:
                stack.pop().__exit__(None, None, None)
        self._handles, self._open = [], []


def _hooks(range_name: str) -> tuple[Any, Any, list[Any]]:
    """A (pre, post) hook pair sharing a stack of open ranges (a module may be re-entered).

    ``torch.profiler.record_function``: a ``user_annotation`` range, what a user's own annotation is in the
    trace (torch's faster ``_RecordFunctionFast`` would record a ``cpu_op``, which analyses read as an
    operator)."""
    import torch

    is_compiling, record_function = _is_compiling_fn(), torch.profiler.record_function
    stack: list[Any] = []

    def pre(_mod: Any, _args: Any) -> None:
        if not is_compiling():
            rf = record_function(range_name)
            rf.__enter__()
            stack.append(rf)

    def post(_mod: Any, _args: Any, _out: Any) -> None:
        if stack and not is_compiling():
            stack.pop().__exit__(None, None, None)

    return pre, post, stack
