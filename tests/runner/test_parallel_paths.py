"""The fast paths give exactly the results of the simple ones.

- segmented interval maths == a loop of plain unions per segment;
- the vectorised per-step breakdown == ``breakdown_of`` step by step;
- per-rank analyses in forked processes == serial;
- tables loaded by the parse-worker pool (shared-memory hand-over) == a serial load;
- the parse workers never import pandas, and neither do the CLI and loader modules.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import tracekit
from tracekit.analyses import breakdown
from tracekit.analyses import intervals as iv
from tracekit.analyses.classify import classify_gpu
from tracekit.runner.per_rank import map_ranks
from tracekit.runner.run import analyze
from tracekit.report.render import to_json_dict

try:
    from tests.tracebuilder import TraceBuilder
except ImportError:  # tests/ not a package
    from tracebuilder import TraceBuilder

REF = Path(__file__).parents[1] / "data" / "reference"
REPO = Path(__file__).resolve().parents[2]


def test_segment_lengths_by_hand() -> None:
    # segment 0: [0,10) ∪ [5,15) = 15; segment 1: [5,8) overlaps segment 0 in time but is counted apart = 3;
    # segment 2: nothing; segment 3: [100,100) is empty = 0
    s = np.array([0, 5, 5, 100])
    e = np.array([10, 15, 8, 100])
    seg = np.array([0, 0, 1, 3])
    assert iv.segment_lengths(s, e, seg, 4).tolist() == [15, 3, 0, 0]
    assert iv.segment_lengths(s[:0], e[:0], seg[:0], 2).tolist() == [0, 0]


def test_segment_bounds_by_hand() -> None:
    # segment 0: starts 5, 0 and ends 9, 30 -> (0, 30); segment 1 empty -> (-1, -1); segment 2: (40, 41)
    first, last = iv.segment_bounds(np.array([5, 0, 40]), np.array([9, 30, 41]), np.array([0, 0, 2]), 3)
    assert first.tolist() == [0, -1, 40] and last.tolist() == [30, -1, 41]


def test_segment_intersect_by_hand() -> None:
    # a: seg0 [0,10), seg1 [20,30); b: seg0 [5,25) (only [5,10) meets a's seg0), seg1 [0,22) -> [20,22)
    a = (np.array([0, 20]), np.array([10, 30]))
    b = (np.array([5, 0]), np.array([25, 22]))
    got = iv.segment_intersect_lengths(a, np.array([0, 1]), b, np.array([0, 1]), 3)
    assert got.tolist() == [10 - 5, 22 - 20, 0]


@pytest.mark.parametrize("seed", range(5))
def test_segments_equal_per_segment_loop(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, k = 400, 7
    s = rng.integers(0, 10_000, n)
    e = s + rng.integers(0, 500, n)
    seg = rng.integers(0, k, n)
    s2 = rng.integers(0, 10_000, n)
    e2 = s2 + rng.integers(0, 500, n)
    seg2 = rng.integers(0, k, n)
    want = [iv.length(s[seg == j], e[seg == j]) for j in range(k)]
    assert iv.segment_lengths(s, e, seg, k).tolist() == want
    want_x = [iv.intersect_length((s[seg == j], e[seg == j]), (s2[seg2 == j], e2[seg2 == j])) for j in range(k)]
    assert iv.segment_intersect_lengths((s, e), seg, (s2, e2), seg2, k).tolist() == want_x


def _step_breakdown_loop(gpu: pd.DataFrame, cls: pd.Series, steps: pd.DataFrame) -> pd.DataFrame:
    """The plain reference: :func:`breakdown.breakdown_of` on each step window's activity, cut at its edges,
    step by step (``kernels``: the activities launched in the step)."""
    rows = []
    ts, end, c, st = (gpu["ts_ns"].to_numpy(), gpu["end_ns"].to_numpy(), cls.to_numpy(), gpu["step"].to_numpy())
    for s in steps.itertuples(index=False):
        a, b = np.maximum(ts, s.ts_ns), np.minimum(end, s.end_ns)
        m = b > a
        rows.append({"step": int(s.step), "step_us": s.dur_ns / breakdown.NS_PER_US,
                     "host_step_us": s.host_dur_ns / breakdown.NS_PER_US, "kernels": int((st == s.step).sum()),
                     **breakdown.breakdown_of(a[m], b[m], c[m])})
    return pd.DataFrame(rows, columns=["step", "step_us", "host_step_us", "kernels", *breakdown.BREAKDOWN_COLUMNS])


def _check_steps(ts: tracekit.TraceSet) -> None:
    for rt in ts:
        cls = classify_gpu(rt)
        windows = pd.DataFrame(rt.step_windows())
        fast = breakdown.step_breakdown(rt.gpu, cls, windows)
        slow = _step_breakdown_loop(rt.gpu, cls, windows)
        pd.testing.assert_frame_equal(fast, slow, check_exact=True, check_dtype=False)


def test_step_breakdown_vectorised_by_hand(tmp_path: Path) -> None:
    tb = TraceBuilder(rank=0, world_size=1)
    tb.step(1, 0, 100)
    tb.step(2, 100, 200)
    tb.step(3, 200, 300)  # launches nothing
    tb.kernel("gemm", 150, 100, launch_at_us=10)  # step 1's kernel runs during step 2's host range
    tb.nccl_allreduce(160, 40, launch_at_us=120, nelems=1000)  # step 2's allreduce, overlapping it
    tb.kernel("relu", 210, 10, launch_at_us=130)
    tb.memcpy(300, 5, launch_at_us=20)  # step 1's: step 1 lasts until 305, steps 2 and 3 are empty behind it
    tb.write(tmp_path / "rank0.trace.json.gz")
    ts = tracekit.load(tmp_path)
    _check_steps(ts)
    st = breakdown.step_breakdown(ts.ranks[0].gpu, classify_gpu(ts.ranks[0]), pd.DataFrame(ts.ranks[0].step_windows()))
    s1, s2, s3 = (st[st["step"] == k].iloc[0] for k in (1, 2, 3))
    assert s1["step_us"] == 305 and s2["step_us"] == 0 and s3["step_us"] == 0
    assert s1["compute_us"] == 100 + 0 and s1["memory_us"] == 5 and s1["span_us"] == 305 - 150  # relu under gemm
    assert s1["comm_us"] == 40 and s1["overlap_us"] == 40  # the device ran step 2's allreduce under step 1's gemm
    assert s1["idle_us"] == (305 - 150) - (250 - 150 + 5)
    assert s2["kernels"] == 2 and s2["busy_us"] == 0 and np.isnan(s2["comm_us"])
    assert s3["kernels"] == 0 and s3["busy_us"] == 0 and np.isnan(s3["comm_us"]) and np.isnan(s3["overlap_pct"])


@pytest.mark.parametrize("run", ["eager", "inductor", "inductor_nosplit", "inductor_break_in_loop"])
def test_step_breakdown_vectorised_reference(run: str) -> None:
    _check_steps(tracekit.load(REF / run))


@pytest.mark.parametrize("run", ["eager", "inductor"])
def test_forked_per_rank_pass_equals_serial(run: str) -> None:
    def report(workers: int) -> dict:
        ts = tracekit.load(REF / run)
        res = analyze(ts, workers=workers)
        return json.loads(json.dumps(to_json_dict(res)))

    assert report(2) == report(1)


def test_map_ranks_keeps_rank_order_and_propagates_errors() -> None:
    ts = tracekit.load(REF / "eager")
    assert map_ranks(ts, lambda rt: rt.rank * 10, workers=2) == {0: 0, 1: 10}

    def boom(rt):  # noqa: ANN001, ANN202
        if rt.rank == 1:
            raise ValueError("rank 1 broke")
        return rt.rank

    with pytest.raises(ValueError, match="rank 1 broke"):
        map_ranks(ts, boom, workers=2)


def _py(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)


def test_cli_and_loader_modules_do_not_import_pandas() -> None:
    r = _py("import sys, tracekit.cli, tracekit.traces.loader, tracekit.runner.pipeline; "
            "print(sorted(m for m in ('pandas', 'torch', 'hta') if m in sys.modules))")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


def test_parse_workers_do_not_import_pandas() -> None:
    code = (
        "import sys\n"
        "from tracekit.traces import loader\n"
        f"p = loader.start_load({str(REF / 'eager')!r}, workers=2)\n"
        "import os\n"
        "from concurrent.futures import wait\n"
        "seen = p._pool.submit(eval, \"__import__('sys').modules.get('pandas') is None\").result()\n"
        "ts = p.result()\n"
        "print(seen, sorted(ts.ranks), len(ts.ranks[0].events) > 0)\n"
    )
    r = _py(code)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["True", "[0,", "1]", "True"]


def test_killed_parse_worker_is_a_clean_error(tmp_path: Path) -> None:
    """A worker that dies (OOM killer) names the file instead of a BrokenProcessPool traceback."""
    code = (
        "import os, signal\n"
        "from tracekit.traces import decode, loader\n"
        "from tracekit.errors import TraceInputError\n"
        "decode.decode_columns = lambda path, *a: os.kill(os.getpid(), signal.SIGKILL)\n"
        f"try:\n    loader.load({str(REF / 'eager')!r}, workers=2)\n"
        "except TraceInputError as e:\n    print('ERR', e)\n"
    )
    r = _py(code)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("ERR ") and "parse worker process died" in r.stdout and "rank0" in r.stdout


@pytest.mark.parametrize("share_min", [0, None])
@pytest.mark.parametrize("run", ["eager", "inductor"])
def test_pool_load_equals_serial_load(run: str, share_min: int | None, monkeypatch) -> None:
    """Columns handed over through shared buffers (``share_min`` 0: every trace shared; these small ones are
    otherwise pickled) give the serial tables exactly."""
    from tracekit.traces import shared

    if share_min is not None:
        monkeypatch.setattr(shared, "SHARE_MIN_BYTES", share_min)
    serial, pooled = tracekit.load(REF / run, workers=1), tracekit.load(REF / run, workers=2)
    for r in serial.ranks:
        pd.testing.assert_frame_equal(pooled.ranks[r].events, serial.ranks[r].events)
        assert pooled.ranks[r].meta == serial.ranks[r].meta
    ev = pooled.ranks[0].events
    ev.loc[0, "ts_ns"] = -5  # mapped copy-on-write: the tables are ordinary writable frames
    assert ev.loc[0, "ts_ns"] == -5


def test_only_large_traces_are_shared_within_the_open_file_budget(monkeypatch) -> None:
    from tracekit.traces import shared

    mb = 1 << 20
    monkeypatch.setattr(shared, "fd_budget", lambda: 2)
    # below SHARE_MIN_BYTES never; of the rest the two largest (the budget)
    assert shared.shareable([mb - 1, 3 * mb, mb, 5 * mb, 0]) == [False, True, False, True, False]
    monkeypatch.setattr(shared, "fd_budget", lambda: 10)
    assert shared.shareable([mb - 1, 3 * mb, mb]) == [False, True, True]
    assert shared.open_buffers_for([False, False]) is None


def test_many_rank_files_load_under_a_low_open_file_limit(tmp_path) -> None:
    """40 rank files, every one shared (SHARE_MIN_BYTES 0), with 64 descriptors allowed: a buffer and a map
    for each would need 80; a quarter of the limit (16 traces) is shared, the rest pickled, and the load
    equals the serial one."""
    for r in range(40):
        tb = TraceBuilder(rank=r, world_size=40)
        tb.step(1, 0, 100)
        tb.cpu_op("op", 1 + r, 10)
        tb.kernel("k", 20, 30, launch_at_us=2 + r)
        tb.write(tmp_path / f"rank{r}.trace.json")
    code = (
        "import resource\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (64, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))\n"
        "from tracekit.traces import loader, shared\n"
        "shared.SHARE_MIN_BYTES = 0\n"
        f"pooled = loader.load({str(tmp_path)!r}, workers=2)\n"
        f"serial = loader.load({str(tmp_path)!r}, workers=1)\n"
        "assert all(pooled.ranks[r].events.equals(serial.ranks[r].events) for r in serial.ranks)\n"
        "print(len(pooled.ranks), shared.fd_budget())\n"
    )
    r = _py(code)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["40", "16"]


def test_shared_columns_round_trip_and_fallbacks() -> None:
    from tracekit.traces import decode, shared

    path = REF / "eager" / "rank0.trace.json.gz"
    _, cols = decode.decode_columns(path)
    _, ref = decode.decode_columns(path)
    fds = shared.open_buffers(2)
    if fds is None:
        pytest.skip("no memfd_create on this platform")
    try:
        item = shared.share(cols, fds[0])
        assert isinstance(item, shared.SharedColumns) and item.cols.dense == {} and len(item.cols.name_codes) == 0
        back = shared.attach(item, fds[0])
        for k in decode.DENSE_COLUMNS:
            np.testing.assert_array_equal(back.dense[k], ref.dense[k])
            assert back.dense[k].dtype == ref.dense[k].dtype
        np.testing.assert_array_equal(back.name_codes, ref.name_codes)
        assert back.names == ref.names
        # no descriptor left for a map: the buffer is read instead (a writable copy, the same arrays)
        _, again = decode.decode_columns(path)
        item = shared.share(again, fds[1])

        def no_map(*a, **k):
            raise OSError(24, "Too many open files")

        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(shared.mmap, "mmap", no_map)
            read = shared.attach(item, fds[1])
        for k in decode.DENSE_COLUMNS:
            np.testing.assert_array_equal(read.dense[k], ref.dense[k])
        np.testing.assert_array_equal(read.name_codes, ref.name_codes)
        assert read.name_codes.flags.writeable
        # a failed write (a closed fd) hands back the columns to be pickled; attach passes them through
        closed = os.dup(fds[1])
        os.close(closed)
        assert shared.share(ref, closed) is ref and shared.attach(ref, None) is ref
        # nothing kept: nothing to share
        empty = decode.Columns(n=0, dense={k: np.empty(0, np.int64) for k in decode.DENSE_COLUMNS},
                               name_codes=np.empty(0, np.int32), names=[], sparse_idx=np.empty(0, np.int64), sparse={})
        assert shared.share(empty, fds[0]) is empty
    finally:
        shared.close_buffers(fds)
