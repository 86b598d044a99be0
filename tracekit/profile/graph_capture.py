"""Record every graph ``torch.compile`` compiled on this rank: its FX code, parameters, bucket and cut.

How: a backend wrapper. ``model.compile(backend=GraphRecorder.backend())`` hands dynamo a
function that records the ``GraphModule`` it is given, then calls the real backend
(``torch._dynamo.backends.registry.lookup_backend(name)``: ``compile_fx`` for inductor, the
same function ``backend="inductor"`` ends in). Dynamo's DDPOptimizer wraps the backend it
was given, so under ``optimize_ddp="ddp_optimizer"`` the wrapper sees each *split submodule*
(one per DDPOptimizer bucket, in model order) instead of the whole frame graph. With the
python reducer, :class:`tracekit.profile.compiled_autograd.BackwardCompiler` reports the
compiled-autograd backward graph and the graphs dynamo makes of it (with their allreduce
nodes) through :meth:`GraphRecorder.record_backward`.

What each graph carries, read from torch's own objects:

* ``compile_subgraph_reason`` (dynamo's ``GraphCompileReason``, set on every graph it hands a
  backend): why the graph ended. DDPOptimizer overwrites it on its submodules with its own
  "intentional graph-break"; the frame's reason is then read from the ``gm`` of
  ``DDPOptimizer.compile_fn`` on the call stack (None when this torch does not have it there).
* parameters: placeholders whose dynamo ``grapharg`` example is a parameter of the model
  (dynamo's ``inline_inbuilt_nn_modules``, on by default in recent torch, lifts parameters to inputs), or
  ``get_attr`` nodes that resolve to one (without it); named as in ``model.named_parameters()``.

Contract: recording never raises into the compile (a failure is kept in ``unavailable``);
only the rank that writes (rank 0) keeps the code text.
"""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

GRAPHS_DIR = "graphs"
#: the FX dumps' suffix: Python text, but not a module anyone imports; named ``.py`` they would be linted,
#: collected by test runners and found by every grep of the code
GRAPH_SUFFIX = ".fx.txt"
#: what dynamo puts on DDPOptimizer's submodules as their compile reason
_DDPO_REASON = "DDPOptimizer intentional graph-break"


def _stack_where(stack: Any) -> str | None:
    """The innermost user frame of a reason's ``user_stack`` as ``file:line in function``."""
    frames = [f for f in (stack or []) if getattr(f, "lineno", 0)]
    if not frames:
        return None
    f = frames[-1]
    return f"{f.filename}:{f.lineno} in {f.name}"


def _reason(r: Any) -> dict[str, Any] | None:
    if r is None:
        return None
    text = str(getattr(r, "reason", "") or "").strip()
    return {"reason": text.splitlines()[0][:500] if text else None,
            "graph_break": bool(getattr(r, "graph_break", False)),
            "where": _stack_where(getattr(r, "user_stack", None))}


def _ddp_optimizer_frame_reason() -> Any:
    """The ``compile_subgraph_reason`` of the whole frame graph DDPOptimizer is splitting (its
    ``compile_fn``'s ``gm``), found on the call stack; None when not under DDPOptimizer."""
    f = sys._getframe(2)
    for _ in range(80):
        if f is None:
            return None
        if f.f_code.co_name == "compile_fn" and "buckets" in f.f_locals and "gm" in f.f_locals:
            return getattr(f.f_locals["gm"], "compile_subgraph_reason", None)
        f = f.f_back
    return None


def _is_allreduce(node: Any) -> bool:
    return node.op == "call_function" and "all_reduce" in str(getattr(node.target, "__name__", node.target))


