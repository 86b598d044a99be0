"""What each compiled kernel computes: the ``compiled_kernels.json`` format, its reader, and the parsers of
inductor's generated code and kernel names (no torch import: ``tracekit analyze`` reads it).

``compiled_kernels.json`` (written by ``tracekit profile --dynamo inductor``, rank 0, once per run: every
rank compiles the same program)::

    {"version": 1,
     "source": "provenance_tracking" | "code_comments" | "mixed",  # how the kernels were mapped (see below)
     "torch": "2.11.0",
     "kernels": {"<kernel name as it appears in the trace>": {
         "modules": ["blocks.0.mlp.fc1", ...],   # dotted paths as in model.named_modules(), wrapper
                                                 # prefixes (module., _orig_mod.) stripped; a backward
                                                 # kernel names the forward modules it differentiates
         "aten_ops": ["aten::addmm", ...],       # the ATen ops it fused (inductor's "Original ATen")
         "source_nodes": ["linear", ...],        # the FX nodes it came from (post-grad node names, or the
                                                 # "Source Nodes" of inductor's comment)
         "graph": "forward" | "backward" | "inference",
         "flops": null, "bytes": null,           # not measured at compile time
         "calls": [["blocks.0.mlp.act"], ["blocks.1.mlp.act"]]}},  # per launch of one graph call, in
                                                 # launch order, the modules of that launch (a kernel
                                                 # reused by several modules runs once per use)
     "extern": {"aten::addmm": {...same fields...}},  # library calls inductor kept (cuBLAS/oneDNN GEMMs...)
                                                 # and ops it falls back to (attention...): keyed by the
                                                 # ATen op the trace shows for them
     "files": {"/tmp/torchinductor_root/ab/cabc....py": {...same fields...}},  # per kernel source file (Triton:
                                                 # the launch event's ``kernel_file`` argument), one definition
                                                 # each: tells apart kernels of the same name in two graphs
                                                 # (names restart per graph, e.g. DDPOptimizer's submodules)
     "notes": ["..."]}                           # what could not be captured, and why

The mapping comes, per graph, from inductor's provenance tracking where the torch version has it
(``config.trace.provenance_tracking_level``: kernel -> post-grad FX nodes, whose ``nn_module_stack`` (forward)
or ``fwd_nn_module_stack`` (backward) meta names the module), else from the generated code's comments above
each kernel (``# Source Nodes: [...], Original ATen: [...]``, or ``# Topologically Sorted Source Nodes``).

For traces without that file, :func:`fused_ops_from_name` reads the fused ops out of a kernel's name
(``triton_poi_fused_add_mul_0`` -> ``("add", "mul")``): a guess, which the analysis says it is.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import msgspec

from tracekit.errors import TracekitError

COMPILED_KERNELS_NAME = "compiled_kernels.json"
FORMAT_VERSION = 1
#: the prefix of the forward ranges ``tracekit profile`` records per module
MODULE_RANGE_PREFIX = "tracekit.module:"
#: the leading path component DDP's wrapper adds to a model's module names (only leading: a user's own submodule
#: may be called ``module``)
WRAPPER_PREFIX = "module"
#: path components other wrappers add anywhere in the tree (``torch.compile``'s ``_orig_mod``, FSDP1's and
#: activation checkpointing's wrapped module): no user names a module so
WRAPPER_COMPONENTS = frozenset({"_orig_mod", "_fsdp_wrapped_module", "_checkpoint_wrapped_module"})


class ProvenanceError(TracekitError):
    """A ``compiled_kernels.json`` that cannot be read or has the wrong shape (the message names the file)."""


class KernelOrigin(msgspec.Struct, kw_only=True, omit_defaults=False):
    """What one compiled kernel (or one kind of extern call) computes (see the module doc)."""

    modules: list[str] = msgspec.field(default_factory=list)
    aten_ops: list[str] = msgspec.field(default_factory=list)
    source_nodes: list[str] = msgspec.field(default_factory=list)
    graph: str | None = None
    flops: int | None = None
    bytes: int | None = None
    calls: list[list[str]] = msgspec.field(default_factory=list)


class CompiledKernels(msgspec.Struct, kw_only=True, omit_defaults=False):
    """The whole ``compiled_kernels.json`` document."""

    version: int = FORMAT_VERSION
    source: str | None = None
    torch: str | None = None
    kernels: dict[str, KernelOrigin] = msgspec.field(default_factory=dict)
    extern: dict[str, KernelOrigin] = msgspec.field(default_factory=dict)
    files: dict[str, KernelOrigin] = msgspec.field(default_factory=dict)
    notes: list[str] = msgspec.field(default_factory=list)


def _path(run_dir: str | os.PathLike[str]) -> Path:
    p = Path(run_dir)
    return p / COMPILED_KERNELS_NAME if p.is_dir() else p


def read_compiled(run_dir: str | os.PathLike[str]) -> CompiledKernels | None:
    """The run folder's ``compiled_kernels.json`` (or that file's path), or None when there is none.

    Raises :class:`ProvenanceError` naming the file when it cannot be read, is no JSON, has the wrong
    shape or a version this reader does not know."""
    p = _path(run_dir)
    if not p.is_file():
        return None
    try:
        doc = msgspec.json.decode(p.read_bytes(), type=CompiledKernels)
    except OSError as e:
        raise ProvenanceError(f"{p}: cannot read ({e.strerror or e})") from None
    except msgspec.DecodeError as e:
        raise ProvenanceError(f"{p}: not a compiled-kernels file ({e})") from None
    if doc.version != FORMAT_VERSION:
        raise ProvenanceError(f"{p}: format version {doc.version}, this tracekit reads {FORMAT_VERSION}")
    return doc


def read_compiled_kernels(run_dir: str | os.PathLike[str]) -> dict[str, KernelOrigin]:
    """Kernel name (as in the trace) -> :class:`KernelOrigin`; empty when the run has no such file.
    A bad file raises :class:`ProvenanceError` naming it."""
    doc = read_compiled(run_dir)
    return dict(doc.kernels) if doc is not None else {}


def write_compiled(run_dir: str | os.PathLike[str], doc: CompiledKernels) -> Path:
    """Write ``doc`` as the run folder's ``compiled_kernels.json`` (atomically: a temporary name, renamed)."""
    p = Path(run_dir) / COMPILED_KERNELS_NAME
    tmp = p.with_name(f".{p.name}.tmp{os.getpid()}")
    tmp.write_bytes(msgspec.json.format(msgspec.json.encode(doc), indent=1))
    os.replace(tmp, p)
    return p


