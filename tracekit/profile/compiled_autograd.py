"""The compiled-autograd backward of DDP's python reducer, and inductor's DDP communication fusion.

With ``torch._dynamo.config.optimize_ddp = "python_reducer"`` DDP (and the composable
``replicate``, which builds a DDP) skips its C++ reducer: each gradient is allreduced by a
post-accumulate-grad hook that compiled autograd traces into the backward graph. The
compiler function follows PyTorch's own test
(``test/distributed/_composable/test_replicate_with_compiler.py``): ``compiler_fn(gm)``
returns ``torch.compile(gm, fullgraph=True, backend=inner)``, where ``inner`` calls
``torch._inductor.compile`` for inductor and returns the dynamo graph unchanged
(``eager``) or AOT-traced (``aot_eager``) otherwise. Passing the string ``"inductor"``
as the compiled-autograd compiler fails on torch 2.11
(``aten::_local_scalar_dense() Expected a value of type 'Tensor'``).

Inductor then fuses the per-parameter allreduces of that graph into buckets when
``torch._inductor.config._fuse_ddp_communication`` is on, with the passes in
``_fuse_ddp_communication_passes`` (``fuse_ddp_with_concat_op``: one
``_c10d_functional.all_reduce_`` over a concatenated buffer per bucket;
``fuse_ddp_with_coalesced_op``: one ``all_reduce_coalesced_`` per bucket; then
``schedule_comm_wait`` moves each ``wait_tensor`` to just before the first use) and
buckets of ``_fuse_ddp_bucket_size`` MB. Torch's default: DDP's constructor, when it
chooses the python reducer, turns the fusion on globally (``_fuse_ddp_communication = True``,
bucket size = DDP's ``bucket_cap_mb``) with the default passes (concat + schedule_comm_wait).
:func:`inductor_ddp_fusion_patch` overrides that with ``config.patch``, scoped to each
backward (after DDP -- or replicate's lazily built DDP -- exists); nothing changes at import.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from tracekit.errors import ConfigError
from tracekit.profile.config import ProfileConfig

FUSION_PASSES = {"concat": "fuse_ddp_with_concat_op", "coalesced": "fuse_ddp_with_coalesced_op"}
_FUSION_KEYS = ("_fuse_ddp_communication", "_fuse_ddp_communication_passes", "_fuse_ddp_bucket_size")


def compiled_autograd_enable() -> Callable[[Any], Any]:
    """The context manager factory that turns compiled autograd on: ``_enable`` (torch >= 2.6) or ``enable``."""
    try:
        import torch._dynamo.compiled_autograd as ca
    except ImportError as e:
        raise ConfigError(f"--optimize-ddp python_reducer needs compiled autograd (torch >= 2.4): {e}") from e
    enable = getattr(ca, "_enable", None) or getattr(ca, "enable", None)
    if enable is None:
        import torch

        raise ConfigError(f"this torch ({torch.__version__}) has no compiled_autograd enable/_enable")
    return enable


def _is_allreduce(node: Any) -> bool:
    return node.op == "call_function" and "all_reduce" in str(getattr(node.target, "__name__", node.target))


class BackwardCompiler:
    """``compiler_fn`` for compiled autograd; records what each captured backward graph held.

    ``graphs``: one entry per compiled-autograd capture, in order:
    ``{"graph", "nodes", "fullgraph"}`` (nodes of the captured autograd graph; whether it compiled
    as one graph, with ``fullgraph_failed`` the reason when it did not) plus, once dynamo has
    traced it, ``"dynamo_graphs"`` (graphs dynamo handed to the backend) and
    ``"allreduce_calls"`` (functional allreduce calls in them, before inductor's fusion:
    one per gradient with the python reducer). ``fusion_settings``: inductor's DDP-fusion
    settings in effect when the last graph was captured (see :func:`inductor_ddp_settings`).
    """

    def __init__(self, backend: str) -> None:
        self.backend = backend
        self.graphs: list[dict[str, Any]] = []
        self.fusion_settings: dict[str, Any] | None = None
        #: ``on_graph(gm, kind)`` for each captured graph (``compiled_autograd``) and each graph dynamo
        #: makes of it (``backward``): :meth:`tracekit.profile.graph_capture.GraphRecorder.record_backward`;
        #: ``on_inputs(inputs)`` with a captured graph's first input list, before dynamo compiles it
        self.on_graph: Callable[[Any, str], None] | None = None
        self.on_inputs: Callable[[Any], None] | None = None

    def __call__(self, gm: Any) -> Any:
        import torch

        entry: dict[str, Any] = {"graph": len(self.graphs), "nodes": len(gm.graph.nodes),
                                 "dynamo_graphs": 0, "allreduce_calls": 0}
        self.graphs.append(entry)
        on_graph = self.on_graph
        if on_graph is not None:
            on_graph(gm, "compiled_autograd")
        if self.backend == "inductor":  # called inside the backward's inductor_ddp_fusion_patch scope
            self.fusion_settings = inductor_ddp_settings()
        backend = self.backend

        def inner(gm_: Any, example_inputs: Any) -> Any:
            entry["dynamo_graphs"] += 1
            entry["allreduce_calls"] += sum(1 for n in gm_.graph.nodes if _is_allreduce(n))
            if on_graph is not None:
                on_graph(gm_, "backward")
            if backend == "inductor":
                from torch import _inductor

                return _inductor.compile(gm_, example_inputs)
            from torch._dynamo.backends.registry import lookup_backend

            return lookup_backend(backend)(gm_, example_inputs)

        compiled = torch.compile(gm, fullgraph=True, backend=inner)
        state: dict[str, Any] = {"fn": compiled, "checked": False}

        def run(*args: Any, **kwargs: Any) -> Any:
            # The first call compiles. On some torch versions (2.11, CUDA) dynamo meets code it
            # cannot trace in the captured graph ("Attempt to trace generator"); then the graph is
            # compiled again without fullgraph, and the manifest says so (nothing ran yet).
            if state["checked"]:
                return state["fn"](*args, **kwargs)
            # compiled autograd passes boxed input lists that the graph empties as it reads them:
            # keep copies so that a failed first attempt can be retried with the same inputs
            saved = [list(a) if isinstance(a, list) else a for a in args]
            if self.on_inputs is not None and saved and isinstance(saved[0], list):
                self.on_inputs(saved[0])
            try:
                out = state["fn"](*args, **kwargs)
            except torch._dynamo.exc.Unsupported as e:
                root = root_cause(e)
                entry["fullgraph"] = False
                entry["fullgraph_failed"] = _first_line(e) if root is e else f"{type(root).__name__}: {_first_line(root)}"
                if root is not e:  # e.g. dynamo refusing torch.fx's error path (a generator) hides the real error
                    entry["fullgraph_failed_masked_by"] = _first_line(e)
                entry["fullgraph_failed_at"] = _user_frames(e)
                counted = entry["dynamo_graphs"], entry["allreduce_calls"]
                entry["dynamo_graphs"], entry["allreduce_calls"] = 0, 0
                state["fn"] = torch.compile(gm, fullgraph=False, backend=inner)
                out = state["fn"](*saved, **kwargs)
                if entry["dynamo_graphs"] == 0:  # the retry ran the graphs the first attempt compiled
                    entry["dynamo_graphs"], entry["allreduce_calls"] = counted
            state["checked"] = True
            return out

        entry["fullgraph"] = True
        return run


def root_cause(e: BaseException) -> BaseException:
    """The first exception of ``e``'s chain (``__cause__``, else ``__context__``, followed to its end)."""
    seen = {id(e)}
    while True:
        nxt = e.__cause__ or e.__context__
        if nxt is None or id(nxt) in seen:
            return e
        seen.add(id(nxt))
        e = nxt


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return (text[0] if text else type(e).__name__)[:300]


