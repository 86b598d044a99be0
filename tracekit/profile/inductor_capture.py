"""Keep what inductor knows about each kernel it generates: the modules and ATen ops it fused
(``compiled_kernels.json``, format in :mod:`tracekit.traces.provenance`).

How, for every graph inductor compiles while :class:`InductorCapture` is open:

* ``GraphLowering.save_output_code`` (a class-level hook inductor calls with each graph's generated wrapper
  code, inside the graph's lowering, on torch 2.4 ... 2.13) receives the code; ``V.graph`` is then the
  graph being lowered, whose ``module`` is the post-grad FX graph the kernels came from and whose
  ``is_backward`` / ``is_inference`` say which graph it is.
* Each post-grad node names its module: forward nodes through dynamo's ``nn_module_stack`` meta (kept by
  AOT autograd), backward nodes through ``fwd_nn_module_stack`` (AOT autograd copies the forward node's
  stack to the backward nodes of the same ``seq_nr``): a backward kernel maps to the forward modules it
  differentiates.
* Kernel -> nodes: inductor's provenance tracking (``config.trace.provenance_tracking_level`` = 1, or the
  older ``trace.provenance_tracking``) records the post-grad nodes of every kernel and marks each launch in
  the code (``# [Provenance debug handles] name:N``); without it, the ``Source Nodes`` comment above a
  launch (Triton and extern calls; C++ kernels carry none on some versions).

Scoped config (undone on exit, never at import): provenance tracking on; ``cpp.enable_kernel_profile``
on CPU so C++ kernels appear in the trace under their name (``graph_<id>_cpp_fused_...``); unique Triton
kernel names (the default from torch 2.5 on); inductor's FX-graph and AOT-autograd caches off, since a cache
hit skips code generation and would leave no code to read (a compile that would have hit the cache
takes longer). Capture never raises into the compile: a failure is kept in ``notes``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tracekit.traces.provenance import (CompiledKernels, KernelOrigin, extern_op, module_path_from_stack,
                                        parse_output_code,
                                        strip_wrappers, trace_names, write_compiled)


def _innermost(stack: Any, names: dict[str, str]) -> str | None:
    """The innermost module path of an ``nn_module_stack``-like dict (outermost first), or None.

    Recent dynamo keys the stack by ``str(id(module))``: ``names`` (:func:`module_names`) turns that into the
    module's full path even when the compiled frame is a submodule's forward. Otherwise the path dynamo
    wrote (``L['self'].blocks[0].fc``) is read relative to the compiled frame's module."""
    if not stack:
        return None
    key, entry = list(stack.items())[-1]
    if str(key) in names:
        return names[str(key)]
    path = entry[0] if isinstance(entry, tuple) else entry
    return module_path_from_stack(str(path)) if path is not None else None


def module_names(model: Any) -> dict[str, str]:
    """``str(id(module))`` -> its path in ``model.named_modules()`` (wrapper prefixes stripped)."""
    return {str(id(mod)): strip_wrappers(name) for name, mod in model.named_modules()} if model is not None else {}


def _aten(target: Any) -> str | None:
    if target is None:
        return None
    pkt = getattr(target, "_overloadpacket", None)
    name = str(pkt if pkt is not None else getattr(target, "name", lambda: target)())
    return name.replace(".", "::", 1) if name.startswith("aten.") else name


def _from_key(node: Any) -> str:
    """The key inductor's ``Source Nodes`` comment uses for ``node``: its first ``from_node``'s name, else its own."""
    fn = node.meta.get("from_node")
    if fn:
        f = fn[0]
        name = getattr(f, "name", None) or (f[0] if isinstance(f, tuple) and f else None)
        if name:
            return str(name)
    return node.name


def graph_node_facts(gm: Any, names: dict[str, str]) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    """``(module by node name, module by Source-Nodes key, ATen op by node name)`` of a post-grad graph."""
    module: dict[str, str] = {}
    by_key: dict[str, str] = {}
    aten: dict[str, str] = {}
    for n in gm.graph.nodes:
        m = _innermost(n.meta.get("nn_module_stack"), names) or _innermost(n.meta.get("fwd_nn_module_stack"), names)
        if m is not None:
            module[n.name] = m
            by_key.setdefault(_from_key(n), m)
        a = _aten(n.meta.get("original_aten"))
        if a:
            aten[n.name] = a
    return module, by_key, aten


def _uniq(xs: Any) -> list[str]:
    return [x for x in dict.fromkeys(xs) if x is not None]