def allreduce_param_inputs(gm: Any) -> list[int | None]:
    """Per allreduce node of a dynamo graph of a compiled-autograd backward (graph order): the index,
    in the graph's input list, of the parameter whose gradient it reduces. The python reducer's hook
    runs ``param.grad / world`` then ``all_reduce`` on the result of compiled autograd's
    ``AccumulateGrad(grads, param, ...)``, whose ``param`` is ``inputs[k]``: walk back from the
    allreduce to that node (a few steps) and read ``k``. None where the graph is shaped otherwise."""
    import operator

    out: list[int | None] = []
    for node in gm.graph.nodes:
        if not _is_allreduce(node):
            continue
        found, frontier = None, list(node.all_input_nodes)
        for _ in range(6):
            acc = [n for n in frontier if n.op == "call_function" and "accumulategrad" in
                   str(getattr(n.target, "__name__", n.target)).lower().replace("_", "")]
            if acc:
                p = acc[0].args[1] if len(acc[0].args) > 1 else None
                if (getattr(p, "op", None) == "call_function" and p.target is operator.getitem
                        and p.args[0].op == "placeholder" and "inputs" in p.args[0].name
                        and isinstance(p.args[1], int)):
                    found = p.args[1]
                break
            frontier = [i for n in frontier for i in n.all_input_nodes]
        out.append(found)
    return out


def _compile_id() -> str | None:
    try:
        from torch._guards import CompileContext

        cid = CompileContext.current_compile_id()
    except Exception:  # noqa: BLE001 - older torch: no compile ids
        return None
    return str(cid) if cid is not None else None


