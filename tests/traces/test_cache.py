"""The cache of decoded traces and computed tables (tracekit.traces.cache): served only for the very file it was
computed from, by the same decoder and code; capped with least-recently-used eviction; safe under concurrent
writers; a cache folder that cannot be written is no error; outputs identical with and without it."""

from __future__ import annotations

import ast
import errno
import json
import mmap
import multiprocessing
import os
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import tracekit
from tests.tracebuilder import TraceBuilder, write_skewed_ranks
from tracekit.cli import main
from tracekit.traces import cache, decode, loader

SAMPLE = Path(__file__).resolve().parents[2] / "sample_traces"


def _trace(path: Path, kernel: str = "gemm_a", gz: bool = False) -> Path:
    tb = TraceBuilder(rank=0, world_size=1, distributed=False)
    tb.step(1, 0, 100)
    tb.kernel(kernel, 10, 20, launch_at_us=5)
    tb.kernel("gemm_b", 40, 20, launch_at_us=35)
    return tb.write(path, gz=gz)


def _same_columns(a: decode.Columns, b: decode.Columns) -> None:
    assert a.n == b.n and a.names == b.names
    assert a.dense.keys() == b.dense.keys()
    for k in a.dense:
        assert a.dense[k].dtype == b.dense[k].dtype and np.array_equal(a.dense[k], b.dense[k]), k
    assert np.array_equal(a.name_codes, b.name_codes) and np.array_equal(a.sparse_idx, b.sparse_idx)
    for k, v in a.sparse.items():
        w = b.sparse[k]
        assert (list(v) == list(w)) if isinstance(v, list) else (v.dtype == w.dtype and np.array_equal(v, w)), k