def _user_frames(e: BaseException, keep: int = 6) -> list[str] | None:
    """The innermost ``keep`` frames of the code dynamo was tracing when it gave up (``file:line in
    function``), from the exception's ``real_stack`` (None when this torch does not attach one)."""
    stack = getattr(e, "real_stack", None)
    if not stack:
        return None
    return [f"{f.filename}:{f.lineno} in {f.name}" for f in list(stack)[-keep:]]


def inductor_ddp_fusion_patch(config: ProfileConfig) -> contextlib.AbstractContextManager[Any]:
    """``torch._inductor.config.patch`` for ``--inductor-ddp-fusion``/``--inductor-ddp-bucket-mb`` (no-op when unset).

    Raises ConfigError when this torch lacks the private settings.
    """
    if config.inductor_ddp_fusion is None and config.inductor_ddp_bucket_mb is None:
        return contextlib.nullcontext()
    import torch
    import torch._inductor.config as ic

    missing = [k for k in _FUSION_KEYS if not hasattr(ic, k)]
    if missing:
        raise ConfigError(f"--inductor-ddp-fusion: torch {torch.__version__} has no "
                          f"torch._inductor.config.{missing[0]}")
    patch: dict[str, Any] = {}
    if config.inductor_ddp_fusion == "none":
        patch["_fuse_ddp_communication"] = False
    elif config.inductor_ddp_fusion is not None:
        patch["_fuse_ddp_communication"] = True
        patch["_fuse_ddp_communication_passes"] = [FUSION_PASSES[config.inductor_ddp_fusion], "schedule_comm_wait"]
    if config.inductor_ddp_bucket_mb is not None:
        patch["_fuse_ddp_communication"] = True
        patch["_fuse_ddp_bucket_size"] = config.inductor_ddp_bucket_mb
    return ic.patch(patch)


def inductor_ddp_settings() -> dict[str, Any] | None:
    """The inductor DDP-fusion settings in effect now (for the manifest), or None if this torch has none."""
    try:
        import torch._inductor.config as ic
    except ImportError:
        return None
    if not all(hasattr(ic, k) for k in _FUSION_KEYS):
        return None
    return {"fuse_ddp_communication": bool(ic._fuse_ddp_communication),
            "passes": [p if isinstance(p, str) else getattr(p, "__name__", str(p))
                       for p in ic._fuse_ddp_communication_passes],
            "bucket_size_mb": ic._fuse_ddp_bucket_size}
