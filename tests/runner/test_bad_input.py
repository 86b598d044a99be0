"""Bad inputs: each raises a TracekitError subclass whose one-line message names the file and the problem.

The second half drives ``tracekit analyze`` through click's CliRunner: exit code 2,
one ``error: ...`` line naming the file, never a traceback.
"""

from __future__ import annotations

import gzip
import json
import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner

from tracekit.runner.run import analyze
from tracekit.errors import TraceInputError, TracekitError, TraceSetError
from tracekit.traces.loader import TraceLoadWarning, load

try:
    from tests.tracebuilder import TraceBuilder
except ImportError:  # tests/ not a package
    from tracebuilder import TraceBuilder


def good(path: Path, rank: int = 0, world_size: int = 1, **kw) -> Path:
    tb = TraceBuilder(rank=rank, world_size=world_size, **kw)
    tb.step(1, 0, 100)
    tb.kernel("gemm", 10, 20, launch_at_us=5)
    tb.nccl_allreduce(40, 10, launch_at_us=30, nelems=1000)
    return tb.write(path)


def one_line(msg: str) -> str:
    assert "\n" not in msg.strip(), f"message is not one line: {msg!r}"
    return msg


def expect_input_error(path_arg, bad_file: Path, *problem_words: str, **load_kw) -> TraceInputError:
    with pytest.raises(TraceInputError) as ei:
        load(path_arg, **load_kw)
    msg = one_line(str(ei.value))
    assert isinstance(ei.value, TracekitError)
    assert str(bad_file) in msg
    for w in problem_words:
        assert w in msg, f"{w!r} not in {msg!r}"
    return ei.value


def expect_set_error(path_arg, *needles) -> TraceSetError:
    """``load`` raises a one-line TraceSetError holding every needle (words, or files by their path)."""
    with pytest.raises(TraceSetError) as ei:
        load(path_arg)
    msg = one_line(str(ei.value))
    for w in map(str, needles):
        assert w in msg, f"{w!r} not in {msg!r}"
    return ei.value


