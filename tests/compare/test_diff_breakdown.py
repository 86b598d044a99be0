"""``tracekit diff --by module|op`` (tracekit.compare.breakdown) on hand-built modules/ops tables: the savings
are arithmetic in the asserts."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from tracekit.compare.breakdown import (MODULE_COLUMNS, OP_COLUMNS, SLOWER_MIN_PCT, compare_modules, compare_ops,
                                        slower_findings)
from tracekit.compare.render import diff_frame, render_diff


def _modules(rows: list[tuple[int, str, float, float, float]]) -> pd.DataFrame:
    """rows: (rank, module, us_per_step, kernels_per_step, bytes_per_step)"""
    return pd.DataFrame([{"rank": r, "module": m, "parent": None, "depth": m.count(".") + (m != ""),
                          "us_per_step": us, "self_us_per_step": None, "kernels_per_step": k,
                          "flops_per_step": None, "bytes_per_step": b, "device_share_pct": None,
                          "achieved_tflops": None, "achieved_tbps": None} for r, m, us, k, b in rows])


EAGER = _modules([(0, "", 1000.0, 40, 8e6), (0, "mlp", 600.0, 20, 5e6), (0, "mlp.fc1", 300.0, 4, 2e6),
                  (0, "mlp.act", 100.0, 2, 1e6), (0, "attn", 400.0, 20, 3e6), (0, "attn.drop", 50.0, 1, 1e5),
                  (1, "", 1200.0, 40, 8e6), (1, "mlp", 800.0, 20, 5e6), (1, "mlp.fc1", 500.0, 4, 2e6),
                  (1, "mlp.act", 100.0, 2, 1e6), (1, "attn", 400.0, 20, 3e6), (1, "attn.drop", 50.0, 1, 1e5)])
COMPILED = _modules([(0, "", 700.0, 12, 4e6), (0, "mlp", 300.0, 5, 2e6), (0, "mlp.fc1", 330.0, 3, 2e6),
                     (0, "attn", 380.0, 7, 2e6), (0, "attn.proj", 10.0, 1, 1e4),
                     (1, "", 900.0, 12, 4e6), (1, "mlp", 500.0, 5, 2e6), (1, "mlp.fc1", 530.0, 3, 2e6),
                     (1, "attn", 380.0, 7, 2e6), (1, "attn.proj", 10.0, 1, 1e4)])


def _row(t: pd.DataFrame, key: str, value: str) -> dict:
    rows = t[t[key] == value]
    assert len(rows) == 1, value
    return rows.iloc[0].to_dict()


def test_per_module_savings_are_means_over_ranks() -> None:
    t = compare_modules(EAGER, COMPILED)
    assert tuple(t.columns) == MODULE_COLUMNS
    root = _row(t, "module", "")
    assert root["a_us_per_step"] == (1000 + 1200) / 2 and root["b_us_per_step"] == (700 + 900) / 2
    assert root["saving_us_per_step"] == 1100 - 800
    assert root["saving_pct"] == pytest.approx(100 * 300 / 1100)
    assert root["a_kernels_per_step"] == 40 and root["b_kernels_per_step"] == 12
    assert root["bytes_saving_per_step"] == 8e6 - 4e6
    mlp = _row(t, "module", "mlp")
    assert mlp["saving_us_per_step"] == 700 - 400 and not mlp["b_slower"]


def test_compiled_slower_first_one_sided_listed() -> None:
    t = compare_modules(EAGER, COMPILED)
    fc1 = _row(t, "module", "mlp.fc1")  # (300 + 500)/2 = 400 eager, (330 + 530)/2 = 430 compiled
    assert fc1["b_slower"] and fc1["saving_us_per_step"] == -30
    assert fc1["saving_pct"] == pytest.approx(-100 * 30 / 400)
    assert t.iloc[0]["module"] == "mlp.fc1"  # the only B-slower module comes first
    act = _row(t, "module", "mlp.act")       # fused away: eager only
    assert act["presence"] == "a only" and math.isnan(act["b_us_per_step"]) and math.isnan(act["saving_pct"])
    proj = _row(t, "module", "attn.proj")
    assert proj["presence"] == "b only" and proj["b_us_per_step"] == 10
    attn = _row(t, "module", "attn")  # 400 -> 380: 5 % faster, not slower
    assert not attn["b_slower"] and attn["saving_pct"] == pytest.approx(5.0)
    # after the slower one: by the larger time, descending
    assert list(t["module"])[1:4] == ["", "mlp", "attn"]


def test_slower_threshold() -> None:
    a = _modules([(0, "x", 100.0, 1, 0), (0, "y", 100.0, 1, 0), (0, "z", 0.5, 1, 0)])
    b = _modules([(0, "x", 100.0 + SLOWER_MIN_PCT - 0.01, 1, 0), (0, "y", 100.0 + SLOWER_MIN_PCT, 1, 0),
                  (0, "z", 1.0, 1, 0)])  # z doubles but by less than SLOWER_MIN_US
    t = compare_modules(a, b).set_index("module")
    assert not t.loc["x", "b_slower"] and t.loc["y", "b_slower"] and not t.loc["z", "b_slower"]


def test_finding_names_the_innermost_slower_module() -> None:
    a = _modules([(0, "", 1000.0, 10, 0), (0, "blk", 500.0, 5, 0), (0, "blk.fc", 200.0, 2, 0)])
    b = _modules([(0, "", 1100.0, 4, 0), (0, "blk", 600.0, 2, 0), (0, "blk.fc", 300.0, 1, 0)])
    found = slower_findings(compare_modules(a, b), step_us=1100.0)
    assert [f.module for f in found] == ["blk.fc"]  # blk and the root are slower because of it
    f = found[0]
    assert f.code == "compiled_slower_than_eager" and f.cost_us == 100.0
    assert f.eager_us_per_step == 200.0 and f.compiled_us_per_step == 300.0
    assert f.severity == "medium"  # 100 / 1100 = 9.1 % of the step


def _ops(rows: list[tuple[int, str, str, str, float, float, float]]) -> pd.DataFrame:
    """rows: (rank, module, op, category, calls_per_step, us_per_step, bytes_per_step)"""
    return pd.DataFrame([{"rank": r, "op": op, "category": cat, "module": m, "calls_per_step": c,
                          "us_per_step": us, "flops_per_step": None, "bytes_per_step": b, "dtype": "float32"}
                         for r, m, op, cat, c, us, b in rows])


def test_per_op_sums_modules_then_means_ranks() -> None:
    a = _ops([(0, "fc1", "aten::addmm", "gemm", 1, 100.0, 1e6), (0, "fc2", "aten::addmm", "gemm", 1, 50.0, 5e5),
              (0, "act", "aten::relu", "elementwise", 1, 20.0, 2e5), (1, "fc1", "aten::addmm", "gemm", 1, 110.0, 1e6),
              (1, "fc2", "aten::addmm", "gemm", 1, 60.0, 5e5), (1, "act", "aten::relu", "elementwise", 1, 20.0, 2e5)])
    relu = ("triton_poi_fused_relu_0", "elementwise")
    b = _ops([(0, "fc1", "aten::addmm", "gemm", 2, 140.0, 1.5e6), (0, "act", *relu, 1, 8.0, 1e5),
              (1, "fc1", "aten::addmm", "gemm", 2, 160.0, 1.5e6), (1, "act", *relu, 1, 8.0, 1e5)])
    t = compare_ops(a, b)
    assert tuple(t.columns) == OP_COLUMNS
    mm = _row(t, "op", "aten::addmm")
    assert mm["a_us_per_step"] == ((100 + 50) + (110 + 60)) / 2 and mm["b_us_per_step"] == (140 + 160) / 2
    assert mm["saving_us_per_step"] == 160 - 150 and mm["a_calls_per_step"] == 2 and mm["b_calls_per_step"] == 2
    assert _row(t, "op", "aten::relu")["presence"] == "a only"
    assert _row(t, "op", "triton_poi_fused_relu_0")["presence"] == "b only"


def test_rendered_in_every_format() -> None:
    t = compare_modules(EAGER, COMPILED)
    found = [f.row() for f in slower_findings(t, 800.0)]
    d = {"by_module": t, "breakdown_findings": found, "notes": []}
    text = render_diff(d, "table")
    assert "Per module" in text and "mlp.fc1" in text and "compiled_slower_than_eager" in text
    assert "1 of 4 modules present in both runs are slower in B; 2 only in A, 1 only in B" in text
    md = render_diff(d, "markdown")
    assert "## Per module" in md and "| mlp.fc1   |" in md and "| (root)    |" in md  # the root is ""
    frame = diff_frame(d)
    assert list(frame.columns) == ["table", *MODULE_COLUMNS] and set(frame["table"]) == {"by_module"}
    assert "(not available: see the notes)" in render_diff({"by_module": None, "notes": ["x"]}, "table")


def test_breakdown_reads_the_tables_and_which_run_is_eager() -> None:
    from types import SimpleNamespace

    from tracekit.compare.diff import breakdown
    from tracekit.traces.manifest import Manifest

    eager, compiled = Manifest(config={"dynamo": "none"}), Manifest(config={"dynamo": "inductor"})
    a, b = SimpleNamespace(tables={"modules": EAGER}), SimpleNamespace(tables={"modules": COMPILED})
    out = breakdown(a, b, eager, compiled, "module", 800.0)
    assert out["breakdown_notes"] == [] and len(out["by_module"]) == 7
    assert [f["code"] for f in out["breakdown_findings"]] == ["compiled_slower_than_eager"]
    assert out["breakdown_findings"][0]["evidence"]["module"] == "mlp.fc1"
    # two eager runs: rows, no finding, and a note saying why
    out = breakdown(a, b, eager, eager, "module", 800.0)
    assert out["breakdown_findings"] == [] and "A none, B none" in out["breakdown_notes"][0]
    # a run without the table: no rows, a note naming it
    out = breakdown(a, SimpleNamespace(tables={}), eager, compiled, "op")
    assert out["by_op"] is None and out["breakdown_notes"] == [
        "run A has no `ops` table: no per-op comparison", "run B has no `ops` table: no per-op comparison"]
