"""FLOP and byte models of operators, from the inputs the profiler records (``record_shapes``).

One call of an op is modelled from its ``Input Dims``, ``Input type`` and ``Concrete Inputs`` (the JSON texts
the decoder keeps, :data:`tracekit.traces.decode.OP_TEXT_COLUMNS`), decoded here only for the ops that have a
model. :func:`model_of` returns a :class:`Cost`; docs/ops.md states every formula. The conventions match
``torch.utils.flop_counter.FlopCounterMode`` where it counts the op (GEMM, convolution, attention), so the two
can be compared:

- GEMM ``2·M·N·K`` (``bmm``/``baddbmm``: ``2·B·M·N·K``);
- convolution ``2·N·C_out·(C_in/groups)·∏kernel·∏out_spatial``; its backward the grad-input term (the
  forward's count) plus the grad-weight term ``2·N·C_out·C_in·∏kernel·∏out_spatial`` (FlopCounterMode's, with
  the full ``C_in``);
- attention forward ``4·B·H·S_q·S_kv·D``, backward 2.5× that (FlopCounterMode's five matmuls); halved when
  ``is_causal`` and ``S_q == S_kv`` (FlopCounterMode does not halve);
- elementwise, reduction and normalisation ops: one FLOP per element of the largest tensor (a count of
  elements, not of arithmetic);
- bytes: every tensor input plus the output, each once (a lower bound: re-reads are not counted).

Composite ops that always call a modelled op (``aten::linear``, ``aten::matmul``, ``aten::conv2d``,
``aten::scaled_dot_product_attention``...) have a category but no model: their FLOPs are the callee's.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass
from typing import Any

import msgspec

from tracekit.traces.schema import SHAPE_DTYPES

CATEGORIES = ("gemm", "conv", "attention", "elementwise", "reduction", "norm", "memory", "communication", "other")


@dataclass(frozen=True)
class Cost:
    """One call's model: ``flops`` and ``bytes`` (None: not modelled), ``dtype`` (of the first tensor input)."""

    flops: float | None
    bytes: float | None
    dtype: str | None
    #: bytes of the call's output (the tensor a next op would read), where the model knows it
    out_bytes: float | None = None


@dataclass(frozen=True)
class Args:
    """An op call's recorded inputs, decoded: per argument its shape (a list of ints, a list of shapes for a
    TensorList, else []), its type text and its concrete value text."""

    dims: list[Any]
    types: list[str]
    concrete: list[str]

    def tensor(self, i: int) -> tuple[list[int], int] | None:
        """Argument ``i`` as ``(shape, element bytes)`` when it is a tensor, else None."""
        if i >= len(self.dims) or i >= len(self.types):
            return None
        t = SHAPE_DTYPES.get(self.types[i])
        d = self.dims[i]
        if t is None or not isinstance(d, list) or any(not isinstance(x, int) for x in d):
            return None
        return d, t[1]

    def tensors(self) -> list[tuple[list[int], int]]:
        """Every tensor argument (TensorList members included)."""
        out: list[tuple[list[int], int]] = []
        for i, d in enumerate(self.dims):
            t = self.tensor(i)
            if t is not None:
                out.append(t)
            elif isinstance(d, list) and d and all(isinstance(x, list) for x in d) and i < len(self.types):
                out.extend((s, _list_size(self.types[i])) for s in d if all(isinstance(x, int) for x in s))
        return out

    def dtype(self) -> str | None:
        for t in self.types:
            if t in SHAPE_DTYPES:
                return SHAPE_DTYPES[t][0]
        return None

    def value(self, i: int) -> Any:
        """Concrete input ``i`` decoded (``"[1, 1]"`` -> [1, 1], ``"True"`` -> True), None when absent."""
        if i >= len(self.concrete) or not self.concrete[i]:
            return None
        text = self.concrete[i].replace("True", "true").replace("False", "false")
        try:
            return msgspec.json.decode(text)
        except msgspec.DecodeError:
            return None


def _list_size(type_text: str) -> int:
    """Element bytes of a TensorList argument (kineto records no dtype for it): 4, float32's."""
    return SHAPE_DTYPES.get(type_text, ("", 4, ""))[1]


def numel(shape: list[int]) -> int:
    return math.prod(shape) if shape else 1


def nbytes(t: tuple[list[int], int]) -> int:
    return numel(t[0]) * t[1]


def _in_bytes(a: Args) -> int:
    return sum(nbytes(t) for t in a.tensors())


# -- GEMM -------------------------------------------------------------------------------------------------