# -- one file -----------------------------------------------------------------------------------
# Each maker writes a broken file into the directory and returns (path, words the message must hold).
def _truncated_json(d):
    p = good(d / "rank0.json")
    raw = p.read_bytes()
    p.write_bytes(raw[: len(raw) // 2])
    return p, ["truncated JSON"]


def _corrupt_gzip(d):
    p = good(d / "rank0.json.gz")
    raw = bytearray(p.read_bytes())
    mid = len(raw) // 2
    raw[mid:mid + 16] = bytes(b ^ 0xFF for b in raw[mid:mid + 16])
    p.write_bytes(bytes(raw))
    return p, ["corrupt gzip"]


def _truncated_gzip(d):
    p = good(d / "rank0.json.gz")
    raw = p.read_bytes()
    p.write_bytes(raw[: len(raw) // 2])
    return p, ["truncated gzip"]


#: broken files given by their literal content: case -> (file name, content, words the message must hold)
LITERAL = {
    "gz_name_not_gzip": ("rank0.json.gz", '{"traceEvents": []}', ["not gzip"]),
    "not_json": ("rank0.json", "this is not JSON at all\n", ["not valid JSON"]),
    "empty_file": ("rank0.json", "", ["empty file"]),
    "empty_gz_file": ("rank0.json.gz", "", ["empty file"]),  # (an LFS object that did not come down)
    "json_array": ("rank0.json", "[1, 2, 3]", ["not a profiler trace: the file holds"]),
    "no_trace_events": ("rank0.json", '{"schemaVersion": 1, "distributedInfo": {"rank": 0, "world_size": 1}}',
                        ["traceEvents"]),
    "trace_events_not_list": ("rank0.json", '{"traceEvents": 5}', ["'traceEvents' is not a list"]),
    "event_not_object": ("rank0.json", '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, '
                                       '"dur": 1}, 7]}', ["traceEvents[1]"]),
    "empty_trace_events": ("rank0.json", '{"traceEvents": []}', ["'traceEvents' is empty"]),
}


def _literal(name: str, content: str, words: list[str]):  # noqa: ANN202
    def make(d):  # noqa: ANN001, ANN202
        p = d / name
        p.write_bytes(content.encode())
        return p, words

    return make


def _nan_dur(d):
    tb = TraceBuilder(rank=0, world_size=1)
    tb.step(1, 0, 100)
    tb.kernel("gemm_nan", 10, float("nan"), launch_at_us=5)
    p = tb.write(d / "rank0.json")
    assert b'"dur": NaN' in p.read_bytes()  # the literal torch can write
    return p, ["NaN or negative 'dur'", "gemm_nan"]


def _negative_dur(d):
    tb = TraceBuilder(rank=0, world_size=1)
    tb.step(1, 0, 100)
    tb.kernel("gemm_neg", 10, -3.5, launch_at_us=5)
    return tb.write(d / "rank0.json.gz"), ["NaN or negative 'dur'", "gemm_neg"]


def _nan_ts(d):
    tb = TraceBuilder(rank=0, world_size=1)
    tb.raw({"ph": "X", "cat": "kernel", "name": "k_nan_ts", "pid": 0, "tid": 7, "ts": float("nan"), "dur": 1.0})
    return tb.write(d / "rank0.json"), ["'ts'", "k_nan_ts"]


BROKEN = {
    "truncated_json": _truncated_json, "corrupt_gzip": _corrupt_gzip, "truncated_gzip": _truncated_gzip,
    "nan_dur": _nan_dur, "negative_dur": _negative_dur, "nan_ts": _nan_ts,
    **{case: _literal(*spec) for case, spec in LITERAL.items()},
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_broken_file(tmp_path, case):
    p, words = BROKEN[case](tmp_path)
    expect_input_error(p, p, *words)           # the file itself
    expect_input_error(tmp_path, p, *words)    # its directory


def test_missing_path(tmp_path):
    p = tmp_path / "no_such_run"
    expect_input_error(p, p, "no such file or directory")


def test_empty_directory(tmp_path):
    expect_input_error(tmp_path, tmp_path, "no *.json or *.json.gz")


def test_directory_without_trace_files(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    (tmp_path / "run.json").write_text("{}")   # a manifest is not a trace
    expect_input_error(tmp_path, tmp_path, "no *.json or *.json.gz")


# -- several files ------------------------------------------------------------------------------
def test_duplicate_ranks_names_both_files(tmp_path):
    a = good(tmp_path / "a.json.gz", rank=0, world_size=2)
    b = good(tmp_path / "b.json.gz", rank=0, world_size=2)
    expect_set_error(tmp_path, "rank 0", a, b)


def test_mixed_runs_world_size(tmp_path):
    a = good(tmp_path / "rank0.json.gz", rank=0, world_size=2)
    b = good(tmp_path / "rank1.json.gz", rank=1, world_size=4)
    expect_set_error(tmp_path, "world_size", a, b)


def test_mixed_runs_process_groups(tmp_path):
    good(tmp_path / "rank0.json.gz", rank=0, world_size=2)
    other_pg = [{"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cuda:nccl", "pg_size": 2,
                 "ranks": [1, 0, 5]}]
    b = good(tmp_path / "rank1.json.gz", rank=1, world_size=2, pg_config=other_pg)
    expect_set_error(tmp_path, "process-group config", b)


def test_subgroups_are_not_mixed_runs(tmp_path):
    for r in range(4):
        mine = [0, 1] if r < 2 else [2, 3]
        pgs = [{"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cuda:nccl", "pg_size": 4,
                "ranks": [0, 1, 2, 3]},
               {"pg_name": "1" if r < 2 else "2", "pg_desc": "tp", "backend_config": "cuda:nccl", "pg_size": 2,
                "ranks": mine}]
        good(tmp_path / f"rank{r}.json.gz", rank=r, world_size=4, pg_config=pgs)
    assert sorted(load(tmp_path).ranks) == [0, 1, 2, 3]


def test_rank_out_of_range(tmp_path):
    good(tmp_path / "rank0.json.gz", rank=0, world_size=2)
    b = good(tmp_path / "rank5.json.gz", rank=5, world_size=2)
    expect_set_error(tmp_path, "[5]", b)


def test_missing_ranks_warn_and_analysis_proceeds(tmp_path):
    good(tmp_path / "rank0.json.gz", rank=0, world_size=4)
    good(tmp_path / "rank2.json.gz", rank=2, world_size=4)
    with pytest.warns(TraceLoadWarning, match=r"rank\(s\) \[1, 3\]"):
        ts = load(tmp_path)
    assert sorted(ts.ranks) == [0, 2] and ts.missing_ranks == [1, 3]
    res = analyze(ts)
    assert res.meta["missing_ranks"] == [1, 3]
    assert res.ranks["rank"].tolist() == [0, 2]
    assert res.ranks["compute_total_us"].tolist() == [20, 20]


# workers=2: the same files through the parse-worker pool (small inputs are parsed serially by default)
@pytest.mark.parametrize("workers", [None, 2])
def test_skip_bad_keeps_the_good_rank(tmp_path, workers):
    good(tmp_path / "rank0.json.gz", rank=0, world_size=2)
    bad = good(tmp_path / "rank1.json.gz", rank=1, world_size=2)
    bad.write_bytes(bad.read_bytes()[:50])
    with pytest.warns(TraceLoadWarning) as rec:
        ts = load(tmp_path, skip_bad=True, workers=workers)
    msgs = [str(w.message) for w in rec]
    assert any("skipped" in m and str(bad) in m for m in msgs), msgs
    assert sorted(ts.ranks) == [0]
    assert [p for p, _ in ts.skipped] == [str(bad)]
    assert "truncated gzip" in ts.skipped[0][1]
    res = analyze(ts)
    assert res.meta["skipped_files"] == [{"path": str(bad), "problem": ts.skipped[0][1]}]
    assert res.ranks["rank"].tolist() == [0]


@pytest.mark.parametrize("workers", [None, 2])
def test_without_skip_bad_the_bad_file_is_named(tmp_path, workers):
    good(tmp_path / "rank0.json.gz", rank=0, world_size=2)
    bad = tmp_path / "rank1.json.gz"
    bad.write_bytes(gzip.compress(b"{not json"))
    expect_input_error(tmp_path, bad, "not valid JSON", workers=workers)


def test_skip_bad_with_nothing_left(tmp_path):
    a, b = tmp_path / "rank0.json", tmp_path / "rank1.json"
    a.write_text("nope")
    b.write_text('{"traceEvents": []}')
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TraceLoadWarning)
        with pytest.raises(TraceSetError) as ei:
            load(tmp_path, skip_bad=True)
    msg = one_line(str(ei.value))
    assert str(a) in msg and str(b) in msg


def test_bad_file_with_parallel_workers(tmp_path):
    good(tmp_path / "rank0.json.gz", rank=0, world_size=2)
    bad = tmp_path / "rank1.json"
    bad.write_text("nope")
    expect_input_error(tmp_path, bad, "not valid JSON", workers=2)


# -- CLI ------------------------------------------------------------------------------------
def cli(*args: str):
    from tracekit.cli import main

    return CliRunner().invoke(main, ["analyze", *map(str, args)])


def assert_cli_error(result, *needles: str) -> str:
    out = result.output
    assert "Traceback" not in out, out
    assert result.exit_code == 2, (result.exit_code, out)
    lines = out.strip().splitlines()
    assert len(lines) == 1, out
    assert lines[0].startswith("error:"), out
    for n in needles:
        assert n in lines[0], (n, out)
    return lines[0]


@pytest.mark.parametrize("case", ["truncated_json", "corrupt_gzip", "truncated_gzip", "not_json",
                                  "no_trace_events", "empty_trace_events", "nan_dur", "negative_dur"])
def test_cli_broken_file(tmp_path, case):
    p, words = BROKEN[case](tmp_path)
    assert_cli_error(cli(p), p.name, *words)


def test_cli_missing_path(tmp_path):
    assert_cli_error(cli(tmp_path / "no_such_run"), "no_such_run", "no such file")


def test_cli_empty_directory(tmp_path):
    d = tmp_path / "empty_run"
    d.mkdir()
    assert_cli_error(cli(d), "empty_run")


def test_cli_duplicate_ranks(tmp_path):
    good(tmp_path / "first.json.gz", rank=0, world_size=2)
    good(tmp_path / "second.json.gz", rank=0, world_size=2)
    assert_cli_error(cli(tmp_path), "first.json.gz", "second.json.gz")


def test_cli_mixed_runs(tmp_path):
    good(tmp_path / "rank0.json.gz", rank=0, world_size=2)
    good(tmp_path / "rank1.json.gz", rank=1, world_size=4)
    assert_cli_error(cli(tmp_path), "rank0.json.gz", "rank1.json.gz", "world_size")


def test_cli_skip_bad(tmp_path):
    good(tmp_path / "rank0.json.gz", rank=0, world_size=2)
    bad = tmp_path / "rank1.json.gz"
    bad.write_bytes(b"\x1f\x8b garbage")
    r = CliRunner().invoke(__import__("tracekit.cli", fromlist=["main"]).main,
                           ["analyze", str(tmp_path), "--skip-bad", "--format", "json"])
    assert "Traceback" not in r.output, r.output
    assert r.exit_code == 0, r.output
    warn = [ln for ln in r.output.splitlines() if ln.startswith("warning:")]
    assert any("rank1.json.gz" in ln for ln in warn), r.output


def test_cli_debug_shows_the_exception(tmp_path):
    r = cli(tmp_path / "no_such_run", "--debug")
    assert isinstance(r.exception, TraceInputError), (r.exception, r.output)


# -- hostile input, through the CLI ---------------------------------------------------------------
# Every case: either exit 2 with one ``error:`` line naming the file and the problem, or exit 0
# with a ``warning:`` line naming the file and what was dropped; never a traceback.

DEEP = 20_000  # beyond Python's recursion limit (1000) and msgspec's


def _kernel(**over) -> dict:
    e = {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 20.0, "dur": 5.0,
         "args": {"stream": 7, "correlation": 11, "External id": 3}}
    e.update(over)
    return e


def _coll(**args) -> dict:
    a = {"stream": 7, "correlation": 12, "Collective name": "allreduce", "In msg nelems": 10,
         "Out msg nelems": 10, "Group size": 2, "dtype": "Float", "Process Group Name": "0", "Seq": 1}
    a.update(args)
    return _kernel(name="ncclDevKernel_AllReduce_Sum_f32_RING_LL", ts=40.0, args=a)


def _trace(*events, step: str = "ProfilerStep#1", **head) -> str:
    doc = {"distributedInfo": {"rank": 0, "world_size": 1}, **head,
           "traceEvents": [{"ph": "X", "cat": "user_annotation", "name": step, "pid": 1, "tid": 1, "ts": 0.0,
                            "dur": 100.0}, *events]}
    return json.dumps(doc)


def _raw_event(ev_json: str) -> str:
    """A trace whose one kernel is ``ev_json``, spliced in as text (for values json.dumps cannot write)."""
    return _trace(_kernel()).replace(json.dumps(_kernel()), ev_json)


#: case -> (file content, str or bytes; words the error line must hold)
HOSTILE_ERRORS: dict[str, tuple[str | bytes, list[str]]] = {
    "deep_args": (_raw_event('{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1, "args": {"x": '
                             + "[" * DEEP + "]" * DEEP + "}}"), ["nested too deeply"]),
    "deep_event_list": ('{"traceEvents": ' + "[" * DEEP + "]" * DEEP + "}", ["nested too deeply"]),
    "deep_header_object": ('{"extra": ' + '{"a": ' * DEEP + "1" + "}" * DEEP + ', "traceEvents": []}',
                           ["nested too deeply"]),
    "ts_numeric_string": (_trace(_kernel(ts="1234.5")), ["'ts'", "gemm"]),
    "ts_null": (_trace(_kernel(ts=None)), ["'ts'"]),
    "ts_missing": (_raw_event('{"ph": "X", "cat": "kernel", "name": "no_ts", "dur": 1}'), ["'ts'", "no_ts"]),
    "ts_bool": (_trace(_kernel(ts=True)), ["'ts'"]),
    "ts_object": (_trace(_kernel(ts={"us": 5})), ["'ts'"]),
    "ts_list": (_trace(_kernel(ts=[5])), ["'ts'"]),
    "ts_infinity": (_raw_event('{"ph": "X", "cat": "kernel", "name": "k", "ts": Infinity, "dur": 1}'), ["'ts'"]),
    "ts_minus_infinity": (_raw_event('{"ph": "X", "cat": "kernel", "name": "k", "ts": -Infinity, "dur": 1}'),
                          ["'ts'"]),
    "ts_beyond_float": (_raw_event('{"ph": "X", "cat": "kernel", "name": "k", "ts": 1e400, "dur": 1}'),
                        ["Number out of range"]),
    "dur_numeric_string": (_trace(_kernel(dur="5")), ["'dur'", "gemm"]),
    "dur_list": (_trace(_kernel(dur=[5])), ["'dur'"]),
    "dur_infinity": (_raw_event('{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": Infinity}'), ["'dur'"]),
    "dur_minus_infinity": (_raw_event('{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": -Infinity}'),
                           ["'dur'"]),
    "trace_events_string": ('{"traceEvents": "abc"}', ["not a list"]),
    "trace_events_object": ('{"traceEvents": {"ph": "X"}}', ["not a list"]),
    "trace_events_null": ('{"traceEvents": null}', ["traceEvents"]),
    "top_level_string": ('"hello"', ["not a profiler trace: the file holds"]),
    "top_level_number": ("42", ["not a profiler trace: the file holds"]),
    "top_level_null": ("null", ["not a profiler trace: the file holds"]),
    "top_level_true": ("true", ["not a profiler trace: the file holds"]),
    "nul_bytes": (b"\0" * 64, ["not valid JSON"]),
    "binary_garbage": (bytes(range(256)) * 4, ["not valid JSON"]),
    "trailing_garbage": (_trace(_kernel()) + " trailing", ["not valid JSON"]),
    "two_documents": (_trace(_kernel()) * 2, ["not valid JSON"]),
    "unclosed_string": ('{"traceEvents": [{"ph": "X", "name": "k', ["JSON"]),
    "whitespace_only": (" \n\t \n", ["empty file"]),
    "invalid_utf8_in_string": (_trace(_kernel(name="XX")).encode().replace(b'"XX"', b'"\xff\xfe"'),
                               ["not valid JSON"]),
    "event_string": ('{"traceEvents": ["X"]}', ["traceEvents[0]"]),
    "event_null": ('{"traceEvents": [' + json.dumps(_kernel()) + ", null]}", ["traceEvents[1]"]),
    "event_list": ('{"traceEvents": [[1, 2]]}', ["traceEvents[0]"]),
    "gzip_of_nothing": (gzip.compress(b""), ["empty file"]),
    "gzip_of_garbage": (gzip.compress(b"hello world"), ["not valid JSON"]),
    "gzip_twice": (gzip.compress(gzip.compress(_trace(_kernel()).encode())), ["not valid JSON"]),
}


def _hostile_file(tmp_path: Path, case: str) -> Path:
    content, _ = HOSTILE_ERRORS[case]
    gz = isinstance(content, bytes) and content[:2] == b"\x1f\x8b"
    p = tmp_path / ("rank0.json.gz" if gz else "rank0.json")
    p.write_bytes(content if isinstance(content, bytes) else content.encode())
    return p


@pytest.mark.parametrize("case", sorted(HOSTILE_ERRORS))
def test_cli_hostile_file_is_one_error_line(tmp_path, case):
    p = _hostile_file(tmp_path, case)
    assert_cli_error(cli(p), str(p), *HOSTILE_ERRORS[case][1])


#: case -> (file content, words the warning must hold): the rest of the trace is analysed
HOSTILE_WARNINGS: dict[str, tuple[str, list[str]]] = {
    "correlation_beyond_int64": (_trace(_kernel(args={"stream": 7, "correlation": 2**70})), ["'correlation'"]),
    "correlation_below_int64": (_trace(_kernel(args={"stream": 7, "correlation": -(2**70)})), ["'correlation'"]),
    "external_id_beyond_int64": (_trace(_kernel(args={"stream": 7, "External id": 2**64})), ["'external_id'"]),
    "stream_beyond_int64": (_trace(_kernel(args={"stream": 2**80, "correlation": 1})), ["'stream'"]),
    "pid_beyond_int64": (_trace(_kernel(pid=2**70)), ["'pid'"]),
    "tid_beyond_int64": (_trace(_kernel(tid=2**70)), ["'tid'"]),
    "nelems_beyond_int64": (_trace(_coll(**{"In msg nelems": 2**90})), ["'in_nelems'"]),
    "group_size_beyond_int64": (_trace(_coll(**{"Group size": 2**90})), ["'group_size'"]),
    "seq_beyond_int64": (_trace(_coll(Seq=2**90)), ["'seq'"]),
    "ts_minus_one": (_trace(_kernel(ts=-1.0), _kernel(ts=30.0)), ["1 event(s) with implausible times", "ts=-1"]),
    "ts_1e308": (_trace(_kernel(ts=1e308)), ["implausible times", "ts=1e+308"]),
    "ts_beyond_int64_ns": (_trace(_kernel(ts=9.3e15)), ["implausible times"]),
    "dur_1e15_us": (_trace(_kernel(dur=1e15)), ["implausible times", "dur=1e+15"]),
    "every_event_implausible": (_trace(_kernel(ts=-5.0), _kernel(dur=1e16)).replace('"ts": 0.0', '"ts": -3.0'),
                                ["3 event(s) with implausible times"]),
    "negative_step_number": (_trace(_kernel(), step="ProfilerStep#-3"), ["negative step number", "#-3"]),
}


@pytest.mark.parametrize("case", sorted(HOSTILE_WARNINGS))
@pytest.mark.parametrize("fmt", ["table", "json"])
def test_cli_hostile_values_dropped_with_a_warning(tmp_path, case, fmt):
    content, words = HOSTILE_WARNINGS[case]
    p = tmp_path / "rank0.json"
    p.write_text(content)
    r = cli(p, "--format", fmt)
    assert "Traceback" not in r.output, r.output
    assert r.exit_code == 0, r.output
    warn = [ln for ln in r.output.splitlines() if ln.startswith("warning:") and str(p) in ln and "dropped" in ln]
    assert len(warn) == 1, r.output
    for w in words:
        assert w in warn[0], (w, warn[0])


@pytest.mark.parametrize("engine", [False, True], ids=["parse_path", "engine_path"])
def test_dropped_values_of_many_files_warn_in_few_lines(tmp_path, engine):
    """Twenty rank files each dropping values: the first three files (in rank order) warn each, the other 17 are
    one line per kind of value with the values summed; the run note counts every file (16384 rank files
    printed 16384 lines). Both load paths: the parse path (``keep_events``) and the engine's workers."""
    for r in range(20):
        bad = [_kernel(args={"stream": 7, "correlation": 2**70})] * (1 + r % 2) + [_kernel(ts=-1.0)] * (r >= 10)
        doc = json.loads(_trace(*bad))
        doc["distributedInfo"] = {"rank": r, "world_size": 20}
        (tmp_path / f"rank{r}.trace.json").write_text(json.dumps(doc))
    from tracekit.runner.pipeline import load_and_analyze
    from tracekit.runner.options import RunOptions

    with pytest.warns(TraceLoadWarning) as rec:
        _, res = load_and_analyze([str(tmp_path)], RunOptions.of(keep_events=not engine))
    msgs = [str(w.message) for w in rec if "dropped" in str(w.message)]
    first = [m for m in msgs if m.startswith(str(tmp_path))]
    assert [m.split(":")[0] for m in first] == [str(tmp_path / f"rank{r}.trace.json") for r in (0, 1, 2)]
    assert first[1].startswith(f"{tmp_path / 'rank1.trace.json'}: dropped 2 value(s) of 'correlation'")
    # rank r drops 1 + r % 2 correlations; ranks 10-19 one implausible time each
    assert msgs[3:] == [
        f"17 more rank files (rank3.trace.json, ...) dropped {sum(1 + r % 2 for r in range(3, 20))} value(s) of "
        "'correlation' beyond the 64-bit "
        "integer range (treated as absent) in all",
        "10 more rank files (rank10.trace.json, ...) dropped 10 event(s) with implausible times (ts < 0 or ≥ 4e+15 µs, or "
        "dur > 1 day) in all"]
    assert res.meta["notes"] == [
        f"the decoder dropped {sum(1 + r % 2 for r in range(20))} value(s) of 'correlation' beyond the 64-bit integer range "
        "(treated as absent) (20 rank files); 10 event(s) with implausible times (ts < 0 or ≥ 4e+15 µs, or dur > 1 day) "
        "(10 rank files)"]


def test_a_warning_raised_in_many_workers_prints_in_few_lines(tmp_path):
    """A per-file warning raised while the engine's workers analyse 20 rank files (a negative ProfilerStep
    number, found by the rank tables): three lines naming their files, then one line for the other 17."""
    for r in range(20):
        doc = json.loads(_trace(_kernel(), step=f"ProfilerStep#-{r + 1}"))
        doc["distributedInfo"] = {"rank": r, "world_size": 20}
        (tmp_path / f"rank{r:02d}.trace.json").write_text(json.dumps(doc))
    r = cli(tmp_path, "-o", tmp_path / "out.txt")
    assert r.exit_code == 0, r.output
    lines = [ln for ln in r.output.splitlines() if "negative step number" in ln]
    assert lines[:3] == [f"warning: {tmp_path / f'rank{i:02d}.trace.json'}: dropped 1 ProfilerStep range(s) with a "
                         f"negative step number (first #-{i + 1})" for i in range(3)]
    assert lines[3:] == ["warning: 17 more rank files (rank03.trace.json, ...) warned the same (first of them: dropped 1 "
                         "ProfilerStep range(s) with a negative step number (first #-4))"]


def test_dropped_values_are_absent_not_wrong(tmp_path):
    # the kernel whose correlation was dropped is kept, but not linked to a launch
    p = tmp_path / "rank0.json"
    p.write_text(_trace(_kernel(args={"stream": 7, "correlation": 2**70}), _kernel(ts=-1.0)))
    with pytest.warns(TraceLoadWarning):
        ts = load(p)
    g = ts.ranks[0].gpu
    assert len(g) == 1 and g["correlation"].tolist() == [-1] and g["ts_ns"].tolist() == [20_000]


# -- what reaches the terminal, and where the report goes ----------------------------------------

ANSI = "\x1b[31mred\r\x1b[0m\x07x"


def test_ansi_escapes_in_names_are_escaped_in_text_and_exact_in_json(tmp_path):
    p = tmp_path / "rank0.json"
    p.write_text(_trace(_coll(**{"Collective name": f"allreduce{ANSI}"}), _kernel(name=f"gemm{ANSI}")))
    text = cli(p, "--table", "collectives")
    assert text.exit_code == 0, text.output
    assert "\x1b" not in text.output and "\x07" not in text.output and "\r" not in text.output
    assert "allreduce\\x1b[31mred\\x0d\\x1b[0m\\x07x" in text.output
    js = cli(p, "--format", "json")
    assert js.exit_code == 0
    doc = json.loads(js.output[js.output.index("{"):])
    assert {c["coll_name"] for c in doc["collectives"]} == {f"allreduce{ANSI}"}


@pytest.mark.parametrize("fmt", ["table", "markdown", "json", "csv"])
def test_file_name_with_invalid_utf8_and_escapes(tmp_path, fmt):
    name = b"rank0\xff\x1b[2J.json".decode("utf-8", "surrogateescape")
    d = tmp_path / "run"
    d.mkdir()
    p = d / name
    p.write_text(_trace(_kernel()))
    r = cli(d, "--format", fmt)
    assert "Traceback" not in r.output, r.output
    assert r.exit_code == 0, r.output
    assert "\x1b" not in r.output.replace("\\u001b", "")


def test_file_name_with_invalid_utf8_in_an_error(tmp_path):
    name = b"rank0\xff\x1b[2J.json".decode("utf-8", "surrogateescape")
    p = tmp_path / name
    p.write_text("garbage")
    line = assert_cli_error(cli(tmp_path), "rank0\\xff\\x1b[2J.json", "not valid JSON")
    assert "\x1b" not in line


@pytest.mark.parametrize("target, words", [
    ("missing_dir/report.txt", ["missing_dir", "No such file or directory"]),
    ("/dev/full", ["/dev/full", "No space left on device"]),
])
def test_cli_output_that_cannot_be_written(tmp_path, target, words):
    if target == "/dev/full" and not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    trace = tmp_path / "rank0.json"
    trace.write_text(_trace(_kernel()))
    out = target if target.startswith("/") else str(tmp_path / target)
    r = CliRunner().invoke(__import__("tracekit.cli", fromlist=["main"]).main,
                           ["analyze", str(trace), "-o", out])
    assert_cli_error(r, "cannot write the report", *words)


def test_a_json_file_that_is_no_trace_beside_traces_is_ignored_with_a_warning(tmp_path):
    """A results or config file in the run folder (``{"period_ms": 25.8}``) is no rank: the traces are analysed,
    the file is named in a warning and in ``meta.notes``; given by name it is still an error."""
    good(tmp_path / "rank0.trace.json")
    other = tmp_path / "truth.json"
    other.write_text('{"period_ms": 25.8}')
    with pytest.warns(TraceLoadWarning, match=r"ignored 1 JSON file .*not a profiler trace.*truth\.json"):
        ts = load(tmp_path)
    assert sorted(ts.ranks) == [0] and ts.skipped == []
    assert any("truth.json" in n for n in ts.notes)
    expect_input_error(other, other, "no 'traceEvents' list")
    res = CliRunner().invoke(__import__("tracekit.cli", fromlist=["main"]).main,
                             ["analyze", str(tmp_path), "--format", "json"])
    assert res.exit_code == 0
    doc = json.loads(res.stdout if hasattr(res, "stdout") else res.output)
    assert any("truth.json" in n for n in doc["meta"]["notes"])


def test_the_engine_ignores_a_json_file_that_is_no_trace_too(tmp_path):
    from tracekit.runner import engine

    for r in (0, 1):
        good(tmp_path / f"rank{r}.trace.json", rank=r, world_size=2)
    (tmp_path / "metrics.json").write_text('{"loss": [1.0, 0.5]}')
    with pytest.warns(TraceLoadWarning, match=r"ignored 1 JSON file .*metrics\.json"):
        ts, tables = engine.map_paths([str(tmp_path)], workers=2)
    assert sorted(ts.ranks) == [0, 1] and any("metrics.json" in n for n in ts.notes)
    assert sorted(set(tables["steps"]["rank"])) == [0, 1]


@pytest.mark.parametrize("name", ["rank0.json", "worker0.1700000000.pt.trace.json", "host.123.pt.trace.json"])
def test_broken_rank_file_beside_a_good_one_is_named_with_its_problem(tmp_path: Path, name: str) -> None:
    """A rank's file without ``traceEvents`` (an interrupted write) beside a good rank: the error names that file
    and what is wrong with it, rather than ignoring it as a config file and reporting rank 0 missing."""
    tb = TraceBuilder(rank=1, world_size=2)
    tb.step(1, 0, 1000)
    tb.write(tmp_path / "rank1.json")
    (tmp_path / name).write_text(json.dumps({"schemaVersion": 1, "distributedInfo": {"rank": 0, "world_size": 2}}))
    line = assert_cli_error(cli(tmp_path), name, "no 'traceEvents' list")
    assert "no trace for rank" not in line
    with pytest.warns(TraceLoadWarning, match=f"skipped .*{name}: JSON has no 'traceEvents' list"):
        load(tmp_path, skip_bad=True)


def test_compare_folder_points_to_its_runs(tmp_path: Path) -> None:
    """A ``profile --compare`` folder (one run per subfolder) is not one run with each rank twice: one line names
    the runs and the commands that fit them."""
    for v in ("eager", "inductor"):
        for r in (0, 1):
            tb = TraceBuilder(rank=r, world_size=2)
            tb.step(1, 0, 1000)
            (tmp_path / v).mkdir(exist_ok=True)
            tb.write(tmp_path / v / f"rank{r}.json")
    line = assert_cli_error(cli(tmp_path), "2 runs, one per folder", f"tracekit analyze {tmp_path / 'eager'}",
                            f"tracekit diff {tmp_path / 'eager'} {tmp_path / 'inductor'}")
    assert "appears twice" not in line
