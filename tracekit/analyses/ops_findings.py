"""Findings read from the ``ops`` tables: GEMMs far below the device's peak, and eager kernel chains a compiler
would fuse. (A compiled module slower than its eager twin needs two runs: ``tracekit diff --by module``.)"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from tracekit.analyses import op_models
from tracekit.analyses.collectives import result_table
from tracekit.analyses.findings import Finding, FindingContext, rounded, step_means
from tracekit.traces import cols as C

#: a GEMM/convolution row runs "far below peak" under this % of its roofline ...
GEMM_SLOW_PCT = 50.0
#: ... and matters when it takes at least this % of the rank's step
GEMM_MIN_STEP_PCT = 5.0
#: fusable chains matter when the traffic fusion would save takes at least this % of the step at full bandwidth
FUSION_MIN_STEP_PCT = 1.0
#: rows named in a gemm_below_peak message
SHOWN = 3
_NUMERIC = ("us_per_step", "flops_per_step", "peak_tflops", "tf32_tflops", "pct_of_roofline", "achieved_tflops")


class GemmBelowPeak(Finding, tag="gemm_below_peak"):
    """``gemm_below_peak``: GEMM or convolution rows of table ``ops`` that take ≥ :data:`GEMM_MIN_STEP_PCT` % of
    the step and run below :data:`GEMM_SLOW_PCT` % of their roofline, or run in FP32 with TF32 off where the
    device has TF32. Cost: each row's time above its roofline at the best peak (TF32's for those FP32 rows)."""

    #: how many rows qualify (the message names the costliest :data:`SHOWN`)
    op_rows: int
    ops: list[dict[str, Any]]

    #: the rows come from the internal table ``ops_rank`` (not in the result), so their figures are facts of the
    #: evidence: the count, each row's entry of ``ops`` (every figure the message prints of it) and the cost
    FACTS: ClassVar[tuple[str, ...]] = ("op_rows", "ops", "cost_us")
    ORDER: ClassVar[int] = 85
    TIMING: ClassVar[bool] = True

    @classmethod
    def detect(cls, ctx: FindingContext) -> list[GemmBelowPeak]:
        ops = result_table(ctx.result, "ops_rank")
        if not C.nrows(ops) or "peak_tflops" not in ops:
            return []
        means = step_means(ctx.result)
        out = []
        by_rank = C.Groups(ops, ["rank"])  # one grouping: each rank's rows, ranks in order
        for rank, sel in zip(by_rank.keys["rank"].tolist(), by_rank.rows()):
            step = means.get(int(rank), float("nan"))
            rows = _slow_rows(C.take(ops, sel), step)
            if rows:
                out.append(_gemm_finding(int(rank), rows, step))
        return out


def _f(v: Any) -> float:
    """A cell as a float, NaN for a missing one."""
    return float("nan") if v is None else float(v)


def _slow_rows(t: C.Cols, step_us: float) -> list[dict[str, Any]]:
    """The rank's qualifying rows (see :class:`GemmBelowPeak`) with their cost, costliest first."""
    if not (step_us > 0):
        return []
    rows = []
    for r in C.records(t):
        r = {k: (_f(v) if k in _NUMERIC else v) for k, v in r.items()}
        if r["category"] not in ("gemm", "conv") or not (r["us_per_step"] >= GEMM_MIN_STEP_PCT / 100 * step_us):
            continue
        flops, peak, tf32 = r["flops_per_step"], r["peak_tflops"], r["tf32_tflops"]
        if not (flops == flops and peak == peak and r["us_per_step"] > 0):
            continue
        best = tf32 if tf32 == tf32 else peak
        ideal_us = flops / (best * 1e6)
        slow = r["pct_of_roofline"] == r["pct_of_roofline"] and r["pct_of_roofline"] < GEMM_SLOW_PCT
        if not (slow or tf32 == tf32) or r["us_per_step"] <= ideal_us:
            continue
        rows.append({"op": r["op"], "module": r["module"], "dtype": r["dtype"], "shape": r["top_shape"],
                     "us_per_step": rounded(r["us_per_step"]), "achieved_tflops": rounded(r["achieved_tflops"]),
                     "peak_tflops": rounded(peak), "pct_of_roofline": rounded(r["pct_of_roofline"]),
                     "tf32_tflops": rounded(tf32), "cost_us": r["us_per_step"] - ideal_us})
        bad = unaligned_dim(str(r["op"]), r["top_shape"], r["dtype"])
        if bad is not None:
            rows[-1] |= {"unaligned_dim": bad[0], "unaligned_size": bad[1], "align_to": bad[2]}
    return sorted(rows, key=lambda x: -x["cost_us"])


#: the multiple of elements a GEMM dimension should be for aligned tensor-core tiles (16 bytes: NVIDIA's
#: matrix-multiplication performance guide), per input dtype
ALIGN_ELEMENTS = {"bfloat16": 8, "float16": 8, "float32": 4, "float8_e4m3fn": 16, "float8_e5m2": 16}