class GraphRecorder:
    """Records the graphs of one rank (see the module doc).

    ``graphs``: one dict per compiled graph in compile order (``kind``: ``forward`` -- a graph
    dynamo made of the model's code, a DDPOptimizer submodule or a whole frame graph --,
    ``compiled_autograd`` -- the backward graph compiled autograd captured -- or ``backward`` --
    a graph dynamo made of it). ``keep_code``: keep the FX code for :meth:`write` (rank 0).
    """

    def __init__(self, backend: str, *, keep_code: bool) -> None:
        self.backend_name = backend
        self.keep_code = keep_code
        self.graphs: list[dict[str, Any]] = []
        self.codes: list[str] = []
        self.unavailable: dict[str, str] = {}
        self._names: dict[int, str] = {}
        self._ca_inputs: list[str | None] = []

    def set_params(self, model: Any) -> None:
        """Name parameters as ``model.named_parameters()`` does (call before the first compile)."""
        self._names = {id(p): n for n, p in model.named_parameters()}

    @property
    def param_names(self) -> dict[int, str]:
        """The model's parameter names by parameter identity (``id``)."""
        return dict(self._names)

    # -- the backend -------------------------------------------------------------------------

    def backend(self, mode: str | None = None) -> Callable[[Any, Any], Any]:
        """The backend to give ``torch.compile``: records, then compiles with the named backend; ``mode``
        (torch.compile's, inductor only) becomes the inductor config patches ``torch.compile(mode=...)`` gives
        (``torch._inductor.list_mode_options``), as a callable backend gets no mode of its own."""
        from torch._dynamo.backends.registry import lookup_backend

        real = lookup_backend(self.backend_name)
        if mode not in (None, "default"):
            import torch._inductor

            real = functools.partial(real, config_patches=torch._inductor.list_mode_options(mode))

        def tracekit_recording_backend(gm: Any, example_inputs: Any) -> Any:
            self._safe(lambda: self._record_forward(gm))
            return real(gm, example_inputs)

        return tracekit_recording_backend

    def _safe(self, fn: Callable[[], None]) -> None:
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - recording must never break the compile
            self.unavailable.setdefault("record", f"{type(e).__name__}: {e}")

    def _entry(self, gm: Any, kind: str) -> dict[str, Any]:
        nodes = list(gm.graph.nodes)
        entry = {"index": len(self.graphs), "kind": kind, "compile_id": _compile_id(),
                 "nodes": len(nodes),
                 "ops": sum(n.op in ("call_function", "call_method", "call_module") for n in nodes),
                 "allreduces": sum(_is_allreduce(n) for n in nodes), "params": [], "param_bytes": 0,
                 "file": None}
        if self.keep_code:
            self.codes.append(gm.print_readable(print_output=False))
        else:
            self.codes.append("")
        self.graphs.append(entry)
        return entry

    def _params(self, gm: Any) -> list[Any]:
        out = []
        for n in gm.graph.nodes:
            p = None
            if n.op == "placeholder":
                ga = n.meta.get("grapharg")
                p = getattr(ga, "example", None) if ga is not None else None
            elif n.op == "get_attr":
                try:
                    p = gm.get_parameter(str(n.target))
                except (AttributeError, TypeError):
                    p = None
            if p is not None and id(p) in self._names:
                out.append(p)
        return out

    def _record_forward(self, gm: Any) -> None:
        entry = self._entry(gm, "forward")
        params = self._params(gm)
        entry["params"] = [self._names[id(p)] for p in params]
        entry["param_bytes"] = int(sum(p.numel() * p.element_size() for p in params))
        own = getattr(gm, "compile_subgraph_reason", None)
        if own is not None and _DDPO_REASON in str(getattr(own, "reason", "")):
            entry["ddp_optimizer_submodule"] = True
            entry["frame_cut"] = _reason(_ddp_optimizer_frame_reason())
        else:
            entry["ddp_optimizer_submodule"] = False
            entry["frame_cut"] = _reason(own)

    def record_backward(self, gm: Any, kind: str) -> None:
        """Called by the compiled-autograd compiler: ``kind`` ``compiled_autograd`` (the captured
        graph) or ``backward`` (a graph dynamo made of it, handed to the backend). A ``backward``
        graph gets ``allreduce_params``: per allreduce node, in graph order, the parameter whose
        gradient it reduces (None where it cannot be traced back)."""
        def record() -> None:
            entry = self._entry(gm, kind)
            if kind == "backward":
                entry["allreduce_params"] = [self._ca_input_name(i) for i in allreduce_param_inputs(gm)]
        self._safe(record)

    def record_inputs(self, inputs: list[Any]) -> None:
        """The input list of a compiled-autograd graph (its parameters among them), before dynamo
        traces it: :meth:`record_backward` names parameters by their position in it."""
        self._ca_inputs = [self._names.get(id(t)) for t in inputs]

    def _ca_input_name(self, i: int | None) -> str | None:
        return self._ca_inputs[i] if i is not None and 0 <= i < len(self._ca_inputs) else None

    # -- the summary ---------------------------------------------------------------------------

    def summary(self, reducer_params: list[str] | None, reducer_buckets: list[list[int]] | None) -> dict[str, Any]:
        """The ``graphs`` section of ``run.json`` (see :mod:`tracekit.traces.manifest`).

        ``reducer_params``: DDP's parameters in its order; ``reducer_buckets``: the reducer's
        buckets as indices into them (bucket 0 first), or None when unknown. Each forward graph
        gets ``buckets`` (the reducer buckets its parameters' gradients go to) and ``cut``: how
        it ends -- ``ddp_split`` (DDPOptimizer's bucket boundary), ``graph_break`` (dynamo
        broke the graph: ``reason``/``where`` say why) or ``end`` (the frame returned).
        """
        bucket_of: dict[str, int] = {}
        if reducer_params is not None and reducer_buckets is not None:
            for b, idx in enumerate(reducer_buckets):
                for i in idx:
                    if 0 <= i < len(reducer_params):
                        bucket_of[reducer_params[i]] = b
        graphs = [dict(g) for g in self.graphs]
        _add_cuts(graphs)
        for g in graphs:
            if g["kind"] == "forward":
                g["buckets"] = sorted({bucket_of[p] for p in g["params"] if p in bucket_of})
        return {"graphs": graphs, "unavailable": dict(self.unavailable)}

    def write(self, out_dir: Path, summary: dict[str, Any]) -> None:
        """Write each graph's FX code as ``graphs/<name>.fx.txt`` (readable text, with a header) and set
        ``file`` in ``summary`` (paths relative to the run folder)."""
        d = out_dir / GRAPHS_DIR
        d.mkdir(parents=True, exist_ok=True)
        for g, code in zip(summary["graphs"], self.codes):
            name = f"{g['index']:03d}_{g['kind']}"
            if g.get("compile_id"):
                name += "_" + re.sub(r"[^0-9A-Za-z]+", "-", g["compile_id"]).strip("-")
            path = d / f"{name}{GRAPH_SUFFIX}"
            path.write_text(_header(g) + code, encoding="utf-8")
            g["file"] = f"{GRAPHS_DIR}/{path.name}"