# -- module paths ------------------------------------------------------------------------------------------

_ROOT_RE = re.compile(r"^(?:L\[['\"][^'\"]*['\"]\]|L__self__|self)")
_ITEM_RE = re.compile(r"\[['\"]?([^'\"\]]+)['\"]?\]")


def strip_wrappers(path: str) -> str:
    """``path`` as the user's ``model.named_modules()`` names it: without DDP's leading ``module`` components
    (repeatedly) and without the :data:`WRAPPER_COMPONENTS` anywhere; the wrapped model itself is ``""``. The one
    rule for the profile side (module ranges, compiled kernels' modules) and the analysis (the ``ops`` table's
    module column), so both name a module alike."""
    words = [w for w in path.split(".") if w and w not in WRAPPER_COMPONENTS] if path else []
    while words and words[0] == WRAPPER_PREFIX:
        words = words[1:]
    return ".".join(words)


def module_path_from_stack(entry: str) -> str:
    """A dotted module path from the path dynamo writes in ``nn_module_stack``: ``L['self'].blocks[0].fc``,
    ``L['fn'].0.act``, ``L['self']._modules['fc1']`` -> ``blocks.0.fc``, ``0.act``, ``fc1``; wrapper prefixes
    stripped. The root (the compiled module itself) is ``""``."""
    s = _ROOT_RE.sub("", entry.strip(), count=1)
    s = s.replace("._modules", "")
    s = _ITEM_RE.sub(lambda m: "." + m.group(1), s)
    return strip_wrappers(s.strip("."))


# -- inductor's generated code ----------------------------------------------------------------------------

_COMMENT_RE = re.compile(r"#\s*(?:Topologically Sorted |Unsorted )?Source Nodes:\s*\[(?P<nodes>[^\]]*)\],"
                         r"\s*Original ATen:\s*\[(?P<aten>[^\]]*)\]")
_DEF_RE = re.compile(r"^(?P<name>[A-Za-z_]\w*)\s*=\s*async_compile\.(?:triton|cpp_pybinding|cpp|cuda|halide)\(",
                     re.M)
_HANDLE_RE = re.compile(r"#\s*\[Provenance debug handles\]\s*(?P<key>(?P<name>[\w.]+):(?P<handle>\d+))")
_EXTERN_RE = re.compile(r"^\s*(?:\w+\s*=\s*)?extern_kernels\.(?P<op>\w+)\(", re.M)
#: an ATen op inductor calls as it is (a fallback: attention, some collectives)
_FALLBACK_RE = re.compile(r"^\s*(?:\w+\s*=\s*)?(?P<call>torch\.ops\.(?P<ns>\w+)\.(?P<op>\w+)\.(?P<ovl>\w+))\(", re.M)


