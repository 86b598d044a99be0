"""``tracekit analyze`` through click's CliRunner on the committed reference traces."""

from __future__ import annotations

import csv
import gc
import io
import json
from pathlib import Path

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from tracekit.analyses.registry import AnalysisResult, View
from tracekit.cli import main
from tracekit.report.render import TEXT_MAX_RANKS, only_ranks, shown_ranks, spread_view, without_empty_columns
from tracekit.report.fmt import MAX_CELL, shorten, table
from tracekit.traces import cols as C

REF = Path(__file__).parents[1] / "data" / "reference"


def _run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, list(args))
    return r.exit_code, r.stdout, r.stderr


def test_table_report_sections() -> None:
    code, out, _ = _run("analyze", str(REF / "inductor"), "--per-step")
    assert code == 0
    for title in ("Run summary", "Per-rank breakdown", "Per-step breakdown", "Collectives", "DDP buckets",
                  "Cross-rank wait"):
        assert title in out
    assert "NVIDIA H200" in out and "2.28.9" in out


def test_json_contract() -> None:
    code, out, _ = _run("analyze", str(REF / "inductor_nosplit"), "--format", "json")
    assert code == 0
    doc = json.loads(out)
    assert {"meta", "ranks", "steps", "collectives", "buckets"} <= set(doc)
    need = {"rank", "steps", "step_mean_us", "compute_total_us", "comm_total_us", "overlap_total_us",
            "exposed_comm_total_us", "overlap_pct", "idle_total_us", "wait_total_us", "pre_window_kernels"}
    for row in doc["ranks"]:
        assert need <= set(row)
        assert abs(row["exposed_comm_total_us"] - (row["comm_total_us"] - row["overlap_total_us"])) < 1e-6
    assert [r["rank"] for r in doc["ranks"]] == [0, 1]
    assert doc["meta"]["world_size"] == 2


def test_csv_and_markdown_and_output_file(tmp_path: Path) -> None:
    code, out, _ = _run("analyze", str(REF / "eager"), "--format", "csv", "--table", "buckets")
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 2 * 3 * 16 and rows[0]["bucket"] == "0"
    target = tmp_path / "r.md"
    code, _, err = _run("analyze", str(REF / "eager"), "--format", "markdown", "-o", str(target))
    assert code == 0 and "wrote" in err
    text = target.read_text()
    assert text.startswith("# tracekit analysis") and "| rank" in text


def test_explicit_files() -> None:
    files = [str(REF / "eager" / f"rank{r}.trace.json.gz") for r in (0, 1)]
    code, out, _ = _run("analyze", *files, "--format", "json")
    assert code == 0 and len(json.loads(out)["ranks"]) == 2


def test_help_has_example() -> None:
    code, out, _ = _run("analyze", "--help")
    assert code == 0 and "Examples:" in out and "tracekit analyze runs/demo" in out


def test_bad_regex_is_clean_error() -> None:
    code, out, err = _run("analyze", str(REF / "eager"), "--comm-regex", "([")
    assert code == 2 and err.startswith("error: --comm-pattern") and "Traceback" not in err


def test_comm_regex_reclassifies() -> None:
    # treat the Triton reduction as communication: comm time must grow, compute shrink
    base = json.loads(_run("analyze", str(REF / "inductor"), "--format", "json")[1])["ranks"][0]
    more = json.loads(_run("analyze", str(REF / "inductor"), "--format", "json", "--comm-regex", "^triton_per_")[1])
    more = more["ranks"][0]
    assert more["comm_total_us"] > base["comm_total_us"] and more["compute_total_us"] < base["compute_total_us"]


def test_hta_flag_adds_hta_columns() -> None:
    import pytest

    pytest.importorskip("hta")  # the device machines have no HTA; CI installs it with .[test]
    code, out, _ = _run("analyze", str(REF / "inductor_nosplit"), "--hta", "--format", "json")
    assert code == 0
    doc = json.loads(out)
    hta = {r["rank"]: r for r in doc["hta"]}
    assert set(hta) == {0, 1} and all(r["hta_error"] is None for r in hta.values())
    # HTA sees only kernels launched in the window; its overlap is in the same range as tracekit's
    for r in doc["ranks"]:
        assert abs(hta[r["rank"]]["hta_overlap_pct"] - r["overlap_pct"]) < 5
    code, out, _ = _run("analyze", str(REF / "inductor_nosplit"), "--hta")
    assert code == 0 and "hta_overlap_pct" in out