def _add_cuts(graphs: list[dict[str, Any]]) -> None:
    """Set ``cut`` on forward graphs: the DDPOptimizer submodules of one compile are split at
    bucket boundaries (``ddp_split``) except the last, which ends as the frame did."""
    fwd = [g for g in graphs if g["kind"] == "forward"]
    for i, g in enumerate(fwd):
        nxt = fwd[i + 1] if i + 1 < len(fwd) else None
        frame = g.pop("frame_cut", None) or {}
        same_frame = (nxt is not None and g.get("ddp_optimizer_submodule") and nxt.get("ddp_optimizer_submodule")
                      and nxt.get("compile_id") == g.get("compile_id"))
        if same_frame:
            g["cut"] = {"kind": "ddp_split", "reason": "DDPOptimizer bucket boundary", "where": None}
        elif frame.get("graph_break"):
            g["cut"] = {"kind": "graph_break", "reason": frame.get("reason"), "where": frame.get("where")}
        else:
            g["cut"] = {"kind": "end", "reason": frame.get("reason"), "where": frame.get("where")}


def _header(g: dict[str, Any]) -> str:
    lines = [f"# tracekit: graph {g['index']} ({g['kind']}), compile id {g.get('compile_id')}",
             f"# nodes {g['nodes']}, ops {g['ops']}, allreduces {g['allreduces']}"]
    lines += [f"# allreduce {i}: gradient of {p}" for i, p in enumerate(g.get("allreduce_params") or [])]
    if g["kind"] == "forward":
        lines.append(f"# DDPOptimizer submodule: {g.get('ddp_optimizer_submodule')}; "
                     f"reducer buckets: {g.get('buckets')}")
        lines += [f"# param: {p}" for p in g["params"]]
        cut = g.get("cut") or {}
        lines.append(f"# ends with: {cut.get('kind')}: {cut.get('reason')} ({cut.get('where')})")
    return "\n".join(lines) + "\n\n"


def reducer_layout(ddp: Any, names_by_id: dict[int, str] | None = None
                   ) -> tuple[list[str] | None, list[list[int]] | None, str | None]:
    """``(params, buckets, why_not)``: DDP's parameter names in the reducer's order and its buckets as
    indices into them, from ``_get_ddp_logging_data`` (the rebuilt layout, which every step after
    the first uses; before a rebuild, one bucket holding every parameter when there is one bucket).

    ``names_by_id``: the model's names by parameter identity (:meth:`GraphRecorder.param_names`);
    ``replicate`` builds its DDP over a container whose own names are just indices.
    """
    if ddp is None:
        return None, None, "no DDP reducer"
    names_by_id = names_by_id or {}
    try:
        names = [names_by_id.get(id(p), n) for n, p in ddp.module.named_parameters() if p.requires_grad]
        data = ddp._get_ddp_logging_data()
    except Exception as e:  # noqa: BLE001
        return None, None, f"{type(e).__name__}: {e}"
    if getattr(ddp, "_use_python_reducer", False):
        return names, None, "python reducer: the allreduces are in the compiled backward, bucketed by inductor"
    text = data.get("rebuilt_per_bucket_param_indices")
    if text:
        return names, [[int(i) for i in b.split()] for b in str(text).split(",")], None
    sizes = str(data.get("bucket_sizes") or "")
    if sizes and "," not in sizes:
        return names, [list(range(len(names)))], None
    return names, None, "the reducer did not report its bucket layout (no rebuilt buckets)"
