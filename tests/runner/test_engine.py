"""The engines (tracekit.runner.engine): per-rank map on workers, cross-rank step here.

- batching is pure logic;
- many hand-built ranks through the local engine: the cross-rank numbers by hand,
  and the same tables as the parse-then-analyse path;
- ``--engine dask`` on a local 2-worker cluster started by the test gives the
  results of ``--engine local``, skips a bad rank like local, and needs
  ``distributed`` (one-line error without it);
- progress bars appear only when asked for (or on a terminal).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import tracekit
from tracekit import progress
from tracekit.runner import engine, pipeline
from tracekit.runner.options import RunOptions
from tracekit.runner.pipeline import analyze_paths
from tracekit.runner.run import analyze
from tracekit.errors import MissingDependencyError, TraceInputError
from tracekit.report.render import to_json_dict
from tracekit.cli import main as cli_main
from tracekit.traces.loader import TraceLoadWarning, start_load

try:
    from tests.tracebuilder import TraceBuilder, write_skewed_ranks
except ImportError:  # tests/ not a package
    from tracebuilder import TraceBuilder, write_skewed_ranks

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "sample_traces" / "fixtures/eager_ddp"
N_RANKS = pipeline.ENGINE_MIN_FILES + 4  # enough files for the engine path of analyze_paths


def _report(res) -> dict:  # noqa: ANN001
    return json.loads(json.dumps(to_json_dict(res), default=str))


def _classic(path: Path) -> dict:
    """The parse path: events loaded here, then the per-rank pass over them."""
    return _report(analyze(tracekit.load(path)))


def _skewed_ranks(d: Path, n: int = N_RANKS) -> Path:
    """``n`` ranks; rank r's allreduce kernel starts r µs after rank 0's."""
    return write_skewed_ranks(d, n)


def test_batches_split_by_bytes_in_order() -> None:
    files = [("a", 10), ("b", 10), ("c", 80), ("d", 10), ("e", 10)]
    got = engine.batches(files, 3)
    assert [f for b in got for f in b] == files  # every file once, in order
    assert 1 < len(got) <= 3 and all(got)
    assert engine.batches(files, 99) == [[f] for f in files]  # never more batches than files
    assert engine.batches(files[:1], 4) == [files[:1]]


def test_many_ranks_local_engine_by_hand(tmp_path: Path) -> None:
    d = _skewed_ranks(tmp_path)
    res = analyze_paths([str(d)])  # N_RANKS files: the engine path
    last = N_RANKS - 1
    inst = res.instances
    assert len(inst) == 1 and inst.iloc[0]["ranks"] == N_RANKS
    assert inst.iloc[0]["straggler"] == last
    assert inst.iloc[0]["skew_us"] == pytest.approx(last)
    wait = res.waits.set_index("rank")["wait_us"]
    assert [wait[r] for r in range(N_RANKS)] == pytest.approx([last - r for r in range(N_RANKS)])
    assert res.ranks["rank"].tolist() == list(range(N_RANKS))
    assert _report(res) == _classic(d)


@pytest.mark.parametrize("run", ["fixtures/eager_ddp", "examples/inductor_graph_break"])
def test_local_engine_equals_parse_then_analyse(run: str) -> None:
    d = REPO / "sample_traces" / run
    ts, tables = engine.map_paths([str(d)], engine="local", workers=2)
    assert _report(analyze(ts, tables=tables)) == _classic(d)


@pytest.mark.filterwarnings("ignore:world_size is 3 but no trace for rank")  # rank 1 is the skipped one
def test_local_engine_skip_bad_and_named_error(tmp_path: Path) -> None:
    d = _skewed_ranks(tmp_path, 3)
    bad = d / "rank1.trace.json"
    bad.write_text("{nope")
    with pytest.raises(TraceInputError, match="rank1.trace.json"):
        engine.map_paths([str(d)], workers=2)
    with pytest.warns(TraceLoadWarning, match="skipped .*rank1"):
        ts, tables = engine.map_paths([str(d)], workers=2, skip_bad=True)
    assert sorted(ts.ranks) == [0, 2] and [p for p, _ in ts.skipped] == [str(bad)]
    assert sorted(set(tables["steps"]["rank"])) == [0, 2]


def test_dask_missing_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(MissingDependencyError, match=r"tracekit\[dask\]"):
        analyze_paths([str(SAMPLE)], RunOptions(engine="dask"))
    r = CliRunner().invoke(cli_main, ["analyze", str(SAMPLE), "--engine", "dask"])
    assert r.exit_code == 2 and r.output.count("\n") == 1 and "distributed" in r.output


def test_engine_option_errors() -> None:
    from tracekit.errors import ConfigError

    with pytest.raises(ConfigError, match="--hta"):
        analyze_paths([str(SAMPLE)], RunOptions.of(engine="dask", hta=True))
    with pytest.raises(ConfigError, match="HTML report"):
        pipeline.load_and_analyze([str(SAMPLE)], RunOptions(engine="dask"))
    with pytest.raises(ConfigError, match="--scheduler needs --engine dask"):
        analyze_paths([str(SAMPLE)], RunOptions(scheduler="tcp://127.0.0.1:1"))


# The cluster runs in a child process: dask leaves threads behind (event loop, offload pool),
# and the rest of the suite forks worker processes, which is unsafe in a process with threads.
_DASK_SCRIPT = """
import json, sys, warnings
from distributed import LocalCluster
from tracekit.runner.options import RunOptions
from tracekit.runner.pipeline import analyze_paths
from tracekit.errors import TraceInputError
from tracekit.report.render import to_json_dict

