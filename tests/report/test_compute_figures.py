"""The roofline and module-tree charts of the HTML report (tracekit.report.compute_figures), from hand-built
``ops`` and ``modules`` tables (their contract's columns): the roofs and bar positions are arithmetic."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from tests.explain_builders import manifest_for, write_run
from tracekit.report import compute_figures as cf


def _op(rank: int, op: str, module: str, us: float, flops: float | None, nbytes: float | None, dtype: str,
        bound: str | None, peak_tflops: float, bw_tbps: float, category: str = "gemm") -> dict:
    """One ``ops`` row whose derived columns follow the contract's definitions from a known peak and bandwidth."""
    t_s = us * 1e-6
    ach = flops / t_s / 1e12 if flops else None
    tbps = nbytes / t_s / 1e12 if nbytes else None
    roof_s = max(flops / (peak_tflops * 1e12), nbytes / (bw_tbps * 1e12)) if flops and nbytes else None
    return {"rank": rank, "op": op, "category": category, "module": module, "calls_per_step": 1.0,
            "us_per_step": us, "flops_per_step": flops, "bytes_per_step": nbytes, "achieved_tflops": ach,
            "achieved_tbps": tbps, "intensity_flop_per_byte": flops / nbytes if flops and nbytes else None,
            "bound": bound, "pct_of_roofline": 100 * roof_s / t_s if roof_s else None, "dtype": dtype,
            "flops_source": "shapes" if flops else None}


PEAK, FP32, BW = 989.4, 66.9, 3.35  # H100 SXM dense BF16 (tensor cores), FP32 (the rest), HBM3
#: meta["peaks"] as the ops analysis writes it (tracekit.analyses.ops.device_peaks); rank 1 has none
PEAKS = {0: {"device": "H100 SXM", "tbps": BW, "l2_mb": 50.0, "tf32": False,
             "tflops": {"fp64": 66.9, "fp32": FP32, "tf32": 494.7, "bf16": PEAK, "fp8": 1978.9}}}
OPS = pd.DataFrame([
    # a 4096^3 bf16 GEMM in 200 µs: 2·4096^3 = 137.4 GFLOP, 3·4096²·2 bytes; intensity 1365 > ridge 295: compute
    _op(0, "aten::mm", "mlp.fc1", 200.0, 2 * 4096**3, 3 * 4096**2 * 2, "bfloat16", "compute", PEAK, BW),
    _op(0, "aten::mm", "mlp.fc2", 200.0, 2 * 4096**3, 3 * 4096**2 * 2, "bfloat16", "compute", PEAK, BW),
    # an elementwise add of 64 Mi bf16 elements: 1 FLOP per 6 bytes: memory
    _op(0, "aten::add", "mlp", 150.0, 64 * 2**20, 3 * 64 * 2**20 * 2, "bfloat16", "memory", FP32, BW, "elementwise"),
    _op(0, "aten::view", "mlp", 1.0, None, None, "bfloat16", None, PEAK, BW, "memory"),  # no FLOPs: not plotted
    _op(1, "aten::mm", "mlp.fc1", 250.0, 2 * 4096**3, 3 * 4096**2 * 2, "bfloat16", "compute", PEAK, BW),
])
MODULES = pd.DataFrame([{"rank": r, "module": m, "parent": p, "depth": d, "us_per_step": us} for r, m, p, d, us in [
    (0, "", None, 0, 1000.0), (0, "a", "", 1, 600.0), (0, "a.x", "a", 2, 200.0), (0, "a.y", "a", 2, 300.0),
    (0, "b", "", 1, 300.0), (1, "", None, 0, 900.0)]])


def test_roofs_are_the_peaks_the_analysis_used() -> None:
    # the bf16 GEMM is judged against the bf16 tensor peak, the bf16 elementwise add against the FP32 one
    # (tracekit.analyses.peaks.peak_key): one roof each, with the device's bandwidth
    pts = cf.roofline_points(OPS, 0)
    assert cf.roofs(pts, PEAKS[0]) == ({"bf16": PEAK, "fp32": FP32}, BW)
    assert cf.roofs(pts, None) == ({}, None)


