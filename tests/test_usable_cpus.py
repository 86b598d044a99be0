"""Worker counts default to the CPUs this process may use (its affinity mask), not the host's count:
under taskset, a container's cpuset or a Slurm allocation one worker per host CPU would oversubscribe."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.tracebuilder import TraceBuilder
from tracekit import cpus
from tracekit.runner import engine, per_rank
from tracekit.traces import loader

REPO = Path(__file__).resolve().parents[1]
HAS_AFFINITY = hasattr(os, "sched_getaffinity")


@pytest.mark.skipif(not HAS_AFFINITY, reason="no CPU affinity on this OS")
def test_a_process_pinned_to_one_cpu_counts_one() -> None:
    cpu = min(os.sched_getaffinity(0))
    code = (f"import os; os.sched_setaffinity(0, {{{cpu}}}); from tracekit.cpus import usable_cpus; "
            "print(usable_cpus(), os.cpu_count())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    usable, host = map(int, out.stdout.split())
    assert usable == 1 and host == os.cpu_count()


def test_without_an_affinity_mask_the_host_count(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 6)
    assert cpus.usable_cpus() == 6
    monkeypatch.setattr(os, "cpu_count", lambda: None)
    assert cpus.usable_cpus() == 1


def _files(tmp_path: Path, n: int) -> list[Path]:
    out = []
    for r in range(n):
        b = TraceBuilder(rank=r, world_size=n)
        b.step(1, 0, 100)
        b.kernel("gemm", 10, 20, launch_at_us=5)
        out.append(b.write(tmp_path / f"rank{r}.trace.json", gz=False))
    return out


def test_default_worker_counts_follow_the_affinity_mask(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A host of 64 CPUs of which this process may use 3: the parse pool, the engine's pool and the per-rank
    pass use 3 workers at most."""
    monkeypatch.setattr(os, "cpu_count", lambda: 64)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2}, raising=False)
    files = _files(tmp_path, 20)
    monkeypatch.setattr(loader, "PARALLEL_MIN_BYTES", 0)  # (these files are small: parallel anyway)
    pending = loader.start_load([str(tmp_path)], workers=None)
    assert pending._pool is not None and pending._pool._max_workers == 3
    assert len(pending.result().ranks) == 20
    pools: list[int] = []

    class Pool:  # records the pool size, runs the batches here
        def __init__(self, max_workers: int, mp_context: object) -> None:
            pools.append(max_workers)

        def __enter__(self) -> Pool:
            return self

        def __exit__(self, *exc: object) -> None:
            return None

        def submit(self, fn, *args):  # noqa: ANN001, ANN202
            from concurrent.futures import Future
            f: Future = Future()
            f.set_result(fn(*args))
            return f

    monkeypatch.setattr(engine, "ProcessPoolExecutor", Pool)
    job = engine.RankJob(n_files=len(files))
    engine.map_local([(str(p), p.stat().st_size) for p in files], job)
    assert pools == [3]
    import concurrent.futures  # per_rank imports the pool where it starts one

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", Pool)
    traces = loader.load([str(tmp_path)], workers=1)
    per_rank.map_ranks(traces, lambda rt: rt.rank, workers=None)  # small: serial, no pool
    assert pools == [3]