if __name__ == "__main__":
    out = {}
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        run = lambda path, **kw: analyze_paths([path], RunOptions(engine="dask", scheduler=cluster.scheduler_address, **kw))
        for name, path in json.loads(sys.argv[1]).items():
            out[name] = to_json_dict(run(path))
        bad = sys.argv[2]
        try:
            run(bad)
        except TraceInputError as e:
            out["error"] = str(e)
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            out["skip_bad_ranks"] = [r["rank"] for r in to_json_dict(run(bad, skip_bad=True))["ranks"]]
        out["warnings"] = [str(w.message) for w in rec]
    print(json.dumps(out, default=str))
"""


@pytest.mark.slow
def test_dask_engine_equals_local(tmp_path: Path) -> None:
    """A local 2-worker dask cluster (processes, one thread each) gives the local results,
    names a bad rank file, and skips it with --skip-bad like local."""
    pytest.importorskip("distributed")
    many = _skewed_ranks(tmp_path / "many")
    bad = _skewed_ranks(tmp_path / "bad", 3)
    (bad / "rank2.trace.json").write_bytes(b"\x1f\x8b broken")
    script = tmp_path / "run_dask.py"
    script.write_text(_DASK_SCRIPT)
    runs = {"sample": str(SAMPLE), "many": str(many)}
    r = subprocess.run([sys.executable, str(script), json.dumps(runs), str(bad)], capture_output=True, text=True,
                       timeout=240, cwd=REPO)
    assert r.returncode == 0, r.stderr[-3000:]
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert got["sample"] == _report(analyze_paths([str(SAMPLE)]))
    assert got["many"] == _classic(many)
    assert "rank2.trace.json" in got["error"]
    assert got["skip_bad_ranks"] == [0, 1]
    assert any("skipped" in w and "rank2" in w for w in got["warnings"])


def test_progress_only_when_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(progress, "DELAY_S", 0.0)
    d = _skewed_ranks(tmp_path)
    analyze_paths([str(d)])  # stderr is not a terminal here: no bar
    assert capsys.readouterr().err == ""
    analyze_paths([str(d)], RunOptions(progress=True))
    err = capsys.readouterr().err
    assert "analyzing ranks" in err and "%|" in err  # tqdm's bar
    pending = start_load(SAMPLE, progress=True)
    pending.result()
    err = capsys.readouterr().err
    assert "decoding" in err and "%|" in err


def test_missing_ranks_warning_is_one_short_line(tmp_path: Path) -> None:
    from tracekit.traces.loader import rank_ranges

    assert rank_ranges([0, 1, 2, 3, 7, 9, 10]) == "[0-3, 7, 9-10]" and rank_ranges([]) == "[]"
    for r in (0, 1, 5):
        TraceBuilder(rank=r, world_size=2048).write(tmp_path / f"rank{r}.trace.json")
    with pytest.warns(TraceLoadWarning) as rec:
        tracekit.load(tmp_path)
    msg = str(rec[0].message)
    assert "no trace for rank(s) [2-4, 6-2047]" in msg and "analyzing ranks [0-1, 5]" in msg


def test_progress_wanted_follows_the_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    class Tty:
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(sys, "stderr", Tty())
    assert progress.wanted(None) and not progress.wanted(False)
    monkeypatch.setattr(sys, "stderr", object())
    assert not progress.wanted(None) and progress.wanted(True)


def test_the_engine_path_lists_the_folder_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """analyze_paths decides on the engine path by the number of files and hands that listing on (16384 files
    take 0.2 s to list); the tables are those of a fresh listing."""
    from tracekit.traces import loader

    d = _skewed_ranks(tmp_path / "run")
    want = _report(analyze_paths([str(d)]))
    calls = []
    real = loader.find_trace_files
    monkeypatch.setattr(loader, "find_trace_files", lambda paths: calls.append(paths) or real(paths))
    assert _report(analyze_paths([str(d)])) == want
    assert len(calls) == 1


def test_folder_listing_as_rglob(tmp_path: Path) -> None:
    """find_trace_files walks a folder as Path.rglob did: nested files, symlinked files, not symlinked folders nor
    broken links nor run.json / other suffixes, in Path order (``a-b/`` sorts after ``a/`` as a path, before it as
    text)."""
    from tracekit.traces.loader import find_trace_files

    root = tmp_path / "run"
    for rel in ("rank1.json", "a/rank0.json.gz", "a-b/rank2.json", "a/b/c/rank3.json", "real/x.json", "run.json",
                "a/notes.txt", "a/manifest.json"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("{}")
    (root / "dirlink").symlink_to(root / "real", target_is_directory=True)
    (root / "filelink.json").symlink_to(root / "real" / "x.json")
    (root / "broken.json").symlink_to(root / "nowhere.json")
    want = sorted(f for f in root.rglob("*") if f.is_file() and f.name.endswith((".json", ".json.gz"))
                  and f.name not in ("run.json", "manifest.json"))
    got = find_trace_files(root)
    assert got == want
    assert [str(p.relative_to(root)) for p in got] == [
        "a/b/c/rank3.json", "a/rank0.json.gz", "a-b/rank2.json", "filelink.json", "rank1.json", "real/x.json"]


def test_an_unreadable_folder_is_named_not_dropped_silently(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder the walk cannot open is skipped with a TraceLoadWarning naming it; the others are listed. (As root,
    a chmod does not stop reading: os.scandir is made to fail for that folder instead.)"""
    import os

    from tracekit.traces import loader

    root = tmp_path / "run"
    for rel in ("rank0.json", "locked/rank1.json"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("{}")
    real = os.scandir

    def scandir(path):  # noqa: ANN001, ANN202
        if str(path).endswith("locked"):
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(loader.os, "scandir", scandir)
    with pytest.warns(TraceLoadWarning, match=r"locked: cannot read this folder \(Permission denied\)"):
        got = loader.find_trace_files(root)
    assert got == [root / "rank0.json"]
