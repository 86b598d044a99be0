"""The one output path (tracekit.report.output): the same --format choices on every command, --markdown as a
deprecated alias, and the CSV form of the comparisons."""

from __future__ import annotations

import io
import json
from pathlib import Path

import click
import pandas as pd
import pytest
from click.testing import CliRunner

from tracekit.cli import main
from tracekit.cli.analyze import analyze_command
from tracekit.cli.bench import ddp_command, diff_command as bench_diff_command, rpc_command
from tracekit.cli.diff import diff_command
from tracekit.cli.whatif import whatif_command
from tracekit.compare.render import diff_frame
from tracekit.report.output import FORMATS, RENDERERS, Output, render

DOCS = Path(__file__).resolve().parents[2] / "docs"
SWEEP_A, SWEEP_B = DOCS / "gpu_results" / "bench_toy.json", DOCS / "gpu_results_x4" / "bench_toy.json"


@pytest.mark.parametrize("command", [analyze_command, diff_command, whatif_command, ddp_command, bench_diff_command,
                                     rpc_command])
def test_every_command_offers_the_same_formats(command: click.Command) -> None:
    fmt = next(p for p in command.params if p.name == "fmt")
    assert tuple(fmt.type.choices) == (*FORMATS, "md") and FORMATS == tuple(RENDERERS)
    markdown = next(p for p in command.params if p.name == "markdown")
    assert markdown.hidden


def test_markdown_is_a_deprecated_alias_of_format_markdown() -> None:
    runner = CliRunner()
    new = runner.invoke(main, ["bench", "diff", str(SWEEP_A), str(SWEEP_B), "--format", "markdown"])
    old = runner.invoke(main, ["bench", "diff", str(SWEEP_A), str(SWEEP_B), "--markdown"])
    assert new.exit_code == old.exit_code == 0
    assert "deprecated" in old.stderr and "deprecated" not in new.stderr
    assert old.stdout == new.stdout and "| point" in new.stdout


def test_md_is_markdown() -> None:
    runner = CliRunner()
    md = runner.invoke(main, ["bench", "diff", str(SWEEP_A), str(SWEEP_B), "--format", "md"])
    markdown = runner.invoke(main, ["bench", "diff", str(SWEEP_A), str(SWEEP_B), "--format", "markdown"])
    assert md.exit_code == markdown.exit_code == 0 and md.stdout == markdown.stdout and "| point" in md.stdout


def test_bench_diff_csv_has_the_json_numbers() -> None:
    runner = CliRunner()
    doc = json.loads(runner.invoke(main, ["bench", "diff", str(SWEEP_A), str(SWEEP_B), "--format", "json"]).stdout)
    csv = pd.read_csv(io.StringIO(runner.invoke(main, ["bench", "diff", str(SWEEP_A), str(SWEEP_B),
                                                       "--format", "csv"]).stdout))
    rows = [r for m in doc["models"] for r in m["rows"]]
    assert len(csv) == len(rows) > 0
    assert csv["p95_change_pct"].tolist() == pytest.approx([r["p95"]["change_pct"] for r in rows], nan_ok=True)


def test_diff_csv_stacks_the_tables_with_their_name() -> None:
    d = {"summary": pd.DataFrame({"metric": ["step_p50_ms"], "a": [10.0], "b": [8.0]}),
         "ranks": pd.DataFrame({"metric": ["comm_per_step_us"] * 2, "a": [1.0, 2.0], "b": [1.0, 1.0], "rank": [0, 1]}),
         "findings_new": []}
    f = diff_frame(d)
    assert f["table"].tolist() == ["summary", "ranks", "ranks"] and list(f.columns)[0] == "table"
    assert f["rank"].tolist()[1:] == [0, 1] and pd.isna(f["rank"].iloc[0])


def test_render_picks_the_renderer_of_the_format() -> None:
    out = Output(text=lambda fmt: f"text:{fmt}", document=lambda: {"x": [1, None]},
                 frame=lambda: pd.DataFrame({"x": [1, 2]}))
    assert render(out, "table") == "text:table" and render(out, "markdown") == "text:markdown"
    assert json.loads(render(out, "json")) == {"x": [1, None]}
    assert render(out, "csv") == "x\n1\n2\n"
    with pytest.raises(ValueError, match="unknown format 'html'"):
        render(out, "html")


def test_csv_of_numpy_columns_is_pandas_to_csv() -> None:
    # the analyze path writes its Cols tables without pandas: byte for byte what DataFrame.to_csv wrote
    import numpy as np

    from tracekit.report.output import csv_text
    from tracekit.traces import cols as C

    floats = np.array([0.1 + 0.2, 1e16, 1e-5, 1e-4, -0.0, 123456789.125, np.nan, np.inf, -np.inf, 2.5e-300])
    n = len(floats)
    t = {"f": floats, "f32": floats.astype(np.float32), "i": np.arange(n) * 10**11, "b": np.arange(n) % 2 == 0,
         "s": C.obj(["a,b", 'x"y', "two\nlines", " lead", "", None, "é", "plain", "\r", "z"]),
         "o": C.obj([None, 1, 2.5, True, "x", np.float64(0.3), np.int64(7), float("nan"), (1, 2), "y"])}
    for name in t:  # each column alone (a lone empty field is quoted), then all together
        assert csv_text({name: t[name]}) == pd.DataFrame({name: t[name]}).to_csv(index=False), name
    assert csv_text(t) == C.to_frame(t).to_csv(index=False)
    assert csv_text(C.empty(["a", "b"])) == "a,b\n" and csv_text({}) == pd.DataFrame().to_csv(index=False)
    out = Output(text=str, document=dict, frame=lambda: {"x": np.array([1, 2])})
    assert render(out, "csv") == "x\n1\n2\n"
