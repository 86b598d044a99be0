"""Tables ops and modules on hand-built traces: every FLOP, byte and roofline figure is arithmetic here."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import tracekit
from tests.tracebuilder import TraceBuilder
from tracekit.analyses import op_models, peaks

BF16, F32 = "c10::BFloat16", "float"
H200 = peaks.identify("NVIDIA H200")


def _op_kernel(tb: TraceBuilder, name: str, at: float, dims: list, types: list, kernel_us: float,
               concrete: list | None = None, kernel: str = "k", **kw) -> int:
    """A shaped op at ``at`` (10 µs long) launching one kernel of ``kernel_us`` right after it."""
    ext = tb.next_external_id()
    tb.shaped_op(name, at, 10, dims, types, concrete, external_id=ext, **kw)
    tb.kernel(kernel, at + 20, kernel_us, launch_at_us=at + 1, external_id=ext)
    return ext


def _analyze(tmp_path: Path, tb: TraceBuilder, **kw) -> tracekit.AnalysisResult:
    tb.write(tmp_path / "rank0.trace.json")
    return tracekit.analyze(tmp_path, **kw)


def _row(res, op: str) -> dict:
    ops = res.tables["ops"]
    rows = ops[ops["op"] == op]
    assert len(rows) == 1, ops[["op", "module", "dtype"]]
    return rows.iloc[0].to_dict()


def _gpu_builder() -> TraceBuilder:
    tb = TraceBuilder(rank=0, world_size=1)
    tb.step(1, 0, 5000)
    return tb


def test_gemm_flops_bytes_and_roofline(tmp_path: Path) -> None:
    m = n = k = 4096
    tb = _gpu_builder()
    _op_kernel(tb, "aten::mm", 10, [[m, k], [k, n]], [BF16, BF16], 200.0)
    res = _analyze(tmp_path, tb)
    r = _row(res, "aten::mm")
    flops, nbytes = 2 * m * n * k, (m * k + k * n + m * n) * 2
    assert r["category"] == "gemm" and r["dtype"] == "bfloat16" and r["flops_source"] == "shapes"
    assert r["calls_per_step"] == 1 and r["us_per_step"] == pytest.approx(200.0)
    assert r["flops_per_step"] == flops and r["bytes_per_step"] == nbytes
    assert r["achieved_tflops"] == pytest.approx(flops / 200e-6 / 1e12)
    assert r["achieved_tbps"] == pytest.approx(nbytes / 200e-6 / 1e12)
    assert r["intensity_flop_per_byte"] == pytest.approx(flops / nbytes)
    assert r["bound"] == "compute"  # flops / 989.4 TFLOP/s > bytes / 4.8 TB/s
    assert r["pct_of_roofline"] == pytest.approx(100 * flops / 989.4e12 / 200e-6)
    assert res.meta["peaks"][0] == {"device": "H200", "tbps": 4.8, "l2_mb": 50.0, "tf32": False, "tf32_conv": True,
                                    "tflops": dict(H200.tflops)}


def test_addmm_with_bias_and_linear_composite(tmp_path: Path) -> None:
    tb = _gpu_builder()
    ext = tb.next_external_id()
    tb.shaped_op("aten::linear", 10, 30, [[64, 512], [1024, 512], [1024]], [F32] * 3)
    tb.shaped_op("aten::addmm", 12, 20, [[1024], [64, 512], [512, 1024], [], []], [F32, F32, F32, "Scalar", "Scalar"],
                 external_id=ext)
    tb.kernel("sgemm", 50, 10.0, launch_at_us=15, external_id=ext)
    res = _analyze(tmp_path, tb)
    r = _row(res, "aten::addmm")  # the innermost op with a model owns the kernel; linear has none
    assert r["flops_per_step"] == 2 * 64 * 1024 * 512
    assert r["bytes_per_step"] == (1024 + 64 * 512 + 512 * 1024 + 64 * 1024) * 4
    assert "aten::linear" not in set(res.tables["ops"]["op"])


def test_conv_forward_and_backward(tmp_path: Path) -> None:
    tb = _gpu_builder()
    x, w, out = [8, 64, 56, 56], [128, 64, 3, 3], [8, 128, 56, 56]
    conc = ["", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1"]
    _op_kernel(tb, "aten::convolution", 10, [x, w, [128], [], [], [], [], [], []], [F32, F32, F32] + ["ScalarList"] * 3
               + ["Scalar", "ScalarList", "Scalar"], 100.0, conc)
    bconc = ["", "", "", "[128]", "[1, 1]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1", "[True, True, True]"]
    _op_kernel(tb, "aten::convolution_backward", 300, [out, x, w] + [[]] * 8, [F32] * 3 + ["ScalarList"] * 8, 250.0,
               bconc)
    res = _analyze(tmp_path, tb)
    fwd = 2 * 8 * 128 * 64 * 9 * 56 * 56
    r = _row(res, "aten::convolution")
    assert r["category"] == "conv" and r["flops_per_step"] == fwd
    assert r["bytes_per_step"] == (math.prod(x) + math.prod(w) + 128 + math.prod(out)) * 4
    b = _row(res, "aten::convolution_backward")
    assert b["flops_per_step"] == 2 * fwd  # grad input + grad weight, each the forward's count (groups 1)
    assert b["bytes_per_step"] == (math.prod(out) + 2 * math.prod(x) + 2 * math.prod(w) + 128) * 4


def test_causal_sdpa_is_halved_and_backward_is_2_5x(tmp_path: Path) -> None:
    tb = _gpu_builder()
    q = [2, 8, 1024, 64]
    fwd_conc = ["", "", "", "0.", "True", "False", ""]
    _op_kernel(tb, "aten::_scaled_dot_product_flash_attention", 10, [q, q, q, [], [], [], []], [BF16] * 3 + ["Scalar"]
               * 3 + [""], 80.0, fwd_conc)
    bwd_conc = [""] * 11 + ["True", "", "", ""]
    _op_kernel(tb, "aten::_scaled_dot_product_flash_attention_backward", 300, [q, q, q, q, q, [2, 8, 1024]] + [[]] * 9,
               [BF16] * 5 + ["float"] + ["Scalar"] * 9, 200.0, bwd_conc)
    res = _analyze(tmp_path, tb)
    full = 4 * 2 * 8 * 1024 * 1024 * 64
    assert _row(res, "aten::_scaled_dot_product_flash_attention")["flops_per_step"] == full / 2
    assert _row(res, "aten::_scaled_dot_product_flash_attention_backward")["flops_per_step"] == 2.5 * full / 2
    assert _row(res, "aten::_scaled_dot_product_flash_attention")["category"] == "attention"


def test_elementwise_memory_bound_and_l2_rule(tmp_path: Path) -> None:
    tb = _gpu_builder()
    big, small = [4096, 4096], [2048, 2048]
    _op_kernel(tb, "aten::add", 10, [big, big, []], [F32, F32, "Scalar"], 100.0)
    _op_kernel(tb, "aten::mul", 300, [small, small], [F32, F32], 5.0)
    res = _analyze(tmp_path, tb)
    r = _row(res, "aten::add")
    n = 4096 * 4096
    assert r["category"] == "elementwise" and r["flops_per_step"] == n and r["bytes_per_step"] == 3 * n * 4
    assert r["bound"] == "memory"
    assert r["pct_of_roofline"] == pytest.approx(100 * 3 * n * 4 / 4.8e12 / 100e-6)
    s = _row(res, "aten::mul")  # 48 MB a call: under twice the 50 MB L2, no HBM roofline
    assert s["bound"] == "memory" and math.isnan(s["pct_of_roofline"])
    assert any("last-level cache" in x for x in res.meta["notes"])


def test_per_step_divides_by_steps_and_counts_calls(tmp_path: Path) -> None:
    tb = TraceBuilder(rank=0, world_size=1)
    for s in range(3):
        t0 = s * 1000
        tb.step(s + 1, t0, t0 + 1000)
        for j in range(2):
            _op_kernel(tb, "aten::mm", t0 + 10 + 300 * j, [[128, 256], [256, 512]], [F32, F32], 4.0)
    r = _row(_analyze(tmp_path, tb), "aten::mm")
    assert r["calls_per_step"] == 2 and r["us_per_step"] == pytest.approx(8.0)
    assert r["flops_per_step"] == 2 * 2 * 128 * 256 * 512


def _module_trace(tb: TraceBuilder) -> None:
    """(model) > blocks.0 > blocks.0.mlp with one op each level, a backward op paired by sequence number, an op
    outside every module and an optimizer op."""
    tb.step(1, 0, 5000)
    tb.annotation("tracekit.module:", 5, 500)
    tb.annotation("tracekit.module:module.blocks.0", 10, 400)  # a DDP prefix, stripped
    _op_kernel(tb, "aten::mm", 20, [[64, 64], [64, 64]], [F32, F32], 10.0, seq=7)
    tb.annotation("tracekit.module:blocks.0.mlp", 100, 200)
    _op_kernel(tb, "aten::relu", 110, [[64, 64]], [F32], 3.0, seq=8)
    _op_kernel(tb, "aten::add", 420, [[64, 64], [64, 64]], [F32, F32], 2.0)  # in the root only
    _op_kernel(tb, "aten::sum", 600, [[64, 64]], [F32], 1.0)  # outside modules
    node = tb.next_external_id()
    tb.cpu_op("autograd::engine::evaluate_function: ReluBackward0", 700, 50, external_id=node,
              **{"Sequence number": 8, "Fwd thread id": 1})
    _op_kernel(tb, "aten::threshold_backward", 705, [[64, 64], [64, 64], []], [F32, F32, "Scalar"], 4.0)
    tb.annotation("Optimizer.step#SGD.step", 900, 100)
    _op_kernel(tb, "aten::add_", 905, [[64, 64], [64, 64], []], [F32, F32, "Scalar"], 5.0)


def test_modules_of_ops_and_tree_rollup(tmp_path: Path) -> None:
    tb = TraceBuilder(rank=0, world_size=1)
    _module_trace(tb)
    res = _analyze(tmp_path, tb)
    ops = res.tables["ops"].set_index("op")
    assert ops.loc["aten::mm", "module"] == "blocks.0"
    assert ops.loc["aten::relu", "module"] == "blocks.0.mlp"
    assert ops.loc["aten::threshold_backward", "module"] == "blocks.0.mlp"  # its forward op's (sequence number 8)
    assert ops.loc["aten::add", "module"] == ""
    assert pd.isna(ops.loc["aten::sum", "module"])
    assert ops.loc["aten::add_", "module"] == "(optimizer)"
    mods = res.tables["modules"].set_index("module")
    assert mods.loc["blocks.0.mlp", "us_per_step"] == pytest.approx(3.0 + 4.0)
    assert mods.loc["blocks.0", "us_per_step"] == pytest.approx(10.0 + 7.0)
    assert mods.loc["blocks.0", "self_us_per_step"] == pytest.approx(10.0)
    assert mods.loc["", "us_per_step"] == pytest.approx(17.0 + 2.0)
    assert mods.loc["(outside modules)", "us_per_step"] == pytest.approx(1.0)
    assert mods.loc["(optimizer)", "us_per_step"] == pytest.approx(5.0)
    assert mods.loc["blocks.0.mlp", "parent"] == "blocks.0" and mods.loc["blocks", "parent"] == ""
    assert mods.loc["blocks.0.mlp", "depth"] == 3 and mods.loc["", "depth"] == 0
    assert mods.loc["blocks.0.mlp", "flops_per_step"] == 2 * 64 * 64
    assert mods["self_us_per_step"].sum() == pytest.approx(res.tables["ops"]["us_per_step"].sum())
    assert mods.loc["blocks.0", "kernels_per_step"] == 3
    # the model's 19 µs of the rank's 19 + 1 (outside modules) + 5 (optimizer) µs of op time per step
    assert mods.loc["", "device_share_pct"] == pytest.approx(100 * 19.0 / 25.0)
    assert mods.loc[mods["depth"] == 0, "device_share_pct"].sum() == pytest.approx(100.0)


def test_trace_without_shapes_has_times_and_a_note(tmp_path: Path) -> None:
    tb = _gpu_builder()
    ext = tb.next_external_id()
    tb.cpu_op("aten::mm", 10, 10, external_id=ext)
    tb.kernel("sgemm", 30, 7.0, launch_at_us=12, external_id=ext)
    res = _analyze(tmp_path, tb)
    r = _row(res, "aten::mm")
    assert r["us_per_step"] == pytest.approx(7.0) and r["category"] == "gemm"
    assert math.isnan(r["flops_per_step"]) and pd.isna(r["flops_source"]) and pd.isna(r["bound"])
    assert sum("--record-shapes" in x for x in res.meta["notes"]) == 1


def test_unknown_gpu_and_peaks_file(tmp_path: Path) -> None:
    tb = _gpu_builder()
    tb.extra_meta["deviceProperties"] = [{"id": 0, "name": "Mystery Accelerator 9000"}]
    _op_kernel(tb, "aten::mm", 10, [[1024, 1024], [1024, 1024]], [BF16, BF16], 10.0)
    (tmp_path / "run").mkdir()
    tb.write(tmp_path / "run" / "rank0.trace.json")
    res = tracekit.analyze(tmp_path / "run")
    r = _row(res, "aten::mm")
    assert r["achieved_tflops"] == pytest.approx(2 * 1024**3 / 10e-6 / 1e12) and math.isnan(r["pct_of_roofline"])
    assert any("Mystery Accelerator 9000" in x and "--peaks" in x for x in res.meta["notes"])
    assert "peaks" not in res.meta  # no device: no peaks to report (the HTML roofline draws no roof)
    f = tmp_path / "peaks.json"
    f.write_text(json.dumps({"devices": [{"match": "Mystery", "tbps": 10.0, "tflops": {"bf16": 500.0}}]}))
    res = tracekit.analyze(tmp_path / "run", peaks=str(f))
    r = _row(res, "aten::mm")
    assert r["pct_of_roofline"] == pytest.approx(100 * 2 * 1024**3 / 500e12 / 10e-6) and r["bound"] == "compute"
    # the peaks that judged the rows, for the report's roofline (meta.peaks)
    assert res.meta["peaks"] == {0: {"device": "Mystery", "tbps": 10.0, "l2_mb": None, "tf32": False, "tf32_conv": True,
                                     "tflops": {"bf16": 500.0}}}


def test_bad_peaks_file_is_one_line_exit_2(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from tracekit.cli import main

    tb = _gpu_builder()
    tb.write(tmp_path / "rank0.trace.json")
    bad = tmp_path / "p.json"
    bad.write_text('{"devices": [{"match": "H200", "tbps": 4.8, "tflops": {"bf17": 1}}]}')
    r = CliRunner().invoke(main, ["analyze", str(tmp_path / "rank0.trace.json"), "--peaks", str(bad)])
    assert r.exit_code == 2 and str(bad) in r.output and "Traceback" not in r.output


def test_compiled_kernels_by_name_and_by_provenance_file(tmp_path: Path) -> None:
    tb = _gpu_builder()
    n = 1 << 20
    _op_kernel(tb, "triton_poi_fused_add_mul_0", 10, [[n], [n], [n], []], [BF16, BF16, BF16, "Scalar"], 20.0,
               kernel="triton_poi_fused_add_mul_0")
    _op_kernel(tb, "triton_red_fused_native_layer_norm_1", 100, [[64, 1024], [64, 1024], []], [BF16, BF16, "Scalar"],
               5.0, kernel="triton_red_fused_native_layer_norm_1")
    _op_kernel(tb, "triton_tem_fused_mm_2", 200, [[256, 512], [512, 128], [256, 128]], [BF16] * 3, 9.0,
               kernel="triton_tem_fused_mm_2")
    res = _analyze(tmp_path, tb)
    p = _row(res, "triton_poi_fused_add_mul_0")
    assert p["category"] == "elementwise" and p["flops_source"] == "kernel_name"
    assert p["flops_per_step"] == 2 * n and p["bytes_per_step"] == 3 * n * 2 and pd.isna(p["module"])
    assert _row(res, "triton_red_fused_native_layer_norm_1")["category"] == "norm"
    t = _row(res, "triton_tem_fused_mm_2")
    assert t["category"] == "gemm" and t["flops_per_step"] == 2 * 256 * 512 * 128 and t["flops_source"] == "shapes"
    assert any("compiled_kernels.json" in x for x in res.meta["notes"])
    _op_kernel(tb, "aten::mm", 300, [[64, 64], [64, 64]], [BF16, BF16], 3.0)  # an extern call of compiled code
    tb.write(tmp_path / "rank0.trace.json")
    (tmp_path / "compiled_kernels.json").write_text(json.dumps({"version": 1, "kernels": {
        "triton_poi_fused_add_mul_0": {"modules": ["blocks.3.mlp.0", "blocks.3.mlp.2"], "aten_ops": ["aten::add"],
                                       "graph": "forward", "flops": 12345, "bytes": None}},
        "extern": {"aten::mm": {"modules": ["blocks.1.attn", "blocks.2.attn"]}}}))
    from tracekit.analyses.ops import _compiled_kernels

    _compiled_kernels.cache_clear()
    res = tracekit.analyze(tmp_path)
    p = _row(res, "triton_poi_fused_add_mul_0")
    assert p["module"] == "blocks.3.mlp" and p["flops_per_step"] == 12345 and p["flops_source"] == "inductor"
    assert _row(res, "aten::mm")["module"] == "blocks"  # the common prefix of the modules calling it


def test_cpu_run_self_time_not_double_counted(tmp_path: Path) -> None:
    tb = TraceBuilder(rank=0, world_size=1, backend="gloo")
    tb.step(1, 0, 1000)
    tb.shaped_op("aten::linear", 10, 100, [[8, 16], [32, 16], [32]], [F32] * 3)
    tb.shaped_op("aten::addmm", 20, 60, [[32], [8, 16], [16, 32], [], []], [F32, F32, F32, "Scalar", "Scalar"])
    tb.shaped_op("aten::copy_", 30, 10, [[8, 32], [8, 32], []], [F32, F32, "Scalar"])
    tb.shaped_op("aten::relu", 200, 5, [[8, 32]], [F32])
    res = _analyze(tmp_path, tb)
    ops = res.tables["ops"].set_index("op")
    assert ops.loc["aten::linear", "us_per_step"] == pytest.approx(40.0)
    assert ops.loc["aten::addmm", "us_per_step"] == pytest.approx(50.0)
    assert ops.loc["aten::copy_", "us_per_step"] == pytest.approx(10.0)
    assert ops["us_per_step"].sum() == pytest.approx(105.0)  # the ops' durations, nothing counted twice
    assert ops.loc["aten::addmm", "flops_per_step"] == 2 * 8 * 16 * 32
    assert ops["pct_of_roofline"].isna().all()


def test_sdpa_flops_match_flop_counter_convention() -> None:
    # FlopCounterMode: forward 2 bmm (2·B·H·Sq·Skv·D each), backward 5 bmm; no causal halving
    assert op_models.sdpa_flops(1, 2, 3, 5, 7, 7, causal=False, backward=False) == 4 * 2 * 3 * 5 * 7
    assert op_models.sdpa_flops(1, 2, 3, 5, 7, 7, causal=False, backward=True) == 10 * 2 * 3 * 5 * 7
    assert op_models.sdpa_flops(1, 2, 5, 5, 7, 7, causal=True, backward=False) == 2 * 2 * 5 * 5 * 7


def test_peaks_are_dense_figures() -> None:
    h100 = peaks.identify("NVIDIA H100 80GB HBM3")
    assert h100 is not None and h100.name == "H100 SXM" and h100.peak("bf16") == 989.4 and h100.peak("tf32") == 494.7
    assert peaks.identify("NVIDIA H100 PCIe").name == "H100 PCIe"
    assert peaks.identify("NVIDIA A100-SXM4-80GB").tbps == 2.039
    assert H200 is not None and H200.tbps == 4.8
    assert peaks.identify("Some GPU") is None
    assert peaks.peak_key("gemm", "float32", tf32=False) == "fp32"
    assert peaks.peak_key("gemm", "float32", tf32=True) == "tf32"
    assert peaks.peak_key("elementwise", "bfloat16", tf32=False) == "fp32"
    assert np.isfinite([d.tbps for d in peaks.DEVICES]).all()


def _codes(res) -> dict:
    f = res.tables["findings"]
    return {c: e for c, e in zip(f["code"], f["evidence"])}


def test_gemm_below_peak_quotes_tf32_for_fp32(tmp_path: Path) -> None:
    tb = TraceBuilder(rank=0, world_size=1)
    tb.step(1, 0, 4000)
    m = 4096
    _op_kernel(tb, "aten::mm", 10, [[m, m], [m, m]], [F32, F32], 3000.0)  # 137 GFLOP: 45.8 TFLOP/s, FP32 peak 66.9
    res = _analyze(tmp_path, tb)
    ev = _codes(res)["gemm_below_peak"]
    (row,) = ev["ops"]
    flops = 2 * m**3
    assert row["pct_of_roofline"] == pytest.approx(100 * flops / 66.9e12 / 3000e-6, abs=0.05)
    assert row["tf32_tflops"] == 494.7 and row["shape"] == f"[[{m}, {m}], [{m}, {m}]]"
    assert ev["cost_us"] == pytest.approx(3000.0 - flops / 494.7e6, abs=0.1)  # the time above TF32's roofline
    assert any("TF32" in x for x in res.meta["notes"])


def test_unfused_chain_counts_intermediate_bytes(tmp_path: Path) -> None:
    tb = TraceBuilder(rank=0, world_size=1)
    tb.step(1, 0, 3000)
    x = [8192, 8192]  # 256 MB in float32
    t = 10.0
    for name, dims in (("aten::mul", [x, x]), ("aten::add", [x, x]), ("aten::relu", [x]), ("aten::mm", [x, x])):
        ext = tb.next_external_id()
        tb.shaped_op(name, t, 5, dims, [F32] * len(dims), external_id=ext)
        tb.kernel("k_" + name, 500 + t, 100.0, launch_at_us=t + 1, external_id=ext)
        t += 110.0
    ev = _codes(_analyze(tmp_path, tb))["unfused_chain"]
    saved = 2 * 2 * 8192 * 8192 * 4  # mul's and add's outputs, each written and read back; relu's is the last
    assert ev["saved_bytes_per_step"] == saved and ev["kernels_per_step"] == 3
    assert ev["cost_us"] == pytest.approx(saved / 4.8e12 * 1e6, abs=0.1)
    assert ev["longest"] == "mul → add → relu"


def test_gemm_finding_without_a_roofline_share_still_says_what_tf32_would_give() -> None:
    """A small FP32 GEMM judged only on TF32 (its % of roofline null: cache-served) is named without that share."""
    from tracekit.analyses import ops_findings

    row = {"op": "aten::mm", "module": "fc", "dtype": "float32", "shape": "[8, 4096] x [4096, 4096]",
           "us_per_step": 400.0, "achieved_tflops": 0.7, "peak_tflops": 66.9, "pct_of_roofline": None,
           "tf32_tflops": 494.7, "cost_us": 399.0}
    f = ops_findings._gemm_finding(0, [row], 5000.0)
    assert "% of its roofline" not in f.message and "TF32's 494.7 TFLOP/s" in f.message
    assert "400 µs per step at 0.7 TFLOP/s;" in f.message


def test_a_kernel_reused_across_layers_gets_each_launchs_module(tmp_path: Path) -> None:
    """Two steps; in each, the compiled kernel ``triton_poi_fused_gelu_0`` runs three times (inductor reuses it
    for the three layers it serves: 4, 5 and 6 µs) and the library call ``aten::mm`` twice (2 and 3 µs).
    compiled_kernels.json lists one entry per launch, in launch order: the k-th launch of a step is the k-th
    entry's module. A kernel whose launches per step are no multiple of its entries (``triton_poi_fused_add_1``: 2
    launches, 3 entries) keeps the common module and is counted in a note."""
    tb = TraceBuilder(rank=0, world_size=1)
    for step, t0 in ((1, 0), (2, 1000)):
        tb.step(step, t0, t0 + 900)
        for k, us in enumerate((4.0, 5.0, 6.0)):
            _op_kernel(tb, "triton_poi_fused_gelu_0", t0 + 100 * k, [[8]], [BF16], us,
                       kernel="triton_poi_fused_gelu_0")
        for k, us in enumerate((2.0, 3.0)):
            _op_kernel(tb, "aten::mm", t0 + 400 + 100 * k, [[8, 8], [8, 8]], [BF16, BF16], us)
            _op_kernel(tb, "triton_poi_fused_add_1", t0 + 650 + 100 * k, [[8]], [BF16], 1.0,
                       kernel="triton_poi_fused_add_1")
    tb.write(tmp_path / "rank0.trace.json")
    layers = [["h.0.mlp.act"], ["h.1.mlp.act", "h.1.mlp"], ["h.2.mlp.act"]]
    (tmp_path / "compiled_kernels.json").write_text(json.dumps({"version": 1, "kernels": {
        "triton_poi_fused_gelu_0": {"modules": ["h.0.mlp.act", "h.1.mlp.act", "h.1.mlp", "h.2.mlp.act"],
                                    "calls": layers},
        "triton_poi_fused_add_1": {"modules": ["h.0", "h.1", "h.2"], "calls": [["h.0"], ["h.1"], ["h.2"]]}},
        "extern": {"aten::mm": {"modules": ["h.0.attn.q", "h.1.attn.q"],
                                "calls": [["h.0.attn.q"], ["h.1.attn.q"]]}}}))
    res = tracekit.analyze(tmp_path)
    ops = res.tables["ops"]
    gelu = ops[ops["op"] == "triton_poi_fused_gelu_0"].set_index("module")["us_per_step"].to_dict()
    assert gelu == {"h.0.mlp.act": 4.0, "h.1.mlp": 5.0, "h.2.mlp.act": 6.0}  # per step: two steps, / 2
    mm = ops[ops["op"] == "aten::mm"].set_index("module")["us_per_step"].to_dict()
    assert mm == {"h.0.attn.q": 2.0, "h.1.attn.q": 3.0}
    add = ops[ops["op"] == "triton_poi_fused_add_1"]
    assert list(add["module"]) == ["h"] and list(add["calls_per_step"]) == [2.0]
    assert res.tables["modules"].set_index("module").loc["h.1.mlp", "us_per_step"] == 5.0
    assert any(n.startswith("ops: 1 compiled kernel name(s) ran a number of times per step") for n in res.meta["notes"])