class CodeKernel(msgspec.Struct, kw_only=True):
    """One kernel launch (or extern call) in the ``call()`` of inductor's generated wrapper code."""

    name: str                   # the kernel's name in the code (``triton_poi_fused_relu_0``, ``extern_kernels.mm``,
                                # ``torch.ops.aten._scaled_dot_product_flash_attention.default``)
    source_nodes: list[str]     # from the comment above the call or the definition ([] without one)
    aten_ops: list[str]         # ``aten::relu``... from the same comment
    handle: str | None = None   # ``name:N``: the provenance-tracking key of this launch, when tracked
    path: str | None = None     # the kernel's source file (``# kernel path:``; Triton): the ``kernel_file``
                                # argument of its launch event in the trace


def aten_name(op: str) -> str:
    """``aten.addmm`` (inductor's comment) -> ``aten::addmm`` (the profiler's name)."""
    op = op.strip()
    ns, _, rest = op.partition(".")
    return f"{ns}::{rest}" if rest and "::" not in op else op


def _split(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


_PATH_RE = re.compile(r"^#\s*kernel path:\s*(?P<path>\S+)\s*$", re.M)


def _definitions(code: str) -> dict[str, tuple[list[str], list[str], str | None]]:
    """Kernel name -> (source nodes, ATen ops, kernel path) from the comment block above each kernel's
    definition (the block starts after the last blank line; empty lists and None where it says nothing)."""
    out: dict[str, tuple[list[str], list[str], str | None]] = {}
    for m in _DEF_RE.finditer(code):
        head = code[max(0, m.start() - 4000):m.start()]
        block = head[head.rfind("\n\n") + 1:] if "\n\n" in head else head
        c = list(_COMMENT_RE.finditer(block))
        p = list(_PATH_RE.finditer(block))
        nodes = _split(c[-1].group("nodes")) if c else []
        aten = [aten_name(a) for a in _split(c[-1].group("aten"))] if c else []
        out[m.group("name")] = (nodes, aten, p[-1].group("path") if p else None)
    return out


def parse_output_code(code: str) -> list[CodeKernel]:
    """Every kernel launch and extern call of inductor's generated wrapper code, in launch order.

    Launches are read from the ``call()`` body: a line calling a defined kernel (``name.run(`` for Triton,
    ``name(`` for C++), ``extern_kernels.<op>(`` (a library call) or ``torch.ops.<ns>.<op>.<overload>(`` (an op
    inductor falls back to, named so). The source nodes and ATen ops come from the
    ``Source Nodes`` comment in the lines just above the launch, else from the comment above the kernel's
    definition (C++ kernels have neither on some torch versions: then both lists are empty). A
    ``[Provenance debug handles] name:N`` comment above a launch gives its provenance key."""
    defs = _definitions(code)
    names = set(defs)
    start = code.find("def call(")
    body = code[start:] if start >= 0 else ""
    call_re = re.compile(r"^\s*(?P<name>" + "|".join(sorted(map(re.escape, names), key=len, reverse=True))
                         + r")(?:\.run)?\(", re.M) if names else None
    launches = [(m.start(), "extern_kernels." + m.group("op")) for m in _EXTERN_RE.finditer(body)]
    launches += [(m.start(), m.group("call")) for m in _FALLBACK_RE.finditer(body)]
    if call_re is not None:
        launches += [(m.start(), m.group("name")) for m in call_re.finditer(body)]
    launches.sort()
    out, prev = [], 0
    for pos, name in launches:
        between = body[prev:pos]
        prev = pos
        c = list(_COMMENT_RE.finditer(between))
        h = [m for m in _HANDLE_RE.finditer(between) if m.group("name") == name]
        d_nodes, d_aten, path = defs.get(name, ([], [], None))
        if c:
            nodes, aten = _split(c[-1].group("nodes")), [aten_name(a) for a in _split(c[-1].group("aten"))]
        else:
            nodes, aten = d_nodes, d_aten
        out.append(CodeKernel(name=name, source_nodes=list(nodes), aten_ops=list(aten),
                              handle=h[-1].group("key") if h else None, path=path))
    return out


def extern_op(name: str) -> str | None:
    """The profiler's name of a library or fallback call of the generated code (``extern_kernels.mm`` ->
    ``aten::mm``, ``torch.ops.aten._scaled_dot_product_flash_attention.default`` ->
    ``aten::_scaled_dot_product_flash_attention``); None for a generated kernel."""
    if name.startswith("extern_kernels."):
        return "aten::" + name.split(".", 1)[1]
    if name.startswith("torch.ops."):
        parts = name.split(".")
        return f"{parts[2]}::{parts[3]}" if len(parts) >= 4 else None
    return None


def trace_names(code: str, name: str) -> str:
    """The name a kernel of ``code`` carries in a trace: C++ kernels compiled with
    ``cpp.enable_kernel_profile`` record a function named ``graph_<id>_<name>`` (read from the kernel's
    source); every other kernel keeps its name."""
    m = re.search(r'"((?:graph_\d+_)?' + re.escape(name) + r')"', code)
    return m.group(1) if m else name


# -- kernel names ------------------------------------------------------------------------------------------

_NAME_RE = re.compile(r"^(?:graph_\d+_)?(?:triton_(?:poi|red|per|tem|for|spl|mix|unk)_|triton_|cpp_)"
                      r"(?:fused_)?(?P<ops>.*?)(?:_\d+)?$")
#: multi-word ATen names that appear in kernel names; the longest is matched first
_KNOWN_OPS = ("native_layer_norm_backward", "native_layer_norm", "native_batch_norm_backward",
              "_native_batch_norm_legit_functional", "_native_batch_norm_legit_no_training",
              "native_group_norm_backward", "native_group_norm", "threshold_backward", "gelu_backward",
              "silu_backward", "sigmoid_backward", "tanh_backward", "_log_softmax_backward_data",
              "_softmax_backward_data", "_log_softmax", "_softmax", "log_softmax", "nll_loss_backward",
              "nll_loss_forward", "embedding_dense_backward", "embedding", "scaled_dot_product",
              "convolution_backward", "convolution", "avg_pool2d_backward", "max_pool2d_with_indices_backward",
              "max_pool2d_with_indices", "avg_pool2d", "adaptive_avg_pool2d", "native_dropout_backward",
              "native_dropout", "clamp_min", "clamp_max", "full_like", "new_zeros", "zeros_like", "ones_like",
              "scalar_tensor", "index_put", "index_select", "scatter_add", "slice_scatter", "select_scatter",
              "_to_copy", "add", "mul", "sub", "div", "relu", "gelu", "silu", "sigmoid", "tanh", "exp",
              "log", "sqrt", "rsqrt", "pow", "mean", "sum", "amax", "amin", "max", "min", "var_mean",
              "where", "mm", "bmm", "addmm", "baddbmm", "cat", "clone", "copy", "view", "permute",
              "transpose", "expand", "squeeze", "unsqueeze", "le", "lt", "ge", "gt", "eq", "ne", "neg",
              "abs", "erf", "sin", "cos", "masked_fill", "fill", "zeros", "ones", "arange", "bernoulli",
              "rand", "randn", "gather", "scatter", "index", "constant_pad_nd", "split", "t", "_unsafe_view",
              "reciprocal", "sign", "floor", "ceil", "round", "argmax", "argmin", "cumsum", "logsumexp",
              "lerp", "addcmul", "addcdiv", "foreach", "sort", "topk", "bitwise_and",
              "bitwise_or", "logical_and", "logical_or", "logical_not", "maximum", "minimum", "convert_element_type")
_KNOWN_SORTED = sorted(_KNOWN_OPS, key=len, reverse=True)


def fused_ops_from_name(name: str) -> tuple[str, ...]:
    """The ops an inductor kernel's name says it fused, in name order: ``triton_poi_fused_add_mul_0`` ->
    ``("add", "mul")``, ``triton_red_fused_native_layer_norm_1`` -> ``("native_layer_norm",)``,
    ``graph_0_cpp_fused_relu_0`` -> ``("relu",)``; ``()`` for a name that is not an inductor kernel's
    (``triton_tem_fused_mm_0`` -> ``("mm",)``: templates too).

    The name lists the ``original_aten`` op of each fused node, joined with ``_`` (inductor's
    ``descriptive_names``): multi-word ATen names are split back by matching the longest known op
    first; an unknown word is kept as it is. A guess from a name, not the kernel's provenance."""
    m = _NAME_RE.match(name)
    if not m or not name.startswith(("triton", "cpp_", "graph_")):
        return ()
    rest, ops = m.group("ops"), []
    if rest.isdigit():
        return ()
    while rest:
        rest = rest[1:] if ops and rest.startswith("_") else rest  # one "_" joins two ops
        if not rest:
            break
        hit = next((k for k in _KNOWN_SORTED if rest == k or rest.startswith(k + "_")), None)
        word = hit or rest.split("_", 1)[0]
        ops.append(word)
        rest = rest[len(word):]
    return tuple(dict.fromkeys(ops))


def module_of(entry: KernelOrigin) -> str | None:
    """The module a compiled kernel belongs to: the longest common dotted prefix of its modules (the nearest
    module enclosing every op it fused; ``""``, the whole model, when they share none); None without modules."""
    return common_module(entry.modules)


def common_module(modules: list[str]) -> str | None:
    """The longest common dotted prefix of ``modules`` (``""`` when they share none); None for no modules."""
    mods = [m for m in modules if isinstance(m, str)]
    if not mods:
        return None
    parts = [m.split(".") if m else [] for m in mods]
    common: list[str] = []
    for words in zip(*parts):
        if any(w != words[0] for w in words):
            break
        common.append(words[0])
    return ".".join(common)