def _no_decode(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(*_a, **_k):  # noqa: ANN002, ANN003, ANN202
        raise AssertionError("decoded, not served from the cache")

    monkeypatch.setattr(decode, "decode_columns", fail)


@pytest.mark.parametrize("gz", [False, True])
def test_hit_serves_what_the_decoder_returned(cache_dir: Path, tmp_path: Path, monkeypatch, gz: bool) -> None:
    path = _trace(tmp_path / f"rank0.trace.json{'.gz' if gz else ''}", gz=gz)
    meta, cols = decode.decode_columns(path)
    m1, c1, key = cache.decode_columns(path)
    assert key is not None and len(list(cache.entries())) == 1
    _no_decode(monkeypatch)
    m2, c2, key2 = cache.decode_columns(path)
    assert key2 == key and m2 == meta == m1
    _same_columns(cols, c2)
    c2.dense["kind"][0] = 99  # a cached array may be written to (copy-on-write): the entry is unchanged
    _same_columns(cols, cache.decode_columns(path)[1])


def test_small_files_have_no_columns_entry(cache_dir: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(cache, "COLUMNS_MIN_BYTES", 1 << 20)
    small = _trace(tmp_path / "rank0.trace.json")
    assert cache.decode_columns(small)[2] is not None and not list(cache.entries())
    monkeypatch.setattr(cache, "COLUMNS_MIN_BYTES", small.stat().st_size)
    cache.decode_columns(small)
    assert [e.kind for e in cache.entries()] == ["columns"]


def test_large_entry_is_memory_mapped(cache_dir: Path, tmp_path: Path) -> None:
    """Entries of MMAP_MIN_BYTES and more are mapped, not read: the arrays are views of the map."""
    payload = {"a": np.arange(cache.MMAP_MIN_BYTES // 8 + 10, dtype=np.int64), "s": ["x", None]}
    assert cache.save("test", "k" * 40, payload)
    got = cache.load("test", "k" * 40)
    assert got["s"] == ["x", None] and np.array_equal(got["a"], payload["a"])
    base = got["a"]
    while isinstance(base, np.ndarray):
        base = base.base
    assert isinstance(base.obj if isinstance(base, memoryview) else base, mmap.mmap)
    small = cache.load("columns" if cache.save("columns", "s" * 40, {"a": np.arange(8)}) else "", "s" * 40)
    assert small["a"].flags.writeable and not small["a"].flags.owndata


def test_edit_with_same_size_and_mtime_is_not_served(cache_dir: Path, tmp_path: Path) -> None:
    path = _trace(tmp_path / "rank0.trace.json", kernel="gemm_a")
    cache.decode_columns(path)
    st = path.stat()
    text = path.read_bytes()
    assert text.count(b"gemm_a") == 1
    path.write_bytes(text.replace(b"gemm_a", b"gemm_z"))  # one event edited, same size
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # its mtime put back
    assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns
    _, cols, _ = cache.decode_columns(path)
    assert "gemm_z" in cols.names and "gemm_a" not in cols.names


def test_edit_in_the_middle_of_a_large_file_is_not_served(cache_dir: Path, tmp_path: Path) -> None:
    """Beyond the hashed head and tail: the ctime (which utime cannot put back) tells the edit."""
    tb = TraceBuilder(rank=0, world_size=1, distributed=False)
    tb.step(1, 0, 100_000)
    for i in range(3000):
        tb.kernel(f"k{i:05d}", 10 + 30 * i, 20, launch_at_us=5 + 30 * i)
    path = tb.write(tmp_path / "rank0.trace.json")
    assert path.stat().st_size > 4 * cache.HASH_BYTES
    cache.decode_columns(path)
    st, text = path.stat(), path.read_bytes()
    middle = text.index(b"k01500")
    assert cache.HASH_BYTES < middle < len(text) - cache.HASH_BYTES
    path.write_bytes(text[:middle] + b"q" + text[middle + 1:])
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    _, cols, _ = cache.decode_columns(path)
    assert "q01500" in cols.names and "k01500" not in cols.names


def test_remembered_key_follows_an_edit(tmp_path: Path, monkeypatch) -> None:
    """A file's key is remembered while a stat shows the same identity; an edit moves the ctime, so it is hashed
    again, and a file changed within the last moments is never remembered (its ctime may not have moved)."""
    path = _trace(tmp_path / "rank0.trace.json", kernel="gemm_a")
    k1 = cache.file_key(path)
    assert str(path) not in cache._KEYS  # (just written: not settled)
    monkeypatch.setattr(cache, "_SETTLED_NS", -(10**18))  # remember everything
    assert cache.file_key(path) == k1 and cache._KEYS[str(path)][1] == k1
    st = path.stat()
    time.sleep(0.05)  # past the clock's tick
    path.write_bytes(path.read_bytes().replace(b"gemm_a", b"gemm_b"))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert cache.file_key(path) not in (None, k1)


def test_replaced_file_with_the_same_name_is_not_served(cache_dir: Path, tmp_path: Path) -> None:
    path = _trace(tmp_path / "rank0.trace.json", kernel="gemm_a")
    cache.decode_columns(path)
    other = _trace(tmp_path / "other.json", kernel="gemm_q")
    os.replace(other, path)
    _, cols, _ = cache.decode_columns(path)
    assert "gemm_q" in cols.names


def test_truncated_file_is_decoded_and_fails_as_without_cache(cache_dir: Path, tmp_path: Path) -> None:
    path = _trace(tmp_path / "rank0.trace.json")
    cache.decode_columns(path)
    path.write_bytes(path.read_bytes()[:-40])
    with pytest.raises(tracekit.errors.TraceInputError, match="truncated|not valid JSON"):
        cache.decode_columns(path)


def test_other_decoder_version_is_ignored(cache_dir: Path, tmp_path: Path, monkeypatch) -> None:
    """An entry written by another decoder (an older tracekit) is a miss; so is one of another code."""
    path = _trace(tmp_path / "rank0.trace.json")
    cache.decode_columns(path)
    monkeypatch.setattr(cache, "DECODER_VERSION", cache.DECODER_VERSION + 1)
    calls = []
    real = decode.decode_columns
    monkeypatch.setattr(decode, "decode_columns", lambda p: calls.append(p) or real(p))
    cache.decode_columns(path)
    assert calls == [path]
    monkeypatch.setitem(cache._SOURCE_KEYS, "decoder", "another decoder source")
    cache.decode_columns(path)
    assert calls == [path, path]


def test_decoder_key_covers_every_module_the_decoder_imports() -> None:
    """The decoder's own modules (those of tracekit.traces it imports) are all in DECODER_MODULES, whose source
    makes the decoder's key: code that changes the decoded columns cannot leave the key as it was."""
    tree = ast.parse(Path(decode.__file__).read_text())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "tracekit.traces":
            imported |= {f"{a.name}.py" for a in node.names}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tracekit.traces."):
            imported.add(node.module.rsplit(".", 1)[1] + ".py")
    assert imported <= set(cache.DECODER_MODULES) and "decode.py" in cache.DECODER_MODULES
    assert imported, "the decoder imports the schema"


def test_damaged_or_half_written_entry_is_a_miss(cache_dir: Path, tmp_path: Path) -> None:
    path = _trace(tmp_path / "rank0.trace.json")
    cache.decode_columns(path)
    (entry,) = cache.entries()
    data = entry.path.read_bytes()
    for bad in (data[: len(data) // 2], data[:10], b"", b"XXXX" + data[4:]):
        entry.path.write_bytes(bad)
        meta, cols, _ = cache.decode_columns(path)  # decoded again, and the entry rewritten
        assert cols.n == decode.decode_columns(path)[1].n
    assert entry.path.read_bytes() == data


def test_cap_evicts_least_recently_used(cache_dir: Path, monkeypatch) -> None:
    blob = np.zeros(100_000, dtype=np.uint8)
    for k in ("a", "b", "c"):
        assert cache.save("test", k * 40, blob)
        os.utime(cache.entry_path("test", k * 40), ns=(0, {"a": 1, "b": 2, "c": 3}[k] * 10**9))
    assert cache.load("test", "a" * 40) is not None  # a is used now: b is the least recently used
    size = next(iter(cache.entries())).bytes
    monkeypatch.setenv(cache.ENV_MAX_BYTES, str(2 * size))
    assert cache.trim() == size
    assert {e.path.name[0] for e in cache.entries()} == {"a", "c"}
    monkeypatch.setenv(cache.ENV_MAX_BYTES, str(size - 1))  # an entry above the cap is not stored at all
    assert not cache.save("test", "d" * 40, blob)


def test_commands_keep_the_cache_under_its_cap(cache_dir: Path, tmp_path: Path, monkeypatch) -> None:
    run = write_skewed_ranks(tmp_path / "run", 2)
    _run(["analyze", str(run), "--format", "json"])
    full = sum(e.bytes for e in cache.entries())
    cache.clear()
    monkeypatch.setenv(cache.ENV_MAX_BYTES, str(full // 2))
    _run(["analyze", str(run), "--format", "json"])
    assert 0 < sum(e.bytes for e in cache.entries()) <= full // 2


def test_unwritable_cache_is_one_warning_not_an_error(tmp_path: Path, monkeypatch) -> None:
    blocked = tmp_path / "not_a_folder"
    blocked.write_text("a file where the cache folder would be")
    monkeypatch.setenv("TRACEKIT_CACHE", str(blocked / "cache"))
    cache.configure()
    run = write_skewed_ranks(tmp_path / "run", 2)
    expected = _run(["analyze", str(run), "--format", "json", "--no-cache"])
    r = _invoke(["analyze", str(run), "--format", "json"])
    assert r.exit_code == 0, r.output
    assert r.stdout == expected
    assert r.stderr.count("running without writing to the cache") == 1 and str(blocked) in r.stderr
    cache.configure()


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root writes into read-only folders")
def test_read_only_cache_serves_and_never_fails(cache_dir: Path, tmp_path: Path) -> None:
    path = _trace(tmp_path / "rank0.trace.json")
    cache.decode_columns(path)
    other = _trace(tmp_path / "rank1.trace.json", kernel="gemm_r")
    for d in (cache_dir, *cache_dir.rglob("*")):
        if d.is_dir():
            d.chmod(0o555)
    try:
        cache.configure()
        with pytest.warns(cache.CacheWarning):
            _, cols, _ = cache.decode_columns(other)
        assert "gemm_r" in cols.names
        assert cache.cached_columns(path)[1] is not None  # what it holds is still read
    finally:
        for d in (cache_dir, *cache_dir.rglob("*")):
            if d.is_dir():
                d.chmod(0o755)


@pytest.mark.parametrize("err", [errno.ENOSPC, errno.EROFS, errno.EACCES])
def test_full_or_read_only_cache_is_one_warning(cache_dir: Path, tmp_path: Path, monkeypatch, err: int) -> None:
    """A full or read-only cache folder (the writes fail; root passes permission checks, so they are simulated)."""
    assert cache.save("test", "e" * 40, {"held": 1})

    def fail(*_a, **_k):  # noqa: ANN002, ANN003, ANN202
        raise OSError(err, os.strerror(err))

    monkeypatch.setattr(tempfile, "mkstemp", fail)
    with pytest.warns(cache.CacheWarning, match=os.strerror(err)) as rec:
        for i in range(3):
            cache.decode_columns(_trace(tmp_path / f"rank{i}.trace.json"))
    assert len([w for w in rec if issubclass(w.category, cache.CacheWarning)]) == 1
    assert cache.writable_root() is None  # no more writes in this process ...
    assert cache.load("test", "e" * 40) == {"held": 1}  # ... what it holds is still read


def _writer(args: tuple[str, str, int]) -> int:
    root, key, seed = args
    os.environ["TRACEKIT_CACHE"] = root
    cache.configure()
    payload = {"x": np.full(400_000, seed % 2, dtype=np.int64), "names": [f"n{i}" for i in range(1000)]}
    seen = 0
    for _ in range(20):
        cache.save("race", key, payload)
        got = cache.load("race", key)
        if got is not None:  # whichever writer's: always whole
            assert len(got["names"]) == 1000 and got["x"].shape == (400_000,)
            assert len(set(got["x"][::1000].tolist())) == 1
            seen += 1
    return seen


def test_two_processes_writing_the_same_entry(cache_dir: Path) -> None:
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(2) as pool:
        seen = pool.map(_writer, [(str(cache_dir), "r" * 40, s) for s in (1, 2)])
    assert all(n == 20 for n in seen)
    assert [e.kind for e in cache.entries()] == ["race"]  # one entry; no temporary file left behind


def _invoke(args: list[str]):  # noqa: ANN202
    """The command in this process, as its own process would run it: the cache options it sets (through the
    environment, :func:`cache.configure`) are undone after."""
    saved = {k: os.environ.get(k) for k in (cache.ENV_DIR, cache.ENV_MAX_BYTES)}
    try:
        return CliRunner().invoke(main, args, catch_exceptions=False)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        cache.configure()


def _run(args: list[str]) -> str:
    r = _invoke(args)
    assert r.exit_code == 0, r.output
    return r.stdout


@pytest.mark.parametrize("run", ["fixtures/eager_ddp", "whatif/h200_whatif/resnet18-eager", "whatif/h200_graph_break/toy-cpubound-break"])
def test_analyze_json_identical_with_and_without_cache(cache_dir: Path, run: str, tmp_path: Path) -> None:
    folder = SAMPLE / run
    if not folder.exists():
        pytest.skip(f"{folder} not committed")
    plain = _run(["analyze", str(folder), "--format", "json", "--no-cache"])
    assert not list(cache.entries())
    cold = _run(["analyze", str(folder), "--format", "json"])
    kinds = {e.kind for e in cache.entries()}
    assert {"columns", "rank_tables"} <= kinds
    warm = _run(["analyze", str(folder), "--format", "json"])
    assert plain == cold == warm


def test_whatif_and_report_identical_with_and_without_cache(cache_dir: Path, tmp_path: Path) -> None:
    folder = SAMPLE / "fixtures/eager_ddp"
    out = {}
    for tag in ("plain", "cold", "warm"):
        extra = ["--no-cache"] if tag == "plain" else []
        out[tag] = (_run(["whatif", str(folder), "--format", "json", *extra]),
                    _run(["report", str(folder), "-o", str(tmp_path / f"{tag}.html"), *extra]) and
                    (tmp_path / f"{tag}.html").read_bytes())
    assert out["plain"] == out["cold"] == out["warm"]
    assert {"whatif", "report"} <= {e.kind for e in cache.entries()}


def test_option_change_is_a_new_rank_tables_entry(cache_dir: Path, tmp_path: Path) -> None:
    run = write_skewed_ranks(tmp_path / "run", 2)
    a = json.loads(_run(["analyze", str(run), "--format", "json"]))
    b = json.loads(_run(["analyze", str(run), "--format", "json", "--comm-kernel", "gemm"]))
    assert b == json.loads(_run(["analyze", str(run), "--format", "json", "--comm-kernel", "gemm", "--no-cache"]))
    assert a != b


def test_engine_path_cached(cache_dir: Path, tmp_path: Path) -> None:
    """16 rank files take the engine path: each batch's outcome and tables are cached; an edited file's batch
    alone is mapped again (the whole analysis is cached too: an option the result cache does not know is used
    to reach the batches)."""
    run = write_skewed_ranks(tmp_path / "run", 16)
    plain = _run(["analyze", str(run), "--format", "json", "--no-cache", "--workers", "1"])
    cold = _run(["analyze", str(run), "--format", "json", "--workers", "1"])
    batches = sum(e.kind == "engine_batches" for e in cache.entries())
    assert batches == 16  # (one per file: at least engine.MIN_BATCHES batches, at most one per file)
    (run / "rank3.trace.json").write_bytes((run / "rank3.trace.json").read_bytes().replace(b'"gemm"', b'"gemx"'))
    warm = _run(["analyze", str(run), "--format", "json", "--workers", "1"])
    assert plain == cold
    assert warm == _run(["analyze", str(run), "--format", "json", "--no-cache", "--workers", "1"])
    assert sum(e.kind == "engine_batches" for e in cache.entries()) == batches + 1  # only rank3's batch again


def _kinds() -> dict[str, set[Path]]:
    out: dict[str, set[Path]] = {}
    for e in cache.entries():
        if e.kind != cache.SOURCE_KIND:  # (tracekit's code hash, kept once its files are 2 s old)
            out.setdefault(e.kind, set()).add(e.path)
    return out


def test_engine_batches_are_read_on_another_worker_count(cache_dir: Path, tmp_path: Path) -> None:
    """The engine path cuts the files into the same batches whatever the worker count, so a second look with
    another ``--workers`` reads every batch; it stores no decoded columns (nothing on that path reads them)."""
    run = write_skewed_ranks(tmp_path / "run", 20)
    plain = _run(["analyze", str(run), "--format", "json", "--no-cache", "--workers", "1"])
    assert _run(["analyze", str(run), "--format", "json", "--workers", "1"]) == plain
    first = _kinds()
    assert set(first) == {"analysis", "engine_batches"}  # (conftest: every file would get a columns entry)
    for e in first["analysis"]:
        e.unlink()  # (the whole result is not there: the batches are asked for)
    assert _run(["analyze", str(run), "--format", "json", "--workers", "2"]) == plain
    assert _kinds()["engine_batches"] == first["engine_batches"]  # none written anew


def test_table_option_reads_the_cached_analysis(cache_dir: Path, tmp_path: Path) -> None:
    """``--table`` only picks what is printed: the analysis cached without it is read (no second entry); an
    unknown table still fails before anything is read."""
    run = write_skewed_ranks(tmp_path / "run", 2)
    _run(["analyze", str(run), "--format", "json"])
    first = _kinds()["analysis"]
    table = _run(["analyze", str(run), "--format", "csv", "--table", "steps"])
    assert _kinds()["analysis"] == first
    assert table == _run(["analyze", str(run), "--format", "csv", "--table", "steps", "--no-cache"])
    bad = _invoke(["analyze", str(run), "--table", "no_such_table"])
    assert bad.exit_code == 2 and "no_such_table" in bad.output


def test_rank_keys_once_per_analysis(cache_dir: Path, tmp_path: Path, monkeypatch) -> None:
    """Each rank's entry key is computed once per analysis (looked up, then stored under the same key): the
    side files of the ranks' one folder are keyed once, not twice per rank."""
    from tracekit.analyses import registry
    from tracekit.runner import rank_cache
    from tracekit.runner.run import analyze

    traces = loader.load(write_skewed_ranks(tmp_path / "run", 3))
    calls = []
    real = loader.side_files_key
    monkeypatch.setattr(loader, "side_files_key", lambda folders: calls.append(1) or real(folders))
    specs = [t for t in registry.selected(registry.AnalyzeOptions()) if t.scope == "rank"]
    rank_cache.map_rank_tables(traces, specs=specs, options=registry.AnalyzeOptions())
    assert len(calls) == 1
    assert sum(e.kind == "rank_tables" for e in cache.entries()) == 3
    assert analyze(traces).tables.keys()  # (the stored entries are read by an analysis)


@pytest.mark.parametrize("cached", [False, True])
def test_rank_table_warnings_of_forked_ranks_reach_the_caller(cache_dir: Path, tmp_path: Path, monkeypatch,
                                                             cached: bool) -> None:
    """A warning raised while a rank's tables are computed in a forked process is raised in the caller, once,
    on a first look, a second one and without the cache."""
    import warnings as w

    from tracekit.runner.run import analyze

    if not cached:
        monkeypatch.setenv("TRACEKIT_CACHE", "off")
    run = tmp_path / "run"
    run.mkdir()
    for r in range(2):
        tb = TraceBuilder(rank=r, world_size=2)
        tb.step(-1, 0, 50)  # dropped, with a warning, when the rank's steps are computed
        tb.step(1, 50, 100)
        tb.kernel("gemm", 60, 20, launch_at_us=55)
        tb.write(run / f"rank{r}.trace.json")
    for _ in range(2):
        traces = loader.load(run)
        with w.catch_warnings(record=True) as rec:
            w.simplefilter("always")
            analyze(traces, workers=2)  # (one rank in a forked process)
        dropped = sorted(str(x.message).split(":")[0] for x in rec if "negative step number" in str(x.message))
        assert dropped == [str(run / "rank0.trace.json"), str(run / "rank1.trace.json")]


def test_source_key_is_kept_and_follows_an_edit(cache_dir: Path, tmp_path: Path, monkeypatch) -> None:
    """The code hash is read back from the cache while no file changed (not read again), and an edit that
    keeps the size and mtime is a new hash."""
    monkeypatch.setattr(cache, "_SETTLED_NS", 0)
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "a.py").write_text("x = 1\n")
    (pkg / "sub" / "b.py").write_text("y = 2\n")

    def fresh() -> str:
        cache._SOURCE_KEYS.clear()
        return cache.source_key(pkg)

    first = fresh()
    assert [e.kind for e in cache.entries()] == [cache.SOURCE_KIND]
    with monkeypatch.context() as m:
        m.setattr(Path, "read_bytes", lambda self: pytest.fail(f"{self} read again"))
        assert fresh() == first
    st = (pkg / "a.py").stat()
    (pkg / "a.py").write_text("x = 2\n")
    os.utime(pkg / "a.py", ns=(st.st_atime_ns, st.st_mtime_ns))
    edited = fresh()
    monkeypatch.setenv("TRACEKIT_CACHE", "off")
    assert edited != first and edited == fresh()  # (off: hashed from the files)


@pytest.mark.parametrize("gone", [False, True])
def test_parse_workers_hand_over_through_the_entry_they_stored(cache_dir: Path, tmp_path: Path, monkeypatch,
                                                               gone: bool) -> None:
    """A parse worker that stored a file's columns sends back no columns: the parent maps the entry (or, if it
    is gone by then, decodes the file itself); the traces are those of a load without the cache."""
    run = write_skewed_ranks(tmp_path / "run", 3)
    pending = loader.start_load(run, workers=2)
    assert pending._pool is not None  # (the workers decode)
    with monkeypatch.context() as m:
        if gone:
            m.setattr(cache, "cached_columns", lambda path: (None, None))
        else:
            _no_decode(m)  # (here, in the parent: the workers forked before)
        got = pending.result()
    assert sum(e.kind == "columns" for e in cache.entries()) == 3
    monkeypatch.setenv("TRACEKIT_CACHE", "off")
    plain = loader.load(run, workers=1)
    for r, rt in plain.ranks.items():
        _same_columns(rt.source, got.ranks[r].source)
        assert (got.ranks[r].source_key is None) == gone


def test_off_writes_nothing(tmp_path: Path, monkeypatch) -> None:
    for off in ("off", "0", "none"):
        monkeypatch.setenv("TRACEKIT_CACHE", off)
        assert cache.settings().root is None
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("TRACEKIT_CACHE", "off")
    tracekit.analyze(str(SAMPLE / "fixtures/eager_ddp"))
    assert not (tmp_path / "xdg").exists()


def test_location_defaults(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("TRACEKIT_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.settings().root == tmp_path / "xdg" / "tracekit"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache.settings().root == tmp_path / "home" / ".cache" / "tracekit"
    assert cache.settings().max_bytes == cache.DEFAULT_MAX_BYTES
    monkeypatch.setenv("TRACEKIT_CACHE", "off")  # (as the suite runs)


def test_cache_dir_option_and_info_clear(cache_dir: Path, tmp_path: Path) -> None:
    other = tmp_path / "elsewhere"
    run = write_skewed_ranks(tmp_path / "run", 2)
    _run(["analyze", str(run), "--cache-dir", str(other), "-o", os.devnull])
    info = json.loads(_run(["cache", "info", "--cache-dir", str(other), "--format", "json"]))
    assert info["location"] == str(other.resolve()) and info["enabled"]
    kinds = {k: v["entries"] for k, v in info["kinds"].items()}
    sources = kinds.pop(cache.SOURCE_KIND, 0)  # (tracekit's code hash: stored once its files are 2 s old)
    assert kinds == {"analysis": 1, "columns": 2, "rank_tables": 2} and sources <= 1
    assert info["entries"] == 5 + sources
    assert info["bytes"] == sum(f.stat().st_size for f in other.rglob("*.tkc"))
    text = _run(["cache", "info", "--cache-dir", str(other)])
    assert f"location: {other.resolve()}" in text and f"entries:  {5 + sources}" in text
    assert f"removed {5 + sources} entries" in _run(["cache", "clear", "--cache-dir", str(other)])
    assert not list(other.rglob("*.tkc"))
    assert not list(cache_dir.rglob("*.tkc")) and not list(run.rglob("*.tkc"))  # never beside the traces


def test_info_when_off(monkeypatch) -> None:
    monkeypatch.setenv("TRACEKIT_CACHE", "off")
    assert "the cache is off" in _run(["cache", "info"])
    assert "nothing to clear" in _run(["cache", "clear"])


def test_inputs_key_follows_run_json(cache_dir: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(SAMPLE / "fixtures/eager_ddp", run)
    k1 = loader.inputs_key(str(run))
    (run / "run.json").write_text((run / "run.json").read_text() + " ")
    assert loader.inputs_key(str(run)) not in (None, k1)


@pytest.mark.slow
def test_dask_workers_read_and_write_the_cache(tmp_path: Path) -> None:
    """The dask engine's workers (a local cluster of 2 processes) write each batch's entry and read it back on
    the next run: the same output as the local engine without a cache."""
    pytest.importorskip("distributed")
    import subprocess
    import sys

    run = write_skewed_ranks(tmp_path / "run", 16)
    cache_dir = tmp_path / "cache"
    env = dict(os.environ, TRACEKIT_CACHE=str(cache_dir), PYTHONPATH=str(Path(tracekit.__file__).parent.parent))

    def analyze(*extra: str) -> str:
        r = subprocess.run([sys.executable, "-m", "tracekit", "analyze", str(run), "--format", "json", *extra],
                           capture_output=True, text=True, timeout=300, env=env)
        assert r.returncode == 0, r.stderr[-3000:]
        return r.stdout

    plain = analyze("--no-cache")
    assert analyze("--engine", "dask", "--workers", "2") == plain
    batches = sorted((cache_dir / cache.LAYOUT / "engine_batches").glob("*.tkc"))
    assert batches
    for e in cache_dir.rglob("*.tkc"):
        os.utime(e, ns=(0, 10**9))  # long unused ...
    for e in (cache_dir / cache.LAYOUT / "analysis").glob("*.tkc"):
        e.unlink()  # (the whole result is not there: the workers are asked for the batches)
    assert analyze("--engine", "dask", "--workers", "2") == plain
    assert sorted((cache_dir / cache.LAYOUT / "engine_batches").glob("*.tkc")) == batches  # none written anew
    assert all(b.stat().st_mtime_ns > 10**9 for b in batches)  # ... and each read by a worker now


def test_diff_and_annotate_identical_with_and_without_cache(cache_dir: Path, tmp_path: Path) -> None:
    a, b = SAMPLE / "fixtures/eager_ddp", SAMPLE / "whatif/h200_whatif" / "resnet18-eager"
    diffs = [_run(["diff", str(a), str(b), "--format", "json", *extra]) for extra in (["--no-cache"], [], [])]
    assert diffs[0] == diffs[1] == diffs[2]
    copies = []
    for tag, extra in (("plain", ["--no-cache"]), ("cold", []), ("warm", [])):
        _run(["annotate", str(a), "-o", str(tmp_path / tag), *extra])
        copies.append({p.name: p.read_bytes() for p in (tmp_path / tag).iterdir()})
    assert copies[0] == copies[1] == copies[2] and copies[0]


def test_a_side_file_written_or_changed_beside_the_traces_is_a_new_key(cache_dir: Path, tmp_path: Path) -> None:
    """compiled_kernels.json (and run.json) feed the ops table: writing or editing one never serves old results."""
    from tracekit.runner import rank_cache

    run = tmp_path / "run"
    run.mkdir()
    _trace(run / "rank0.trace.json")
    before = loader.inputs_key(run)
    (run / "compiled_kernels.json").write_text('{"version": 1, "kernels": {}}')
    written = loader.inputs_key(run)
    (run / "compiled_kernels.json").write_text('{"version": 1, "kernels": {"k": {}}}')
    edited = loader.inputs_key(run)
    assert len({before, written, edited}) == 3
    assert [name for _, name, _ in rank_cache.loader.side_files_key([run])] == ["compiled_kernels.json"]


def test_a_peaks_file_given_by_path_is_keyed_by_its_contents(cache_dir: Path, tmp_path: Path) -> None:
    from tracekit.analyses.options import AnalyzeOptions
    from tracekit.runner import rank_cache

    p = tmp_path / "gpu.json"
    p.write_text('{"a": 1}')
    first = cache.digest(rank_cache.options_key(AnalyzeOptions(peaks=str(p))))
    p.write_text('{"a": 22}')
    assert cache.digest(rank_cache.options_key(AnalyzeOptions(peaks=str(p)))) != first
