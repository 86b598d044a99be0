"""``tracekit profile --out`` onto an existing run: refused unless --force, and --force leaves no stale rank."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from tracekit.errors import ConfigError
from tracekit.profile.outdir import prepare_out_dir


def _finished_run(d: Path, ranks: int) -> None:
    d.mkdir(parents=True, exist_ok=True)
    (d / "run.json").write_text("{}")
    for r in range(ranks):
        (d / f"rank{r}.trace.json.gz").write_bytes(b"x")


def test_a_finished_run_is_refused_naming_the_folder_and_the_way_out(tmp_path: Path) -> None:
    _finished_run(tmp_path / "run", 4)
    with pytest.raises(ConfigError, match=r"run already holds a run \(run.json, 4 rank trace\(s\)\): pass --force"):
        prepare_out_dir(tmp_path / "run", force=False)
    assert len(list((tmp_path / "run").iterdir())) == 5  # nothing touched


def test_force_removes_the_old_run_so_no_stale_rank_is_left(tmp_path: Path) -> None:
    d = tmp_path / "run"
    _finished_run(d, 4)
    (d / "notes.txt").write_text("mine")
    removed = prepare_out_dir(d, force=True)
    assert sorted(p.name for p in removed) == ["rank0.trace.json.gz", "rank1.trace.json.gz", "rank2.trace.json.gz",
                                               "rank3.trace.json.gz", "run.json"]
    assert [p.name for p in d.iterdir()] == ["notes.txt"]  # what is not a run file stays


def test_a_failed_run_is_replaced_without_force(tmp_path: Path) -> None:
    d = tmp_path / "run"
    d.mkdir()
    (d / "rank0.trace.json.gz").write_bytes(b"x")
    (d / "rank1.error.txt").write_text("Traceback")
    assert len(prepare_out_dir(d, force=False)) == 2 and not any(d.iterdir())
    assert prepare_out_dir(tmp_path / "new", force=False) == []


def test_cli_refuses_before_launching_anything(tmp_path: Path) -> None:
    from tracekit.cli import main

    _finished_run(tmp_path / "demo", 2)
    r = CliRunner().invoke(main, ["profile", "--nproc", "2", "--device", "cpu", "--out", str(tmp_path / "demo")])
    assert r.exit_code == 2 and "already holds a run" in r.output and "--force" in r.output
    assert "Traceback" not in r.output


def test_compare_refuses_before_the_first_variant(tmp_path: Path) -> None:
    from tracekit.cli import main

    _finished_run(tmp_path / "cmp" / "inductor", 2)
    r = CliRunner().invoke(main, ["profile", "--nproc", "2", "--device", "cpu", "--out", str(tmp_path / "cmp"),
                                  "--compare", "eager,inductor"])
    assert r.exit_code == 2 and "inductor already hold(s) a run" in r.output
    assert not (tmp_path / "cmp" / "eager").exists()


def test_top_level_help_lists_whole_summaries() -> None:
    from tracekit.cli import SUMMARIES, main

    r = CliRunner().invoke(main, ["--help"], terminal_width=200)
    truncated = re.compile(r"\w\.\.\.\s*$", re.M)  # click cuts a summary as "compute vs..."
    assert r.exit_code == 0 and not truncated.search(r.output.split("Commands:")[1])
    for name, line in SUMMARIES.items():
        assert f"{name}  " in r.output and line in r.output
    r = CliRunner().invoke(main, ["bench", "--help"], terminal_width=200)
    assert not truncated.search(r.output.split("Commands:")[1].split("Examples:")[0])
