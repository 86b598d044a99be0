"""``--skip-bad`` over many broken files: one summary line, the full list in ``meta.skipped_files``
(issue 23, item 9)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from tracekit.cli import main
from tracekit.traces.loader import skipped_summary

try:
    from tests.tracebuilder import TraceBuilder
except ImportError:  # tests/ not a package
    from tracebuilder import TraceBuilder

N_BAD_JSON, N_EMPTY = 40, 5  # enough to take the engine path too (many small files)


def _run_dir(tmp_path):  # noqa: ANN001, ANN202
    tb = TraceBuilder(rank=0, world_size=1)
    tb.step(1, 0, 100)
    tb.kernel("gemm", 0, 10, launch_at_us=0)
    tb.write(tmp_path / "rank0.json")
    for i in range(1, 1 + N_BAD_JSON):
        (tmp_path / f"rank{i:04d}.json").write_text("{nope" + " " * i)
    for i in range(1 + N_BAD_JSON, 1 + N_BAD_JSON + N_EMPTY):
        (tmp_path / f"rank{i:04d}.json").write_text("")
    return tmp_path


def test_summary_line_counts_problems():
    skipped = [(f"/r/rank{i}.json", f"not valid JSON (line 1 column {i}: x)") for i in range(7)]
    skipped += [("/r/e.json", "empty file"), ("/r/t.json", "traceEvents[12] is not a JSON object"),
                ("/r/u.json", "traceEvents[3] is not a JSON object")]
    line = skipped_summary(skipped)
    assert line == ("skipped 10 unreadable files (first: rank0.json, rank1.json, rank2.json, ...; 7 not valid "
                    "JSON, 2 traceEvents[N] is not a JSON object, 1 empty file); full list in the JSON report's "
                    "meta.skipped_files")
    assert skipped_summary(skipped[:1]) == "skipped /r/rank0.json: not valid JSON (line 1 column 0: x)"


def test_cli_one_warning_line_and_full_json_list(tmp_path):
    d = _run_dir(tmp_path)
    res = CliRunner().invoke(main, ["analyze", str(d), "--skip-bad", "--format", "json"])
    assert res.exit_code == 0, res.output
    warn = [ln for ln in res.stderr.splitlines() if "skipped" in ln]
    assert len(warn) == 1, res.stderr
    assert f"skipped {N_BAD_JSON + N_EMPTY} unreadable files" in warn[0]
    assert f"{N_BAD_JSON} not valid JSON, {N_EMPTY} empty file" in warn[0]
    meta = json.loads(res.stdout)["meta"]
    assert len(meta["skipped_files"]) == N_BAD_JSON + N_EMPTY
    assert meta["ranks"] == [0]


def test_text_report_summarises_too(tmp_path):
    d = _run_dir(tmp_path)
    res = CliRunner().invoke(main, ["analyze", str(d), "--skip-bad"])
    assert res.exit_code == 0, res.output
    line = next(ln for ln in res.stdout.splitlines() if "skipped files" in ln)
    assert f"{N_BAD_JSON + N_EMPTY} unreadable files" in line and line.count(".json") <= 4


def test_all_bad_is_one_line_error(tmp_path):
    for i in range(20):
        (tmp_path / f"rank{i}.json").write_text("")
    res = CliRunner().invoke(main, ["analyze", str(tmp_path), "--skip-bad"])
    assert res.exit_code == 2
    assert res.stderr.count("\n") == 1 and "no readable trace among 20 files" in res.stderr


def test_loader_path_warns_once(tmp_path):
    import warnings

    from tracekit.errors import TraceLoadWarning
    from tracekit.traces.loader import load

    tb = TraceBuilder(rank=0, world_size=1)
    tb.step(1, 0, 100)
    tb.write(tmp_path / "rank0.json")
    for i in range(1, 6):
        (tmp_path / f"rank{i}.json").write_text("")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ts = load(tmp_path, skip_bad=True)
    msgs = [str(w.message) for w in caught if issubclass(w.category, TraceLoadWarning) and "skipped" in str(w.message)]
    assert msgs == ["skipped 5 unreadable files (first: rank1.json, rank2.json, rank3.json, ...; 5 empty file); "
                    "full list in the JSON report's meta.skipped_files"]
    assert len(ts.skipped) == 5