def test_timings_option() -> None:
    code, _, err = _run("analyze", str(REF / "eager"), "--timings")
    assert code == 0
    line = next(ln for ln in err.splitlines() if ln.startswith("timings (s):"))
    for phase in ("start", "import", "load", "rank_tables", "run_tables", "render", "total"):
        assert f"{phase} " in line


def test_profiled_steps_compact_and_graph_breaks_per_rank() -> None:
    from tracekit.report.render import step_ranges

    assert step_ranges([2, 3, 4, 7, 9, 10]) == "2-4, 7, 9-10 (6 steps)"
    assert step_ranges([5]) == "5 (1 step)"
    assert step_ranges([]) == ""
    code, out, _ = _run("analyze", str(REF / "inductor"))
    assert code == 0
    assert "profiled steps      2-4 (3 steps)" in out
    assert "graph breaks (per rank, mean per step" in out and "compile_skipped_steps" in out
    code, out, _ = _run("analyze", str(REF / "inductor"), "--per-step")
    assert "graph breaks (per rank and step)" in out


def test_console_entry_writes_report_and_exits_cleanly(tmp_path: Path) -> None:
    """``python -m tracekit`` ends with a fast exit: output must still be complete."""
    import subprocess
    import sys

    out = tmp_path / "r.json"
    r = subprocess.run([sys.executable, "-m", "tracekit", "analyze", str(REF / "inductor"), "--format", "json",
                        "-o", str(out)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert json.loads(out.read_text())["ranks"]
    r = subprocess.run([sys.executable, "-m", "tracekit", "analyze", str(REF / "eager")], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0
    assert r.stdout == _run("analyze", str(REF / "eager"))[1]  # nothing lost to the fast exit
    r = subprocess.run([sys.executable, "-m", "tracekit", "analyze", str(tmp_path / "nope")], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 2 and r.stderr.startswith("error: ") and "Traceback" not in r.stderr


def test_graph_break_summary_arithmetic() -> None:
    import pandas as pd

    from tracekit.analyses.graphbreaks import graph_break_summary
    from tracekit.traces import cols as C

    gb = pd.DataFrame({
        "rank": [0, 0, 1], "step": [1, 2, 1], "regions": [2, 4, 3], "fwd_subgraphs": [16, 16, 8],
        "bwd_subgraphs": [16, 16, 8], "triton_kernels": [60, 60, 30], "ddp_splits": [15, 14, 7],
        "real_breaks": [0, 1, 0],
        "compiled_cpu_us": [100.0, 300.0, 50.0], "eager_between_us": [10.0, 20.0, 5.0],
        "idle_at_breaks_us": [0.0, 40.0, 0.0], "cost_per_break_us": [float("nan"), 40.0, float("nan")],
        "compile_skipped": [False, True, True],
    })
    s = C.to_frame(graph_break_summary(gb)).set_index("rank")
    assert s.loc[0, "steps"] == 2 and s.loc[1, "steps"] == 1
    assert s.loc[0, "regions"] == (2 + 4) / 2 and s.loc[0, "real_breaks"] == (0 + 1) / 2
    assert s.loc[0, "compiled_cpu_us"] == (100 + 300) / 2 and s.loc[0, "idle_at_breaks_us"] == (0 + 40) / 2
    assert s.loc[0, "cost_per_break_us"] == 40.0  # mean over the steps that had a break
    assert s.loc[0, "triton_kernels"] == (60 + 60) / 2 and s.loc[1, "triton_kernels"] == 30
    assert s.loc[0, "compile_skipped_steps"] == 1 and s.loc[1, "compile_skipped_steps"] == 1


def test_garbage_collector_off_only_for_read_only_commands() -> None:
    was = gc.isenabled()
    try:
        for name, on in (("analyze", False), ("diff", False), ("profile", True), ("bench", True)):
            gc.disable()
            assert CliRunner().invoke(main, [name, "--help"]).exit_code == 0
            assert gc.isenabled() is on, name
    finally:
        (gc.enable if was else gc.disable)()


def test_long_cells_shortened_in_text() -> None:
    name = "triton_per_fused_" + "x" * 300 + "_tail42"
    short = shorten(name)
    assert len(short) == MAX_CELL and short.startswith("triton_per_fused_") and short.endswith("_tail42") and "…" in short
    assert shorten("ncclKernel_AllReduce") == "ncclKernel_AllReduce"
    assert name not in table(pd.DataFrame({"kernel": [name]}), "table") and short in table(pd.DataFrame({"kernel": [name]}), "table")


def test_text_table_of_numpy_columns_is_the_frames() -> None:
    # the analyze path's tables are Cols; the HTML report's and other commands' frames: one text for both
    df = pd.DataFrame({"rank": [0, 1, 2], "kernel": ["a\rb", None, "c"], "idle_ratio": [0.5, np.nan, 2.0],
                       "n": pd.array([1, None, 3], dtype="Int64"), "ok": [True, False, True], "us": [1.25, 2.0, 3.0]})
    for fmt in ("table", "markdown"):
        text = table(C.as_cols(df), fmt)
        assert text == table(df, fmt)
        assert "a\\x0db" in text and "0.50" in text and "1.2" in text and "1.25" not in text  # escaped, formats
    assert table(C.empty(["a"]), "table") == "(none)" and table({}, "table", empty="x") == "x"


@pytest.mark.parametrize("as_table", [lambda df: df, C.as_cols], ids=["frame", "cols"])
def test_text_report_of_many_ranks_shows_the_first_and_the_named_ranks(as_table: Callable[[Any], Any]) -> None:
    n = 100
    findings = pd.DataFrame({"rank": [70, None, 3], "code": ["rank_waiting", "gpu_idle", "graph_break"]})
    res = AnalysisResult(meta={"ranks": list(range(n))}, tables={"findings": as_table(findings)})
    shown = shown_ranks(res)
    assert shown == [*range(16), 70]  # rank 3 is among the first 16 already
    nullable = findings.assign(rank=pd.array([70, None, 3], dtype="Int64"))  # as the findings table has it
    assert shown_ranks(AnalysisResult(meta=res.meta, tables={"findings": as_table(nullable)})) == shown
    v = only_ranks(View("Per rank", as_table(pd.DataFrame({"rank": list(range(n)) * 2, "x": 1.0}))), shown, "ranks")
    body = C.to_frame(v.body)
    assert sorted(body["rank"].unique()) == shown and len(body) == 2 * len(shown)
    assert "rows of 17 of 100 ranks shown" in v.note and "--table ranks" in v.note
    few = AnalysisResult(meta={"ranks": list(range(TEXT_MAX_RANKS))}, tables={"findings": as_table(findings)})
    assert shown_ranks(few) is None


@pytest.mark.parametrize("as_table", [lambda df: df, C.as_cols], ids=["frame", "cols"])
def test_spread_over_all_ranks_names_the_extremes(as_table: Callable[[Any], Any]) -> None:
    body = pd.DataFrame({"rank": [0, 1, 2, 3], "idle_total_us": [10.0, 40.0, 20.0, None],
                         "steps": [3, 3, 3, 3], "flag": [True, False, True, True]})
    s = C.to_frame(spread_view(View("Per rank", as_table(body))).body).set_index("column")
    assert list(s.index) == ["idle_total_us", "steps"]  # bool columns are not spread; NaN rows are left out
    assert s.loc["idle_total_us", "min"] == 10.0 and s.loc["idle_total_us", "median"] == 20.0
    assert s.loc["idle_total_us", "max"] == 40.0 and s.loc["idle_total_us", "rank_of_max"] == 1
    assert s["rank_of_min"].dtype == "int64" and s["min"].dtype == "float64"
    # several rows per rank, or rows of different things: no spread
    assert spread_view(View("x", as_table(pd.concat([body, body])))) is None
    assert spread_view(View("x", as_table(body.assign(coll=["allreduce", "allgather", "allreduce", "allreduce"])))) is None


@pytest.mark.parametrize("as_table", [lambda df: df, C.as_cols], ids=["frame", "cols"])
def test_columns_empty_in_every_row_are_left_out_with_a_note(as_table: Callable[[Any], Any]) -> None:
    body = pd.DataFrame({"rank": [0, 1], "kernel": ["", None], "gpu_us": [np.nan, np.nan], "cpu_us": [1.0, 2.0]})
    v = without_empty_columns(View("Per rank", as_table(body), note="n"))
    assert list(C.as_cols(v.body)) == ["rank", "cpu_us"]
    assert v.note == "n; empty in every row, not shown (--format json / csv keep them): kernel, gpu_us"
    full = View("x", as_table(body.drop(columns=["kernel", "gpu_us"])))
    assert without_empty_columns(full) is full