#: where each GEMM op's A and B sit in its recorded inputs, whether they are batched (3-d), and its added inputs
GEMM_ARGS: dict[str, tuple[int, int, bool, tuple[int, ...]]] = {
    "aten::mm": (0, 1, False, ()), "aten::addmm": (1, 2, False, (0,)), "aten::_addmm_activation": (1, 2, False, (0,)),
    "aten::bmm": (0, 1, True, ()), "aten::baddbmm": (1, 2, True, (0,)), "aten::_scaled_mm": (0, 1, False, ()),
}


def _bmnk(xs: list[int], ws: list[int], batched: bool) -> tuple[int, int, int, int] | None:
    """``(batch, M, N, K)`` of a GEMM of A ``xs`` and B ``ws`` (batch 1 unbatched); None for other ranks."""
    if len(xs) != (3 if batched else 2) or len(ws) != len(xs):
        return None
    return (xs[0] if batched else 1), xs[-2], ws[-1], xs[-1]


def gemm_dims(name: str, dims: list[list[int]]) -> tuple[int, int, int] | None:
    """``(M, N, K)`` of a GEMM op (:data:`GEMM_ARGS`) from its recorded input shapes; None for another op or
    shapes that are not a GEMM's."""
    at = GEMM_ARGS.get(name)
    if at is None or len(dims) <= max(at[0], at[1]):
        return None
    got = _bmnk(list(dims[at[0]]), list(dims[at[1]]), at[2])
    return None if got is None else got[1:]


def _gemm(a: Args, i: int, j: int, batched: bool, extra: tuple[int, ...] = ()) -> Cost | None:
    x, w = a.tensor(i), a.tensor(j)
    if x is None or w is None:
        return None
    (xs, size), (ws, _) = x, w
    got = _bmnk(xs, ws, batched)
    if got is None:
        return None
    b, m, n, k = got
    inputs = nbytes(x) + nbytes(w) + sum(nbytes(t) for t in (a.tensor(e) for e in extra) if t is not None)
    return Cost(2 * b * m * n * k, inputs + b * m * n * size, a.dtype())


def _mv(a: Args) -> Cost | None:
    x = a.tensor(0)
    if x is None or len(x[0]) != 2:
        return None
    m, n = x[0]
    return Cost(2 * m * n, _in_bytes(a) + m * x[1], a.dtype())


# -- convolution ------------------------------------------------------------------------------------------

def conv_flop_count(x_shape: list[int], w_shape: list[int], out_shape: list[int], transposed: bool) -> int:
    """FlopCounterMode's ``conv_flop_count``: 2 · batch · C_out · C_in(weight) · ∏filter · ∏spatial, where the
    spatial extent is the output's (the input's for a transposed convolution)."""
    conv_shape = (x_shape if transposed else out_shape)[2:]
    c_out, c_in, *filt = w_shape
    return 2 * x_shape[0] * c_out * c_in * math.prod(filt) * math.prod(conv_shape)


def _ints(v: Any, n: int, default: int) -> list[int]:
    if isinstance(v, int):
        return [v] * n
    if isinstance(v, list) and len(v) == n and all(isinstance(x, int) for x in v):
        return v
    if isinstance(v, list) and len(v) == 1 and isinstance(v[0], int):
        return v * n
    return [default] * n