def unaligned_dim(op: str, shape: str | None, dtype: str | None) -> tuple[str, int, int] | None:
    """``(which of M/N/K, its size, the multiple it misses)`` for the first GEMM dimension (N, K, then M) that is no
    multiple of :data:`ALIGN_ELEMENTS` for ``dtype``; None for an aligned GEMM, another op or unknown shapes (the
    GEMM's dimensions: :func:`tracekit.analyses.op_models.gemm_dims`)."""
    align = ALIGN_ELEMENTS.get(dtype or "")
    if align is None or not shape:
        return None
    try:
        mnk = op_models.gemm_dims(op, json.loads(shape))
    except (ValueError, TypeError):
        return None
    if mnk is None:
        return None
    m, n, k = mnk
    for which, size in (("N", n), ("K", k), ("M", m)):
        if size % align:
            return which, size, align
    return None


#: the torch switch of each category's TF32: cuDNN's for convolutions, cuBLAS's for matmuls
_TF32_FLAG = {"conv": "torch.backends.cudnn.allow_tf32", "gemm": "torch.backends.cuda.matmul.allow_tf32"}


def _gemm_finding(rank: int, rows: list[dict[str, Any]], step_us: float) -> GemmBelowPeak:
    parts = []
    for x in rows[:SHOWN]:
        where = f" in {x['module'] or '(model)'}" if x["module"] is not None else ""
        shape = f" {x['shape']}" if x["shape"] else ""
        if x["tf32_tflops"] is not None:
            x["tf32_speedup"] = round(x["tf32_tflops"] / x["peak_tflops"], 1)
        tf32 = (f"; FP32 with TF32 off: TF32's {x['tf32_tflops']:g} TFLOP/s peak would allow it "
                f"{x['tf32_speedup']:.1f}× the FP32 {x['peak_tflops']:g} "
                f"({_TF32_FLAG['conv' if op_models.category(x['op']) == 'conv' else 'gemm']} = True)"
                if x["tf32_tflops"] is not None else "")
        pct = f", {x['pct_of_roofline']:.0f}% of its roofline" if x["pct_of_roofline"] is not None else ""
        align = (f"; its {x['unaligned_dim']} = {x['unaligned_size']} is no multiple of {x['align_to']}, which "
                 f"tensor-core GEMMs in {x['dtype']} want: padding it (torch.compile's inductor does, "
                 "config.shape_padding) lets cuBLAS pick its aligned kernels" if "unaligned_dim" in x else "")
        parts.append(f"{x['op']}{shape} ({x['dtype']}){where}: {x['us_per_step']:.0f} µs per step at "
                     f"{x['achieved_tflops']:.1f} TFLOP/s{pct}{tf32}{align}")
    cost = sum(x["cost_us"] for x in rows)
    more = f"; {len(rows) - SHOWN} more in table ops" if len(rows) > SHOWN else ""
    msg = (f"{len(rows)} large GEMM/convolution op(s) run far below the device's peak: " + "; ".join(parts) + more
           + f". Their time above the roofline is {cost:.0f} µs per step")
    for x in rows:
        x["cost_us"] = rounded(x["cost_us"])
    return GemmBelowPeak(rank=rank, message=msg, cost_us=cost, step_us=step_us, op_rows=len(rows), ops=rows)


class UnfusedChain(Finding, tag="unfused_chain"):
    """``unfused_chain``: chains of ≥ 3 consecutive eager memory-bound kernels (table ``fusion_chains``,
    :mod:`tracekit.analyses.fusion`) whose intermediate tensors take ≥ :data:`FUSION_MIN_STEP_PCT` % of the step
    to write and read back at the device's bandwidth. Cost: that time (what fusing them saves at least)."""

    chains_per_step: float | None
    kernels_per_step: float | None
    chain_us_per_step: float | None
    saved_bytes_per_step: float | None
    longest: str | None

    #: the figures come from the internal table ``fusion_chains`` (not in the result): facts of the evidence
    FACTS: ClassVar[tuple[str, ...]] = ("chains_per_step", "kernels_per_step", "chain_us_per_step",
                                        "saved_bytes_per_step", "cost_us")
    ORDER: ClassVar[int] = 86
    TIMING: ClassVar[bool] = True

    @classmethod
    def detect(cls, ctx: FindingContext) -> list[UnfusedChain]:
        t = result_table(ctx.result, "fusion_chains")
        if not C.nrows(t):
            return []
        means = step_means(ctx.result)
        out = []
        for r in C.records(t):
            step, saved_us = means.get(int(r["rank"]), float("nan")), _f(r["saved_us_per_step"])
            if not (saved_us == saved_us and step > 0 and saved_us >= FUSION_MIN_STEP_PCT / 100 * step):
                continue
            msg = (f"{r['chains_per_step']:.0f} chain(s) of eager elementwise/normalisation/copy kernels per step "
                   f"({r['kernels_per_step']:.0f} kernels, {r['us_per_step']:.0f} µs) write intermediate tensors "
                   f"that the next kernel reads back: fusing them (torch.compile) would save at least "
                   f"{r['saved_bytes_per_step'] / 1e6:.1f} MB of memory traffic per step ({saved_us:.0f} µs at full "
                   f"bandwidth); the longest: {r['longest']}")
            out.append(UnfusedChain(rank=int(r["rank"]), message=msg, cost_us=saved_us, step_us=step,
                                    chains_per_step=rounded(r["chains_per_step"]),
                                    kernels_per_step=rounded(r["kernels_per_step"]),
                                    chain_us_per_step=rounded(r["us_per_step"]),
                                    saved_bytes_per_step=rounded(r["saved_bytes_per_step"], 0), longest=r["longest"]))
        return out


FINDINGS = [GemmBelowPeak, UnfusedChain]