class InductorCapture:
    """Context manager collecting every generated graph's kernels (see the module doc).

    ``model``: the model whose modules the paths name (its ``named_modules()``). After the scope,
    :meth:`document` is the ``compiled_kernels.json`` content; :meth:`write` writes it.

    ``record`` False: inductor is configured as when recording (every rank of a run must generate the same
    code, under the same kernel names, and leave the same events in its trace) but nothing is recorded: the
    ranks of a run compile the same program, one rank's file serves them all and the others' would be
    thrown away."""

    def __init__(self, device_type: str, model: Any = None, *, record: bool = True) -> None:
        self.device_type = device_type
        self.record = record
        self.names = module_names(model) if record else {}
        self.graphs = 0
        self.by_handle = 0   # launches mapped through provenance tracking
        self.by_comment = 0  # launches mapped through the generated code's comments
        self.notes: list[str] = []
        self.doc = CompiledKernels()
        self._stack = contextlib.ExitStack()
        self._prev: Any = None

    def __enter__(self) -> InductorCapture:
        import torch

        self.doc.torch = str(torch.__version__)
        try:
            self._stack.enter_context(self._configured())
        except Exception as e:  # noqa: BLE001 - a torch without these knobs still runs, without capture
            self.notes.append(f"inductor capture not installed: {type(e).__name__}: {e}")
        return self

    @contextlib.contextmanager
    def _configured(self) -> Iterator[None]:
        import torch._inductor.config as ic
        from torch._inductor.graph import GraphLowering

        if not hasattr(GraphLowering, "save_output_code"):  # nothing would ever call the hook: say so
            raise RuntimeError("this torch's GraphLowering has no save_output_code hook")
        patches: dict[str, Any] = {"fx_graph_cache": False}
        if hasattr(ic.triton, "unique_kernel_names"):
            patches["triton.unique_kernel_names"] = True
        if self.device_type == "cpu" and hasattr(ic.cpp, "enable_kernel_profile"):
            patches["cpp.enable_kernel_profile"] = True
        if hasattr(ic.trace, "provenance_tracking_level"):
            patches["trace.provenance_tracking_level"] = 1
        elif hasattr(ic.trace, "provenance_tracking"):
            patches["trace.provenance_tracking"] = True
        with contextlib.ExitStack() as st:
            st.enter_context(ic.patch(patches))
            import torch._functorch.config as fc

            if hasattr(fc, "enable_autograd_cache"):
                st.enter_context(fc.patch(enable_autograd_cache=False))
            if not self.record:
                yield
                return
            self._prev = getattr(GraphLowering, "save_output_code", None)
            GraphLowering.save_output_code = self._save
            try:
                yield
            finally:
                GraphLowering.save_output_code = self._prev

    def __exit__(self, *exc: object) -> None:
        self._stack.close()
        if self.graphs == 0 and self.record:
            self.notes.append("no graph was generated by inductor while the capture was open")
        self.doc.source = ("provenance_tracking" if self.by_handle and not self.by_comment else
                           "code_comments" if self.by_comment and not self.by_handle else
                           "mixed" if self.by_handle else None)
        self.doc.notes = list(self.notes)

    def _save(self, code: str) -> None:
        try:
            self._record(code)
        except Exception as e:  # noqa: BLE001 - capture must never break the compile
            self.notes.append(f"graph {self.graphs}: {type(e).__name__}: {e}")
        if self._prev is not None:
            self._prev(code)

    def _record(self, code: str) -> None:
        from torch._inductor.virtualized import V

        g = V.graph
        kind = "backward" if getattr(g, "is_backward", False) else (
            "inference" if getattr(g, "is_inference", False) else "forward")
        module, by_key, aten = graph_node_facts(g.module, self.names)
        tracked = _tracked_nodes()
        self.graphs += 1
        for k in parse_output_code(code):
            nodes = tracked.get(k.handle) if k.handle else None
            mods = _uniq(module.get(n) for n in nodes) if nodes is not None else []
            if nodes is not None and (mods or not k.source_nodes):
                self.by_handle += 1
            else:  # untracked, or tracked nodes without module meta (a pattern's replacement): the comment
                self.by_comment += 1
                nodes = k.source_nodes
                mods = _uniq(by_key.get(n) or module.get(n) for n in nodes)
            ops = _uniq([*k.aten_ops, *(aten.get(n) for n in nodes)])
            origin = KernelOrigin(modules=mods, aten_ops=ops, source_nodes=list(nodes), graph=kind)
            op = extern_op(k.name)
            if op is not None:
                _merge(self.doc.extern, op, origin)
            else:
                _merge(self.doc.kernels, trace_names(code, k.name), origin)
                if k.path:
                    _merge(self.doc.files, k.path, origin)

    def document(self) -> CompiledKernels:
        return self.doc

    def write(self, out_dir: str | Path) -> Path:
        return write_compiled(out_dir, self.doc)


def _merge(table: dict[str, KernelOrigin], key: str, origin: KernelOrigin) -> None:
    """Add one launch to ``table[key]``: the lists united (first-seen order), the launch's modules appended
    to ``calls``; ``graph`` stays the first one's."""
    have = table.get(key)
    if have is None:
        have = table[key] = KernelOrigin(graph=origin.graph)
    have.modules = _uniq([*have.modules, *origin.modules])
    have.aten_ops = _uniq([*have.aten_ops, *origin.aten_ops])
    have.source_nodes = _uniq([*have.source_nodes, *origin.source_nodes])
    have.calls.append(list(origin.modules))


def _tracked_nodes() -> dict[str, list[str]]:
    """Inductor's provenance map of the graph being lowered: ``"kernel:handle"`` -> post-grad node names
    (empty on a torch without provenance tracking)."""
    try:
        import torch._inductor.debug as dbg
    except ImportError:
        return {}
    info = getattr(dbg, "_inductor_triton_kernel_to_post_grad_node_info", None)
    return {str(k): [str(n) for n in v] for k, v in info.items()} if isinstance(info, dict) else {}