def test_roofs_without_a_bound_row() -> None:
    # an elementwise op whose bytes fit in L2 has no pct_of_roofline and no bound; the roofs come from the device,
    # not from reading the rows back (which found none here)
    small = pd.DataFrame([_op(0, "aten::mul", "m", 5.0, 2**20, 3 * 2**20 * 2, "bfloat16", None, FP32, BW,
                              "elementwise")])
    fig = cf.roofline_figure(small, 0, peaks=PEAKS)
    roof = [t for t in fig.data if t.mode == "lines"]
    assert len(roof) == 1 and max(roof[0].y) == pytest.approx(FP32)
    assert min(roof[0].y) == pytest.approx(min(roof[0].x) * BW)
    assert not any("without roofs" in n for n in cf.compute_notes({"ops": small}, 0, PEAKS))
    assert any("peaks are unknown" in n for n in cf.compute_notes({"ops": small}, 0, None))


def test_points_sum_an_op_over_modules() -> None:
    pts = cf.roofline_points(OPS, 0).set_index("op")
    assert list(pts.index) == ["aten::mm", "aten::add"]  # the view has no FLOPs
    mm = pts.loc["aten::mm"]
    assert mm["us_per_step"] == 400.0 and mm["flops_per_step"] == 2 * 2 * 4096**3
    assert mm["tflops"] == pytest.approx(2 * 2 * 4096**3 / 400e-6 / 1e12)  # 687 TFLOP/s
    assert mm["intensity"] == pytest.approx(2 * 4096 / 6)


def test_icicle_places_children_inside_parents() -> None:
    lay = cf.icicle_layout(MODULES[MODULES["rank"] == 0]).set_index("module")
    assert lay.loc["", "start_us"] == 0 and lay.loc["", "depth"] == 0
    assert (lay.loc["a", "start_us"], lay.loc["a.x", "start_us"], lay.loc["a.y", "start_us"]) == (0, 0, 200)
    assert lay.loc["b", "start_us"] == 600 and lay.loc["b", "depth"] == 1 and lay.loc["a.y", "depth"] == 2


def test_figures() -> None:
    fig = cf.roofline_figure(OPS, 0, peaks=PEAKS)
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    roof = [t for t in fig.data if t.mode == "lines"]
    assert len(roof) == 2 and sorted(max(r.y) for r in roof) == pytest.approx([FP32, PEAK])
    assert all(min(r.y) == pytest.approx(min(r.x) * BW) for r in roof)  # the sloped part: intensity x bandwidth
    assert not [t for t in cf.roofline_figure(OPS, 1, peaks=PEAKS).data if t.mode == "lines"]  # rank 1: no peaks
    tree = cf.module_tree_figure(MODULES, 0)
    assert list(tree.data[0].x) == [1000.0, 600.0, 200.0, 300.0, 300.0]
    assert cf.roofline_figure(None, 0) is None and cf.module_tree_figure(MODULES, 7) is None


def test_page_has_both_charts_or_says_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tracekit.report import html
    from tracekit.report.html import HTMLRenderer
    from tracekit.runner.pipeline import load_and_analyze

    traces, res = load_and_analyze([str(write_run(tmp_path / "s", "split", manifest=manifest_for("split")))])
    bare = HTMLRenderer(traces, label="s").render(res)
    assert 'id="compute"' in bare and 'id="roofline-0"' not in bare
    assert "no roofline: no op has both FLOPs and bytes" in bare  # the trace has no shapes
    assert "no module tree: the trace names no module" in bare
    # the tables section lists registered tables only; ops and modules are set by hand here
    monkeypatch.setattr(html, "run_tables", lambda res, only=None: [])
    res.set_table("ops", OPS)
    res.set_table("modules", MODULES)
    res.meta["peaks"] = PEAKS
    page = HTMLRenderer(traces, label="s").render(res)
    assert 'id="roofline-0"' in page and 'id="modules-0"' in page and "no roofline" not in page
    assert "<!-- plotly.js basic" in page  # scatter and bar only: the lean bundle still draws the page