def conv_out_shape(x: list[int], w: list[int], stride: Any, padding: Any, dilation: Any, transposed: bool,
                   output_padding: Any, groups: int) -> list[int]:
    """The output shape of ``aten::convolution`` (torch's formula)."""
    nd = len(x) - 2
    s, p, d = _ints(stride, nd, 1), _ints(padding, nd, 0), _ints(dilation, nd, 1)
    k = w[2:]
    if transposed:
        op = _ints(output_padding, nd, 0)
        sp = [(x[2 + i] - 1) * s[i] - 2 * p[i] + d[i] * (k[i] - 1) + op[i] + 1 for i in range(nd)]
        return [x[0], w[1] * groups, *sp]
    sp = [(x[2 + i] + 2 * p[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(nd)]
    return [x[0], w[0], *sp]


def _conv(a: Args) -> Cost | None:
    """``aten::convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)``."""
    x, w = a.tensor(0), a.tensor(1)
    if x is None or w is None or len(x[0]) < 3 or len(x[0]) != len(w[0]):
        return None
    transposed = bool(a.value(6))
    groups = a.value(8) if isinstance(a.value(8), int) else 1
    out = conv_out_shape(x[0], w[0], a.value(3), a.value(4), a.value(5), transposed, a.value(7), groups)
    if any(v <= 0 for v in out):
        return None
    flops = conv_flop_count(x[0], w[0], out, transposed)
    return Cost(flops, _in_bytes(a) + numel(out) * x[1], a.dtype())


def _conv_backward(a: Args) -> Cost | None:
    """``aten::convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation,
    transposed, output_padding, groups, output_mask)``: FlopCounterMode's ``conv_backward_flop``."""
    g, x, w = a.tensor(0), a.tensor(1), a.tensor(2)
    if g is None or x is None or w is None or len(x[0]) < 3:
        return None
    transposed = bool(a.value(7))
    mask = a.value(10) if isinstance(a.value(10), list) else [True, True, False]
    gs, xs, ws = g[0], x[0], w[0]

    def t(s: list[int]) -> list[int]:
        return [s[1], s[0], *s[2:]]

    flops = 0
    written = 0
    if mask[0]:
        flops += conv_flop_count(gs, ws, xs, not transposed)
        written += numel(xs)
    if len(mask) > 1 and mask[1]:
        flops += (conv_flop_count(t(gs), t(xs), t(ws), False) if transposed
                  else conv_flop_count(t(xs), t(gs), t(ws), False))
        written += numel(ws)
    if len(mask) > 2 and mask[2]:
        written += ws[1] if transposed else ws[0]
    return Cost(flops, nbytes(g) + nbytes(x) + nbytes(w) + written * x[1], a.dtype())


# -- attention --------------------------------------------------------------------------------------------

#: SDPA ops: (index of query in the inputs, index of ``is_causal``, backward)
_SDPA: dict[str, tuple[int, int, bool]] = {
    "aten::_scaled_dot_product_flash_attention": (0, 4, False),
    "aten::_scaled_dot_product_flash_attention_for_cpu": (0, 4, False),
    "aten::_scaled_dot_product_efficient_attention": (0, 6, False),
    "aten::_scaled_dot_product_cudnn_attention": (0, 6, False),
    "aten::_scaled_dot_product_flash_attention_backward": (1, 11, True),
    "aten::_scaled_dot_product_flash_attention_for_cpu_backward": (1, 7, True),
    "aten::_scaled_dot_product_efficient_attention_backward": (1, 11, True),
    "aten::_scaled_dot_product_cudnn_attention_backward": (1, 14, True),
}
#: attention FLOPs of a backward pass per forward FLOP (FlopCounterMode: five matmuls against two)
SDPA_BACKWARD_FACTOR = 2.5


def sdpa_flops(b: int, h: int, s_q: int, s_kv: int, d: int, d_v: int, *, causal: bool, backward: bool) -> float:
    """``2·B·H·S_q·S_kv·(D + D_v)`` (= 4·B·H·S_q·S_kv·D when D_v = D), × 2.5 for the backward, × 0.5 when causal
    with ``S_q == S_kv``."""
    f = 2.0 * b * h * s_q * s_kv * (d + d_v)
    if backward:
        f *= SDPA_BACKWARD_FACTOR
    if causal and s_q == s_kv:
        f *= 0.5
    return f


def _sdpa(name: str, a: Args) -> Cost | None:
    qi, ci, backward = _SDPA[name]
    q, k, v = a.tensor(qi), a.tensor(qi + 1), a.tensor(qi + 2)
    if q is None or k is None or v is None or len(q[0]) != 4 or len(k[0]) != 4 or len(v[0]) != 4:
        return None
    b, h, s_q, d = q[0]
    s_kv, d_v = k[0][2], v[0][3]
    flops = sdpa_flops(b, h, s_q, s_kv, d, d_v, causal=a.value(ci) is True, backward=backward)
    out = b * h * s_q * d_v * q[1]
    if backward:  # grad q, k, v written
        out = nbytes(q) + nbytes(k) + nbytes(v)
    return Cost(flops, _in_bytes(a) + out, a.dtype())


# -- elementwise, reductions, norms, memory -------------------------------------------------------------------

def _broadcast(shapes: list[list[int]]) -> list[int]:
    nd = max((len(s) for s in shapes), default=0)
    out = [1] * nd
    for s in shapes:
        for i, v in enumerate(s):
            j = nd - len(s) + i
            out[j] = max(out[j], v)
    return out


def _elementwise(a: Args) -> Cost | None:
    ts = a.tensors()
    if not ts:
        return None
    shape = _broadcast([s for s, _ in ts])
    n = numel(shape)
    return Cost(n, _in_bytes(a) + n * ts[0][1], a.dtype(), n * ts[0][1])


def _foreach(a: Args) -> Cost | None:
    """A ``_foreach_*`` / fused optimizer op: its first TensorList's elements; bytes: every list read and the
    first written."""
    first = a.dims[0] if a.dims else None
    if not isinstance(first, list) or not first or not all(isinstance(s, list) for s in first):
        return None
    size = _list_size(a.types[0] if a.types else "")
    n = sum(numel(s) for s in first)
    return Cost(n, _in_bytes(a) + n * size, a.dtype())


def _reduction(a: Args) -> Cost | None:
    """Reductions: one FLOP per input element; bytes: the inputs (the smaller output is not counted)."""
    ts = a.tensors()
    if not ts:
        return None
    return Cost(max(numel(s) for s, _ in ts), _in_bytes(a), a.dtype())


def _same_out(a: Args) -> Cost | None:
    """Norms and softmax: one FLOP per element of the largest input; the output has the first input's shape."""
    ts = a.tensors()
    if not ts:
        return None
    return Cost(max(numel(s) for s, _ in ts), _in_bytes(a) + nbytes(ts[0]), a.dtype(), nbytes(ts[0]))


def _memory(a: Args) -> Cost | None:
    """Copies and data movement: no FLOPs; bytes: the inputs plus an output of the first input's size."""
    ts = a.tensors()
    if not ts:
        return None
    if len(ts) > 2 and all(len(s) == len(ts[0][0]) for s, _ in ts):  # cat/stack: the output is every input
        return Cost(0, 2 * _in_bytes(a), a.dtype(), _in_bytes(a))
    return Cost(0, _in_bytes(a) + nbytes(ts[0]), a.dtype(), nbytes(ts[0]))


def _copy(a: Args) -> Cost | None:
    """``copy_(self, src, non_blocking)``: src read, self written (self is not read), ``nbytes(src) +
    nbytes(self)``; a dtype cast moves each side in its own dtype."""
    dst, src = a.tensor(0), a.tensor(1)
    if dst is None or src is None:
        return None
    return Cost(0, nbytes(src) + nbytes(dst), a.dtype(), nbytes(dst))


def _fill(a: Args) -> Cost | None:
    t = a.tensor(0)
    return None if t is None else Cost(0, nbytes(t), a.dtype())


def _embedding(a: Args) -> Cost | None:
    """``embedding(weight[V, D], indices)``: the rows read and written: ``2 · numel(indices) · D`` elements."""
    w, i = a.tensor(0), a.tensor(1)
    if w is None or i is None or len(w[0]) != 2:
        return None
    rows = numel(i[0]) * w[0][1] * w[1]
    return Cost(0, nbytes(i) + 2 * rows, a.dtype())


# -- indexed ops: they touch the indexed elements, not whole tensors --------------------------------------------

def _elem(a: Args, i: int) -> int | None:
    t = a.tensor(i)
    return None if t is None else t[1]


def _nll_loss(a: Args, *, backward: bool) -> Cost | None:
    """``nll_loss_forward(self[N, C], target[N], weight, reduction, ignore_index)`` (and the 2d forms, where the
    rows are ``target``'s elements): one logit read per target row, the targets, the weight of each row, and the
    (reduced) output. ``nll_loss_backward(grad_output, self, target, weight, reduction, ignore_index,
    total_weight)``: one grad_input element written per target row, grad_output, targets, weights and
    total_weight read (the zero-fill of grad_input is its own ``fill_`` under it). FLOPs: one per row."""
    off = 1 if backward else 0
    x, tgt = a.tensor(off), a.tensor(off + 1)
    if x is None or tgt is None:
        return None
    rows, size = numel(tgt[0]), x[1]
    weight = rows * size if a.tensor(off + 2) is not None else 0
    if backward:
        small = sum(nbytes(t) for t in (a.tensor(0), a.tensor(6)) if t is not None)
    else:
        reduced = a.value(3) != 0  # reduction 0 (none) writes one loss per row
        small = (size if reduced else rows * size) + size  # output and total_weight
    return Cost(rows, rows * size + nbytes(tgt) + weight + small, a.dtype())


def _gather(a: Args) -> Cost | None:
    """``gather(self, dim, index[, sparse_grad, out])``: the output has index's shape; bytes: the index, the
    elements read at it and the output written, ``nbytes(index) + 2 · numel(index) · elem``."""
    size, idx = _elem(a, 0), a.tensor(2)
    if size is None or idx is None:
        return None
    return Cost(0, nbytes(idx) + 2 * numel(idx[0]) * size, a.dtype(), numel(idx[0]) * size)


def _index_select(a: Args) -> Cost | None:
    """``index_select(self, dim, index)``: ``len(index)`` slices of self along ``dim`` read and written."""
    x, idx, dim = a.tensor(0), a.tensor(2), a.value(1)
    if x is None or idx is None or not isinstance(dim, int) or not x[0]:
        return None
    shape = list(x[0])
    shape[dim % len(shape)] = numel(idx[0])
    return Cost(0, nbytes(idx) + 2 * numel(shape) * x[1], a.dtype(), numel(shape) * x[1])


def _scatter(a: Args, *, accumulate: bool) -> Cost | None:
    """``scatter[_add][_](self, dim, index, src|value[, reduce])``: ``numel(index)`` elements of src read (none
    for a scalar value) and written into self (read first when they accumulate); the copy of self of the
    out-of-place forms is the ``copy_`` under them."""
    size, idx = _elem(a, 0), a.tensor(2)
    if size is None or idx is None:
        return None
    n = numel(idx[0])
    src = n * size if a.tensor(3) is not None else 0
    return Cost(n if accumulate else 0, nbytes(idx) + src + (2 if accumulate else 1) * n * size, a.dtype())


def _index_add(a: Args) -> Cost | None:
    """``index_add[_](self, dim, index, source, alpha)``: source and index read, ``numel(source)`` elements of
    self read and written."""
    size, idx, src = _elem(a, 0), a.tensor(2), a.tensor(3)
    if size is None or idx is None or src is None:
        return None
    n = numel(src[0])
    return Cost(n, nbytes(idx) + nbytes(src) + 2 * n * size, a.dtype())


def _indexed_elements(a: Args) -> tuple[int, int, int] | None:
    """For ``index(self, indices)`` and ``index_put_(self, indices, values, ...)``: ``(elements addressed,
    element bytes, bytes of the index tensors)``: the broadcast index shape times self's dimensions after the
    indexed ones (a boolean mask counts its every element: an upper bound of the selected ones)."""
    x = a.tensor(0)
    idx = a.dims[1] if len(a.dims) > 1 else None
    if x is None or not isinstance(idx, list) or not idx or not all(isinstance(s, list) for s in idx):
        return None
    if any(not all(isinstance(v, int) for v in s) for s in idx):
        return None
    n = numel(_broadcast(idx)) * numel(x[0][len(idx):])
    return n, x[1], sum(numel(s) for s in idx) * 8  # (int64 indices: kineto records no TensorList dtype)


def _index(a: Args) -> Cost | None:
    """``index(self, indices)``: the addressed elements read and written, the indices read."""
    got = _indexed_elements(a)
    if got is None:
        return None
    n, size, idx = got
    return Cost(0, idx + 2 * n * size, a.dtype(), n * size)


def _index_put(a: Args) -> Cost | None:
    """``index_put_(self, indices, values, accumulate[, unsafe])``: the indices and values read, the addressed
    elements written (read first when accumulating)."""
    got = _indexed_elements(a)
    v = a.tensor(2)
    if got is None or v is None:
        return None
    n, size, idx = got
    acc = a.value(3) is True
    return Cost(n if acc else 0, idx + min(numel(v[0]), n) * v[1] + (2 if acc else 1) * n * size, a.dtype())


def _embedding_backward(a: Args) -> Cost | None:
    """``embedding_dense_backward(grad_output[..., D], indices, num_weights, padding_idx, scale)``: grad_output
    and indices read, at most ``min(numel(indices), num_weights)`` rows of D written (the zero-fill of the
    gradient is the ``fill_`` under it)."""
    g, i, v = a.tensor(0), a.tensor(1), a.value(2)
    if g is None or i is None or not g[0] or not isinstance(v, int):
        return None
    rows = min(numel(i[0]), v)
    return Cost(numel(g[0]), nbytes(g) + nbytes(i) + rows * g[0][-1] * g[1], a.dtype())


_INDEXED: dict[str, Model] = {
    "aten::nll_loss_forward": functools.partial(_nll_loss, backward=False),
    "aten::nll_loss2d_forward": functools.partial(_nll_loss, backward=False),
    "aten::nll_loss_backward": functools.partial(_nll_loss, backward=True),
    "aten::nll_loss2d_backward": functools.partial(_nll_loss, backward=True),
    "aten::gather": _gather, "aten::index_select": _index_select,
    "aten::scatter": functools.partial(_scatter, accumulate=False),
    "aten::scatter_": functools.partial(_scatter, accumulate=False),
    "aten::scatter_add": functools.partial(_scatter, accumulate=True),
    "aten::scatter_add_": functools.partial(_scatter, accumulate=True),
    "aten::scatter_reduce": functools.partial(_scatter, accumulate=True),
    "aten::scatter_reduce_": functools.partial(_scatter, accumulate=True),
    "aten::index_add": _index_add, "aten::index_add_": _index_add,
    "aten::index": _index, "aten::_unsafe_index": _index,
    "aten::index_put_": _index_put, "aten::index_put": _index_put, "aten::_index_put_impl_": _index_put,
    "aten::_unsafe_index_put": _index_put,
    "aten::embedding_dense_backward": _embedding_backward,
}


# -- the name tables ------------------------------------------------------------------------------------------

_ELEMENTWISE = """add sub mul div neg exp exp2 log log1p log2 sqrt rsqrt pow relu gelu silu sigmoid tanh abs
maximum minimum clamp clamp_min clamp_max where erf reciprocal sin cos threshold threshold_backward gelu_backward
silu_backward sigmoid_backward tanh_backward hardtanh hardswish leaky_relu elu mish lerp addcmul addcdiv sign
square rsub bitwise_and bitwise_or logical_not eq ne lt le gt ge masked_fill dropout native_dropout
native_dropout_backward _masked_scale mul_ add_ sub_ div_ neg_ relu_ clamp_ addcmul_ addcdiv_ lerp_ sqrt_
exp_ pow_ copysign hardtanh_backward leaky_relu_backward elu_backward softplus softplus_backward
mse_loss mse_loss_backward fmod remainder floor ceil round trunc frac""".split()
_REDUCTION = """sum mean amax amin max min argmax argmin norm linalg_vector_norm var std var_mean std_mean
logsumexp cumsum prod all any nll_loss_forward nll_loss_backward nll_loss2d_forward nll_loss2d_backward
_cdist_forward topk sort""".split()
_SOFTMAX = "_softmax _log_softmax _softmax_backward_data _log_softmax_backward_data".split()
_NORM = """native_layer_norm native_layer_norm_backward native_batch_norm native_batch_norm_backward
_native_batch_norm_legit _native_batch_norm_legit_no_training _native_batch_norm_legit_functional
cudnn_batch_norm cudnn_batch_norm_backward miopen_batch_norm miopen_batch_norm_backward native_group_norm
native_group_norm_backward _fused_rms_norm _fused_rms_norm_backward _batch_norm_with_update
batch_norm_backward""".split()
_MEMORY_OPS = """copy_ clone _to_copy cat stack index index_select gather scatter scatter_add scatter_add_
index_put_ _index_put_impl_ index_add_ constant_pad_nd repeat roll flip masked_scatter_ embedding_dense_backward
_unsafe_index _unsafe_index_put slice_backward select_backward col2im im2col upsample_nearest2d
max_pool2d_with_indices max_pool2d_with_indices_backward avg_pool2d avg_pool2d_backward
_adaptive_avg_pool2d _adaptive_avg_pool2d_backward""".split()
_FILL = "fill_ zero_ zeros ones full ones_like zeros_like full_like".split()
#: composite ops: a category, their FLOPs counted in the op they call
_COMPOSITE = {
    "aten::linear": "gemm", "aten::matmul": "gemm", "aten::einsum": "gemm", "aten::conv1d": "conv",
    "aten::conv2d": "conv", "aten::conv3d": "conv", "aten::_convolution": "conv",
    "aten::cudnn_convolution": "conv", "aten::mkldnn_convolution": "conv", "aten::_slow_conv2d_forward": "conv",
    "aten::thnn_conv2d": "conv", "aten::conv_transpose2d": "conv", "aten::miopen_convolution": "conv",
    "aten::scaled_dot_product_attention": "attention", "aten::_flash_attention_forward": "attention",
    "aten::_flash_attention_backward": "attention", "aten::_efficient_attention_forward": "attention",
    "aten::_efficient_attention_backward": "attention", "aten::layer_norm": "norm", "aten::batch_norm": "norm",
    "aten::group_norm": "norm", "aten::rms_norm": "norm", "aten::_batch_norm_impl_index": "norm",
    "aten::softmax": "reduction", "aten::log_softmax": "reduction", "aten::cross_entropy_loss": "reduction",
    "aten::dropout": "elementwise", "aten::to": "memory", "aten::contiguous": "memory",
    "aten::embedding": "memory", "aten::mkldnn_linear": "gemm",
}

Model = Any  # a function (Args) -> Cost | None


def _table() -> dict[str, tuple[str, Model]]:
    t: dict[str, tuple[str, Model]] = {
        **{name: ("gemm", functools.partial(lambda a, at: _gemm(a, *at), at=at)) for name, at in GEMM_ARGS.items()},
        "aten::mv": ("gemm", _mv), "aten::addmv": ("gemm", lambda a: _mv(Args(a.dims[1:], a.types[1:], []))),
        "aten::convolution": ("conv", _conv),
        "aten::convolution_backward": ("conv", _conv_backward),
        "aten::embedding": ("memory", _embedding),
        "aten::copy_": ("memory", _copy),
    }
    for name in _SDPA:
        t[name] = ("attention", functools.partial(_sdpa, name))
    for name, model in _INDEXED.items():
        t[name] = ("reduction" if "nll_loss" in name else "memory", model)
    for n in _ELEMENTWISE:
        t.setdefault("aten::" + n, ("elementwise", _elementwise))
    for n in _REDUCTION:
        t.setdefault("aten::" + n, ("reduction", _reduction))
    for n in _SOFTMAX:
        t["aten::" + n] = ("reduction", _same_out)
    for n in _NORM:
        t["aten::" + n] = ("norm", _same_out)
    for n in _MEMORY_OPS:
        t.setdefault("aten::" + n, ("memory", _memory))
    for n in _FILL:
        t["aten::" + n] = ("memory", _fill)
    return t


MODELS: dict[str, tuple[str, Model]] = _table()
_COMM = re.compile(r"^(c10d::|nccl:|gloo:|record_param_comms|c10d_functional::|_c10d_functional::"
                   r"|torch\.distributed\.|ProcessGroup|allreduce|all_reduce|all_gather|reduce_scatter)")
_TRITON = re.compile(r"^triton_(poi|red|per|tem|for|mm|bmm|conv)_")
#: inductor's C++ kernels (CPU): ``cpp_fused_relu_0``, ``graph_0_cpp_fused_...`` with kernel profiling
_CPP = re.compile(r"^(?:graph_\d+_)?cpp_fused_")
_REDUCING = frozenset(_REDUCTION) | {"softmax", "_softmax", "_log_softmax", "logsumexp"}
#: single-word pointwise and reduction op names counted in a fused Triton kernel's name
_FUSED_WORDS = frozenset(_ELEMENTWISE) | {w for w in _REDUCTION} | {"softmax", "relu", "gelu", "silu"}


#: ops that launch no device work of their own: views, allocations, autograd's bookkeeping (category other,
#: not counted among the unknown ops)
_NO_WORK = frozenset("aten::" + n for n in """t transpose view _unsafe_view reshape as_strided expand detach
unsqueeze squeeze permute slice select alias split split_with_sizes chunk narrow unbind resolve_conj resolve_neg
lift_fresh empty empty_strided empty_like new_empty new_empty_strided numpy_T expand_as view_as flatten unflatten
set_ result_type is_nonzero item _local_scalar_dense size stride contiguous""".split()) | {"detach"}
_BOOKKEEPING = re.compile(r"^(autograd::|torch::autograd::|[A-Za-z0-9_]+Backward\d*$|Optimizer\.|"
                          r"torch\.distributed\.ddp\.|torch::distributed::|CompiledFunction|## |"
                          r"Torch-Compiled Region|TorchDynamo|AOTDispatcher|Pregraph bytecode|CompiledFxGraph)")


def no_work(name: str) -> bool:
    """A view, allocation or autograd bookkeeping range: known, no FLOPs, no device work of its own."""
    return name in _NO_WORK or _BOOKKEEPING.match(name) is not None


#: a GPU kernel's name (no CPU op launched it in the trace) -> category, first match
_KERNEL_NAMES = tuple((re.compile(p, re.IGNORECASE), c) for p, c in (
    (r"flash|fmha|attention|attn", "attention"),
    (r"conv|implicit_gemm|wgrad|dgrad|fprop", "conv"),
    (r"gemm|xmma|cutlass|cublas|matmul|gemv|\bmm_", "gemm"),
    (r"layer_?norm|batch_?norm|rms_?norm|group_?norm|bn_", "norm"),
    (r"softmax|reduce|_sum_|sum_kernel|argmax|max_kernel", "reduction"),
    (r"elementwise|pointwise|unrolled|fill|copy", "elementwise"),
))


def kernel_category(name: str) -> str:
    """The category of a GPU kernel known only by its name (no CPU op launched it in the trace)."""
    for pat, cat in _KERNEL_NAMES:
        if pat.search(name):
            return cat
    return "other"


def has_model(name: str) -> bool:
    """Does ``name`` have a FLOP/byte model (modelled aten ops and Triton kernels)?"""
    return name in MODELS or _TRITON.match(name) is not None


def category(name: str) -> str:
    """The op's category (:data:`CATEGORIES`) from its name alone."""
    hit = MODELS.get(name)
    if hit is not None:
        return hit[0]
    if name in _COMPOSITE:
        return _COMPOSITE[name]
    if name.startswith("aten::_foreach_") or name.startswith("aten::_fused_adam") or name.startswith("aten::_fused_sgd"):
        return "elementwise"
    if _COMM.match(name):
        return "communication"
    m = _TRITON.match(name)
    if m:
        return triton_category(name, m.group(1))
    if _CPP.match(name):
        words = set(name.split("_"))
        return "norm" if "norm" in words else "reduction" if words & _REDUCING else "elementwise"
    return "other"


def triton_category(name: str, kind: str) -> str:
    """A compiled Triton kernel's category: templates are GEMMs (convolutions when they fuse one), pointwise
    kernels elementwise, reductions reductions (norms when they fuse a normalisation)."""
    if kind in ("tem", "mm", "bmm", "conv"):
        return "conv" if "conv" in name else "gemm"
    if kind == "poi":
        return "elementwise"
    if "norm" in name:
        return "norm"
    return "reduction"


def fused_ops(name: str) -> list[str]:
    """The op words of a Triton kernel name that tracekit counts (``triton_poi_fused_add_mul_0`` -> add,
    mul): words of the fused part that name a pointwise or reduction op."""
    part = name.split("fused_", 1)[1] if "fused_" in name else ""
    part = re.sub(r"_\d+$", "", part)
    return [w for w in part.split("_") if w in _FUSED_WORDS]


def decode_args(dims: bytes, types: bytes, concrete: bytes) -> Args | None:
    """The recorded inputs of one call, decoded (None: not recorded or unreadable)."""
    if not dims:
        return None
    try:
        d = msgspec.json.decode(dims)
        t = msgspec.json.decode(types) if types else []
        c = msgspec.json.decode(concrete) if concrete else []
    except msgspec.DecodeError:
        return None
    if not isinstance(d, list) or not isinstance(t, list):
        return None
    return Args(d, [x if isinstance(x, str) else "" for x in t], [x if isinstance(x, str) else "" for x in c]
                if isinstance(c, list) else [])


@functools.lru_cache(maxsize=1 << 14)
def model_of(name: str, dims: bytes, types: bytes, concrete: bytes) -> tuple[Cost | None, str | None]:
    """``(cost, source)`` of one call of op ``name`` with these recorded inputs (JSON texts); source is
    ``"shapes"`` or ``"kernel_name"`` (a Triton kernel's FLOPs counted from its name's fused ops); ``(None,
    None)`` without a model or shapes. Cached: the calls of a step repeat in every step."""
    foreach = name.startswith("aten::_foreach_") or name.startswith("aten::_fused_")
    m = _TRITON.match(name)
    hit = MODELS.get(name)
    if not (foreach or m or hit):  # no model: its inputs are not decoded
        return None, None
    a = decode_args(dims, types, concrete)
    if a is None:
        return None, None
    if foreach:
        return _foreach(a), "shapes"
    if m:
        return _triton(name, m.group(1), a)
    try:
        cost = hit[1](a)
    except (TypeError, ValueError, IndexError, ZeroDivisionError):
        cost = None
    return cost, ("shapes" if cost is not None else None)


def _triton(name: str, kind: str, a: Args) -> tuple[Cost | None, str | None]:
    """A compiled kernel from its arguments: a template GEMM's ``2·M·N·K`` from its first two 2-D (3-D)
    tensors whose inner sizes agree; other kernels one FLOP per element of their largest tensor per fused op of
    their name (of at most :func:`iteration_points` elements). Bytes: every tensor argument once (inputs and
    outputs are all arguments); for a pointwise or reduction kernel each at most :func:`iteration_points`
    elements."""
    ts = a.tensors()
    if not ts:
        return None, None
    dtype = a.dtype()
    points = iteration_points(a) if kind in ("poi", "red", "per", "for") else None
    total = sum(nbytes(t) if points is None else min(numel(t[0]), points) * t[1] for t in ts)
    if kind in ("tem", "mm", "bmm"):
        g = _template_gemm([s for s, _ in ts])
        return (Cost(g, total, dtype), "shapes") if g is not None else (Cost(None, total, dtype), None)
    if kind == "conv":
        return Cost(None, total, dtype), None
    n = max(numel(s) for s, _ in ts) if points is None else min(max(numel(s) for s, _ in ts), points)
    return Cost(n * max(1, len(fused_ops(name))), total, dtype), "kernel_name"


def iteration_points(a: Args) -> int | None:
    """The iteration space of a pointwise/reduction Triton kernel: the product of its launch's trailing integer
    arguments (``xnumel``, ``r0_numel``...; inductor passes them last); None without any. Each load or store of
    the kernel touches one element of its tensor per point, so no tensor argument moves more elements than this:
    a larger one is only partly read (a gathered embedding table, the one logit per row a loss reads)."""
    points = 1
    found = False
    for i in range(len(a.dims) - 1, -1, -1):
        if a.dims[i] != [] or (i < len(a.types) and a.types[i] != "Scalar"):
            break
        v = a.value(i)
        if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
            break
        points *= v
        found = True
    return points if found else None


def _template_gemm(shapes: list[list[int]]) -> int | None:
    for i, x in enumerate(shapes):
        for w in shapes[i + 1:]:
            if len(x) == len(w) == 2 and x[1] == w[0]:
                return 2 * x[0] * x[1] * w[1]
            if len(x) == len(w) == 3 and x[0] == w[0] and x[2] == w[1]:
                return 2 * x[0] * x[1] * x[2] * w[2]
    return None
