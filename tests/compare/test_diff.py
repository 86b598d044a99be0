"""tracekit.compare.diff and ``tracekit diff``."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from tests.explain_builders import load_run, manifest_for, write_run
from tracekit.cli.diff import diff_command
from tracekit.compare.diff import diff_runs

REF = Path(__file__).parents[1] / "data" / "reference"


def _res(folder: Path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ts, res = load_run(folder)
    return res, ts.manifest


def test_diff_arithmetic(tmp_path: Path) -> None:
    a, ma = _res(write_run(tmp_path / "a", "nosplit", manifest=manifest_for("nosplit", p50_s=0.010, p95_s=0.012)))
    b, mb = _res(write_run(tmp_path / "b", "split", manifest=manifest_for("split", p50_s=0.008, p95_s=0.009)))
    d = diff_runs(a, b, ma, mb)
    s = d["summary"].set_index("metric")
    row = s.loc["step_p50_ms (unprofiled)"]
    assert row["a"] == pytest.approx(10.0) and row["b"] == pytest.approx(8.0)
    assert row["delta"] == pytest.approx(-2.0) and row["delta_pct"] == pytest.approx(-20.0)
    assert s.loc["step_p95_ms (unprofiled)", "delta_pct"] == pytest.approx(-25.0)
    c = d["compile"].set_index("metric")
    assert c.loc["bwd_subgraphs_per_step", "a"] == 1 and c.loc["bwd_subgraphs_per_step", "b"] == 4
    assert c.loc["ddp_splits_per_step", "delta"] == 3
    assert c.loc["compile_time_s", "delta"] == 0
    bk = d["buckets"].set_index("metric")
    assert bk.loc["allreduces_per_step", "a"] == 4 and bk.loc["bucket_mb_mean", "a"] == pytest.approx(4.0)
    assert {f["code"] for f in d["findings_gone"]} == {"allreduce_after_backward"}
    assert d["findings_new"] == []
    r = d["ranks"]
    assert set(r["rank"]) == {0, 1}
    ex = r[(r["rank"] == 0) & (r["metric"] == "exposed_comm_per_step_us")].iloc[0]
    assert ex["delta"] == pytest.approx(ex["b"] - ex["a"]) and ex["b"] < ex["a"]


def test_diff_says_when_ranks_do_not_pair_up(tmp_path: Path) -> None:
    """One rank of an 8-rank run against one of a 2-rank run (as HTA's public trace_diff pair): the per-rank
    rows cannot pair up and the world sizes differ; the same run against itself gets no note."""
    from tests.tracebuilder import TraceBuilder
    from tracekit.compare.render import render_diff

    for name, rank, world in (("a", 3, 8), ("b", 1, 2)):
        tb = TraceBuilder(rank=rank, world_size=world)
        tb.step(1, 0, 100)
        tb.kernel("gemm", 10, 50, launch_at_us=5)
        (tmp_path / name).mkdir()
        tb.write(tmp_path / name / f"rank{rank}.trace.json")
    (a, _), (b, _) = _res(tmp_path / "a"), _res(tmp_path / "b")
    d = diff_runs(a, b)
    assert d["notes"] == ["A and B have no rank in common (A: ranks [3], B: ranks [1]): their per-rank rows do not "
                          "pair up, and the run-level figures compare different ranks",
                          "A ran on 8 ranks, B on 2: a change of world size changes every per-rank figure"]
    assert "note: A and B have no rank in common" in render_diff(d)
    assert diff_runs(a, a)["notes"] == []


def test_diff_without_manifest_is_nan(tmp_path: Path) -> None:
    a, _ = _res(write_run(tmp_path / "a", "eager"))
    d = diff_runs(a, a, None, None)
    s = d["summary"].set_index("metric")
    assert s["a"].isna()["step_p50_ms (unprofiled)"]
    assert (d["ranks"]["delta"].fillna(0) == 0).all()


def _cli() -> click.Group:
    g = click.Group()
    g.add_command(diff_command, "diff")
    return g


@pytest.mark.parametrize("fmt", ["table", "markdown", "json"])
def test_diff_cli_reference(fmt: str, tmp_path: Path) -> None:
    out = tmp_path / "d.txt"
    r = CliRunner().invoke(_cli(), ["diff", str(REF / "inductor_nosplit"), str(REF / "inductor"), "--format", fmt,
                                    "--output", str(out)])
    assert r.exit_code == 0, r.output
    text = out.read_text()
    if fmt == "json":
        doc = json.loads(text)
        assert {"summary", "ranks", "buckets", "compile", "findings_new", "findings_gone"} <= set(doc)
        assert [f["code"] for f in doc["findings_gone"]] == ["allreduce_after_backward"]
        c = {row["metric"]: row for row in doc["compile"]}
        assert c["bwd_subgraphs_per_step"]["a"] == 1 and c["bwd_subgraphs_per_step"]["b"] == 16
    else:
        assert "Findings only in A" in text and "allreduce_after_backward" in text


def test_diff_cli_bad_path() -> None:
    r = CliRunner().invoke(_cli(), ["diff", "/nonexistent/a", "/nonexistent/b"])
    assert r.exit_code != 0
